"""A Swagger 2.0 document as gnostic's protobuf `openapi.v2.Document`: pure.

Kubernetes piece: kube-openapi serves /openapi/v2 in protobuf (`Accept: application/
com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`) by compiling the JSON document with gnostic
(github.com/google/gnostic-models openapiv2: `NewDocument(yaml.Node)` then `proto.Marshal`).
kubectl up to 1.26 asks for nothing else; `proto.Unmarshal` into that Document is how it reads
the schema for `explain`, client-side validation and its dry-run support check.

The field numbers and types are data (openapi_v2_messages.py, generated from the descriptor in
a kubectl binary); what is code here is gnostic's mapping from the JSON shape to those messages,
which the descriptor does not say:
- a JSON key is the snake_case field (`operationId` -> `operation_id`, `$ref` -> `_ref`); an
  `x-` key is a `vendor_extension` NamedAny whose value is the extension's YAML (JSON text is
  YAML, and it is how kubectl parses the `x-kubernetes-group-version-kind` of an operation);
- a message whose only field is `additional_properties` is a JSON object of Named* pairs, in
  document order; `Paths` holds its `/...` keys as `path`, `Responses` its codes as
  `response_code`;
- `oneof` wrappers pick their member from the value (a `$ref` is a JsonReference, a parameter
  `in: body` a BodyParameter, else by `in` a header/formData/query/path sub-schema, ...);
- `Any` (defaults, enums, examples) holds the value as YAML; `type` is a TypeItem and `items`
  an ItemsItem (lists of one for a single value).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import orjson

from ..api.protobuf_tables import varint_bytes
from .openapi_v2_messages import MESSAGES

Fields = dict[str, tuple[int, str, str]]

#: message -> JSON-ish field name -> (number, type, flags)
_FIELDS: dict[str, Fields] = {
    name: {f[1]: (f[0], f[2], f[3]) for f in fields} for name, fields in MESSAGES.items()}
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_SECURITY = {"basic": "basic_authentication_security", "apiKey": "api_key_security"}
_OAUTH2_FLOWS = {"implicit": "implicit", "password": "password", "application": "application",
                 "accessCode": "access_code"}


#: (encodings of the last call, encodings of this call), by the identity of the value
Memo = dict[int, tuple[Any, str, bytes]]
_memo: ContextVar[tuple[Memo, Memo] | None] = ContextVar("openapi_v2_memo", default=None)


def encode_document(document: dict[str, Any], reuse: Memo | None = None) -> bytes:
    """`document` (a Swagger 2.0 dict) as a serialized openapi.v2.Document.

    `reuse` keeps the encoded top-level definitions and paths between calls, keyed by the
    identity of their (never mutated) values and left holding exactly this document's: when
    one CRD changes, only its entries are encoded again."""
    if reuse is None:
        return _message("Document", document)
    used: Memo = {}
    token = _memo.set((reuse, used))
    try:
        body = _message("Document", document)
    finally:
        _memo.reset(token)
    reuse.clear()
    reuse.update(used)
    return body


def _memoized(key: str, value: Any, encode: Callable[[], bytes]) -> bytes:
    memo = _memo.get()
    if memo is None:
        return encode()
    hit = memo[0].get(id(value))
    encoded = hit[2] if hit is not None and hit[0] is value and hit[1] == key else encode()
    memo[1][id(value)] = (value, key, encoded)
    return encoded


def _varint(n: int) -> bytes:
    return varint_bytes(n & (1 << 64) - 1)  # a negative int64 is a ten-byte varint


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _delimited(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def _scalar(number: int, kind: str, value: Any) -> bytes:
    if kind == "string":
        return _delimited(number, str(value).encode())
    if kind == "bool":
        return _key(number, 0) + _varint(1 if value else 0)
    if kind == "int64":
        return _key(number, 0) + _varint(int(value))
    if kind == "double":
        return _key(number, 1) + struct.pack("<d", float(value))
    raise ValueError(f"unknown scalar {kind}")


def _yaml(value: Any) -> str:
    return orjson.dumps(value).decode()


def _any(value: Any) -> bytes:
    return _scalar(_FIELDS["Any"]["yaml"][0], "string", _yaml(value))


def _named(message: str, value: dict[str, Any]) -> bytes:
    """A map message: (name, value) pairs of its one repeated Named* field."""
    number, named, _ = _FIELDS[message]["additional_properties"]
    value_type = _FIELDS[named]["value"][1]
    if message == "Definitions":
        return b"".join(_memoized(k, v, lambda k=k, v=v: _delimited(
            number, _pair(named, value_type, k, v))) for k, v in value.items())
    return b"".join(_delimited(number, _pair(named, value_type, k, v)) for k, v in value.items())


def _pair(named: str, value_type: str, name: str, value: Any) -> bytes:
    fields = _FIELDS[named]
    payload = _scalar(fields["name"][0], "string", name)
    return payload + _field(fields["value"][0], value_type, value)


def _field(number: int, kind: str, value: Any) -> bytes:
    if kind in ("string", "bool", "int64", "double"):
        return _scalar(number, kind, value)
    return _delimited(number, _message(kind, value))


def _message(name: str, value: Any) -> bytes:
    if name == "Any":
        return _any(value)
    if name in ("TypeItem", "StringArray"):
        values = value if isinstance(value, list) else [value]
        return b"".join(_scalar(1, "string", v) for v in values)
    if name == "ItemsItem":
        values = value if isinstance(value, list) else [value]
        return b"".join(_delimited(1, _message("Schema", v)) for v in values)
    fields = _FIELDS[name]
    if set(fields) == {"additional_properties"}:
        return _named(name, value)
    if all("o" in flags for _, _, flags in fields.values()):
        member = _oneof_member(name, value)
        number, kind, _ = fields[member]
        return _field(number, kind, value)
    out = bytearray()
    for key, item in value.items():
        out += _entry(name, fields, key, item)
    return bytes(out)


def _entry(message: str, fields: Fields, key: str, item: Any) -> bytes:
    if key.startswith("x-"):
        number, named, _ = fields["vendor_extension"]
        return _delimited(number, _pair(named, "Any", key, item))
    if message == "Paths":
        number, named, _ = fields["path"]
        return _memoized(key, item, lambda: _delimited(number, _pair(named, "PathItem", key,
                                                                     item)))
    if message == "Responses":
        number, named, _ = fields["response_code"]
        return _delimited(number, _pair(named, "ResponseValue", key, item))
    field = fields.get("_ref" if key == "$ref" else _CAMEL.sub("_", key).lower())
    if field is None:
        return b""  # not part of the v2 schema (gnostic refuses it; we leave it out)
    number, kind, flags = field
    if "r" in flags and kind not in ("TypeItem", "ItemsItem"):
        return b"".join(_field(number, kind, v) for v in item)
    if kind == "AdditionalPropertiesItem" and item is True:
        return _delimited(number, _scalar(2, "bool", True))
    return _field(number, kind, item)


def _oneof_member(message: str, value: Any) -> str:
    """Which member of a oneof wrapper a JSON value is (gnostic's NewX dispatch)."""
    is_ref = isinstance(value, dict) and "$ref" in value
    if message == "ParametersItem":
        return "json_reference" if is_ref else "parameter"
    if message == "ResponseValue":
        return "json_reference" if is_ref else "response"
    if message == "Parameter":
        return "body_parameter" if value.get("in") == "body" else "non_body_parameter"
    if message == "NonBodyParameter":
        return _CAMEL.sub("_", str(value.get("in", "query"))).lower() + "_parameter_sub_schema"
    if message == "SchemaItem":
        return "file_schema" if value.get("type") == "file" else "schema"
    if message == "AdditionalPropertiesItem":
        return "boolean" if isinstance(value, bool) else "schema"
    if message == "SecurityDefinitionsItem":
        kind = value.get("type", "")
        if kind == "oauth2":
            return f"oauth2_{_OAUTH2_FLOWS.get(value.get('flow', ''), 'implicit')}_security"
        return _SECURITY.get(kind, "api_key_security")
    raise ValueError(f"no oneof rule for {message}")
