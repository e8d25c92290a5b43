"""The OpenAPI documents: per-group-version /openapi/v3 trees (/openapi/v2 is derived from them).

Kubernetes piece: the apiserver's /openapi/v3 handler (kube-openapi's handler3 over builder3's
per-group-version documents). Pure: this module only builds the bodies; the HTTP handler serves
them. The single /openapi/v2 Swagger document kubectl up to 1.26 reads is a translation of
these (openapi_v2.py), so both always describe the same paths and schemas.

Why it matters (docs: kubectl-protocol §4, §5.20): without OpenAPI, `kubectl create -f` and
`apply -f` fail on every kubectl version. For kubectl 1.27+, a PATCH operation whose
parameters include `fieldValidation` and whose `x-kubernetes-group-version-kind` names the kind
tells kubectl to trust server-side validation; the component schemas drive `kubectl explain`
and the strategic-merge patches of client-side `apply` (see openapi_schemas.py).

Each path is generated from a `ResourceSpec` the way upstream's installer does it: the
collection (list/create/deletecollection), the item (read/replace/patch/delete), the
all-namespaces list, and subresources (`status`, `scale`, `binding`, `log`). A document
carries only the schemas its paths reach, like upstream's.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from minikube_py.apiserver import openapi_schemas as schemas

Schema = dict[str, Any]

INFO_VERSION = "unversioned"

_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_RESPONSE_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_WATCH_TYPES = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
_SCALE = ("autoscaling", "v1", "Scale")
_BINDING = ("", "v1", "Binding")
#: serviceaccounts/{name}/token's body and answer (apiserver/serviceaccount/tokenrequest.py)
_TOKEN_REQUEST = ("authentication.k8s.io", "v1", "TokenRequest")
#: pods/{name}/eviction's body (apiserver/eviction.py)
_EVICTION = ("policy", "v1", "Eviction")


# ---------------------------------------------------------------------------------------------
# Parameters (upstream's, descriptions shortened). PATCH carrying `fieldValidation` is what
# kubectl 1.27+ looks for before it skips client-side validation.


def _param(name: str, type_: str, description: str, where: str = "query") -> Schema:
    param: Schema = {"name": name, "in": where, "description": description,
                     "schema": {"type": type_, "uniqueItems": True}}
    if where == "path":
        param["required"] = True
    return param


NAME = _param("name", "string", "name of the resource", "path")
NAMESPACE = _param("namespace", "string", "object name and auth scope, such as for teams and "
                   "projects", "path")
PRETTY = _param("pretty", "string", "If 'true', then the output is pretty printed.")
_DRY_RUN = _param("dryRun", "string", "When present, indicates that modifications should not "
                  "be persisted. Valid values are: All (all dry run stages will be processed).")
_FIELD_MANAGER = _param("fieldManager", "string", "fieldManager is a name associated with the "
                        "actor or entity that is making these changes.")
FIELD_VALIDATION = _param(
    "fieldValidation", "string", "fieldValidation instructs the server on how to handle objects "
    "in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
    "Ignore, Warn (the default) and Strict.")
WRITE_PARAMS = [_DRY_RUN, _FIELD_MANAGER, FIELD_VALIDATION]
PATCH_PARAMS = WRITE_PARAMS + [_param(
    "force", "boolean", "Force is going to \"force\" Apply requests. It means user will "
    "re-acquire conflicting fields owned by other people. Must be unset for non-apply patches.")]
LIST_PARAMS = [_param(*p) for p in (
    ("allowWatchBookmarks", "boolean", "allowWatchBookmarks requests watch events with type "
     "\"BOOKMARK\"."),
    ("continue", "string", "The continue option should be set when retrieving more results "
     "from the server."),
    ("fieldSelector", "string", "A selector to restrict the list of returned objects by their "
     "fields. Defaults to everything."),
    ("labelSelector", "string", "A selector to restrict the list of returned objects by their "
     "labels. Defaults to everything."),
    ("limit", "integer", "limit is a maximum number of responses to return for a list call."),
    ("resourceVersion", "string", "resourceVersion sets a constraint on what resource versions "
     "a request may be served from."),
    ("resourceVersionMatch", "string", "resourceVersionMatch determines how resourceVersion is "
     "applied to list calls."),
    ("sendInitialEvents", "boolean", "`sendInitialEvents=true` may be set together with "
     "`watch=true`."),
    ("timeoutSeconds", "integer", "Timeout for the list/watch call."),
    ("watch", "boolean", "Watch for changes to the described resources and return them as a "
     "stream of add, update, and remove notifications."),
)]
DELETE_PARAMS = [_DRY_RUN] + [_param(*p) for p in (
    ("gracePeriodSeconds", "integer", "The duration in seconds before the object should be "
     "deleted. Zero means delete immediately."),
    ("orphanDependents", "boolean", "Deprecated: please use the PropagationPolicy."),
    ("propagationPolicy", "string", "Whether and how garbage collection will be performed: "
     "Orphan, Background or Foreground."),
)]


@dataclass(frozen=True)
class ResourceSpec:
    """One served resource of a group-version, as discovery lists it.

    `verbs` are discovery verbs (get, list, watch, create, update, patch, delete,
    deletecollection); `subresources` are names like `status`, `scale`, `binding`, `log`."""

    plural: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    subresources: tuple[str, ...] = ()
    #: a custom resource's definition names (`com.example.v1.Widget`, `...WidgetList`), whose
    #: schemas the caller supplies; "" = a built-in kind's `io.k8s.api...` name
    definition: str = ""
    list_definition: str = ""

    def __post_init__(self) -> None:  # accept lists, stay hashable (documents are cached)
        object.__setattr__(self, "verbs", tuple(self.verbs))
        object.__setattr__(self, "subresources", tuple(self.subresources))


def openapi_v3_index(paths: dict[str, str]) -> dict:
    """GET /openapi/v3: `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=H"}}}`.

    `paths` maps a group-version path (`api/v1`, `apis/apps/v1`) to its document's hash."""
    return {"paths": {
        path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        for path, digest in sorted(paths.items())
    }}


