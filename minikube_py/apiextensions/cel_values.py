"""A custom resource's values as CEL sees them, typed by the structural schema.

Kubernetes piece: k8s.io/apiserver/pkg/cel/common/values.go (UnstructuredToVal): a `number`
is a double even when the JSON has `1` (CEL does not mix int and double: `self.ratio * 2.0`
must work), `date-time` and `date` strings are timestamps, `byte` strings are bytes. Property
names are escaped as upstream's escaping.go does (`foo-bar` is `self.foo__dash__bar`, a
property named `namespace` is `self.__namespace__`; one that cannot be escaped is not
visible). At the root, `metadata` shows only `name` and `generateName`
(model.WithTypeAndObjectMeta). Only subtrees that hold such a field are copied
(`Node.converts`); the rest is passed as is.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .schema import Node


#: CEL's reserved words: a property with one of these names is `__name__` (escaping.go)
_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue",
                       "else", "for", "function", "if", "import", "let", "loop", "package",
                       "namespace", "return", "var", "void", "while"})
_EXPAND = re.compile(r"__|[^a-zA-Z0-9_]")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_ROOT_METADATA = ("name", "generateName")


def escape(name: str) -> str | None:
    """The name a property has in CEL (upstream cel.Escape); None when it has none."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    if _EXPAND.search(name) is None:
        return name
    if any(m.group(0) not in _ESCAPES for m in _EXPAND.finditer(name)):
        return None
    return _EXPAND.sub(lambda m: _ESCAPES[m.group(0)], name)


def needs_escape(name: str) -> bool:
    return escape(name) != name


def root_view(obj: Any) -> Any:
    """The root object as a rule sees it: metadata reduced to name and generateName."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj
    meta = obj["metadata"]
    return {**obj, "metadata": {k: meta[k] for k in _ROOT_METADATA if k in meta}}


def to_cel(value: Any, node: Node) -> Any:
    """`value` as CEL sees it under `node`: doubles for `number`, timestamps for
    `date-time`/`date`, bytes for `byte`, escaped property names; a copy only where
    something changes."""
    if isinstance(value, dict):
        if not node.converts:
            return value
        out: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            name = key
            sub = node.properties.get(key)
            if sub is not None:
                name = escape(key)
                changed = changed or name != key
                if name is None:
                    continue
            else:
                sub = node.additional
            new = to_cel(item, sub) if sub is not None and sub.converts else item
            changed = changed or new is not item
            out[name] = new
        return out if changed else value
    if isinstance(value, list):
        if node.items is None or not node.items.converts:
            return value
        return [to_cel(item, node.items) for item in value]
    if node.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if node.type == "string" and isinstance(value, str):
        return _typed_string(value, node.format)
    return value


def _typed_string(value: str, fmt: str) -> Any:
    try:
        if fmt == "date-time":
            return datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace(
                "z", "+00:00"))
        if fmt == "date":
            day = datetime.date.fromisoformat(value)
            return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return value
    return value
