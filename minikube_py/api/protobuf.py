"""Decode the protobuf request bodies kubectl sends into the dict their JSON would have been.

Kubernetes piece: k8s.io/apimachinery/pkg/runtime/serializer/protobuf (the `k8s\\x00` envelope
around a runtime.Unknown {typeMeta 1: {apiVersion 1, kind 2}, raw 2, contentEncoding 3,
contentType 4}) and the gogo-generated Unmarshal methods of the API types. Why it exists: from
1.32 on, kubectl's typed `create` subcommands (deployment, service *, configmap, secret *,
namespace, serviceaccount, quota, job, cronjob; also token and autoscale, whose kinds have no
table here) POST `application/vnd.kubernetes.protobuf`. The rest of our server speaks JSON-shaped
dicts, so this module turns such a body into exactly the dict the JSON body would have been --
same names, same omissions, `creationTimestamp: None` for a zero Time -- and everything after
decoding stays one code path. Responses stay JSON, which kubectl accepts.

The wire format is read by hand (varint, 64-bit, length-delimited, 32-bit); the field tables are
data in protobuf_schemas.py. Unknown field numbers are skipped, as protobuf requires so newer
clients keep working; malformed bodies are 400 BadRequest with upstream's decoder texts
("unexpected EOF", "proto: integer overflow").
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from . import errors
from .bounds import MAX_NODES, check_json_body, too_large
from .protobuf_schemas import KINDS, SCHEMAS

PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

_MAGIC = b"k8s\x00"
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DOUBLE = struct.Struct("<d")

# Field kinds: how one occurrence on the wire becomes a JSON value.
_STRING, _INT32, _INT64, _BOOL, _BYTES, _DOUBLE_KIND, _JSON, _MESSAGE, _UNSUPPORTED = range(9)
_SCALARS = {"string": _STRING, "int32": _INT32, "int64": _INT64, "bool": _BOOL,
            "bytes": _BYTES, "double": _DOUBLE_KIND,
            "json": _JSON}  # internal: bytes holding JSON (FieldsV1's raw)
_WIRE = {_STRING: _LEN, _INT32: _VARINT, _INT64: _VARINT, _BOOL: _VARINT, _BYTES: _LEN,
         _DOUBLE_KIND: _I64, _JSON: _LEN, _MESSAGE: _LEN, _UNSUPPORTED: _LEN}


class _DecodeError(Exception):
    """A malformed body; `path` names the field it was found in, outermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


@dataclass(slots=True)
class _Field:
    """One compiled table entry (see protobuf_schemas.py for the notation it comes from)."""

    name: str
    kind: int
    repeated: bool = False
    is_map: bool = False
    keep_zero: bool = False
    table: dict[int, _Field] = field(default_factory=dict)  # message fields, or a map's value
    convert: Callable[[dict[str, Any]], Any] | None = None  # special messages (Time, ...)
    wire: int = field(init=False, default=_LEN)  # the wire type one occurrence has

    def __post_init__(self) -> None:
        self.wire = _WIRE[self.kind]


# -- special messages: their JSON form is not an object ----------------------------------------

def _time_json(m: dict[str, Any]) -> str | None:
    """metav1.Time: the zero time (seconds 0, nanos 0) is JSON null, others RFC3339 in UTC."""
    seconds, nanos = m.get("seconds", 0), m.get("nanos", 0)
    if not seconds and not nanos:
        return None
    try:  # like Go's time.Unix, nanos outside [0, 1e9) carry into the seconds
        t = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise _DecodeError("Time.MarshalJSON: year outside of range [0,9999]") from None
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T"
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z")


def _int_or_string_json(m: dict[str, Any]) -> int | str:
    kind = m.get("type", 0)
    if kind == 0:
        return m.get("intVal", 0)
    if kind == 1:
        return m.get("strVal", "")
    raise _DecodeError("impossible IntOrString.Type")


