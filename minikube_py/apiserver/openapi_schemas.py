"""OpenAPI v3 component schemas for the kinds we serve, compiled from a compact table.

Kubernetes piece: the generated `components.schemas` of the apiserver's /openapi/v3 documents
(kube-openapi's builder3 over the Go types' doc comments). kubectl reads them for three
things: `kubectl explain` (KIND/VERSION/DESCRIPTION/FIELDS, walking `$ref`s), client-side
`apply` (the strategic-merge patch is computed by walking the schema; every map or list field
a manifest uses must be a known property, and list fields carry upstream's
`x-kubernetes-patch-merge-key`/`-strategy`), and the query-param check that makes new
kubectl trust server-side validation (that one lives in the paths, see openapi.py).

Why a table: upstream's generated schemas are ~100k lines; ours keep the same names, shapes
and extensions with one-line descriptions. A type is `short name -> (description, fields,
required)`; a field is `(code, description[, merge key[, patch strategy]])`, where the code
is a scalar (`string`, `int32`, `int64`, `boolean`, `number`, `byte`), a schema's short name
(`core.PodSpec`, `Time`), `[code` for a list or `{code` for a map. The tables live in
openapi_types_{apps,batch,core,pod,cluster,policy,storage,discovery,networking,nodeflow}.py;
this module turns them into OpenAPI once, at
import.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from minikube_py.apiserver import openapi_proto_schemas as proto_schemas
from minikube_py.apiserver import (
    openapi_types_apps,
    openapi_types_batch,
    openapi_types_cluster,
    openapi_types_core,
    openapi_types_discovery,
    openapi_types_networking,
    openapi_types_nodeflow,
    openapi_types_pod,
    openapi_types_policy,
    openapi_types_storage,
)

Schema = dict[str, Any]
TypeTable = Mapping[str, tuple]

REF_PREFIX = "#/components/schemas/"

_PACKAGES = {
    "core": "io.k8s.api.core.v1",
    "apps": "io.k8s.api.apps.v1",
    "autoscaling": "io.k8s.api.autoscaling.v1",
    "batch": "io.k8s.api.batch.v1",
    "policy": "io.k8s.api.policy.v1",
    "discovery": "io.k8s.api.discovery.v1",
    "networking": "io.k8s.api.networking.v1",
    "node": "io.k8s.api.node.v1",
    "flowcontrol": "io.k8s.api.flowcontrol.v1",
    "storage": "io.k8s.api.storage.v1",
    "meta": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "resource": "io.k8s.apimachinery.pkg.api.resource",
    "intstr": "io.k8s.apimachinery.pkg.util.intstr",
}
# The group/version each package's kinds belong to (for x-kubernetes-group-version-kind).
_PACKAGE_GV = {"core": ("", "v1"), "apps": ("apps", "v1"), "autoscaling": ("autoscaling", "v1"),
               "batch": ("batch", "v1"), "policy": ("policy", "v1"),
               "discovery": ("discovery.k8s.io", "v1"),
               "networking": ("networking.k8s.io", "v1"), "node": ("node.k8s.io", "v1"),
               "flowcontrol": ("flowcontrol.apiserver.k8s.io", "v1"),
               "storage": ("storage.k8s.io", "v1")}
_ALIASES = {
    "Time": "meta.Time", "MicroTime": "meta.MicroTime", "ObjectMeta": "meta.ObjectMeta",
    "ListMeta": "meta.ListMeta", "LabelSelector": "meta.LabelSelector",
    "Quantity": "resource.Quantity", "IntOrString": "intstr.IntOrString",
}
_SCALARS: Mapping[str, Schema] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "boolean": {"type": "boolean"},
    "number": {"type": "number", "format": "double"},
    "byte": {"type": "string", "format": "byte"},
}
_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources"
)
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds"
)
_METADATA_DOC = (
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
_LIST_METADATA_DOC = (
    "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds"
)


def full_name(short: str) -> str:
    """`core.Pod` -> `io.k8s.api.core.v1.Pod` (aliases like `Time` first)."""
    short = _ALIASES.get(short, short)
    package, _, name = short.partition(".")
    return f"{_PACKAGES[package]}.{name}"


def schema_name(group: str, version: str, kind: str) -> str:
    """Upstream definition name of a built-in kind: `io.k8s.api.<group|core>.<version>.<Kind>`.

    The group's first DNS label names the package (`rbac.authorization.k8s.io` -> `rbac`)."""
    package = group.split(".")[0] if group else "core"
    return f"io.k8s.api.{package}.{version}.{kind}"


def ref(name: str) -> Schema:
    return {"$ref": REF_PREFIX + name}


def gvk(group: str, version: str, kind: str) -> Schema:
    return {"group": group, "kind": kind, "version": version}


