"""Every metav1.Time and MicroTime field of a written object, decoded and re-encoded as upstream.

Kubernetes piece: the JSON decoding of a request body into the kind's Go struct (the
apiserver's json serializer), where each metav1.Time / MicroTime field goes through its
UnmarshalJSON, and the encoding of the stored object through MarshalJSON (see gotime.py). The
net effect on the wire: `2024-05-01T12:00:00+02:00` is stored and served as
`2024-05-01T10:00:00Z`, a Time's fraction is dropped, a MicroTime needs exactly six digits, and
a value Go cannot parse fails the write.

Which fields are times is data: the kind's protobuf description (kinds/protobuf.json) types
them `Time` or `MicroTime`. The paths to them are compiled once per kind into a small tree that
prunes every branch without a time, so a write walks a handful of keys (a Pod: metadata, status
conditions and container states), never the whole object.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from . import gotime
from .kinds import proto
from .patch import go_json_type

_TIME = f"{proto.META}.Time"
_MICRO_TIME = f"{proto.META}.MicroTime"

# what a compiled field holds
_LEAF_TIME, _LEAF_MICRO, _MESSAGE = 0, 1, 2
# how it is held
_ONE, _LIST, _MAP = 0, 1, 2


class _Field(NamedTuple):
    what: int  # _LEAF_TIME, _LEAF_MICRO or _MESSAGE
    container: int  # _ONE, _LIST or _MAP (of values)
    node: dict[str, _Field] | None  # the message's own tree when what is _MESSAGE


Tree = dict[str, _Field]


class TimeFieldError(ValueError):
    """A time field upstream's decoder refuses; str() is the decoder's own error text."""


@cache
def tree_of(api_version: str, kind: str) -> Tree:
    """The compiled time paths of a kind; empty for kinds without a message (custom
    resources are stored as sent, as upstream's unstructured decoding does)."""
    message = proto.kind_message(api_version, kind)
    if not message:
        return {}
    done = dict(_compiled)  # trees being filled stay private to this call (worker threads)
    tree = _compile(message, done)
    _compiled.update(done)
    return tree


#: every message compiled so far, shared by the kinds (ObjectMeta's tree is one object)
_compiled: dict[str, Tree] = {}


def _compile(message: str, done: dict[str, Tree]) -> Tree:
    """The fields of `message` that are or lead to a time; embedded (inline) structs are
    merged into their parent, as their JSON fields are. A message that recurs (apiextensions'
    JSONSchemaProps) refers to its own tree: the walk follows the object, which is finite."""
    tree = done.get(message)
    if tree is not None:
        return tree
    tree = done[message] = {}
    timed = _timed()
    for field in proto.fields(message) or ():
        container = _LIST if field.repeated else _MAP if field.is_map else _ONE
        if field.type == _TIME or field.type == _MICRO_TIME:
            tree[field.json_name] = _Field(
                _LEAF_MICRO if field.type == _MICRO_TIME else _LEAF_TIME, container, None)
        elif field.type in timed:
            child = _compile(field.type, done)
            if field.inline:
                tree.update(child)
            else:
                tree[field.json_name] = _Field(_MESSAGE, container, child)
    return tree


@cache
def _timed() -> frozenset[str]:
    """The messages with a time somewhere inside (a fixed point over the message graph), so
    compiling prunes every branch that has none. Messages the codec converts by name
    (Quantity, IntOrString, ...) are no structs to descend into."""
    edges: dict[str, set[str]] = {}
    timed: set[str] = set()
    for message in proto.messages():
        if not proto.has_go_struct(message):
            continue
        for field in proto.fields(message) or ():
            if field.type == _TIME or field.type == _MICRO_TIME:
                timed.add(message)
            elif proto.has_go_struct(field.type):
                edges.setdefault(field.type, set()).add(message)
    pending = list(timed)
    while pending:
        for parent in edges.get(pending.pop(), ()):
            if parent not in timed:
                timed.add(parent)
                pending.append(parent)
    return frozenset(timed)


def normalize(obj: dict[str, Any], api_version: str, kind: str) -> None:
    """Rewrite, in place, every time field of `obj` (an object of this kind) as upstream
    stores it; raise TimeFieldError at the first value upstream's decoder refuses. Values of
    the wrong shape on the way (a list where an object belongs) are left to the type checks."""
    tree = tree_of(api_version, kind)
    if tree:
        _walk(obj, tree)


def _walk(obj: dict[str, Any], tree: Tree) -> None:
    for key, field in tree.items():
        value = obj.get(key)
        if value is None:  # absent or null: null is what upstream writes for a zero time
            continue
        node = field.node
        if field.container == _ONE:
            if node is None:
                obj[key] = reencode(value, field.what == _LEAF_MICRO)
            elif isinstance(value, dict):
                _walk(value, node)
            continue
        if field.container == _LIST:
            if not isinstance(value, list):
                continue
            indexes: Any = range(len(value))
        elif isinstance(value, dict):
            indexes = list(value)
        else:
            continue
        for index in indexes:
            item = value[index]
            if node is None:
                value[index] = reencode(item, field.what == _LEAF_MICRO)
            elif isinstance(item, dict):
                _walk(item, node)


def reencode(value: Any, micro: bool) -> str | None:
    """One JSON value of a Time (micro: MicroTime) field as upstream re-encodes it."""
    if isinstance(value, str):
        try:
            return gotime.reencode(value, micro)
        except gotime.TimeParseError as exc:
            raise TimeFieldError(str(exc)) from None
    if value is None:
        return None
    # metav1's UnmarshalJSON decodes into a Go string first
    raise TimeFieldError(f"json: cannot unmarshal {go_json_type(value)} into Go value of type "
                         "string")