_SPECIALS: dict[str, tuple[dict[int, tuple[str, str]], Callable[[dict[str, Any]], Any]]] = {
    "Time": ({1: ("seconds", "*int64"), 2: ("nanos", "*int32")}, _time_json),
    "Quantity": ({1: ("string", "*string")}, lambda m: m.get("string") or "0"),
    "IntOrString": ({1: ("type", "*int64"), 2: ("intVal", "*int32"), 3: ("strVal", "*string")},
                    _int_or_string_json),
    "FieldsV1": ({1: ("raw", "*json")}, lambda m: m.get("raw")),
}


# -- compiling the tables ----------------------------------------------------------------------

def _compile_type(name: str, type_: str, tables: dict[str, dict[int, _Field]]) -> _Field:
    if type_ == "-":
        return _Field(name, _UNSUPPORTED)
    repeated, is_map = type_.startswith("[]"), type_.startswith("{}")
    if repeated or is_map:
        type_ = type_[2:]
    keep_zero = type_.startswith("*")
    type_ = type_.lstrip("*")
    if type_ in _SCALARS:
        f = _Field(name, _SCALARS[type_], repeated, False, keep_zero)
    elif type_ in _SPECIALS:
        f = _Field(name, _MESSAGE, repeated, False, keep_zero, tables[type_],
                   _SPECIALS[type_][1])
    else:
        f = _Field(name, _MESSAGE, repeated, False, keep_zero, tables[type_])
    if is_map:  # a map is a repeated {key 1, value 2} entry; `table` holds the value's field
        return _Field(name, _MESSAGE, False, True, False, {2: f})
    return f


def _compile(schemas: dict[str, dict[int, tuple[str, str]]]) -> dict[str, dict[int, _Field]]:
    """Turn the name tables into linked _Field tables (filled in place, so cycles are fine)."""
    sources = {**schemas, **{name: spec for name, (spec, _) in _SPECIALS.items()}}
    tables: dict[str, dict[int, _Field]] = {name: {} for name in sources}
    for name, spec in sources.items():
        for number, (json_name, type_) in spec.items():
            tables[name][number] = _compile_type(json_name, type_, tables)
    return tables


_TABLES = _compile(SCHEMAS)
_SUPPORTED = ", ".join(f"{av} {kind}" for av, kind in sorted(KINDS))


# -- the wire format ---------------------------------------------------------------------------

def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise _DecodeError("proto: integer overflow")
    raise _DecodeError("unexpected EOF")


def _length(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited field's bounds: (start, stop) of its payload."""
    n, pos = _varint(buf, pos, end)
    if pos + n > end:
        raise _DecodeError("unexpected EOF")
    return pos, pos + n


def _skip(buf: bytes, pos: int, end: int, wire: int) -> int:
    """Step over a field we have no table entry for (a newer sender's field)."""
    if wire == _VARINT:
        return _varint(buf, pos, end)[1]
    if wire == _LEN:
        return _length(buf, pos, end)[1]
    size = 8 if wire == _I64 else 4 if wire == _I32 else 0
    if not size:
        raise _DecodeError(f"proto: illegal wireType {wire}")
    if pos + size > end:
        raise _DecodeError("unexpected EOF")
    return pos + size


def _signed(v: int, kind: int) -> int:
    """Go's int64(uint64) / int32(uint64) conversions of a decoded varint."""
    if kind == _INT32:
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v
    return v - (1 << 64) if v >= 1 << 63 else v


def _scalar(f: _Field, buf: bytes, pos: int, end: int) -> tuple[Any, int]:
    """Read one occurrence of scalar field `f` starting at its payload."""
    kind = f.kind
    if kind in (_INT32, _INT64, _BOOL):
        v, pos = _varint(buf, pos, end)
        return (v != 0 if kind == _BOOL else v if v < 1 << 31 else _signed(v, kind)), pos
    if kind == _DOUBLE_KIND:
        if pos + 8 > end:
            raise _DecodeError("unexpected EOF")
        return _DOUBLE.unpack_from(buf, pos)[0], pos + 8
    start, stop = _length(buf, pos, end)
    return _bytes_value(f, buf[start:stop]), stop


def _bytes_value(f: _Field, raw: bytes) -> Any:
    if f.kind == _STRING:
        return raw.decode("utf-8", "replace")  # Go's JSON encoder replaces bad UTF-8 too
    if f.kind == _BYTES:
        return base64.b64encode(raw).decode("ascii")
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        raise _DecodeError(f"invalid JSON in {f.name}: {exc}") from None
    check_json_body(raw, value, f"{f.name} (embedded JSON)")  # the one unbounded-depth field
    return value


def _message(buf: bytes, pos: int, end: int, table: dict[int, _Field],
             out: dict[str, Any]) -> None:
    """Decode the message in buf[pos:end] into `out`, one field occurrence at a time.

    This loop and _field run for every field of every request body, so one-byte varints (tags,
    short lengths, small numbers) are read inline rather than through _varint."""
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos, end)
        f = table.get(key >> 3)
        if f is None:
            pos = _skip(buf, pos, end, key & 7)
            continue
        try:
            pos = _field(f, key & 7, buf, pos, end, out)
        except _DecodeError as exc:
            if f.name:  # an inline struct adds no step, as in its JSON
                exc.path.insert(0, _path_step(f, out))
            raise


