"""How stored keys, values and events look on a terminal and to programs.

Kubernetes v1.0 piece: pkg/kubectl's printers (the column table and `-o json`), applied to
what etcdctl shows: a key with its revisions. Pure functions from store values to text, so the
inspector commands only fetch and print, and tests check rendering without a store.

Values are opaque bytes to the store; `decode_value` (storage/values.py, shared with the
console) recognises JSON, msgpack and text, and falls back to base64, so binary never reaches
a terminal raw.
"""

from __future__ import annotations

import base64
from typing import Any, Iterable, Literal, Sequence

import orjson

from ..storage import Event, EventType, KeyValue
from ..storage.values import DecodedValue, ValueKind, decode_value  # noqa: F401 (re-exported)

OutputFormat = Literal["table", "json", "keys"]
OUTPUT_FORMATS: tuple[str, ...] = ("table", "json", "keys")
KV_COLUMNS = ("KEY", "CREATE_REV", "MOD_REV", "VERSION", "LEASE", "SIZE")
HISTORY_COLUMNS = ("REVISION", "TYPE", "VERSION", "CREATE_REV", "LEASE", "SIZE")


def _default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode("ascii")
    raise TypeError(f"cannot render {type(obj).__name__} as JSON")


def dumps(obj: Any) -> str:
    """Indented JSON (bytes inside decoded msgpack become base64)."""
    return orjson.dumps(
        obj, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    ).decode()


def dumps_line(obj: Any) -> str:
    """One-line JSON, for streams (one event per line)."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()


def value_text(value: bytes) -> tuple[str, str | None]:
    """The value as `storage get` prints it, and a note for stderr when it was transformed."""
    decoded = decode_value(value)
    if decoded.kind == "json":
        return dumps(decoded.data), None
    if decoded.kind == "msgpack":
        return dumps(decoded.data), f"value is msgpack ({len(value)} bytes); shown as JSON"
    if decoded.kind == "text":
        return decoded.data, None
    if decoded.kind == "empty":
        return "", "value is empty"
    return decoded.data, f"value is binary ({len(value)} bytes); shown as base64"


def kv_json(kv: KeyValue, *, with_value: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key": kv.key,
        "create_revision": kv.create_revision,
        "mod_revision": kv.mod_revision,
        "version": kv.version,
        "lease": kv.lease,
        "size": len(kv.value),
    }
    if with_value:
        decoded = decode_value(kv.value)
        out["encoding"] = "base64" if decoded.kind == "binary" else decoded.kind
        out["value"] = decoded.data
    return out


def kv_row(kv: KeyValue) -> list[str]:
    return [
        kv.key,
        str(kv.create_revision),
        str(kv.mod_revision),
        str(kv.version),
        str(kv.lease),
        str(len(kv.value)),
    ]


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Columns left-aligned, separated by at least two spaces (kubectl's look)."""
    rows = [list(headers), *[list(row) for row in rows]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def event_json(event: Event) -> dict[str, Any]:
    return {
        "type": event.type.value,
        "revision": event.revision,
        "key": event.kv.key,
        "kv": kv_json(event.kv, with_value=event.type is EventType.PUT),
        "prev_kv": kv_json(event.prev_kv) if event.prev_kv is not None else None,
    }


def event_line(event: Event) -> str:
    """One line per event for `storage watch`: revision, type, key and what changed."""
    kv = event.kv
    if event.type is EventType.DELETE:
        was = f" (was version {event.prev_kv.version})" if event.prev_kv is not None else ""
        return f"{event.revision}  DELETE  {kv.key}{was}"
    return f"{event.revision}  PUT     {kv.key}  version={kv.version} size={len(kv.value)}"


def history_row(event: Event, *, marker: str = "") -> list[str]:
    kv = event.kv
    if event.type is EventType.DELETE:
        return [str(event.revision), "DELETE", "-", "-", "-", "-"]
    return [
        str(event.revision),
        event.type.value + marker,
        str(kv.version),
        str(kv.create_revision),
        str(kv.lease),
        str(len(kv.value)),
    ]
