"""Compiled protobuf field tables, built lazily from the kind data, plus the special messages.

Kubernetes piece: what gogo-protobuf generates per type (Marshal/Unmarshal) and the hand-written
protobuf methods of the apimachinery types whose JSON is not an object (metav1.Time, MicroTime,
Duration, resource.Quantity, intstr.IntOrString, runtime.RawExtension, metav1.FieldsV1, and the
named-slice wrappers such as Verbs and ExtraValue). Why it exists: the codec (protobuf.py decodes,
protobuf_encode.py encodes) walks these tables, so both directions share one compiled view of
api/kinds/protobuf.json, and the only per-type code left is the handful of special messages
upstream also writes by hand.

A message compiles on first use, with everything it references (Pod pulls in ~150 messages);
tables are linked objects, so recursive messages are fine.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from .kinds import proto

VARINT, I64, LEN, I32 = 0, 1, 2, 5

# Field kinds: how one occurrence on the wire becomes a JSON value.
STRING, INT32, INT64, BOOL, BYTES, DOUBLE, JSON, MESSAGE, RAW = range(9)
_SCALARS = {"string": STRING, "int32": INT32, "int64": INT64, "bool": BOOL, "bytes": BYTES,
            "double": DOUBLE}
WIRE = {STRING: LEN, INT32: VARINT, INT64: VARINT, BOOL: VARINT, BYTES: LEN, DOUBLE: I64,
        JSON: LEN, MESSAGE: LEN, RAW: LEN}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class DecodeError(Exception):
    """A malformed body; `path` names the field it was found in, outermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


@dataclass(slots=True, eq=False)
class Field:
    """One field of a compiled message."""

    name: str  # the JSON name; "" for an inline (embedded) struct
    number: int
    kind: int
    repeated: bool = False
    is_map: bool = False
    keep_zero: bool = False  # decoding: a zero read from the wire stays in the JSON
    pointer: bool = False  # encoding: a zero in the JSON is written (present means set)
    table: Table | None = None  # a message's fields, or a map's value field
    wire: int = field(init=False, default=LEN)
    key: bytes = field(init=False, default=b"")  # the encoded tag

    def __post_init__(self) -> None:
        self.wire = WIRE[self.kind]
        self.key = varint_bytes(self.number << 3 | self.wire)


@dataclass(slots=True, eq=False)
class Table:
    """A compiled message: fields by number (decoding) and by JSON name (encoding)."""

    name: str
    by_number: dict[int, Field] = field(default_factory=dict)
    by_name: dict[str, Field] = field(default_factory=dict)
    inline: list[Field] = field(default_factory=list)
    #: lists and maps without omitempty: Go's JSON prints null when the wire had none
    nulls: tuple[str, ...] = ()
    #: a special message: its decoded fields -> its JSON value
    convert: Callable[[dict[str, Any]], Any] | None = None
    #: a special message: its JSON value -> the fields to encode
    unconvert: Callable[[Any], dict[str, Any]] | None = None
    #: the codec's per-field closures, compiled on first use (protobuf.py: by tag;
    #: protobuf_encode.py: by JSON name)
    decoders: dict[int, Callable] | None = None
    encoders: dict[str, tuple[int, Callable]] | None = None
    #: protobuf_encode.py: the fields to write, in number order, per set of JSON keys seen
    plans: dict[tuple[str, ...], tuple] | None = None


def varint_bytes(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# -- special messages --------------------------------------------------------------------------

def _time_json(m: dict[str, Any], micro: bool = False) -> str | None:
    """metav1.Time / MicroTime: the zero time is JSON null, others RFC 3339 in UTC (MicroTime
    with six fractional digits)."""
    seconds, nanos = m.get("seconds", 0), m.get("nanos", 0)
    if not seconds and not nanos:
        return None
    return time_text(seconds, nanos, micro)


@lru_cache(maxsize=4096)
def time_text(seconds: int, nanos: int, micro: bool) -> str:
    """The text of a time; remembered, as the same timestamps recur across objects."""
    try:  # like Go's time.Unix, nanos outside [0, 1e9) carry into the seconds
        t = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise DecodeError("Time.MarshalJSON: year outside of range [0,9999]") from None
    text = (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T"
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}")
    return f"{text}.{t.microsecond:06d}Z" if micro else text + "Z"


_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?"
                      r"(?:[Zz]|([+-])(\d\d):(\d\d))$")


def _time_fields(value: Any, micro: bool = False) -> dict[str, Any]:
    if not isinstance(value, str) or not value:
        return {}
    m = _RFC3339.match(value)
    if m is None:
        return {}
    y, mo, d, h, mi, s, frac, sign, oh, om = m.groups()
    t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=UTC)
    seconds = int((t - _EPOCH).total_seconds())
    if sign:
        offset = int(oh) * 3600 + int(om) * 60
        seconds -= offset if sign == "+" else -offset
    nanos = int((frac or "0")[:9].ljust(9, "0")) if micro else 0
    return {"seconds": seconds, "nanos": nanos}


def _int_or_string_json(m: dict[str, Any]) -> int | str:
    kind = m.get("type", 0)
    if kind == 0:
        return m.get("intVal", 0)
    if kind == 1:
        return m.get("strVal", "")
    raise DecodeError("impossible IntOrString.Type")


