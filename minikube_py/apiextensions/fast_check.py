"""A structural schema compiled into one yes/no check per node: is this value valid?

Kubernetes piece: none of its own — upstream validates a custom resource with kube-openapi's
interpreted validator (k8s.io/kube-openapi/pkg/validation/validate) every time. In Python that
walk costs ~2 µs per schema node (a 50-node object: ~120 µs per write), mostly in checks the
schema does not even declare and in error paths built for values that are fine.

Here each node becomes a closure holding only the checks its schema declares (a string with a
pattern checks type and pattern; a plain string checks only its type), with no field paths,
and the closures call their children's directly. schema.validate runs this first and falls
back to its full walk (which names every error, with upstream's paths and messages) only when
a check fails — so the messages stay in one place, and the fast check only ever needs to be
conservative: it may say "no" for a valid value (the walk then finds nothing), never "yes" for
an invalid one. Pattern and format checks, shared by both, live here.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import math
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import re2

if TYPE_CHECKING:
    from .schema import Node

Check = Callable[[Any], bool]

_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
_NO_MATCH = (-1, -1)
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_ROOT_KEYS = frozenset(("apiVersion", "kind", "metadata"))


def matches(pattern: Any, value: str) -> bool:
    """`pattern.search(value) is not None`, at a third of the cost: google-re2's `search`
    builds a Match object and maps byte offsets back to characters, which a yes/no check
    does not need."""
    raw = getattr(pattern, "_regexp", None)
    if raw is None:  # a google-re2 without the pybind object: the public, slower call
        return pattern.search(value) is not None
    data = value.encode("utf-8", "surrogatepass")
    return raw.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH


def format_ok(fmt: str, value: Any) -> bool:
    """kube-openapi's format checks for the formats structural schemas use."""
    if isinstance(value, bool):
        return True
    if fmt in ("int32", "int64") and isinstance(value, int):
        low, high = _INT32 if fmt == "int32" else _INT64
        return low <= value <= high
    if not isinstance(value, str):
        return True
    try:
        if fmt == "date-time":
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
            return "T" in value.upper()
        if fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "uuid":
            uuid.UUID(value)
        elif fmt == "byte":
            base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return False
    return True


def _whole(value: Any) -> bool:
    return type(value) is float and value.is_integer()


def _type_check(node: Node) -> Check | None:
    """The type test of `node` (None: any type), as schema._type_ok decides it."""
    if node.int_or_string:
        return lambda v: type(v) is str or type(v) is int or _whole(v)
    kind = node.type
    if kind == "string":
        return lambda v: type(v) is str
    if kind == "integer":
        return lambda v: type(v) is int or _whole(v)
    if kind == "number":
        return lambda v: type(v) is int or type(v) is float
    if kind == "boolean":
        return lambda v: type(v) is bool
    if kind == "object":
        return lambda v: type(v) is dict
    if kind == "array":
        return lambda v: type(v) is list
    return None


def compile_checker(node: Node, root: bool = False) -> Check:
    """True only when `schema._validate` would find no error in the value."""
    kind = "" if node.int_or_string else node.type
    checks: list[Check] = []
    if (type_check := _type_check(node)) is not None:
        checks.append(type_check)
    if node.enum is not None:
        enum = node.enum
        checks.append(lambda v: v in enum)
    if node.format:
        fmt = node.format
        checks.append(lambda v: format_ok(fmt, v))
    # a value of another type has already failed the type check: only what the type allows
    if kind in ("", "string") or node.int_or_string:
        checks += _string_checks(node)
    if kind in ("", "number") or (kind == "integer" and (node.minimum is not None or
                                                         node.maximum is not None)):
        checks += _number_checks(node)  # (a whole float is finite: integers need no check)
    if kind in ("", "array") and (node.items is not None or node.min_items is not None
                                  or node.max_items is not None):
        checks.append(_array_check(node))
    if kind in ("", "object"):
        if node.embedded:
            checks.append(lambda v: type(v) is not dict)  # embedded objects: the full walk
        elif node.properties or node.additional is not None or node.required or \
                node.min_properties is not None or node.max_properties is not None:
            checks.append(_object_check(node, root))
    nullable = node.nullable or not (node.type or node.int_or_string)
    check = _all(checks)
    if check is None:
        return lambda v: v is not None or nullable
    return lambda v: check(v) if v is not None else nullable


def _all(checks: list[Check]) -> Check | None:
    """One check that is every one of `checks`, folded into `a(v) and b(v)` closures: a
    generator under all() costs more than the checks themselves."""
    if not checks:
        return None
    combined = checks[0]
    for following in checks[1:]:
        combined = _both(combined, following)
    return combined


def _both(first: Check, second: Check) -> Check:
    return lambda v: first(v) and second(v)


def _string_checks(node: Node) -> list[Check]:
    out: list[Check] = []
    if node.max_length is not None:
        longest = node.max_length
        out.append(lambda v: type(v) is not str or len(v) <= longest)
    if node.min_length is not None:
        shortest = node.min_length
        out.append(lambda v: type(v) is not str or len(v) >= shortest)
    if node.pattern_text:
        pattern = node.pattern
        if pattern is None:  # a pattern RE2 cannot compile matches nothing
            out.append(lambda v: type(v) is not str)
        else:
            out.append(_pattern_check(pattern))
    return out


#: how many short strings each pattern remembers its answer for
_MEMO_SIZE = 1024
_MEMO_MAX_LENGTH = 256


def _pattern_check(pattern: Any) -> Check:
    """The pattern, with its answers for short strings remembered: one RE2 call costs ~3 µs
    (the call from Python, not the matching), and the values a pattern guards — names, keys,
    enum-like words — repeat from object to object. The memo is bounded (cleared when full)."""
    memo: dict[str, bool] = {}

    def check(v: Any) -> bool:
        if type(v) is not str:
            return True
        known = memo.get(v)
        if known is not None:
            return known
        answer = matches(pattern, v)
        if len(v) <= _MEMO_MAX_LENGTH:
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[v] = answer
        return answer

    return check


def _number_checks(node: Node) -> list[Check]:
    low, high = node.minimum, node.maximum

    def in_range(v: Any) -> bool:
        if type(v) is not int and type(v) is not float:
            return True
        if type(v) is float and not math.isfinite(v):
            return False
        if low is not None and (v < low or (node.exclusive_minimum and v == low)):
            return False
        return not (high is not None and (v > high or (node.exclusive_maximum and v == high)))

    if low is None and high is None:
        return [lambda v: type(v) is not float or math.isfinite(v)]
    return [in_range]


def _array_check(node: Node) -> Check:
    fewest, most = node.min_items, node.max_items
    item = compile_checker(node.items) if node.items is not None else None

    def check(v: Any) -> bool:
        if type(v) is not list:
            return True
        if (most is not None and len(v) > most) or (fewest is not None and len(v) < fewest):
            return False
        return item is None or all(item(x) for x in v)

    return check


def _object_check(node: Node, root: bool) -> Check:
    props = {key: compile_checker(sub) for key, sub in node.properties.items()}
    extra = compile_checker(node.additional) if node.additional is not None else None
    required = node.required
    fewest, most = node.min_properties, node.max_properties
    skipped = _ROOT_KEYS - node.properties.keys() if root else frozenset()

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return True
        if (most is not None and len(v) > most) or (fewest is not None and len(v) < fewest):
            return False
        for key in required:
            if key not in v:
                return False
        for key, value in v.items():
            sub = props.get(key, extra)
            if sub is not None and key not in skipped and not sub(value):
                return False
        return True

    return check