def _path_step(f: _Field, out: dict[str, Any]) -> str:
    if f.repeated and f.kind == _MESSAGE:
        return f"{f.name}[{len(out.get(f.name, ()))}]"  # the element being decoded
    return f.name


def _field(f: _Field, wire: int, buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
    """Store one occurrence of `f` into `out` and return the position after it."""
    if wire != f.wire:
        return _unexpected_wire(f, wire, buf, pos, end, out)
    kind = f.kind
    if wire == _LEN:
        if pos < end and buf[pos] < 0x80:
            start = pos + 1
            stop = start + buf[pos]
            if stop > end:
                raise _DecodeError("unexpected EOF")
        else:
            start, stop = _length(buf, pos, end)
        if kind == _MESSAGE:
            _store_message(f, buf, start, stop, out)
            return stop
        if kind == _UNSUPPORTED:
            raise _DecodeError("not supported in protobuf bodies; send application/json")
        raw = buf[start:stop]
        value = raw.decode("utf-8", "replace") if kind == _STRING else _bytes_value(f, raw)
        pos = stop
    elif kind != _DOUBLE_KIND and pos < end and buf[pos] < 0x80:
        value = buf[pos]
        pos += 1
        if kind == _BOOL:
            value = value != 0
    else:
        value, pos = _scalar(f, buf, pos, end)
    if f.repeated:
        values = out.setdefault(f.name, [])
        values.append(value)
        if len(values) > MAX_NODES:  # stop decoding a list that can only be refused
            raise too_large("request body", len(values))
    elif value or f.keep_zero:  # omitempty: Go's JSON drops the zero gogo always writes
        out[f.name] = value
    else:
        out.pop(f.name, None)
    return pos


def _unexpected_wire(f: _Field, wire: int, buf: bytes, pos: int, end: int,
                     out: dict[str, Any]) -> int:
    """Packed repeated scalars (one length-delimited run) are legal; anything else is not."""
    if not (f.repeated and wire == _LEN and f.wire != _LEN):
        raise _DecodeError(f"proto: wrong wireType = {wire}")  # the path names the field
    start, stop = _length(buf, pos, end)
    values = out.setdefault(f.name, [])
    while start < stop:
        value, start = _scalar(f, buf, start, stop)
        values.append(value)
    if len(values) > MAX_NODES:
        raise too_large("request body", len(values))
    return stop


def _store_message(f: _Field, buf: bytes, start: int, stop: int, out: dict[str, Any]) -> None:
    if f.is_map:
        key, value = _map_entry(f, buf, start, stop)
        out.setdefault(f.name, {})[key] = value
    elif not f.name:  # Go embedded struct with json:",inline": its fields join the parent
        _message(buf, start, stop, f.table, out)
    elif f.repeated:
        out.setdefault(f.name, []).append(_submessage(f, buf, start, stop, {}))
    else:  # a repeated occurrence merges into the first, as protobuf specifies
        previous = out.get(f.name)
        out[f.name] = _submessage(f, buf, start, stop,
                                  previous if isinstance(previous, dict) and not f.convert else {})


def _submessage(f: _Field, buf: bytes, start: int, stop: int, into: dict[str, Any]) -> Any:
    _message(buf, start, stop, f.table, into)
    return f.convert(into) if f.convert else into


def _map_entry(f: _Field, buf: bytes, start: int, stop: int) -> tuple[str, Any]:
    """A map entry {key 1, value 2}; a missing part is its zero value, as in Go."""
    entry: dict[str, Any] = {}
    value_field = f.table[2]
    key = ""
    while start < stop:
        tag, start = _varint(buf, start, stop)
        if tag == (1 << 3 | _LEN):
            a, start = _length(buf, start, stop)
            key = buf[a:start].decode("utf-8", "replace")
        elif tag >> 3 == 2:
            start = _field(value_field, tag & 7, buf, start, stop, entry)
        else:
            start = _skip(buf, start, stop, tag & 7)
    if value_field.name in entry:
        return key, entry[value_field.name]
    return key, _zero(value_field)


def _zero(f: _Field) -> Any:
    if f.kind == _MESSAGE:
        return f.convert({}) if f.convert else {}
    return {_STRING: "", _BYTES: "", _BOOL: False, _DOUBLE_KIND: 0.0, _JSON: None}.get(f.kind, 0)


# -- the envelope ------------------------------------------------------------------------------

def _envelope(data: bytes) -> tuple[str, str, int, int]:
    """runtime.Unknown after the magic: (apiVersion, kind, raw start, raw stop)."""
    api_version = kind = ""
    raw = (0, 0)
    pos, end = len(_MAGIC), len(data)
    while pos < end:
        key, pos = _varint(data, pos, end)
        if key == (1 << 3 | _LEN):  # typeMeta {apiVersion 1, kind 2}
            start, pos = _length(data, pos, end)
            meta: dict[str, Any] = {}
            _message(data, start, pos, _TYPE_META, meta)
            api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        elif key == (2 << 3 | _LEN):
            raw = _length(data, pos, end)
            pos = raw[1]
        else:  # contentEncoding 3 / contentType 4: upstream's decoder ignores them too
            pos = _skip(data, pos, end, key & 7)
    return api_version, kind, raw[0], raw[1]


_TYPE_META = {1: _Field("apiVersion", _STRING), 2: _Field("kind", _STRING)}


def decode_object(data: bytes) -> dict[str, Any]:
    """A protobuf request body -> {"apiVersion": ..., "kind": ..., **fields as JSON has them}.

    Raises errors.bad_request (400) for a body that is not a Kubernetes protobuf envelope, is
    truncated or malformed, or holds a kind this module has no table for."""
    if not data:
        raise errors.bad_request("the object provided is unrecognized: empty data")
    if not data.startswith(_MAGIC):
        raise errors.bad_request(
            "the object provided is unrecognized: provided data does not appear to be a "
            "protobuf message, expected prefix [107 56 115 0]")
    if len(data) == len(_MAGIC):
        raise errors.bad_request("the object provided is unrecognized: empty body")
    try:
        api_version, kind, start, stop = _envelope(data)
    except _DecodeError as exc:
        raise errors.bad_request(f"the object provided is unrecognized: {exc.message}") from None
    table = _TABLES.get(KINDS.get((api_version, kind), ""))
    if table is None:
        raise errors.bad_request(
            f'the body of the request was in an unknown format - no protobuf decoding for '
            f'{kind or "<no kind>"} in version "{api_version}": protobuf is supported for '
            f"{_SUPPORTED}; use application/json")
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    try:
        _message(data, start, stop, table, obj)
    except _DecodeError as exc:
        where = ".".join(exc.path)
        detail = f"{where}: {exc.message}" if where else exc.message
        version = api_version.rpartition("/")[2]
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}') from None
    return obj
