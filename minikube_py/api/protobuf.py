"""Decode Kubernetes protobuf bodies into the dict their JSON would have been.

Kubernetes piece: k8s.io/apimachinery/pkg/runtime/serializer/protobuf (the `k8s\\x00` envelope
around a runtime.Unknown {typeMeta 1: {apiVersion 1, kind 2}, raw 2, contentEncoding 3,
contentType 4}) and the gogo-generated Unmarshal methods of the API types. Why it exists: client-go
components (kube-scheduler, kube-controller-manager, kubelets) send `application/vnd.kubernetes.
protobuf` bodies -- Binding, Event, DeleteOptions, status updates -- and kubectl 1.32+ does for its
typed `create` subcommands. The rest of our server speaks JSON-shaped dicts, so this module turns
such a body into exactly the dict the JSON body would have been -- same names, same omissions,
`creationTimestamp: None` for a zero Time -- and everything after decoding stays one code path.

The wire format is read by hand (varint, 64-bit, length-delimited, 32-bit); the field tables are
compiled from upstream's descriptors (protobuf_tables.py, api/kinds/). Unknown field numbers are
skipped, as protobuf requires so newer clients keep working; malformed bodies are 400 BadRequest
with upstream's decoder texts ("unexpected EOF", "proto: integer overflow"). Encoding is
protobuf_encode.py.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

import orjson

from . import errors
from .bounds import MAX_NODES, check_json_body, too_large
from .kinds import proto
from .protobuf_tables import (
    BOOL, BYTES, DOUBLE, I32, I64, INT32, INT64, LEN, MESSAGE, RAW, STRING, VARINT, DecodeError,
    Field, Table, bytes_json, table as message_table, time_text,
)

PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_MAGIC = MAGIC
_DOUBLE = struct.Struct("<d")
_DecodeError = DecodeError
#: nested objects (RawExtension holding another `k8s\x00` envelope) allowed inside one body
MAX_NESTED_OBJECTS = 8
_nesting = threading.local()  # decoding may run on the offload worker thread


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
    if wire == VARINT:
        return _varint(buf, pos, end)[1]
    if wire == LEN:
        return _length(buf, pos, end)[1]
    size = 8 if wire == I64 else 4 if wire == I32 else 0
    if not size:
        raise _DecodeError(f"proto: illegal wireType {wire}")
    if pos + size > end:
        raise _DecodeError("unexpected EOF")
    return pos + size


def _signed(v: int, kind: int) -> int:
    """Go's int64(uint64) / int32(uint64) conversions of a decoded varint."""
    if kind == INT32:
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v
    return v - (1 << 64) if v >= 1 << 63 else v


def _scalar(f: Field, buf: bytes, pos: int, end: int) -> tuple[Any, int]:
    """Read one occurrence of scalar field `f` starting at its payload."""
    kind = f.kind
    if kind in (INT32, INT64, BOOL):
        v, pos = _varint(buf, pos, end)
        return (v != 0 if kind == BOOL else v if v < 1 << 31 else _signed(v, kind)), pos
    if kind == DOUBLE:
        if pos + 8 > end:
            raise _DecodeError("unexpected EOF")
        return _DOUBLE.unpack_from(buf, pos)[0], pos + 8
    start, stop = _length(buf, pos, end)
    return _bytes_value(f, buf[start:stop]), stop


def _bytes_value(f: Field, raw: bytes) -> Any:
    if f.kind == STRING:
        return raw.decode("utf-8", "replace")  # Go's JSON encoder replaces bad UTF-8 too
    if f.kind == BYTES:
        return bytes_json(raw)
    if f.kind == RAW and raw.startswith(MAGIC):  # an object a protobuf sender embedded
        return _nested_object(raw)
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        raise _DecodeError(f"invalid JSON in {f.name}: {exc}") from None
    check_json_body(raw, value, f"{f.name} (embedded JSON)")  # the one unbounded-depth field
    return value


