"""Label selectors: parse `app=web,tier in (a,b),!canary`, match label maps, print canonically.

Kubernetes v1.0 piece: pkg/labels/selector.go (Parse, Requirement, Operator, the lexer and
recursive-descent parser, SelectorFromSet, Everything) and, from later upstream,
metav1.LabelSelectorAsSelector (matchLabels/matchExpressions -> Selector) with its Nothing()
selector. Every `?labelSelector=` on a list or watch and every controller's `spec.selector`
goes through here, so the grammar, the error text and the canonical string all follow
upstream: clients print our 400 messages verbatim, and `str()` is what watch caches and
tests compare.

Why the shape: a selector is parsed once (and cached, selectors repeat across requests) but
matched against every object for every watcher, so each requirement is compiled at
construction into a tiny closure over a precomputed value or frozenset. Matching is a loop
of dict lookups; no regex, no allocation.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from minikube_py.api import errors, naming
from minikube_py.api.bounds import MAX_SELECTOR_REQUIREMENTS, too_many_requirements

Labels = Mapping[str, str]
_Matcher = Callable[[Labels], bool]
_NO_LABELS: Labels = {}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INT_SYNTAX = re.compile(r"[+-]?[0-9]+\Z")


class Operator(str, enum.Enum):
    """Upstream selection.Operator; the values are upstream's strings."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_BINARY_OPERATORS = ", ".join(o.value for o in (
    Operator.IN, Operator.NOT_IN, Operator.EQUALS, Operator.DOUBLE_EQUALS,
    Operator.NOT_EQUALS, Operator.GREATER_THAN, Operator.LESS_THAN,
))
_EXACT = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
_ORDERED = (Operator.GREATER_THAN, Operator.LESS_THAN)
_EXACT_MATCH = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)  # RequiresExactMatch
# How each operator prints between key and value(s) in String().
_INFIX = {
    Operator.EQUALS: "=", Operator.DOUBLE_EQUALS: "==", Operator.NOT_EQUALS: "!=",
    Operator.IN: " in ", Operator.NOT_IN: " notin ",
    Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<",
}


class _SelectorError(Exception):
    """A parse/validation failure; the public entry points turn it into a 400 StatusError."""


# ---------------------------------------------------------------------------------------------
# Requirement: one `key op values` term, compiled to a matcher.