def document_hash(body: bytes) -> str:
    """Upstream's etag for a v3 document: the upper-case hex SHA-512 of its serialized bytes."""
    return hashlib.sha512(body).hexdigest().upper()


def openapi_v3_document(group: str, version: str, resources: list[ResourceSpec],
                        custom_schemas: dict[str, Schema] | None = None) -> dict:
    """GET /openapi/v3/api/v1 (or apis/<group>/<version>): paths plus reachable schemas.

    `custom_schemas` are the definitions of custom resources (openapi_crd.py), named by their
    specs' `definition`. Without them the document is cached per (group, version, resources);
    the same dict is returned for equal arguments, so callers must not mutate it (serialize
    it once and keep the bytes)."""
    if custom_schemas:
        return _build_document(group, version, tuple(resources), custom_schemas)
    return _document(group, version, tuple(resources))


@functools.lru_cache(maxsize=64)
def _document(group: str, version: str, resources: tuple[ResourceSpec, ...]) -> dict:
    return _build_document(group, version, resources, {})


def _build_document(group: str, version: str, resources: tuple[ResourceSpec, ...],
                    custom_schemas: dict[str, Schema]) -> dict:
    extra: dict[str, Schema] = dict(custom_schemas)
    paths: dict[str, Schema] = {}
    for resource in resources:
        name = schemas.schema_name(group, version, resource.kind)
        if not resource.definition and name not in schemas.SCHEMAS:
            extra.update(schemas.generic_kind_schemas(group, version, resource.kind))
        if "token" in resource.subresources:  # TokenRequest: described from its protobuf
            extra.update(schemas.generic_kind_schemas(*_TOKEN_REQUEST))
        if "eviction" in resource.subresources:  # policy/v1 Eviction, likewise
            extra.update(schemas.generic_kind_schemas(*_EVICTION))
        paths.update(resource_paths(group, version, resource))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": INFO_VERSION},
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": _reachable_schemas(paths, extra),
            "securitySchemes": {"BearerToken": {
                "type": "apiKey", "description": "Bearer Token authentication",
                "name": "authorization", "in": "header",
            }},
        },
        "security": [{"BearerToken": []}],
    }


