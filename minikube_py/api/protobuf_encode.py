"""Encode JSON-shaped API objects as Kubernetes protobuf: the `k8s\\x00` envelope and watch frames.

Kubernetes piece: k8s.io/apimachinery/pkg/runtime/serializer/protobuf (Serializer.Encode: the
magic `k8s\\x00`, then runtime.Unknown {typeMeta, raw, contentEncoding, contentType}; the raw
serializer and LengthDelimitedFramer of watch streams: a 4-byte big-endian length before each
metav1.WatchEvent {type, object: RawExtension{raw: the object's envelope}}) and the gogo Marshal
methods of the API types. Why it exists: client-go components ask for
`application/vnd.kubernetes.protobuf` first; our objects are dicts, so this module writes, from
the same compiled tables the decoder uses (protobuf_tables.py), the bytes a Go server would
send -- fields in number order, Time as seconds, IntOrString and Quantity as their messages,
inline structs as their embedded message.

What a Go struct cannot hold is not written: keys the message does not have (a newer field, a
typo kept by `fieldValidation=Ignore`) and values of the wrong JSON type. A zero is written for
Go pointer fields (present means set: `replicas: 0`) and for fields JSON writes zeros of (no
omitempty); a Go decoder reads any other absent field as its zero, so the bytes decode to the
same object.
"""

from __future__ import annotations

import base64
import binascii
import struct
from operator import itemgetter
from typing import Any

import orjson

from .kinds import proto
from .protobuf import MAGIC
from .protobuf_tables import (
    BOOL, BYTES, DOUBLE, INT32, INT64, JSON, MESSAGE, RAW, STRING, Field, Table,
    table as message_table, varint_bytes,
)

_DOUBLE = struct.Struct("<d")
_FIRST = itemgetter(0)
#: runtime.Unknown's contentEncoding (3) and contentType (4), empty: gogo writes them anyway
_UNKNOWN_TAIL = b"\x1a\x00\x22\x00"
_VARINTS = [varint_bytes(n) for n in range(256)]


class NoMessage(LookupError):
    """The object's apiVersion/kind has no protobuf message (upstream: not encodable)."""


def _varint(n: int) -> bytes:
    if 0 <= n < 256:
        return _VARINTS[n]
    return varint_bytes(n & 0xFFFFFFFFFFFFFFFF)  # negatives: ten bytes, two's complement


def _len(key: bytes, payload: bytes) -> bytes:
    n = len(payload)
    return key + (_VARINTS[n] if n < 256 else varint_bytes(n)) + payload


def _scalar(f: Field, value: Any) -> bytes | None:
    """One occurrence of a scalar field, or None for a value its Go type cannot hold."""
    kind = f.kind
    if kind == STRING:
        return _len(f.key, value.encode()) if isinstance(value, str) else None
    if kind == INT32 or kind == INT64:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                return None
        return f.key + _varint(value)
    if kind == BOOL:
        return f.key + (b"\x01" if value else b"\x00") if isinstance(value, bool) else None
    if kind == DOUBLE:
        return f.key + _DOUBLE.pack(value) if isinstance(value, (int, float)) else None
    if kind == BYTES:
        if not isinstance(value, str):
            return None
        try:
            return _len(f.key, base64.b64decode(value))
        except (binascii.Error, ValueError):
            return None
    if kind == JSON or kind == RAW:
        return _len(f.key, value if isinstance(value, bytes) else orjson.dumps(value))
    return None


def _one(f: Field, value: Any) -> bytes | None:
    if f.kind == MESSAGE:
        t = f.table
        if t.unconvert is not None:
            return _len(f.key, message(t, t.unconvert(value)))
        return _len(f.key, message(t, value)) if isinstance(value, dict) else None
    return _scalar(f, value)


def _map(f: Field, value: Any) -> bytes:
    if not isinstance(value, dict):
        return b""
    value_field = f.table.by_number[2]
    out = []
    for k, v in sorted(value.items()) if len(value) > 1 else value.items():  # as gogo: by key
        if v is None and value_field.kind != MESSAGE:
            continue
        encoded = _one(value_field, v) if v is not None else _len(value_field.key, b"")
        if encoded is not None:
            out.append(_len(f.key, _len(b"\x0a", str(k).encode()) + encoded))
    return b"".join(out)


def message(t: Table, obj: dict[str, Any]) -> bytes:
    """The bytes of message `t` holding the JSON object `obj`, fields in number order."""
    parts: list[tuple[int, bytes]] = []
    by_name = t.by_name
    last, ordered = 0, True
    for name, value in obj.items():
        f = by_name.get(name)
        if f is None:
            continue
        if value is None:  # a Go struct field is never nil: JSON null is its zero value
            if f.kind != MESSAGE or f.pointer or f.repeated or f.is_map:
                continue
            data = _len(f.key, b"")
        elif f.is_map:
            data = _map(f, value)
        elif f.repeated:
            if not isinstance(value, list):
                continue
            data = b"".join(filter(None, (_one(f, v) for v in value)))
        else:
            if not f.keep_zero and f.kind != MESSAGE and (value == 0 or value == "") \
                    and not isinstance(value, dict):
                continue  # an omitempty zero: a Go decoder reads an absent field the same
            data = _one(f, value)
        if not data:
            continue
        if f.number < last:
            ordered = False
        last = f.number
        parts.append((f.number, data))
    for f in t.inline:  # an embedded struct: its fields live in this same JSON object
        parts.append((f.number, _len(f.key, message(f.table, obj))))
        ordered = False
    if not ordered:
        parts.sort(key=_FIRST)
    return b"".join(p[1] for p in parts)


def object_message(obj: dict[str, Any]) -> tuple[str, str, bytes]:
    """(apiVersion, kind, the object's message bytes); NoMessage when it has no message."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    name = proto.kind_message(api_version, kind) if kind else None
    t = message_table(name) if name else None
    if t is None:
        raise NoMessage(f"{api_version} {kind}")
    return api_version, kind, message(t, obj)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """`k8s\\x00` + runtime.Unknown{typeMeta{apiVersion, kind}, raw, "", ""}."""
    type_meta = _len(b"\x0a", api_version.encode()) + _len(b"\x12", kind.encode())
    return MAGIC + _len(b"\x0a", type_meta) + _len(b"\x12", raw) + _UNKNOWN_TAIL


def encode_object(obj: dict[str, Any]) -> bytes:
    """A whole response body for one object (Pod, Status, PodList, ...)."""
    return envelope(*object_message(obj))


def list_body(api_version: str, list_kind: str, list_meta: dict[str, Any],
              items: list[bytes]) -> bytes:
    """A list response from already-encoded item messages (`items` = repeated field 2)."""
    meta = message(message_table(f"{proto.META}.ListMeta"), list_meta)
    raw = _len(b"\x0a", meta) + b"".join(_len(b"\x12", item) for item in items)
    return envelope(api_version, list_kind, raw)


def watch_frame(event_type: str, object_envelope: bytes) -> bytes:
    """One watch event on a `;stream=watch` protobuf stream: length, then the WatchEvent."""
    event = _len(b"\x0a", event_type.encode()) + _len(b"\x12", _len(b"\x0a", object_envelope))
    return struct.pack(">I", len(event)) + event
