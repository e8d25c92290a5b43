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
from collections.abc import Callable
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
#: every varint below 2**14 (all lengths of a pod's fields), so a length costs one index; one
#: byte below 128, two above (written out: varint_bytes 16,384 times took ~30 ms of start-up)
_SMALL = 1 << 14
_VARINTS = [bytes((n,)) for n in range(0x80)] + \
    [bytes((n & 0x7F | 0x80, n >> 7)) for n in range(0x80, _SMALL)]
#: encoded payloads of special messages by their JSON text (timestamps repeat across objects)
_SPECIAL_CACHE_SIZE = 4096
#: key sequences planned per message before the plans start over
_MAX_PLANS = 256


class NoMessage(LookupError):
    """The object's apiVersion/kind has no protobuf message (upstream: not encodable)."""


def _varint(n: int) -> bytes:
    if 0 <= n < _SMALL:
        return _VARINTS[n]
    return varint_bytes(n & 0xFFFFFFFFFFFFFFFF)  # negatives: ten bytes, two's complement


def _len(key: bytes, payload: bytes) -> bytes:
    n = len(payload)
    return key + (_VARINTS[n] if n < _SMALL else varint_bytes(n)) + payload


# -- one value of a field: value -> its bytes (tag included), None when Go cannot hold it ------

def _one_encoder(f: Field) -> Callable[[Any], bytes | None]:
    """A closure writing one occurrence of `f`, chosen once per field so the per-value work is
    only the type check and the bytes."""
    key, kind = f.key, f.kind
    if kind == STRING:
        def string(value: Any) -> bytes | None:
            if isinstance(value, str):
                data = value.encode()
                n = len(data)
                return key + (_VARINTS[n] if n < _SMALL else varint_bytes(n)) + data
            return None
        return string
    if kind == INT32 or kind == INT64:
        def integer(value: Any) -> bytes | None:
            if value.__class__ is not int:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    return None
                if isinstance(value, float):
                    if not value.is_integer():
                        return None
                    value = int(value)
            return key + (_VARINTS[value] if 0 <= value < _SMALL else _varint(value))
        return integer
    if kind == BOOL:
        true, false = key + b"\x01", key + b"\x00"
        return lambda value: (true if value else false) if isinstance(value, bool) else None
    if kind == DOUBLE:
        return lambda value: key + _DOUBLE.pack(value) if isinstance(value, (int, float)) \
            else None
    if kind == BYTES:
        def raw_bytes(value: Any) -> bytes | None:
            if not isinstance(value, str):
                return None
            try:
                return _len(key, base64.b64decode(value))
            except (binascii.Error, ValueError):
                return None
        return raw_bytes
    if kind == JSON or kind == RAW:
        return lambda value: _len(key, value if isinstance(value, bytes) else orjson.dumps(value))
    t = f.table
    assert t is not None
    if t.unconvert is not None:
        return _special_encoder(key, t)

    def nested(value: Any) -> bytes | None:
        return _len(key, message(t, value)) if isinstance(value, dict) else None
    return nested


def _special_encoder(key: bytes, t: Table) -> Callable[[Any], bytes]:
    """Time, Quantity, IntOrString...: their JSON is a string or number; the same text always
    encodes to the same bytes, so those are remembered (bounded)."""
    unconvert = t.unconvert
    assert unconvert is not None
    seen: dict[Any, bytes] = {}

    def special(value: Any) -> bytes:
        hashable = value.__class__ in (str, int)
        if hashable:
            hit = seen.get(value)
            if hit is not None:
                return hit
        data = _len(key, message(t, unconvert(value)))
        if hashable:
            if len(seen) >= _SPECIAL_CACHE_SIZE:
                seen.clear()
            seen[value] = data
        return data
    return special


# -- one field of a message: its JSON value -> all its bytes ("" for nothing to write) ------

def _field_encoder(f: Field) -> Callable[[Any], bytes | None]:
    one = _one_encoder(f)
    if f.is_map:
        return _map_encoder(f)
    if f.repeated:
        def repeated(value: Any) -> bytes | None:
            if value.__class__ is not list:
                return None
            return b"".join([data for data in map(one, value) if data])
        return repeated
    if f.kind == MESSAGE:
        if f.pointer:  # a nil pointer: nothing on the wire
            return lambda value: None if value is None else one(value)
        empty = f.key + b"\x00"  # a Go struct field is never nil: JSON null is its zero value
        return lambda value: empty if value is None else one(value)
    if f.keep_zero:
        return lambda value: None if value is None else one(value)

    def omitempty(value: Any) -> bytes | None:
        if value is None or value == 0 or value == "":
            return None  # an omitempty zero: a Go decoder reads an absent field the same
        return one(value)
    return omitempty


def _map_encoder(f: Field) -> Callable[[Any], bytes | None]:
    value_field = f.table.by_number[2]
    one = _one_encoder(value_field)
    key, value_key = f.key, value_field.key
    nested = value_field.kind == MESSAGE
    empty_value = _len(value_key, b"")

    def entries(value: Any) -> bytes | None:
        if value.__class__ is not dict:
            return None
        out = []
        for k, v in sorted(value.items()) if len(value) > 1 else value.items():  # gogo: by key
            if v is None:
                if not nested:
                    continue
                encoded = empty_value
            else:
                encoded = one(v)
                if encoded is None:
                    continue
            name = str(k).encode()
            n = len(name)
            entry = b"\x0a" + (_VARINTS[n] if n < _SMALL else varint_bytes(n)) + name + encoded
            out.append(_len(key, entry))
        return b"".join(out)
    return entries


def _encoders(t: Table) -> dict[str, tuple[int, Callable[[Any], bytes | None]]]:
    encoders = t.encoders
    if encoders is None:
        encoders = t.encoders = {name: (f.number, _field_encoder(f))
                                 for name, f in t.by_name.items()}
    return encoders


def message(t: Table, obj: dict[str, Any]) -> bytes:
    """The bytes of message `t` holding the JSON object `obj`, fields in number order.

    Objects of one kind repeat the same keys in the same order, so the walk is planned once
    per key sequence: which keys are fields, in which order to write them."""
    plans = t.plans
    if plans is None:
        plans = t.plans = {}
    keys = tuple(obj)
    plan = plans.get(keys)
    if plan is None:
        plan = _plan(t, keys)
    parts = []
    for name, encode in plan:
        data = encode(obj[name] if name is not None else obj)
        if data:
            parts.append(data)
    return b"".join(parts)


def _plan(t: Table, keys: tuple[str, ...]) -> tuple[tuple[str | None, Callable], ...]:
    """(key, encoder) in field-number order; key None for an embedded struct, whose fields
    live in this same JSON object."""
    encoders = _encoders(t)
    steps = [(encoders[name][0], name, encoders[name][1]) for name in keys if name in encoders]
    for f in t.inline:
        steps.append((f.number, None, _inline_encoder(f)))
    steps.sort(key=_FIRST)
    plan = tuple((name, encode) for _, name, encode in steps)
    if len(t.plans) >= _MAX_PLANS:  # objects with ever-new key sets: start over
        t.plans.clear()
    t.plans[keys] = plan
    return plan


def _inline_encoder(f: Field) -> Callable[[dict[str, Any]], bytes]:
    key, sub = f.key, f.table
    return lambda obj: _len(key, message(sub, obj))


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