@dataclass(frozen=True, slots=True)
class Requirement:
    """One AND-ed term of a selector (upstream labels.Requirement).

    Build with `new_requirement` (validates) unless the input is already known valid.
    `values` keeps the given order; `str()` sorts them like upstream."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    matches: _Matcher = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "matches", _compile(self.key, self.operator, self.values))

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values)) if len(self.values) > 1 else "".join(self.values)
        if op is Operator.IN or op is Operator.NOT_IN:
            values = f"({values})"
        return f"{self.key}{_INFIX[op]}{values}"


def _compile(key: str, op: Operator, values: tuple[str, ...]) -> _Matcher:
    """A closure answering this requirement for one label map; absent keys per upstream:
    `in`/`=`/`gt`/`lt` need the key, `notin`/`!=` are satisfied by its absence."""
    if op is Operator.EXISTS:
        return lambda labels: key in labels
    if op is Operator.DOES_NOT_EXIST:
        return lambda labels: key not in labels
    if op in _ORDERED:
        return _compile_ordered(key, op, values)
    positive = op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS)
    if len(values) == 1:
        only = values[0]
        if positive:
            return lambda labels: labels.get(key) == only
        return lambda labels: labels.get(key) != only
    allowed = frozenset(values)
    if positive:
        return lambda labels: labels.get(key) in allowed
    return lambda labels: labels.get(key) not in allowed


def _compile_ordered(key: str, op: Operator, values: tuple[str, ...]) -> _Matcher:
    bound = _int64(values[0]) if len(values) == 1 else None
    if bound is None:  # upstream logs and matches nothing for a malformed Gt/Lt
        return lambda labels: False
    greater = op is Operator.GREATER_THAN

    def match(labels: Labels) -> bool:
        raw = labels.get(key)
        if raw is None:
            return False
        number = _int64(raw)
        if number is None:
            return False
        return number > bound if greater else number < bound

    return match


def _int64(text: str) -> int | None:
    """Go strconv.ParseInt(text, 10, 64) without regex or exceptions on the hot path."""
    digits = text[1:] if text.startswith(("+", "-")) else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _check_key(key: str) -> None:
    problems = naming.is_qualified_name(key)
    if problems:
        raise _SelectorError(f'invalid label key "{key}": ' + "; ".join(problems))


def _check_requirement(key: str, op: Operator, values: tuple[str, ...]) -> None:
    """Upstream NewRequirement's rules, in its order and words."""
    _check_key(key)
    if op in (Operator.IN, Operator.NOT_IN):
        if not values:
            raise _SelectorError("for 'in', 'notin' operators, values set can't be empty")
    elif op in _EXACT:
        if len(values) != 1:
            raise _SelectorError("exact-match compatibility requires one single value")
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            raise _SelectorError("values set must be empty for exists and does not exist")
    elif op in _ORDERED:
        if len(values) != 1:
            raise _SelectorError("for 'Gt', 'Lt' operators, exactly one value is required")
        if not _INT_SYNTAX.match(values[0]) or _int64(values[0]) is None:
            raise _SelectorError("for 'Gt', 'Lt' operators, the value must be an integer")
    for value in values:
        problems = naming.is_label_value(value)
        if problems:
            raise _SelectorError(
                f'invalid label value: "{value}": at key: "{key}": ' + "; ".join(problems)
            )


def new_requirement(key: str, operator: Operator | str, values: Iterable[str] = ()) -> Requirement:
    """Validated constructor (upstream NewRequirement); bad input -> 400 BadRequest."""
    try:
        op = Operator(operator)
    except ValueError:
        raise errors.bad_request(f"operator '{operator}' is not recognized") from None
    vals = tuple(values)
    if not isinstance(key, str) or not all(isinstance(v, str) for v in vals):
        raise errors.bad_request("label selector keys and values must be strings")
    try:
        _check_requirement(key, op, vals)
    except _SelectorError as err:
        raise errors.bad_request(str(err)) from None
    return Requirement(key, op, vals)


# ---------------------------------------------------------------------------------------------
# Selector


class LabelSelector:
    """An AND of requirements, sorted by key (upstream internalSelector). Immutable."""

    __slots__ = ("_matchers", "_nothing", "requirements")

    requirements: tuple[Requirement, ...]

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False):
        reqs = tuple(sorted(requirements, key=_by_key))
        self.requirements = reqs
        self._nothing = nothing
        self._matchers: tuple[_Matcher, ...] = (
            (_never,) if nothing else tuple(r.matches for r in reqs)
        )

    def matches(self, labels: Labels | None) -> bool:
        """True when every requirement holds for `labels` (None means no labels)."""
        if labels is None:
            labels = _NO_LABELS
        for match in self._matchers:
            if not match(labels):
                return False
        return True

    def empty(self) -> bool:
        """True when the selector restricts nothing (matches everything)."""
        return not self._matchers

    def exact_value(self, key: str) -> str | None:
        """The single value `key` must equal (`k=v`, `k==v`, `k in (v)`), else None.

        Like upstream RequiresExactMatch, only the first requirement on `key` is looked at;
        the API server uses this to index watchers instead of testing every one."""
        for req in self.requirements:
            if req.key == key:
                if req.operator in _EXACT_MATCH and len(req.values) == 1:
                    return req.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return "NOTHING" if self._nothing else f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


def _by_key(req: Requirement) -> str:
    return req.key


def _never(_labels: Labels) -> bool:
    return False


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """`k1=v1,k2=v2` matching exactly these labels (upstream SelectorFromSet); not validated,
    as upstream: the object holding the map (an RC's spec.selector) was validated already."""
    if not labels:
        return EVERYTHING
    return LabelSelector(Requirement(k, Operator.EQUALS, (v,)) for k, v in labels.items())


