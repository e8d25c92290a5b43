"""What a stored value is: JSON, msgpack, text or binary.

Kubernetes piece: the storage codecs' side of etcd values (apiserver/pkg/storage/value and the
serializer a resource is stored with); values are opaque bytes to the store, the API server
writes JSON (or msgpack with the msgpack codec). `decode_value` recognises those, then UTF-8
text, and falls back to base64, so binary never reaches a terminal or a page raw. Shared by
`minikube-py storage` (cli/output.py) and the console's store browser.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
import orjson

ValueKind = Literal["json", "msgpack", "text", "binary", "empty"]

#: First bytes of a msgpack map (fixmap, map16, map32): what the msgpack codec writes for an
#: object. Anything else is not tried as msgpack — almost any byte string decodes as some
#: msgpack value, which would make text look like numbers.
_MSGPACK_MAP_START = frozenset(range(0x80, 0x90)) | {0xDE, 0xDF}


@dataclass(frozen=True)
class DecodedValue:
    """A value as understood. `data` is the parsed object (json, msgpack), the text (text),
    base64 (binary) or "" (empty)."""

    kind: ValueKind
    data: Any


def decode_value(value: bytes) -> DecodedValue:
    if not value:
        return DecodedValue("empty", "")
    try:
        return DecodedValue("json", orjson.loads(value))
    except orjson.JSONDecodeError:
        pass
    if value[0] in _MSGPACK_MAP_START:
        try:
            decoded = msgpack.unpackb(value, raw=False, strict_map_key=False)
        except (ValueError, msgpack.UnpackException):
            decoded = None
        if isinstance(decoded, dict):
            return DecodedValue("msgpack", decoded)
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and _printable_lines(text):
        return DecodedValue("text", text)
    return DecodedValue("binary", base64.b64encode(value).decode("ascii"))


def _printable_lines(text: str) -> bool:
    """Text a terminal shows as-is: printable characters, tabs and line breaks."""
    return all(line.isprintable() for line in text.replace("\t", " ").splitlines())
