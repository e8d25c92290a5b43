"""OpenAPI for custom resources: one CRD version's definitions and paths, pure.

Kubernetes piece: apiextensions-apiserver's pkg/controller/openapi/builder (BuildOpenAPIV2 and
BuildOpenAPIV3), with the structural-schema steps it uses (`Unfold`, `StripValueValidations`,
`StripNullable`, openapi/v2's `ToStructuralOpenAPIV2`). Upstream's openapi and openapiv3
controllers call it for every served version of an established CRD and merge the results
into /openapi/v2 and the `apis/<group>/<version>` document of /openapi/v3; here
openapi_service.py does the merging and this module only computes one version's pieces.

What is published, as upstream:

- definition names are the group reversed, then version and kind (`stable.example.com`, v1,
  CronTab -> `com.example.stable.v1.CronTab`, and `...CronTabList` for the list kind);
- the kind's schema is the version's structural schema (only the keys a structural schema
  has: `example` or `externalDocs` are not published) with `apiVersion`, `kind` (TypeMeta's
  descriptions) and `metadata` (a reference to ObjectMeta) filled in, and an
  `x-kubernetes-group-version-kind`; objects marked `x-kubernetes-embedded-resource` get
  the same three properties; an `x-kubernetes-int-or-string` node gets its `anyOf`;
- v3 publishes the schema unstripped; v2 (what kubectl up to 1.26 validates with) has no value
  validations (no `required`, `enum`, `pattern`, `format`, `x-kubernetes-validations`...), no
  `nullable`, and no `properties`/`items` under an `x-kubernetes-preserve-unknown-fields`
  node — a root that preserves unknown fields is published as a bare `type: object`, since
  kubectl would otherwise reject every field it does not know;
- a version without a schema is a bare `type: object`.

Schemas are walked recursively: a CRD arrives as a request document, nested at most 100 deep
(api/bounds.py), far below Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .openapi import ResourceSpec, resource_paths
from .openapi_schemas import _API_VERSION_DOC, _KIND_DOC, _METADATA_DOC, gvk, ref
from .openapi_v2 import schema_v2, swagger_document

Schema = dict[str, Any]

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_LIST_META_DOC = ("Standard list metadata. More info: https://git.k8s.io/community/contributors/"
                  "devel/sig-architecture/api-conventions.md#types-kinds")
_EMBEDDED_API_VERSION_DOC = (
    "apiVersion defines the versioned schema of this representation of an object. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    "#resources")
_EMBEDDED_KIND_DOC = (
    "kind is a string value representing the type of this object. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    "#types-kinds")

#: the keys a structural schema keeps (structuralschema.Generic, ValueValidation, Extensions)
_GENERIC = ("type", "description", "title", "default", "nullable")
_VALUE_VALIDATION = ("format", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
                     "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
                     "multipleOf", "enum", "maxProperties", "minProperties", "required",
                     "allOf", "oneOf", "anyOf", "not")
_EXTENSIONS = ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
               "x-kubernetes-int-or-string", "x-kubernetes-list-type",
               "x-kubernetes-list-map-keys", "x-kubernetes-map-type")
_V3_KEYS = frozenset(_GENERIC + _VALUE_VALIDATION + _EXTENSIONS + ("x-kubernetes-validations",))
_V2_KEYS = frozenset(_GENERIC + _EXTENSIONS) - {"nullable"}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


@dataclass(frozen=True)
class CustomVersionOpenAPI:
    """What one served version of a CRD adds to the documents."""

    group: str
    version: str
    spec: ResourceSpec  # its paths, with the definition names below
    v3_schemas: dict[str, Schema]  # components/schemas entries (v3 spelling)
    v2_definitions: dict[str, Schema]  # /openapi/v2 definitions (v2 spelling)
    v2_paths: dict[str, Schema]  # its /openapi/v2 paths (kept: a rebuild reuses their bytes)


def definition_name(group: str, version: str, kind: str) -> str:
    """kube-openapi's ToRESTFriendlyName("group/version/kind"): the group's labels reversed."""
    return ".".join([*reversed(group.split(".")), version, kind])


#: what a served version offers: (verbs, subresource names), from its registry's Strategy
Served = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]


def crd_openapi(crd: dict[str, Any], served: Served) -> list[CustomVersionOpenAPI]:
    """The OpenAPI pieces of every version of `crd` the server serves (`served`: version ->
    its verbs and subresources, so the paths never promise what answers 404)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind, plural = spec.get("group", ""), names.get("kind", ""), names.get("plural", "")
    list_kind = names.get("listKind") or kind + "List"
    out = []
    for version in spec.get("versions") or ():
        if not isinstance(version, dict) or str(version.get("name", "")) not in served:
            continue
        name = str(version.get("name", ""))
        verbs, subresources = served[name]
        kind_def, list_def = (definition_name(group, name, kind),
                              definition_name(group, name, list_kind))
        raw = (version.get("schema") or {}).get("openAPIV3Schema")
        raw = raw if isinstance(raw, dict) else None
        resource = ResourceSpec(
            plural=plural, kind=kind, namespaced=spec.get("scope") == "Namespaced", verbs=verbs,
            subresources=subresources, definition=kind_def, list_definition=list_def)
        kind_gvk = gvk(group, name, kind)
        list_gvk = gvk(group, name, list_kind)
        out.append(CustomVersionOpenAPI(
            group=group, version=name, spec=resource,
            v3_schemas={kind_def: kind_schema(raw, kind_gvk, v2=False),
                        list_def: list_schema(kind_def, plural, kind, list_gvk)},
            v2_definitions={kind_def: schema_v2(kind_schema(raw, kind_gvk, v2=True)),
                            list_def: schema_v2(list_schema(kind_def, plural, kind, list_gvk))},
            v2_paths=swagger_document(
                [{"paths": resource_paths(group, name, resource)}])["paths"]))
    return out


