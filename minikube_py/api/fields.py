r"""Field selectors: `metadata.name=x,status.phase!=Running` over an object's selectable fields.

Kubernetes v1.0 piece: pkg/fields/selector.go (ParseSelector, hasTerm, notHasTerm, andTerm,
RequiresExactMatch), with later upstream's value escaping (EscapeValue/UnescapeValue: `\\`,
`\,`, `\=`) so values may contain commas and equals signs. Each resource exposes a small map
of field -> string (pods: `spec.nodeName`, `status.phase`, ...); a list or watch with
`?fieldSelector=` is answered by matching that map. A field missing from the map reads as
"" (upstream Fields.Get), so `spec.nodeName=` selects unscheduled pods.

Why the shape: only `=`, `==` (same as `=`) and `!=` exist, so a selector is a tuple of
(field, value, wanted-equal) triples and matching is one dict lookup per term. Parsing is
memoised because kubelets and controllers send the same selector on every re-list. Unknown
fields are rejected with upstream's v1.0 text `field label not supported: <field>` when the
caller says which fields the resource supports.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping

from minikube_py.api import errors
from minikube_py.api.bounds import MAX_SELECTOR_REQUIREMENTS, too_many_requirements

Fields = Mapping[str, str]

EQUALS = "="
NOT_EQUALS = "!="
# `==` before `=` so `a==b` does not leave "=b" as the value; first operator found wins, the
# field name itself cannot be escaped (upstream splitTerm).
_TERM_OPERATORS = ("!=", "==", "=")


class _SelectorError(Exception):
    """A parse failure; parse_field_selector turns it into a 400 StatusError."""


class FieldSelector:
    """An AND of `field=value` / `field!=value` terms (upstream andTerm of hasTerm/notHasTerm).

    Parsed terms are sorted by their canonical text, so equal selectors print alike."""

    __slots__ = ("_terms", "requirements")

    requirements: tuple[tuple[str, str, str], ...]

    def __init__(self, requirements: tuple[tuple[str, str, str], ...] = ()):
        self.requirements = requirements
        self._terms = tuple((f, v, op == EQUALS) for f, op, v in requirements)

    def matches(self, fields: Fields) -> bool:
        """True when every term holds; absent fields compare as ""."""
        for name, value, equal in self._terms:
            if (fields.get(name, "") == value) is not equal:
                return False
        return True

    def empty(self) -> bool:
        """True when the selector restricts nothing."""
        return not self._terms

    def exact_value(self, field: str) -> str | None:
        """The value of the first `field=value` term (upstream RequiresExactMatch), else None;
        lets the API server go straight to e.g. the pods bound to one node."""
        for name, value, equal in self._terms:
            if equal and name == field:
                return value
        return None

    def __str__(self) -> str:
        return ",".join(_canonical(req) for req in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)


EVERYTHING = FieldSelector()


def one_term_equal(field: str, value: str) -> FieldSelector:
    """`field=value` (upstream OneTermEqualSelector), for callers building selectors."""
    return FieldSelector(((field, EQUALS, value),))


def escape_value(value: str) -> str:
    """Escape `\\`, `,` and `=` so any string survives as a selector value (EscapeValue)."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    """Inverse of escape_value (upstream UnescapeValue); raises on a bad escape or a bare
    `,`/`=` with upstream's messages. Upstream prints the offending rune with %v, i.e. as its
    code point number, and so do we."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise _SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise _SelectorError(
                f"invalid field selector: unescaped character in value: {ord(ch)}"
            )
        else:
            out.append(ch)
    if escaped:
        raise _SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas not preceded by a backslash; escapes stay in the pieces."""
    if "\\" not in text:
        return text.split(",")
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, raw value) at the first operator in `term`, or None."""
    for i in range(len(term)):
        for op in _TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def parse_field_selector(text: str, allowed: Collection[str] | None = None) -> FieldSelector:
    """Parse `f=v,f2!=v2`; bad syntax or (with `allowed`) an unknown field -> 400."""
    if not text:
        return EVERYTHING
    try:
        selector = _parse_cached(text)
    except _SelectorError as err:
        raise errors.bad_request(str(err)) from None
    if len(selector.requirements) > MAX_SELECTOR_REQUIREMENTS:
        raise too_many_requirements("fieldSelector", len(selector.requirements))
    if allowed is not None:
        for name, _op, _value in selector.requirements:
            if name not in allowed:
                raise errors.bad_request(f"field label not supported: {name}")
    return selector


@functools.lru_cache(maxsize=512)
def _parse_cached(text: str) -> FieldSelector:
    """Memoised parse (selectors are immutable); failures raise and are not cached."""
    reqs: list[tuple[str, str, str]] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise _SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        name, op, raw = split
        reqs.append((name, NOT_EQUALS if op == NOT_EQUALS else EQUALS, unescape_value(raw)))
    # Upstream orders terms by their raw text; ordering by the canonical text instead agrees
    # with it except around `==` and escapes, and makes str(parse(str(s))) == str(s).
    reqs.sort(key=_canonical)
    return FieldSelector(tuple(reqs)) if reqs else EVERYTHING


def _canonical(req: tuple[str, str, str]) -> str:
    name, op, value = req
    return f"{name}{op}{escape_value(value)}"