def _int_or_string_fields(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"type": 1, "strVal": value}
    return {"type": 0, "intVal": value if isinstance(value, int) else 0}


_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
                   "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration(ns: int) -> str:
    """Go's time.Duration.String (metav1.Duration's JSON): `1h2m3.5s`, `500ms`, `0s`."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _fraction(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def parse_go_duration(text: Any) -> int:
    """Go's time.ParseDuration, for the strings go_duration writes (0 for anything else)."""
    if not isinstance(text, str) or not text:
        return 0
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return 0
    total, pos = 0, 0
    for m in _DURATION_PART.finditer(body):
        if m.start() != pos:
            return 0
        total += int(float(m.group(1)) * _DURATION_UNITS[m.group(2)])
        pos = m.end()
    return sign * total if pos == len(body) else 0


def _quantity_text(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"string": "0"}
    return {"string": value if isinstance(value, str) else str(value)}


def _raw(m: dict[str, Any]) -> Any:
    return m.get("raw")


_TIME = ({1: ("seconds", INT64), 2: ("nanos", INT32)}, _time_json, _time_fields)
_MICRO = ({1: ("seconds", INT64), 2: ("nanos", INT32)},
          lambda m: _time_json(m, True), lambda v: _time_fields(v, True))
_QUANTITY = ({1: ("string", STRING)}, lambda m: m.get("string") or "0", _quantity_text)
_META = proto.META

#: message -> (its own field table {number: (name, kind)}, decoded fields -> JSON, JSON ->
#: fields to encode). JSON kind: the bytes hold a JSON document (FieldsV1); RAW: JSON or, from a
#: protobuf sender, a nested `k8s\x00` object (RawExtension), decoded by protobuf.py.
SPECIALS: dict[str, tuple[dict[int, tuple[str, int]], Callable, Callable]] = {
    f"{_META}.Time": _TIME,
    f"{_META}.MicroTime": _MICRO,
    f"{_META}.Duration": ({1: ("duration", INT64)}, lambda m: go_duration(m.get("duration", 0)),
                          lambda v: {"duration": parse_go_duration(v)}),
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _QUANTITY,
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue": _QUANTITY,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": (
        {1: ("type", INT64), 2: ("intVal", INT32), 3: ("strVal", STRING)},
        _int_or_string_json, _int_or_string_fields),
    f"{_META}.FieldsV1": ({1: ("raw", JSON)}, _raw,
                          lambda v: {} if v is None else {"raw": v}),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": ({1: ("raw", RAW)}, _raw,
                                                     lambda v: {} if v is None else {"raw": v}),
}


def _items_wrapper(message: str) -> bool:
    """A Go named slice (`type Verbs []string`): its message wraps `repeated items = 1` and its
    JSON is the bare array."""
    fields = proto.fields(message)
    return (not proto.has_go_struct(message) and fields is not None and len(fields) == 1
            and fields[0].json_name == "items" and fields[0].repeated)


# -- compiling ---------------------------------------------------------------------------------

_TABLES: dict[str, Table] = {}


def table(message: str) -> Table | None:
    """The compiled table of a message by full name, None for a message the data lacks."""
    compiled = _TABLES.get(message)
    if compiled is not None:
        return compiled
    special = SPECIALS.get(message)
    if special is not None:
        spec, convert, unconvert = special
        compiled = _TABLES[message] = Table(message, convert=convert, unconvert=unconvert)
        for number, (name, kind) in spec.items():
            _add(compiled, Field(name, number, kind, pointer=True))
        return compiled
    fields = proto.fields(message)
    if fields is None:
        return None
    compiled = _TABLES[message] = Table(message)
    if _items_wrapper(message):
        compiled.convert = lambda m: m.get("items", [])
        compiled.unconvert = lambda v: {"items": v} if isinstance(v, list) else {}
    for pf in fields:
        _add(compiled, _compile_field(pf))
    compiled.nulls = tuple(pf.json_name for pf in fields
                           if pf.keep_zero and (pf.repeated or pf.is_map) and pf.json_name)
    return compiled


def _compile_field(pf: proto.ProtoField) -> Field:
    kind = _SCALARS.get(pf.type, MESSAGE)
    sub = table(pf.type) if kind == MESSAGE else None
    if kind == MESSAGE and sub is None:
        raise KeyError(f"protobuf data: {pf.type} is referenced but not described")
    value = Field(pf.json_name, pf.number, kind, pf.repeated and not pf.is_map, False,
                  (pf.pointer or pf.keep_zero) and not pf.repeated, pf.pointer, sub)
    if pf.is_map:  # a repeated {key 1, value 2} entry; `table` holds the value's field
        entry = Table(f"{pf.type} map entry")
        _add(entry, Field("key", 1, STRING))
        value.number, value.name, value.pointer, value.keep_zero = 2, "value", True, True
        value.__post_init__()
        _add(entry, value)
        return Field(pf.json_name, pf.number, MESSAGE, False, True, False, False, entry)
    return value


def _add(t: Table, f: Field) -> None:
    t.by_number[f.number] = f
    if f.name:
        t.by_name[f.name] = f
    else:
        t.inline.append(f)


def bytes_json(raw: bytes) -> str:
    """A bytes field's JSON: base64, as Go's encoding/json writes []byte."""
    return base64.b64encode(raw).decode("ascii")