# ---------------------------------------------------------------------------------------------
# Paths


def resource_paths(group: str, version: str, res: ResourceSpec) -> dict[str, Schema]:
    """The paths of one resource (upstream's installer: collection, item, all-namespaces
    list, subresources)."""
    root = f"/apis/{group}/{version}" if group else f"/api/{version}"
    scope = f"{root}/namespaces/{{namespace}}" if res.namespaced else root
    scope_params = [NAMESPACE, PRETTY] if res.namespaced else [PRETTY]
    collection, item = f"{scope}/{res.plural}", f"{scope}/{res.plural}/{{name}}"
    op = _Operations(group, version, res)
    verbs = set(res.verbs)
    paths: dict[str, Schema] = {}
    _add(paths, collection, scope_params, {
        "get": op.list(namespaced_only=False) if "list" in verbs else None,
        "post": op.write("create", "post", (200, 201, 202)) if "create" in verbs else None,
        "delete": op.delete_collection() if "deletecollection" in verbs else None,
    })
    _add(paths, item, [NAME, *scope_params], {
        "get": op.read("read", op.kind_ref) if "get" in verbs else None,
        "put": op.write("replace", "put", (200, 201)) if "update" in verbs else None,
        "patch": op.patch("patch", op.gvk, op.kind_ref) if "patch" in verbs else None,
        "delete": op.delete() if "delete" in verbs else None,
    })
    if res.namespaced and "list" in verbs:
        _add(paths, f"{root}/{res.plural}", [PRETTY], {"get": op.list(namespaced_only=True)})
    for sub in res.subresources:
        _add(paths, f"{item}/{sub}", [NAME, *scope_params], op.subresource(sub, verbs))
    return paths


def _add(paths: dict[str, Schema], path: str, params: list[Schema], ops: dict) -> None:
    operations = {method: body for method, body in ops.items() if body is not None}
    if operations:
        paths[path] = {**operations, "parameters": params}


