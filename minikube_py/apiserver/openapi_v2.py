"""The /openapi/v2 Swagger 2.0 document, derived from the /openapi/v3 documents: pure.

Kubernetes piece: the apiserver's /openapi/v2 (kube-openapi's builder over the same Go types
and routes as its v3 builder): one document for every group-version, definitions named like the
v3 component schemas (`io.k8s.api.core.v1.Pod`), each kind's definition carrying
`x-kubernetes-group-version-kind`, every operation its action, its GVK and its query
parameters (`dryRun`, `fieldManager`, `fieldValidation`, ...).

Why it matters: kubectl up to 1.26 reads only v2 (as protobuf, openapi_v2_proto.py). From it
kubectl 1.20 decides whether a kind supports server-side dry-run (`apply --dry-run=server`,
`diff`: the PATCH operation of the kind's path must have a `dryRun` query parameter, else
"doesn't support dry-run"), and `kubectl explain` reads the definitions.

One source of truth: every v2 path, parameter and definition is a translation of a v3 one
(openapi.py builds them from the served resource table), so the two documents cannot disagree:
a v3 requestBody becomes a `body` parameter and `consumes`, response content types become
`produces`, a parameter's `schema` is flattened into it, `$ref`s point into `#/definitions/`,
and the OpenAPI 3 spellings v2 lacks are given in upstream's v2 form (a `$ref` wrapped in
`allOf` to carry a description becomes the bare `$ref` beside its description; Quantity's
`oneOf` and IntOrString's `anyOf` become `type: string`, `format: int-or-string` for the latter).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Schema = dict[str, Any]

V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def swagger_document(v3_documents: Iterable[Schema]) -> Schema:
    """One Swagger 2.0 document from the per-group-version v3 documents."""
    paths: dict[str, Schema] = {}
    definitions: dict[str, Schema] = {}
    info: Schema = {"title": "Kubernetes", "version": "unversioned"}
    for doc in v3_documents:
        info = doc.get("info") or info
        for path, item in (doc.get("paths") or {}).items():
            paths[path] = _path_item(item)
        for name, schema in ((doc.get("components") or {}).get("schemas") or {}).items():
            definitions[name] = schema_v2(schema)
    return {
        "swagger": "2.0",
        "info": dict(info),
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": {"BearerToken": {
            "description": "Bearer Token authentication", "type": "apiKey",
            "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    }


def _path_item(item: Schema) -> Schema:
    out: Schema = {}
    for method in _METHODS:
        if method in item:
            out[method] = _operation(item[method])
    if item.get("parameters"):
        out["parameters"] = [_parameter(p) for p in item["parameters"]]
    return out


def _operation(op: Schema) -> Schema:
    out: Schema = {}
    body = op.get("requestBody")
    if body:
        out["consumes"] = list((body.get("content") or {}).keys())
    for key in ("description",):
        if key in op:
            out[key] = op[key]
    out["operationId"] = op.get("operationId", "")
    parameters = []
    if body:
        content = body.get("content") or {}
        schema = next(iter(content.values()), {}).get("schema", {})
        parameters.append({"name": "body", "in": "body", "required": bool(body.get("required")),
                           "schema": schema_v2(schema)})
    parameters += [_parameter(p) for p in op.get("parameters") or ()]
    if parameters:
        out["parameters"] = parameters
    produces: list[str] = []
    responses: Schema = {}
    for code, response in (op.get("responses") or {}).items():
        content = response.get("content") or {}
        for media_type in content:
            if media_type not in produces:
                produces.append(media_type)
        converted: Schema = {"description": response.get("description", "")}
        if content:
            converted["schema"] = schema_v2(next(iter(content.values())).get("schema", {}))
        responses[code] = converted
    if produces:
        out["produces"] = produces
    out["responses"] = responses
    out["schemes"] = ["https"]
    out["tags"] = list(op.get("tags") or ())
    out.update({k: v for k, v in op.items() if k.startswith("x-")})
    return out


def _parameter(param: Schema) -> Schema:
    """A v3 parameter (`schema: {type, uniqueItems}`) in v2's flat form."""
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(schema_v2(param.get("schema") or {}))
    return out


def schema_v2(schema: Any) -> Any:
    """A v3 schema in v2's spelling (iterative walk: schemas nest deeply)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any]] = [(schema, root, 0)]
    while stack:
        node, parent, key = stack.pop()
        if isinstance(node, dict):
            node = _flatten(node)
            out: dict[str, Any] = {}
            parent[key] = out
            for k, v in node.items():
                stack.append((v, out, k))
        elif isinstance(node, list):
            items: list[Any] = [None] * len(node)
            parent[key] = items
            for i, v in enumerate(node):
                stack.append((v, items, i))
        elif key == "$ref" and isinstance(node, str):
            parent[key] = V2_REF + node.removeprefix(V3_REF)
        else:
            parent[key] = node
    return root[0]


def _flatten(node: Schema) -> Schema:
    """The OpenAPI 3 constructs of our v3 schemas, in upstream's v2 form."""
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and (
            "$ref" in all_of[0]):
        node = {**{k: v for k, v in node.items() if k not in ("allOf", "default")},
                "$ref": all_of[0]["$ref"]}
    if "anyOf" in node or "oneOf" in node:
        int_or_string = bool(node.get("x-kubernetes-int-or-string"))
        node = {k: v for k, v in node.items()
                if k not in ("anyOf", "oneOf", "x-kubernetes-int-or-string")}
        node["type"] = "string"
        if int_or_string:
            node["format"] = "int-or-string"
    return {k: v for k, v in node.items() if k != "nullable"}