def kind_schema(raw: Schema | None, kind_gvk: Schema, v2: bool) -> Schema:
    """builder.buildKubeNative: the structural schema with TypeMeta and ObjectMeta (v3 form;
    schema_v2 turns its `$ref`s into v2's)."""
    if raw is None or (v2 and raw.get("x-kubernetes-preserve-unknown-fields") is True):
        out: Schema = {"type": "object"}
    else:
        out = _structural(raw, v2)
        properties = out.setdefault("properties", {})
        properties["metadata"] = _ref_with_description(_OBJECT_META, _METADATA_DOC)
        properties["apiVersion"] = {"type": "string", "description": _API_VERSION_DOC}
        properties["kind"] = {"type": "string", "description": _KIND_DOC}
        out["properties"] = dict(sorted(properties.items()))
    out["x-kubernetes-group-version-kind"] = [kind_gvk]
    return out


def list_schema(kind_def: str, plural: str, kind: str, list_gvk: Schema) -> Schema:
    """builder.buildListSchema: items (required), metadata (ListMeta), apiVersion, kind."""
    return {
        "description": f"{list_gvk['kind']} is a list of {kind}",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
            "items": {"type": "array", "items": ref(kind_def),
                      "description": f"List of {plural}. More info: https://git.k8s.io/"
                                     "community/contributors/devel/sig-architecture/"
                                     "api-conventions.md"},
            "kind": {"type": "string", "description": _KIND_DOC},
            "metadata": _ref_with_description(_LIST_META, _LIST_META_DOC),
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [list_gvk],
    }


def _ref_with_description(name: str, description: str) -> Schema:
    # OpenAPI 3.0 ignores a `$ref`'s siblings: wrapped in allOf as our built-ins are
    # (schema_v2 unwraps it for v2)
    return {"allOf": [ref(name)], "description": description}


def _structural(node: Schema, v2: bool) -> Schema:
    """One schema node as upstream publishes it (Unfold, then for v2 the stripping)."""
    keys = _V2_KEYS if v2 else _V3_KEYS
    out: Schema = {k: v for k, v in node.items() if k in keys and k not in ("not",)}
    for key in ("allOf", "anyOf", "oneOf"):
        if key in out:
            out[key] = [_structural(s, v2) for s in out[key] if isinstance(s, dict)]
    if isinstance(node.get("not"), dict) and not v2:
        out["not"] = _structural(node["not"], v2)
    properties = node.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {k: _structural(v, v2) for k, v in properties.items()
                             if isinstance(v, dict)}
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = _structural(items, v2)
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = _structural(additional, v2)
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    if node.get("x-kubernetes-int-or-string") is True and not v2:
        _unfold_int_or_string(out)
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if v2 and preserve:  # ToStructuralOpenAPIV2: kubectl rejects unknown fields otherwise
        out.pop("properties", None)
        out.pop("items", None)
    if v2 and out.get("type") == "array" and "items" not in out:
        out.pop("type")  # kubectl cannot cope with an array without items
    if node.get("x-kubernetes-embedded-resource") is True and not (v2 and preserve):
        properties = out.setdefault("properties", {})
        properties["apiVersion"] = {"type": "string", "description": _EMBEDDED_API_VERSION_DOC}
        properties["kind"] = {"type": "string", "description": _EMBEDDED_KIND_DOC}
        properties["metadata"] = _ref_with_description(_OBJECT_META, _METADATA_DOC)
        required = out["required"] if isinstance(out.get("required"), list) else []
        out["required"] = required + [k for k in ("kind", "apiVersion") if k not in required]
    return out


def _unfold_int_or_string(out: Schema) -> None:
    """Structural.Unfold: int-or-string spelled out for clients that read only anyOf."""
    any_of = out.get("anyOf")
    if any_of == _INT_OR_STRING:
        return
    all_of = out.get("allOf") or []
    if all_of and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING:
        return
    if any_of is None:
        out["anyOf"] = [dict(s) for s in _INT_OR_STRING]
    else:
        out["allOf"] = [{"anyOf": [dict(s) for s in _INT_OR_STRING]}, *all_of]