class _Operations:
    """Builds upstream-shaped operations for one resource (operationId, tags, parameters,
    request bodies, responses and the x-kubernetes-* extensions)."""

    def __init__(self, group: str, version: str, res: ResourceSpec):
        self.res = res
        self.gvk = schemas.gvk(group, version, res.kind)
        name = res.definition or schemas.schema_name(group, version, res.kind)
        self.kind_ref = schemas.ref(name)
        self.list_ref = schemas.ref(res.list_definition or name + "List")
        self.tag, self.prefix = operation_tag_and_prefix(group, version)
        self.scope = "Namespaced" if res.namespaced else ""
        # a custom resource has no strategic-merge patch and no protobuf (customresource_handler)
        self.patch_types = _PATCH_TYPES if not res.definition else tuple(
            t for t in _PATCH_TYPES if "strategic" not in t)
        self.response_types = _RESPONSE_TYPES if not res.definition else _RESPONSE_TYPES[:2]

    def _op(self, verb: str, action: str, suffix: str, params: list[Schema],
            responses: dict[str, Schema], gvk: Schema | None = None,
            body: Schema | None = None, scope: str | None = None) -> Schema:
        operation: Schema = {
            "tags": [self.tag],
            "description": _describe(action, suffix, self.res.kind),
            "operationId": f"{verb}{self.prefix}{self.scope if scope is None else scope}"
                           f"{self.res.kind}{suffix}",
            "parameters": params,
            "responses": {**responses, "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk or self.gvk,
        }
        if body is not None:
            operation["requestBody"] = body
        return operation

    def list(self, namespaced_only: bool) -> Schema:
        scope, suffix = ("", "ForAllNamespaces") if namespaced_only else (None, "")
        watch = _WATCH_TYPES if not self.res.definition else _WATCH_TYPES[:1]
        ok = _content(self.list_ref, self.response_types + watch)
        return self._op("list", "list", suffix, LIST_PARAMS, {"200": ok}, scope=scope)

    def read(self, suffix: str, ref: Schema, gvk: Schema | None = None) -> Schema:
        suffix = "" if suffix == "read" else suffix
        return self._op("read", "get", suffix, [], {"200": _content(ref, self.response_types)},
                        gvk=gvk)

    def write(self, verb: str, action: str, codes: tuple[int, ...], suffix: str = "",
              ref: Schema | None = None, gvk: Schema | None = None) -> Schema:
        ref = ref or self.kind_ref
        body = {"content": {"*/*": {"schema": ref}}, "required": True}
        responses = {str(code): _content(ref, self.response_types) for code in codes}
        return self._op(verb, action, suffix, WRITE_PARAMS, responses, gvk=gvk, body=body)

    def patch(self, suffix: str, gvk: Schema, ref: Schema) -> Schema:
        suffix = "" if suffix == "patch" else suffix
        patch_ref = schemas.ref("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")
        body = {"content": {t: {"schema": patch_ref} for t in self.patch_types},
                "required": True}
        responses = {"200": _content(ref, self.response_types),
                     "201": _content(ref, self.response_types)}
        return self._op("patch", "patch", suffix, PATCH_PARAMS, responses, gvk=gvk, body=body)

    def delete(self) -> Schema:
        body = {"content": {"*/*": {"schema": _DELETE_OPTIONS}}}
        responses = {"200": _content(self.kind_ref, self.response_types),
                     "202": _content(self.kind_ref, self.response_types)}
        return self._op("delete", "delete", "", DELETE_PARAMS, responses, body=body)

    def delete_collection(self) -> Schema:
        body = {"content": {"*/*": {"schema": _DELETE_OPTIONS}}}
        params = DELETE_PARAMS + [p for p in LIST_PARAMS if p["name"] != "watch"]
        ok = _content(_STATUS, self.response_types)
        return self._op("delete", "deletecollection", "", params, {"200": ok},
                        body=body, scope=f"Collection{self.scope}")

    def subresource(self, sub: str, verbs: set[str]) -> dict[str, Schema | None]:
        suffix = sub[:1].upper() + sub[1:]
        if sub == "binding":
            gvk, ref = schemas.gvk(*_BINDING), schemas.ref("io.k8s.api.core.v1.Binding")
            return {"post": self.write("create", "post", (200, 201, 202), suffix, ref, gvk)}
        if sub == "token":
            gvk = schemas.gvk(*_TOKEN_REQUEST)
            ref = schemas.ref(schemas.schema_name(*_TOKEN_REQUEST))
            return {"post": self.write("create", "post", (200, 201, 202), suffix, ref, gvk)}
        if sub == "eviction":
            gvk = schemas.gvk(*_EVICTION)
            ref = schemas.ref(schemas.schema_name(*_EVICTION))
            return {"post": self.write("create", "post", (200, 201, 202), suffix, ref, gvk)}
        if sub == "log":
            text = {"200": {"description": "OK", "content": {"text/plain": {
                "schema": {"type": "string"}}}}}
            return {"get": self._op("read", "get", suffix, _LOG_PARAMS, text)}
        if sub not in ("status", "scale"):
            return self._connect(sub, suffix)
        gvk, ref = self.gvk, self.kind_ref
        if sub == "scale":
            gvk, ref = schemas.gvk(*_SCALE), schemas.ref("io.k8s.api.autoscaling.v1.Scale")
        return {
            "get": self.read(suffix, ref, gvk) if "get" in verbs else None,
            "put": self.write("replace", "put", (200, 201), suffix, ref, gvk)
            if "update" in verbs else None,
            "patch": self.patch(suffix, gvk, ref) if "patch" in verbs else None,
        }


    def _connect(self, sub: str, suffix: str) -> dict[str, Schema | None]:
        """exec/attach/portforward/proxy style subresources: GET and POST `connect`
        operations whose GVK is the options kind (`PodExecOptions`), as upstream."""
        gvk = dict(self.gvk, kind=f"{self.res.kind}{suffix}Options")
        text = {"200": {"description": "OK", "content": {"*/*": {"schema": {"type": "string"}}}}}
        return {method: {**self._op(f"connect{method.capitalize()}", "connect", suffix, [], text,
                                    gvk=gvk), "description": f"connect {method.upper()} "
                         f"requests to {sub} of {self.res.kind}"}
                for method in ("get", "post")}


def operation_tag_and_prefix(group: str, version: str) -> tuple[str, str]:
    """Upstream's GetOperationIDAndTags for `/apis/<group>/<version>`: the group without
    `.k8s.io`, dots and dashes dropped with the next letter upper-cased (`rbac.authorization.
    k8s.io` -> tag `rbacAuthorization_v1`, prefix `RbacAuthorizationV1`; the core group is
    `core`)."""
    name = group.removesuffix(".k8s.io") if group else "core"
    words = [w for w in name.replace("-", ".").split(".") if w]
    camel = words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    version_id = version[:1].upper() + version[1:]
    return f"{camel}_{version}", camel[:1].upper() + camel[1:] + version_id


def _describe(action: str, suffix: str, kind: str) -> str:
    """Upstream's operation descriptions: `read status of the specified Pod`, ..."""
    what = "" if suffix in ("", "ForAllNamespaces") else suffix.lower() + " of "
    return {
        "list": f"list or watch objects of kind {kind}",
        "post": f"create {what}a {kind}",
        "deletecollection": f"delete collection of {kind}",
        "get": f"read {what}the specified {kind}",
        "put": f"replace {what}the specified {kind}",
        "patch": f"partially update {what}the specified {kind}",
        "delete": f"delete a {kind}",
    }.get(action, f"{action} {kind}")


def _content(ref: Schema, types: tuple[str, ...] = _RESPONSE_TYPES) -> Schema:
    return {"description": "OK", "content": {t: {"schema": ref} for t in types}}


_STATUS = schemas.ref("io.k8s.apimachinery.pkg.apis.meta.v1.Status")
_DELETE_OPTIONS = schemas.ref("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
_LOG_PARAMS = [_param(*p) for p in (
    ("container", "string", "The container for which to stream logs."),
    ("follow", "boolean", "Follow the log stream of the pod."),
    ("previous", "boolean", "Return previous terminated container logs."),
    ("sinceSeconds", "integer", "A relative time in seconds before the current time from which "
     "to show logs."),
    ("tailLines", "integer", "If set, the number of lines from the end of the logs to show."),
    ("timestamps", "boolean", "If true, add an RFC3339 timestamp at the beginning of every line "
     "of log output."),
)]


# ---------------------------------------------------------------------------------------------
# Schemas


def _reachable_schemas(paths: dict[str, Schema], extra: dict[str, Schema]) -> dict[str, Schema]:
    """The transitive closure of `$ref`s from the paths, sorted by name like upstream."""
    lookup = {**schemas.SCHEMAS, **extra}
    found: dict[str, Schema] = {}
    pending = _refs(paths)
    while pending:
        name = pending.pop()
        if name in found or name not in lookup:
            continue
        found[name] = lookup[name]
        pending.extend(_refs(found[name]))
    return dict(sorted(found.items()))


def _refs(node: Any) -> list[str]:
    """Every `$ref` target name below `node` (iterative: schemas nest deeply)."""
    out: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            target = item.get("$ref")
            if isinstance(target, str):
                out.append(target.removeprefix(schemas.REF_PREFIX))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out
