"""The functions Kubernetes adds to CEL, as Python callables for the evaluator.

Kubernetes pieces: k8s.io/apiserver/pkg/cel/library (lists.go: isSorted/sum/min/max/indexOf/
lastIndexOf; regex.go: find/findAll; urls.go: url()/isURL() and the getters; quantity.go;
format.go: string.format) and cel-go's ext.Strings (v2: charAt, indexOf, lastIndexOf,
lowerAscii, upperAscii, replace, split, substring, trim, join, quote) and ext.Sets.

The evaluator converts values to and from Python at every call, and cannot carry a Python
object through an expression, so a URL or a quantity is a one-key map that marks it
(`{"__k8s_url__": "https://..."}`); its methods read the marker back. A function given
arguments it has no overload for raises TypeError("no such overload"), which surfaces as
upstream's runtime error. `matches` is the evaluator's own (Rust's `regex` crate: RE2 syntax,
linear time); `find`/`findAll` use google-re2, as the rest of the project does.
"""

from __future__ import annotations

import functools
import math
import urllib.parse
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import re2
from cel import stdlib

from ..api import quantity as qty

QUANTITY = "__k8s_quantity__"
URL = "__k8s_url__"


class NoOverload(TypeError):
    """Arguments of types the function does not accept (cel-go's "no such overload")."""

    def __init__(self, name: str = "") -> None:
        super().__init__(f"no such overload: {name}" if name else "no such overload")


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


# -- strings and lists sharing a name ---------------------------------------------------------
def index_of(target: Any, item: Any, offset: int = 0) -> int:
    if isinstance(target, str) and isinstance(item, str):
        return stdlib.index_of(target, item, offset)
    if _is_list(target):
        return next((i for i, v in enumerate(target) if _equal(v, item)), -1)
    raise NoOverload("indexOf")


def last_index_of(target: Any, item: Any, *offset: int) -> int:
    if isinstance(target, str) and isinstance(item, str):
        return stdlib.last_index_of(target, item, *offset)
    if _is_list(target):
        return next((i for i in range(len(target) - 1, -1, -1) if _equal(target[i], item)), -1)
    raise NoOverload("lastIndexOf")


def _equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float))
        and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


# -- lists (library/lists.go) -----------------------------------------------------------------
def _comparable(items: list, name: str) -> list:
    if not _is_list(items):
        raise NoOverload(name)
    kinds = {bool if isinstance(v, bool) else (float if isinstance(v, (int, float)) else type(v))
             for v in items}
    if len(kinds) > 1 or kinds & {dict, list, type(None)}:
        raise NoOverload(name)
    return items


def is_sorted(items: list) -> bool:
    items = _comparable(items, "isSorted")
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def sum_(items: list) -> Any:
    items = _comparable(items, "sum")
    if not items:
        return 0
    if isinstance(items[0], (str, bool)):
        raise NoOverload("sum")
    return sum(items[1:], items[0])


def min_(items: list) -> Any:
    items = _comparable(items, "min")
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def max_(items: list) -> Any:
    items = _comparable(items, "max")
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