_EXPRESSION_OPERATORS = {
    "In": Operator.IN, "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS, "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def selector_from_label_selector(spec: Mapping[str, Any] | None) -> LabelSelector:
    """metav1.LabelSelector -> selector (upstream LabelSelectorAsSelector).

    None selects nothing, `{}` selects everything: a controller without a selector must not
    adopt every pod in the namespace."""
    if spec is None:
        return NOTHING
    if not isinstance(spec, Mapping):
        raise errors.bad_request("label selector must be an object")
    match_labels = spec.get("matchLabels") or {}
    expressions = spec.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        raise errors.bad_request("matchLabels must be an object and matchExpressions a list")
    if not match_labels and not expressions:
        return EVERYTHING
    reqs = [new_requirement(k, Operator.EQUALS, (v,)) for k, v in match_labels.items()]
    reqs.extend(_expression_requirement(expr) for expr in expressions)
    return LabelSelector(reqs)


def _expression_requirement(expr: Any) -> Requirement:
    """One matchExpressions entry -> requirement; only the four set-based operators exist."""
    if not isinstance(expr, Mapping):
        raise errors.bad_request("matchExpressions entries must be objects")
    operator = expr.get("operator")
    op = _EXPRESSION_OPERATORS.get(operator) if isinstance(operator, str) else None
    if op is None:
        raise errors.bad_request(f'"{operator or ""}" is not a valid label selector operator')
    values = expr.get("values") or ()
    if not isinstance(values, (list, tuple)):
        raise errors.bad_request("matchExpressions values must be a list of strings")
    return new_requirement(expr.get("key") or "", op, values)


def parse_label_selector(text: str) -> LabelSelector:
    """Parse upstream selector syntax; bad syntax -> 400 with upstream's message."""
    if not text:
        return EVERYTHING
    try:
        selector = _parse_cached(text)
    except _SelectorError as err:
        raise errors.bad_request(str(err)) from None
    if len(selector.requirements) > MAX_SELECTOR_REQUIREMENTS:
        raise too_many_requirements("labelSelector", len(selector.requirements))
    return selector


@functools.lru_cache(maxsize=512)
def _parse_cached(text: str) -> LabelSelector:
    """Selectors are immutable and the same few strings arrive over and over (every kubelet
    and controller re-lists with its own), so parsing is memoised; errors are not cached."""
    return LabelSelector(_Parser(text).parse())


# ---------------------------------------------------------------------------------------------
# Lexer and parser: a transcription of upstream's, keeping its tokens, contexts and messages.


class _Tok(enum.IntEnum):
    END = 1
    CLOSE = 2
    COMMA = 3
    NOT = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER = 7
    IDENT = 8
    IN = 9
    LESS = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN = 13


_SYMBOLS = {
    ")": _Tok.CLOSE, ",": _Tok.COMMA, "!": _Tok.NOT, "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS, ">": _Tok.GREATER, "<": _Tok.LESS, "!=": _Tok.NOT_EQUALS,
    "(": _Tok.OPEN,
}
_KEYWORDS = {"in": _Tok.IN, "notin": _Tok.NOT_IN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_TOKENS = {
    _Tok.IN: Operator.IN, _Tok.NOT_IN: Operator.NOT_IN, _Tok.EQUALS: Operator.EQUALS,
    _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS, _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
    _Tok.GREATER: Operator.GREATER_THAN, _Tok.LESS: Operator.LESS_THAN,
}

_Item = tuple[_Tok, str]


def _lex(text: str) -> list[_Item]:
    """Tokens up to and including END. Symbols take the longest match (`==`, `!=`);
    identifiers run to the next symbol or blank; `in`/`notin` are keywords."""
    items: list[_Item] = []
    pos, size = 0, len(text)
    while True:
        while pos < size and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= size:
            items.append((_Tok.END, ""))
            return items
        if text[pos] in _SPECIAL:
            two = text[pos:pos + 2]
            literal = two if two in ("==", "!=") else text[pos]
            items.append((_SYMBOLS[literal], literal))
            pos += len(literal)
            continue
        start = pos
        while pos < size and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        literal = text[start:pos]
        items.append((_KEYWORDS.get(literal, _Tok.IDENT), literal))


class _Parser:
    """Upstream's parser. In "values" context the keywords `in`/`notin` read as identifiers,
    so `in in (in)` is a valid selector; only the operator slot sees them as keywords."""

    def __init__(self, text: str):
        self._items = _lex(text)
        self._pos = 0

    def _peek(self, values: bool = True) -> _Item:
        tok, lit = self._items[self._pos]
        return (_Tok.IDENT, lit) if values and tok in (_Tok.IN, _Tok.NOT_IN) else (tok, lit)

    def _next(self, values: bool = True) -> _Item:
        item = self._peek(values)
        self._pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._peek()
            if tok is _Tok.END:
                return reqs
            if tok is not _Tok.IDENT and tok is not _Tok.NOT:
                raise _SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self._requirement())
            except _SelectorError as err:
                raise _SelectorError(f"unable to parse requirement: {err}") from None
            tok, lit = self._next()
            if tok is _Tok.END:
                return reqs
            if tok is not _Tok.COMMA:
                raise _SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self._peek()
            if tok is not _Tok.IDENT and tok is not _Tok.NOT:
                raise _SelectorError(f"found '{lit}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        key, op = self._key_and_inferred_operator()
        if op is None:
            op = self._operator()
            values = self._value_set() if op in (Operator.IN, Operator.NOT_IN) else self._exact()
        else:
            values = ()
        _check_requirement(key, op, values)
        return Requirement(key, op, values)

    def _key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        op: Operator | None = None
        tok, lit = self._next()
        if tok is _Tok.NOT:
            op = Operator.DOES_NOT_EXIST
            tok, lit = self._next()
        if tok is not _Tok.IDENT:
            raise _SelectorError(f"found '{lit}', expected: identifier")
        _check_key(lit)
        if op is None and self._peek()[0] in (_Tok.END, _Tok.COMMA):
            op = Operator.EXISTS
        return lit, op

    def _operator(self) -> Operator:
        tok, lit = self._next(values=False)
        op = _OPERATOR_TOKENS.get(tok)
        if op is None:
            raise _SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        return op

    def _value_set(self) -> tuple[str, ...]:
        """`( v1, v2, ... )`; empty members are the empty string, so `()` means {""}."""
        tok, lit = self._next()
        if tok is not _Tok.OPEN:
            raise _SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._peek()
        if tok is _Tok.CLOSE:
            self._next()
            return ("",)
        if tok is not _Tok.IDENT and tok is not _Tok.COMMA:
            raise _SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        found = self._identifiers()
        self._next()  # the ')' that ended the list
        return tuple(sorted(found))

    def _identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            tok, lit = self._next()
            if tok is _Tok.IDENT:
                found.add(lit)
                nxt, nlit = self._peek()
                if nxt is _Tok.CLOSE:
                    return found
                if nxt is not _Tok.COMMA:
                    raise _SelectorError(f"found '{nlit}', expected: ',' or ')'")
            elif tok is _Tok.COMMA:
                nxt = self._peek()[0]
                if not found or nxt is _Tok.CLOSE or nxt is _Tok.COMMA:
                    found.add("")  # `(,a)`, `(a,)`, `(a,,b)` all include ""
                if nxt is _Tok.CLOSE:
                    return found
            else:
                raise _SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact(self) -> tuple[str, ...]:
        tok, lit = self._peek()
        if tok is _Tok.END or tok is _Tok.COMMA:
            return ("",)
        tok, lit = self._next()
        if tok is not _Tok.IDENT:
            raise _SelectorError(f"found '{lit}', expected: identifier")
        return (lit,)
