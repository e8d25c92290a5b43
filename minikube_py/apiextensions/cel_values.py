"""A custom resource's values as CEL sees them, typed by the structural schema.

Kubernetes piece: k8s.io/apiserver/pkg/cel/common/values.go (UnstructuredToVal): a `number`
is a double even when the JSON has `1` (CEL does not mix int and double: `self.ratio * 2.0`
must work), `date-time` and `date` strings are timestamps, `byte` strings are bytes. Only
subtrees that hold such a field are copied (`Node.converts`); the rest is passed as is.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .schema import Node


def to_cel(value: Any, node: Node) -> Any:
    """`value` as CEL sees it under `node`: doubles for `number`, timestamps for
    `date-time`/`date`, bytes for `byte`; a copy only where something changes."""
    if isinstance(value, dict):
        out = None
        for key, item in value.items():
            sub = node.properties.get(key) or node.additional
            if sub is None or not sub.converts:
                continue
            new = to_cel(item, sub)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
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