# -- regex (library/regex.go) -----------------------------------------------------------------
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=512)
def regex(pattern: str) -> Any:
    """An RE2 pattern compiled once (rules repeat their literal patterns on every object)."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as err:
        detail = err.args[0] if err.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ValueError(f"error parsing regexp: {detail}") from None


def find(text: str, pattern: str) -> str:
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise NoOverload("find")
    match = regex(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise NoOverload("findAll")
    if limit == 0:
        return []
    out = [m.group(0) for m in regex(pattern).finditer(text)]
    return out if limit < 0 else out[:limit]


# -- url (library/urls.go) --------------------------------------------------------------------
def _parse_url(text: str) -> urllib.parse.SplitResult:
    if not isinstance(text, str):
        raise NoOverload("url")
    parts = urllib.parse.urlsplit(text)
    # upstream: url.ParseRequestURI — an absolute URI or an absolute path, no fragment
    if "#" in text or not (parts.scheme or text.startswith("/")) or " " in text:
        raise ValueError(f"URL parse error during conversion from string: parse {text!r}: "
                         "invalid URI for request")
    return parts


def url(text: str) -> dict[str, str]:
    _parse_url(text)
    return {URL: text}


def is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except ValueError:
        return False
    return True


def _url_parts(value: Any, name: str) -> urllib.parse.SplitResult:
    if not isinstance(value, dict) or URL not in value:
        raise NoOverload(name)
    return urllib.parse.urlsplit(value[URL])


def get_scheme(u: Any) -> str:
    return _url_parts(u, "getScheme").scheme


def get_host(u: Any) -> str:
    return _url_parts(u, "getHost").netloc.rpartition("@")[2]


def get_hostname(u: Any) -> str:
    host = get_host(u)
    if host.startswith("["):
        return host[1:host.find("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


def get_port(u: Any) -> str:
    host = get_host(u)
    tail = host[host.find("]") + 1:] if host.startswith("[") else host
    return tail.rsplit(":", 1)[1] if ":" in tail else ""


def get_escaped_path(u: Any) -> str:
    return _url_parts(u, "getEscapedPath").path


def get_query(u: Any) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(_url_parts(u, "getQuery").query, keep_blank_values=True)


# -- quantity (library/quantity.go) -----------------------------------------------------------
def quantity(text: str) -> dict[str, str]:
    if not isinstance(text, str):
        raise NoOverload("quantity")
    qty.parse(text)  # ValueError with upstream's message
    return {QUANTITY: text}


def is_quantity(text: str) -> bool:
    try:
        quantity(text)
    except (ValueError, TypeError):
        return False
    return True


def _q(value: Any, name: str) -> Fraction:
    if not isinstance(value, dict) or QUANTITY not in value:
        raise NoOverload(name)
    return qty.parse_quantity(value[QUANTITY])


def _q_or_int(value: Any, name: str) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return _q(value, name)


def sign(q: Any) -> int:
    v = _q(q, "sign")
    return (v > 0) - (v < 0)


def is_greater_than(a: Any, b: Any) -> bool:
    return _q(a, "isGreaterThan") > _q(b, "isGreaterThan")


def is_less_than(a: Any, b: Any) -> bool:
    return _q(a, "isLessThan") < _q(b, "isLessThan")


def compare_to(a: Any, b: Any) -> int:
    x, y = _q(a, "compareTo"), _q(b, "compareTo")
    return (x > y) - (x < y)


def _q_result(value: Fraction) -> dict[str, str]:
    return {QUANTITY: qty.format_quantity(value)}


def add(a: Any, b: Any) -> dict[str, str]:
    return _q_result(_q(a, "add") + _q_or_int(b, "add"))


def sub(a: Any, b: Any) -> dict[str, str]:
    return _q_result(_q(a, "sub") - _q_or_int(b, "sub"))


def is_integer(q: Any) -> bool:
    v = _q(q, "isInteger")
    return v.denominator == 1 and -(2 ** 63) <= v < 2 ** 63


def as_integer(q: Any) -> int:
    if not is_integer(q):
        raise ValueError("cannot convert value to integer")
    return int(_q(q, "asInteger"))


def as_approximate_float(q: Any) -> float:
    return float(_q(q, "asApproximateFloat"))


# -- format (library/format.go, strings.format) ----------------------------------------------
def _format_value(verb: str, value: Any) -> str:
    if verb == "s":
        return to_string(value)
    if verb == "d":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"error during formatting: decimal clause can only be used on "
                             f"integers, was given {type_name(value)}")
        return str(value)
    if verb in ("f", "e"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"error during formatting: fixed-point clause can only be used "
                             f"on doubles, was given {type_name(value)}")
        return format(float(value), f".6{verb}")
    if verb in ("x", "X", "o", "b"):
        if isinstance(value, str) and verb in "xX":
            out = value.encode().hex()
            return out.upper() if verb == "X" else out
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"error during formatting: only integers, byte buffers, and "
                             f"strings can be formatted as hex, was given {type_name(value)}")
        return format(value, verb)
    raise ValueError(f'error during formatting: could not parse formatting clause: '
                     f'unrecognized formatting clause "{verb}"')


def format_(template: str, args: list) -> str:
    if not isinstance(template, str) or not _is_list(args):
        raise NoOverload("format")
    out, i, n = [], 0, 0
    while i < len(template):
        ch = template[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(template):
            raise ValueError("error during formatting: unexpected end of string")
        verb = template[i + 1]
        precision = None
        if verb == ".":
            j = i + 2
            while j < len(template) and template[j].isdigit():
                j += 1
            precision, verb, i = int(template[i + 2:j] or 0), template[j:j + 1], j - 1
        i += 2
        if verb == "%":
            out.append("%")
            continue
        if n >= len(args):
            raise ValueError(f"error during formatting: index {n} out of range")
        value = args[n]
        n += 1
        if precision is not None and verb in ("f", "e"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError("error during formatting: fixed-point clause can only be used "
                                 f"on doubles, was given {type_name(value)}")
            out.append(format(float(value), f".{precision}{verb}"))
        else:
            out.append(_format_value(verb, value))
    return "".join(out)


def type_name(value: Any) -> str:
    """CEL's name of a value's type, as upstream's messages print it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if value is None:
        return "null_type"
    return type(value).__name__