def _message(buf: bytes, pos: int, end: int, t: Table, out: dict[str, Any]) -> None:
    """Decode the message in buf[pos:end] into `out`, one field occurrence at a time.

    This loop runs for every field of every request body: one-byte tags are read inline and
    each tag goes straight to its field's compiled closure (_decoder)."""
    decoders = t.decoders or _decoders(t)
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        elif pos + 1 < end and buf[pos + 1] < 0x80:  # fields 16-2047: two-byte tags
            key = key & 0x7F | buf[pos + 1] << 7
            pos += 2
        else:
            key, pos = _varint(buf, pos, end)
        decode = decoders.get(key)
        try:
            if decode is not None:
                pos = decode(buf, pos, end, out)
                continue
            f = t.by_number.get(key >> 3)
            if f is None:
                pos = _skip(buf, pos, end, key & 7)
            else:
                pos = _unexpected_wire(f, key & 7, buf, pos, end, out)
        except _DecodeError as exc:
            f = t.by_number.get(key >> 3)
            if f is not None and f.name:  # an inline struct adds no step, as in its JSON
                exc.path.insert(0, _path_step(f, out))
            raise


def _path_step(f: Field, out: dict[str, Any]) -> str:
    if f.repeated and f.kind == MESSAGE:
        return f"{f.name}[{len(out.get(f.name, ()))}]"  # the element being decoded
    return f.name


def _decoders(t: Table) -> dict[int, Any]:
    decoders = t.decoders
    if decoders is None:
        decoders = t.decoders = {f.number << 3 | f.wire: _decoder(f)
                                 for f in t.by_number.values()}
    return decoders


