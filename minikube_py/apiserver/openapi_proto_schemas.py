"""OpenAPI schemas for what the hand tables leave out, from upstream's protobuf description.

Kubernetes piece: the definitions kube-openapi generates from the Go types of every built-in
kind. Our tables (openapi_types_*.py) carry upstream's descriptions and patch extensions for
the fields people write, but not every field of every type, and no table at all for some kinds.
api/kinds/protobuf.json (generated from the descriptors in a kubectl binary) does list every
field of every message with its JSON name and shape, so it completes them: a property the
table lacks is added (no description), and a kind or type with no table entry is described
from it entirely.

Why it matters: kubectl up to 1.26 validates a manifest against /openapi/v2 before sending it
and refuses a field its schema does not list ("unknown field"); `kubectl explain` lists only
the fields the schema has. A partial schema would turn valid manifests away.
"""

from __future__ import annotations

from typing import Any

from ..api.kinds import proto

Schema = dict[str, Any]

REF_PREFIX = "#/components/schemas/"
_API_VERSION = {"type": "string", "description": "APIVersion defines the versioned schema of "
                "this representation of an object."}
_KIND = {"type": "string", "description": "Kind is a string value representing the REST "
         "resource this object represents."}
_SCALARS: dict[str, Schema] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "double": {"type": "number", "format": "double"},
    "bytes": {"type": "string", "format": "byte"},
}
#: Go named types whose JSON is not an object (proto_specials.py has their codecs)
_NOT_OBJECTS: dict[str, Schema] = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": {"type": "string"},
    "k8s.io.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
    "k8s.io.apimachinery.pkg.runtime.Unknown": {"type": "object"},
}


def definition_name(message: str) -> str:
    """`k8s.io.api.core.v1.Pod` -> `io.k8s.api.core.v1.Pod` (upstream's definition names)."""
    return "io.k8s." + message.removeprefix("k8s.io.")


def message_name(definition: str) -> str:
    return "k8s.io." + definition.removeprefix("io.k8s.")


class _Builder:
    """Walks messages, adding each one it reaches (and has no schema for) to `schemas`."""

    def __init__(self, schemas: dict[str, Schema], known: Any = ()) -> None:
        self.schemas = schemas
        self.known = known  # definitions that exist elsewhere: referenced, never rebuilt

    def field_schema(self, owner: str, field: proto.ProtoField) -> Schema:
        """The property's schema, described by its shape (upstream's words are not in the
        protobuf description); a `$ref` is wrapped in allOf to carry it, as in openapi_schemas."""
        item = self.type_schema(field.type)
        if field.is_map:
            schema = {"type": "object", "additionalProperties": item}
        elif field.repeated:
            schema = {"type": "array", "items": item}
        else:
            schema = {"allOf": [item]} if "$ref" in item else item
        return {**schema, "description": f"{_short(owner)}.{field.json_name}: {_shape(field)}."}

    def type_schema(self, type_: str) -> Schema:
        if type_ in _SCALARS:
            return dict(_SCALARS[type_])
        if type_ in _NOT_OBJECTS:
            return dict(_NOT_OBJECTS[type_])
        fields = proto.fields(type_)
        if fields is None:
            return {"type": "object"}
        if not proto.has_go_struct(type_) and len(fields) == 1 and fields[0].repeated and \
                fields[0].json_name == "items":
            return {"type": "array", "items": self.type_schema(fields[0].type)}  # a named slice
        name = definition_name(type_)
        if name not in self.schemas and name not in self.known:
            self.schemas[name] = {}  # reserve it first: types refer to themselves (JSONSchemaProps)
            self.schemas[name] = self.object_schema(type_, is_kind=False)
        return {"$ref": REF_PREFIX + name}

    def properties(self, message: str) -> dict[str, Schema]:
        """Every JSON property of a message, Go's inline (embedded) structs flattened."""
        out: dict[str, Schema] = {}
        for field in proto.fields(message) or ():
            if field.inline:
                out.update(self.properties(field.type))
            elif field.json_name:
                out[field.json_name] = self.field_schema(message, field)
        return out

    def object_schema(self, message: str, is_kind: bool) -> Schema:
        properties = self.properties(message)
        if is_kind:
            properties.update(apiVersion=dict(_API_VERSION), kind=dict(_KIND))
        return {"description": f"{_short(message)} ({message}).", "type": "object",
                "properties": dict(sorted(properties.items()))}


def _short(message: str) -> str:
    return message.rsplit(".", 1)[1]


def _shape(field: proto.ProtoField) -> str:
    """`a list of Container`, `a map of string to Quantity`, `integer (int32)`, ..."""
    kind = field.type
    scalar = _SCALARS.get(kind)
    one = (f"{scalar['type']} ({kind})" if scalar and scalar.get("format") else
           scalar["type"] if scalar else _short(kind))
    if field.is_map:
        return f"a map of string to {one}"
    return f"a list of {one}" if field.repeated else one


def complete(schemas: dict[str, Schema]) -> None:
    """Add to each object schema the properties upstream's type has and it lacks, and the
    definitions those reach. A table's property is kept as it is (its description and patch
    extensions are upstream's)."""
    builder = _Builder(schemas)
    for name in list(schemas):
        schema = schemas[name]
        message = message_name(name)
        if "properties" not in schema or proto.fields(message) is None:
            continue
        known = schema["properties"]
        missing = {k: v for k, v in builder.properties(message).items() if k not in known}
        if missing:
            schema["properties"] = dict(sorted({**known, **missing}.items()))


def kind_schemas(definition: str, gvk: list[Schema],
                 known: Any) -> dict[str, Schema] | None:
    """A kind's schema (with its GVK) and the definitions it reaches that are not `known`,
    None when the protobuf description does not know the kind."""
    message = message_name(definition)
    if proto.fields(message) is None:
        return None
    out: dict[str, Schema] = {}
    builder = _Builder(out, known)
    schema = builder.object_schema(message, is_kind=True)
    schema["x-kubernetes-group-version-kind"] = gvk
    out[definition] = schema
    return out