def _code_schema(code: str) -> Schema:
    """The schema of a field code: scalar, `[item`, `{value` or a reference."""
    if code in _SCALARS:
        return dict(_SCALARS[code])
    if code.startswith("["):
        return {"type": "array", "items": _code_schema(code[1:])}
    if code.startswith("{"):
        return {"type": "object", "additionalProperties": _code_schema(code[1:])}
    return ref(full_name(code))


def _field(spec: tuple) -> Schema:
    """A property; a reference is wrapped in allOf so it can carry a description (OpenAPI 3.0
    ignores `$ref` siblings), which is also how upstream's v3 documents spell it."""
    code, description, *patch = spec
    schema = _code_schema(code)
    if "$ref" in schema:
        schema = {"allOf": [schema]}
    schema["description"] = description
    if patch:
        if patch[0]:
            schema["x-kubernetes-patch-merge-key"] = patch[0]
        schema["x-kubernetes-patch-strategy"] = patch[1] if len(patch) > 1 else "merge"
    return schema


def _kind_gv(short: str) -> tuple[str, str] | None:
    return _PACKAGE_GV.get(_ALIASES.get(short, short).partition(".")[0])


def _compile_type(short: str, entry: tuple, is_kind: bool) -> Schema:
    description, fields, *rest = entry
    properties: dict[str, Schema] = {}
    if is_kind:
        properties["apiVersion"] = {"type": "string", "description": _API_VERSION_DOC}
        properties["kind"] = {"type": "string", "description": _KIND_DOC}
        properties["metadata"] = _field(("ObjectMeta", _METADATA_DOC))
    properties.update((name, _field(spec)) for name, spec in fields.items())
    schema: Schema = {"description": description, "type": "object",
                      "properties": dict(sorted(properties.items()))}
    required = rest[0] if rest else ()
    if required:
        schema["required"] = list(required)
    if is_kind:
        group, version = _kind_gv(short) or ("", "v1")
        schema["x-kubernetes-group-version-kind"] = [gvk(group, version, short.split(".")[1])]
    return schema


def _list_schema(kind_name: str, kind: str, group: str, version: str) -> Schema:
    """`<Kind>List`: apiVersion, items (required), kind, metadata (ListMeta)."""
    return {
        "description": f"{kind}List is a list of {kind} objects.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
            "items": {"type": "array", "description": f"List of {kind} objects.",
                      "items": ref(kind_name)},
            "kind": {"type": "string", "description": _KIND_DOC},
            "metadata": _field(("ListMeta", _LIST_METADATA_DOC)),
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [gvk(group, version, kind + "List")],
    }


def generic_kind_schemas(group: str, version: str, kind: str) -> dict[str, Schema]:
    """Schemas for a kind without a table entry: every field upstream's type has, from the
    protobuf description (openapi_proto_schemas.py); for a kind that has none either,
    metadata typed and spec/status free-form.

    Enough for `explain` and the fieldValidation check; apply falls back to JSON merge
    semantics for the free-form parts (kubectl prints a warning and carries on)."""
    name = schema_name(group, version, kind)
    described = proto_schemas.kind_schemas(name, [gvk(group, version, kind)], SCHEMAS)
    if described is not None:
        described[name]["properties"]["metadata"] = _field(("ObjectMeta", _METADATA_DOC))
        return {**described, name + "List": _list_schema(name, kind, group, version)}
    free = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    kind_schema: Schema = {
        "description": f"{kind} is a {group or 'core'}/{version} object.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
            "kind": {"type": "string", "description": _KIND_DOC},
            "metadata": _field(("ObjectMeta", _METADATA_DOC)),
            "spec": dict(free, description="Desired state."),
            "status": dict(free, description="Observed state."),
        },
        "x-kubernetes-group-version-kind": [gvk(group, version, kind)],
    }
    return {name: kind_schema, name + "List": _list_schema(name, kind, group, version)}


def _compile_all() -> Mapping[str, Schema]:
    compiled: dict[str, Schema] = {}
    tables = (openapi_types_apps, openapi_types_batch, openapi_types_cluster,
              openapi_types_core, openapi_types_pod, openapi_types_policy,
              openapi_types_storage, openapi_types_discovery, openapi_types_networking,
              openapi_types_nodeflow)
    for table in tables:
        for short, entry in table.TYPES.items():
            is_kind = short in table.KINDS
            name = full_name(short)
            compiled[name] = _compile_type(short, entry, is_kind)
            if is_kind and short not in table.UNLISTED:
                group, version = _kind_gv(short) or ("", "v1")
                kind = short.split(".")[1]
                compiled[name + "List"] = _list_schema(name, kind, group, version)
        compiled.update((full_name(short), s) for short, s in table.RAW.items())
    proto_schemas.complete(compiled)
    return MappingProxyType(compiled)


#: Every schema by full name. Shared and read-only: documents reference these dicts.
SCHEMAS: Mapping[str, Schema] = _compile_all()
