"""Query parameters as the API server decodes them.

Kubernetes piece: k8s.io/apimachinery/pkg/runtime's parameter codec and its conversions
(`Convert_Slice_string_To_bool`): a boolean query parameter is false when it is absent, `0` or
`false` in any letter case, and true for anything else — `?watch=true`, `?watch=1`, but also
`?watch=True` (kubernetes_asyncio), `?stdout=True` and even `?watch=`. Clients nobody here
wrote send all of these; one function reads them all the same way. Integers are Go's
`strconv.ParseInt`, and a bad one is a 400 with Go's own error text.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import errors


def parse_bool(value: str | None) -> bool:
    """A boolean query parameter's value (None when absent), as upstream converts it."""
    if value is None:
        return False
    return value != "0" and value.lower() != "false"


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_int64(value: str) -> int:
    """A query parameter as Go's `strconv.ParseInt(value, 10, 64)` reads it — what upstream's
    `Convert_Slice_string_To_int64` calls for `limit`, `timeoutSeconds`, `gracePeriodSeconds`,
    `tailLines`, `limitBytes`, `sinceSeconds`: an optional sign and decimal digits, nothing
    else (no spaces, no `1.5`, no `1_000`). A bad value is a 400 whose message is Go's error
    text, as the handler wraps it (`errors.NewBadRequest(err.Error())`)."""
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits or not digits.isascii() or not digits.isdigit():
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax")
    number = int(value)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(value)}: value out of range")
    return number


def int_param(query: Mapping[str, str], name: str) -> int | None:
    """An optional integer query parameter (`*int64` upstream): None when absent."""
    raw = query.get(name)
    return None if raw is None else parse_int64(raw)


def parse_ports(values: list[str]) -> list[int]:
    """`ports` of PodPortForwardOptions as upstream's Convert_Slice_string_To_Slice_int32
    reads them: every value split on commas, each part `strconv.ParseUint(part, 10, 16)`; a
    bad part is a 400 with Go's text (`cannot convert to []int32: strconv.ParseUint: ...`)."""
    ports = []
    for value in values:
        for part in value.split(","):
            if not part or not part.isascii() or not part.isdigit():
                reason = "invalid syntax"
            elif int(part) > 0xFFFF:
                reason = "value out of range"
            else:
                ports.append(int(part))
                continue
            raise errors.bad_request(f"cannot convert to []int32: strconv.ParseUint: parsing "
                                     f"{go_quote(part)}: {reason}")
    return ports


def go_quote(text: str) -> str:
    """Go's `strconv.Quote`: double quotes, `\\"` and `\\\\` escaped, control characters as
    Go escapes, printable Unicode kept."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not char.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v"}