def _span(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited payload's (start, stop), a one-byte length read inline."""
    if pos < end and buf[pos] < 0x80:
        start = pos + 1
        stop = start + buf[pos]
        if stop > end:
            raise _DecodeError("unexpected EOF")
        return start, stop
    return _length(buf, pos, end)


def _decoder(f: Field) -> Any:
    """The closure that reads one occurrence of `f` (its payload, the tag already read) into
    the JSON object and returns the position after it. Chosen once per field: strings and
    varints, most of any object, get closures with nothing left to decide per value."""
    name, kind = f.name, f.kind
    if kind == MESSAGE:
        return _message_decoder(f)
    if kind == STRING and not f.repeated:
        keep = f.keep_zero

        def string(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
            if pos < end and buf[pos] < 0x80:
                start = pos + 1
                stop = start + buf[pos]
                if stop > end:
                    raise _DecodeError("unexpected EOF")
            else:
                start, stop = _length(buf, pos, end)
            if stop > start or keep:
                out[name] = buf[start:stop].decode("utf-8", "replace")
            else:
                out.pop(name, None)  # omitempty: Go's JSON drops the zero gogo always writes
            return stop
        return string
    if kind in (INT32, INT64, BOOL) and not f.repeated:
        keep, is_bool = f.keep_zero, kind == BOOL

        def varint(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
            if pos < end and buf[pos] < 0x80:
                value = buf[pos]
                pos += 1
            else:
                value, pos = _varint(buf, pos, end)
                if value >= 1 << 31 and not is_bool:
                    value = _signed(value, kind)
            if is_bool:
                value = value != 0
            if value or keep:
                out[name] = value
            else:
                out.pop(name, None)
            return pos
        return varint

    def other(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        if f.wire == LEN:
            start, pos = _span(buf, pos, end)
            raw = buf[start:pos]
            value = raw.decode("utf-8", "replace") if kind == STRING else _bytes_value(f, raw)
        else:
            value, pos = _scalar(f, buf, pos, end)
        if f.repeated:
            values = out.get(name)
            if values is None:
                values = out[name] = []
            values.append(value)
            if len(values) > MAX_NODES:  # stop decoding a list that can only be refused
                raise too_large("request body", len(values))
        elif value or f.keep_zero:
            out[name] = value
        else:
            out.pop(name, None)
        return pos
    return other


def _message_decoder(f: Field) -> Any:
    name, sub = f.name, f.table
    assert sub is not None
    if f.is_map:
        entry = _map_entry_decoder(f)
        if f.table.by_number[2].kind == STRING:
            return _string_map_decoder(name, entry)

        def map_entry(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
            start, stop = _span(buf, pos, end)
            _put_entry(out, name, *entry(buf, start, stop))
            return stop
        return map_entry
    if not name:  # Go embedded struct with json:",inline": its fields join the parent
        def inline(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
            start, stop = _span(buf, pos, end)
            _message(buf, start, stop, sub, out)
            return stop
        return inline
    nulls, convert = sub.nulls, sub.convert
    if f.repeated:
        def repeated(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
            start, stop = _span(buf, pos, end)
            values = out.get(name)
            if values is None:
                values = out[name] = []
            into: dict[str, Any] = {}
            _message(buf, start, stop, sub, into)
            if nulls:
                _fill_nulls(nulls, into)
            values.append(convert(into) if convert else into)
            return stop
        return repeated

    def single(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        start, stop = _span(buf, pos, end)
        into = out.get(name)  # a repeated occurrence merges into the first (protobuf)
        if convert or into.__class__ is not dict:
            into = {}
        _message(buf, start, stop, sub, into)
        if nulls:
            _fill_nulls(nulls, into)
        out[name] = convert(into) if convert else into
        return stop
    if sub.name in _TIMES:
        return _time_decoder(name, sub.name == _MICRO_TIME, single)
    return single


_MICRO_TIME = f"{proto.META}.MicroTime"
_TIMES = frozenset({f"{proto.META}.Time", _MICRO_TIME})


def _time_decoder(name: str, micro: bool, general: Any) -> Any:
    """metav1.Time and MicroTime ({seconds 1, nanos 2}, a few in every object): both varints
    read inline into the cached RFC 3339 text; anything unusual goes the general way."""

    def time_field(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        start, stop = _span(buf, pos, end)
        seconds = nanos = 0
        at = start
        while at < stop:
            tag = buf[at]
            if tag != 0x08 and tag != 0x10:
                return general(buf, pos, end, out)
            value, at = _varint(buf, at + 1, stop)
            if value >= 1 << 31:  # negative or huge: Go's conversions, the general way
                return general(buf, pos, end, out)
            if tag == 0x08:
                seconds = value
            else:
                nanos = value
        out[name] = time_text(seconds, nanos, micro) if seconds or nanos else None
        return stop
    return time_field


def _fill_nulls(nulls: tuple[str, ...], into: dict[str, Any]) -> None:
    """Lists and maps without omitempty that the wire did not have: Go's JSON prints null."""
    for name in nulls:
        if name not in into:
            into[name] = None


def _unexpected_wire(f: Field, wire: int, buf: bytes, pos: int, end: int,
                     out: dict[str, Any]) -> int:
    """Packed repeated scalars (one length-delimited run) are legal; anything else is not."""
    if not (f.repeated and wire == LEN and f.wire != LEN):
        raise _DecodeError(f"proto: wrong wireType = {wire}")  # the path names the field
    start, stop = _length(buf, pos, end)
    values = out.setdefault(f.name, [])
    while start < stop:
        value, start = _scalar(f, buf, start, stop)
        values.append(value)
    if len(values) > MAX_NODES:
        raise too_large("request body", len(values))
    return stop


def _submessage(t: Table, buf: bytes, start: int, stop: int, into: dict[str, Any]) -> Any:
    _message(buf, start, stop, t, into)
    if t.nulls:
        _fill_nulls(t.nulls, into)
    return t.convert(into) if t.convert else into


def _string_map_decoder(name: str, entry: Any) -> Any:
    """map<string, string> (labels, annotations, ConfigMap data: most map entries there are):
    the entry's key and value read inline; anything unusual in it goes through `entry`."""

    def string_map(buf: bytes, pos: int, end: int, out: dict[str, Any]) -> int:
        start, stop = _span(buf, pos, end)
        key = value = ""
        at = start
        while at < stop:
            tag = buf[at]
            if tag != 0x0A and tag != 0x12 or at + 1 >= stop or buf[at + 1] >= 0x80:
                key, value = entry(buf, start, stop)  # a long or unexpected field
                break
            a = at + 2
            at = a + buf[at + 1]
            if at > stop:
                raise _DecodeError("unexpected EOF")
            if tag == 0x0A:
                key = buf[a:at].decode("utf-8", "replace")
            else:
                value = buf[a:at].decode("utf-8", "replace")
        _put_entry(out, name, key, value)
        return stop
    return string_map


def _put_entry(out: dict[str, Any], name: str, key: str, value: Any) -> None:
    """One map entry into the JSON object's map; a map that can only be refused stops here."""
    values = out.get(name)
    if values is None:
        values = out[name] = {}
    values[key] = value
    if len(values) > MAX_NODES:
        raise too_large("request body", len(values))


def _map_entry_decoder(f: Field) -> Any:
    """A map entry {key 1, value 2}; a missing part is its zero value, as in Go."""
    value_field = f.table.by_number[2]
    value_tag = 2 << 3 | value_field.wire
    read_value = _decoder(value_field)
    value_name = value_field.name

    def entry(buf: bytes, start: int, stop: int) -> tuple[str, Any]:
        into: dict[str, Any] = {}
        key = ""
        while start < stop:
            tag, start = _varint(buf, start, stop)
            if tag == 0x0A:  # key 1, length-delimited
                a, start = _span(buf, start, stop)
                key = buf[a:start].decode("utf-8", "replace")
            elif tag == value_tag:
                start = read_value(buf, start, stop, into)
            elif tag >> 3 == 2:
                start = _unexpected_wire(value_field, tag & 7, buf, start, stop, into)
            else:
                start = _skip(buf, start, stop, tag & 7)
        if value_name in into:
            return key, into[value_name]
        return key, _zero(value_field)
    return entry


def _zero(f: Field) -> Any:
    if f.kind == MESSAGE:
        return f.table.convert({}) if f.table.convert else {}
    return {STRING: "", BYTES: "", BOOL: False, DOUBLE: 0.0}.get(f.kind, None if f.kind == RAW
                                                                  else 0)


# -- the envelope ------------------------------------------------------------------------------

def _envelope(data: bytes) -> tuple[str, str, int, int]:
    """runtime.Unknown after the magic: (apiVersion, kind, raw start, raw stop)."""
    api_version = kind = ""
    raw = (0, 0)
    pos, end = len(_MAGIC), len(data)
    while pos < end:
        key, pos = _varint(data, pos, end)
        if key == (1 << 3 | LEN):  # typeMeta {apiVersion 1, kind 2}
            start, pos = _length(data, pos, end)
            meta: dict[str, Any] = {}
            _message(data, start, pos, _TYPE_META, meta)
            api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        elif key == (2 << 3 | LEN):
            raw = _length(data, pos, end)
            pos = raw[1]
        else:  # contentEncoding 3 / contentType 4: upstream's decoder ignores them too
            pos = _skip(data, pos, end, key & 7)
    return api_version, kind, raw[0], raw[1]


_TYPE_META = Table("k8s.io.apimachinery.pkg.runtime.TypeMeta",
                   {1: Field("apiVersion", 1, STRING), 2: Field("kind", 2, STRING)})


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
    if not kind:
        raise errors.bad_request(f"Object 'Kind' is missing in 'runtime.TypeMeta{{APIVersion:"
                                 f'"{api_version}", Kind:""}}\'')
    message = proto.kind_message(api_version, kind)
    table = message_table(message) if message else None
    if table is None:  # upstream's scheme error, without its source location
        raise errors.bad_request(
            f'no kind "{kind}" is registered for version "{api_version}" in scheme '
            f'"pkg/runtime/scheme.go:100"')
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    depth = getattr(_nesting, "depth", 0)
    if depth >= MAX_NESTED_OBJECTS:
        raise _DecodeError(f"more than {MAX_NESTED_OBJECTS} nested objects")
    _nesting.depth = depth + 1
    try:
        _submessage(table, data, start, stop, obj)
    except _DecodeError as exc:
        where = ".".join(exc.path)
        detail = f"{where}: {exc.message}" if where else exc.message
        version = api_version.rpartition("/")[2]
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}') from None
    finally:
        _nesting.depth = depth
    return obj


def _nested_object(raw: bytes) -> dict[str, Any]:
    """An object embedded in a RawExtension by a protobuf sender (List items, WatchEvent)."""
    try:
        return decode_object(raw)
    except errors.StatusError as exc:
        raise _DecodeError(exc.message) from None


def _message_fields(buf: bytes) -> dict[int, bytes]:
    """The length-delimited fields of a message, by number (last one wins); other wire
    types are skipped."""
    fields: dict[int, bytes] = {}
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos, end)
        if key & 7 == LEN:
            start, pos = _length(buf, pos, end)
            fields[key >> 3] = buf[start:pos]
        else:
            pos = _skip(buf, pos, end, key & 7)
    return fields


def decode_watch_event(frame: bytes) -> tuple[str, dict[str, Any]]:
    """One frame of a `;stream=watch` protobuf stream, without its length prefix:
    metav1.WatchEvent {type 1, object 2: RawExtension {raw 1: the object's envelope}} ->
    (type, object). The client's side of protobuf_encode.watch_frame. Raises 400 for a
    malformed frame."""
    try:
        event = _message_fields(frame)
        raw = _message_fields(event.get(2, b"")).get(1, b"")
        return event.get(1, b"").decode(), decode_object(raw)
    except (_DecodeError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"malformed watch event: {getattr(exc, 'message', exc)}") \
            from None