def to_string(value: Any) -> str:
    """`%s` of strings.format: CEL's textual form of a value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return {"inf": "+Inf", "-inf": "-Inf"}.get(str(value), "NaN")
        return repr(value) if not value.is_integer() else str(int(value)) if abs(value) < 1e21 \
            else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        if QUANTITY in value and len(value) == 1:
            return value[QUANTITY]
        if URL in value and len(value) == 1:
            return value[URL]
        return "{" + ", ".join(f"{to_string(k)}: {to_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _strings(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A string-receiver function that answers no-overload for other receivers."""
    @functools.wraps(fn)
    def wrapper(target: Any, *args: Any) -> Any:
        if not isinstance(target, str):
            if name == "join" and _is_list(target):
                return fn(target, *args)
            raise NoOverload(name)
        return fn(target, *args)
    return wrapper


#: every function the evaluator gets on top of its own standard library
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": _strings(stdlib.char_at, "charAt"),
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": _strings(stdlib.lower_ascii, "lowerAscii"),
    "upperAscii": _strings(stdlib.upper_ascii, "upperAscii"),
    "replace": _strings(stdlib.replace, "replace"),
    "split": _strings(stdlib.split, "split"),
    "substring": _strings(stdlib.substring, "substring"),
    "trim": _strings(stdlib.trim, "trim"),
    "join": _strings(stdlib.join, "join"),
    "strings.quote": stdlib.quote,
    "bool": stdlib.bool_,
    "format": format_,
    "isSorted": is_sorted,
    "sum": sum_,
    "min": min_,
    "max": max_,
    "find": find,
    "findAll": find_all,
    "url": url,
    "isURL": is_url,
    "getScheme": get_scheme,
    "getHost": get_host,
    "getHostname": get_hostname,
    "getPort": get_port,
    "getEscapedPath": get_escaped_path,
    "getQuery": get_query,
    "quantity": quantity,
    "isQuantity": is_quantity,
    "sign": sign,
    "isGreaterThan": is_greater_than,
    "isLessThan": is_less_than,
    "compareTo": compare_to,
    "add": add,
    "sub": sub,
    "isInteger": is_integer,
    "asInteger": as_integer,
    "asApproximateFloat": as_approximate_float,
    **stdlib.EXTENSIONS["sets"],
}

#: the evaluator's own functions (cel-rust's standard library and timestamp accessors)
BUILTINS = frozenset({
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double",
    "string", "bytes", "timestamp", "duration", "dyn", "type", "optional.of",
    "optional.none", "optional.ofNonZeroValue", "hasValue", "value", "orValue",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
    "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
})

#: the functions whose call the cost model charges per element (see analysis.py)
KNOWN = frozenset(FUNCTIONS) | BUILTINS
