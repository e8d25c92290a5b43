"""REST handlers: one implementation of every verb for every resource.

Kubernetes v1.0 piece: pkg/apiserver (resthandler.go: GetResource, ListResource, CreateResource,
UpdateResource, PatchResource, DeleteResource; watch.go) installed per resource by
api_installer.go. The handler turns HTTP into registry calls and back; everything a resource
does differently lives in its Strategy (registry/resources.py), so a resource needs no handler
code of its own. Subresources with their own shape (binding, scale, log, componentstatuses)
are in subresources.py.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from ..api import errors, meta
from ..api.fields import parse_field_selector
from ..api.labels import parse_label_selector
from ..api.managedfields import record_update, server_side_apply, update_manager
from ..api.params import int_param, parse_bool
from ..api.patch import PATCH_TYPES, json_merge_patch, json_patch, strategic_merge_patch
from .. import offload
from ..registry import codec
from ..registry.generic import Registry, check_name
from ..registry.request_context import requested_by
from ..registry.strategy import Obj
from ..trace import TRACE
from . import protobuf_render, render, reviews, strictness, subresources
from .metrics_server import api as metrics_api
from .admission import Attributes
from .authn import INSECURE_SUPERUSER
from .authz.guard import USER
from .debug_trace import CREATED
from .deleteoptions import body_dry_run, check_delete_options, dry_run_values
from .filters import WARNINGS
from .negotiation import (
    Output,
    body_type,
    decode_body,
    decode_cost,
    decode_json_object,
    output_format,
    read_body,
)
from .requestinfo import RequestInfo
from .warning import warning_headers
from .watch import serve_watch

if TYPE_CHECKING:
    from .serving import Serving


def _flag(query: Any, name: str) -> bool:
    return parse_bool(query.get(name))


def _no_route(verb: str, name: str) -> bool:
    """Upstream installs PUT and PATCH on objects only and POST on collections only; any
    other pairing has no go-restful route, so it is a 405."""
    return (verb in ("update", "patch") and not name) or (verb == "create" and bool(name))


#: the options kind each write method decodes its query into (upstream's handlers)
_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions",
                 "DELETE": "DeleteOptions"}
_DRY_RUN: web.RequestKey[bool] | str = (
    web.RequestKey("dry_run", bool) if hasattr(web, "RequestKey") else "dry_run")


def _operation_options(request: web.Request, operation: str) -> dict[str, Any] | None:
    """The CreateOptions / UpdateOptions an admission webhook receives as `options` (a
    CONNECT has none)."""
    if operation == "CONNECT":
        return None
    kind = "UpdateOptions" if operation == "UPDATE" else "CreateOptions"
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if _dry_run(request):
        options["dryRun"] = ["All"]
    manager = request.query.get("fieldManager")
    if manager:
        options["fieldManager"] = manager
    validation = request.query.get("fieldValidation")
    if validation:
        options["fieldValidation"] = validation
    return options


def _dry_run(request: web.Request) -> bool:
    """Whether this write is a dry run: the `dryRun` query parameter, or for a delete with a
    body the body's `dryRun` (delete_options decides). Decided once per request."""
    decided = request.get(_DRY_RUN)
    if decided is None:
        decided = request[_DRY_RUN] = dry_run_values(
            request.query.getall("dryRun", []), _OPTIONS_KIND.get(request.method, "CreateOptions"))
    return decided


def deleted_status(strategy: Any, obj: Obj) -> Obj:
    """Upstream's finalizeDelete for stores without ReturnDeletedObject: a Success Status
    whose details name the deleted object (`kind` is the resource, as upstream sets it)."""
    md = obj.get("metadata") or {}
    details = errors.ordered_details({"name": md.get("name", ""), "group": strategy.group,
                                      "kind": strategy.resource, "uid": md.get("uid", "")})
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


def decode_checked(data: bytes, content_type: str | None, registry: Registry,
                   field_validation: str) -> tuple[Obj, list[str]]:
    """A write's body decoded and type-checked, unknown fields handled per `fieldValidation`:
    the pure first step of create and update, run on the worker when the body is big."""
    body = decode_json_object(data, content_type)
    strictness.check_type_meta(body, registry.strategy)
    strictness.check_times(body, registry.strategy)
    return body, strictness.check_fields(body, registry.strategy, field_validation)


def _parse_selectors(label_text: str, field_text: str, allowed: Any) -> tuple[Any, Any]:
    return parse_label_selector(label_text), parse_field_selector(field_text, allowed)


def _copies(operations: Any) -> bool:
    """Whether a JSON patch has `copy` operations (the ones that can multiply its size)."""
    return isinstance(operations, list) and any(
        isinstance(op, dict) and op.get("op") == "copy" for op in operations)


class ResourceHandlers:
    """Dispatch of resource requests (everything under /api/v1 and /apis/<g>/<v>)."""

    def __init__(self, serving: Serving) -> None:
        self.serving = serving

    async def handle(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        offload.begin()  # not heavy until a step weighs it so (offload.py)
        registry = self.serving.resources.registry_for(info.group, info.version, info.resource)
        if registry.strategy.deprecation_warning:
            return await self._deprecated(request, info, registry)
        return await self._handle(request, info, registry)

    async def _deprecated(self, request: web.Request, info: RequestInfo,
                          registry: Registry) -> web.StreamResponse:
        """A request to a deprecated CRD version: its warning comes first on every answer,
        errors included (upstream's crdHandler adds it before serving the request)."""
        request[WARNINGS] = [registry.strategy.deprecation_warning]
        try:
            response = await self._handle(request, info, registry)
        except errors.StatusError as exc:
            header = warning_headers([registry.strategy.deprecation_warning])
            if header:
                exc.headers.setdefault("Warning", header[0])
            raise
        if not response.prepared and "Warning" not in response.headers:  # get, list
            for header in warning_headers(request.get(WARNINGS) or []):
                response.headers.add("Warning", header)
        return response

    async def _handle(self, request: web.Request, info: RequestInfo,
                      registry: Registry) -> web.StreamResponse:
        strategy = registry.strategy
        if info.namespace and not strategy.namespaced and info.resource != "namespaces":
            raise errors.not_found_path()
        if info.subresource:
            return await subresources.handle(self, request, info, registry)
        verb = info.verb
        if verb not in strategy.verbs or _no_route(verb, info.name):
            raise errors.method_not_allowed()
        if info.resource == "componentstatuses":
            return await subresources.component_statuses(self, request, info)
        if "metrics_server" in registry.extras:  # metrics.k8s.io (metrics_server/)
            return await self._metrics(request, info, registry)
        if info.resource == "bindings":
            return await subresources.create_binding(self, request, info, None)
        if info.resource in reviews.RESOURCES and strategy.key_root == "":
            return await reviews.create(request, info, strategy, self.serving.guard,
                                        functools.partial(self.admit, request, "CREATE",
                                                          registry, info.namespace, "", ""))
        namespace = info.namespace if strategy.namespaced else ""
        if verb == "get":
            return await self.get(request, registry, namespace, info.name)
        if verb == "list":
            return await self.list(request, registry, namespace)
        if verb == "watch":
            return await self.watch(request, registry, namespace, info.name)
        if verb == "create":
            return await self.create(request, registry, namespace)
        if verb == "update":
            return await self.update(request, registry, namespace, info.name, "")
        if verb == "patch":
            return await self.patch(request, registry, namespace, info.name, "")
        if verb == "delete":
            return await self.delete(request, registry, namespace, info.name)
        if verb == "deletecollection":
            return await self.delete_collection(request, registry, namespace)
        raise errors.method_not_allowed()

    async def _metrics(self, request: web.Request, info: RequestInfo,
                       registry: Registry) -> web.Response:
        """NodeMetrics/PodMetrics, computed from the last kubelet scrapes (JSON, or a Table
        of names; metrics-server has no protobuf)."""
        body = await metrics_api.handle(registry.extras["metrics_server"], request,
                                        info.resource, info.namespace, info.name, info.verb)
        accept = request.headers.get("Accept")
        if accept:  # no protobuf: the client's other offers, or 406 if it has none
            accept = ",".join(o for o in accept.split(",") if "protobuf" not in o)
            if not accept.strip():
                raise errors.not_acceptable(request.headers["Accept"])
        output = output_format(accept or None)
        if output is Output.TABLE:
            items = body["items"] if "items" in body else [body]
            body = render.table(registry.strategy.kind, items, {})
        yaml = output is Output.YAML
        return render.object_response(body, Output.YAML if yaml else Output.JSON)

    # -- reads --------------------------------------------------------------------------
    async def get(self, request: web.Request, registry: Registry, namespace: str,
                  name: str) -> web.Response:
        output = output_format(request.headers.get("Accept"))
        kv = await registry.get_kv(namespace, name)
        if output is Output.JSON:
            return render.json_response(codec.raw(kv))
        if output is Output.PROTOBUF:
            return protobuf_render.stored_object_response(kv)
        obj = codec.decode(kv)
        if output is Output.TABLE:
            md = {"resourceVersion": obj["metadata"]["resourceVersion"]}
            return render.object_response(self._table(request, registry, [obj], md), Output.JSON)
        # YAML: PyYAML's emitter is Python, ~8x slower per byte than decoding JSON
        return await offload.run(render.object_response, obj, output, weight=len(kv.value) * 8)

    def _table(self, request: web.Request, registry: Registry, objects: list[Obj],
               md: dict[str, Any]) -> dict[str, Any]:
        include = request.query.get("includeObject", "Metadata")
        if include not in ("None", "Metadata", "Object"):
            raise errors.bad_request(f'includeObject: Unsupported value: "{include}"')
        return render.table(registry.strategy.kind, objects, md, include,
                            convertor=registry.strategy.table_convertor)

    async def _table_response(self, request: web.Request, registry: Registry, page: Any,
                              md: dict[str, Any]) -> web.Response:
        """A Table of a list page: decoding and printing every row is Python work per object,
        so a big page is printed on the worker (offload.py)."""
        weight = sum(len(kv.value) for kv in page.kvs)

        def build() -> dict[str, Any]:
            return self._table(request, registry, page.decoded(), md)

        table = await offload.run(build, weight=weight)
        return render.object_response(table, Output.JSON)

    async def selectors(self, request: web.Request, registry: Registry):
        """The request's label and field selectors; a long one (up to the 1 MiB a URL may
        carry) is parsed on the worker: the parsers are Python, a few µs per character."""
        query = request.query
        label_text = query.get("labelSelector", "")
        field_text = query.get("fieldSelector", "")
        return await offload.run(_parse_selectors, label_text, field_text,
                                 registry.strategy.allowed_fields(),
                                 weight=4 * (len(label_text) + len(field_text)))

    async def list(self, request: web.Request, registry: Registry,
                   namespace: str) -> web.Response:
        query = request.query
        output = output_format(request.headers.get("Accept"))
        labels, fields = await self.selectors(request, registry)
        int_param(query, "timeoutSeconds")  # a list ignores it, but it must parse (ListOptions)
        page = await registry.list(
            namespace or None, labels=labels, fields=fields,
            limit=max(int_param(query, "limit") or 0, 0),  # upstream: a limit <= 0 is no limit
            continue_token=query.get("continue") or None,
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )
        md = render.list_metadata(page.revision, page.continue_token, page.remaining)
        if output is Output.TABLE:
            return await self._table_response(request, registry, page, md)
        if output is Output.PROTOBUF:  # items' messages are cached; new ones on the worker
            return await offload.run(
                protobuf_render.list_response, registry.strategy.api_version,
                registry.strategy.kind, md, page.kvs,
                weight=4 * sum(len(kv.value) for kv in page.kvs))
        if output is Output.JSON:
            if page.objects is None:
                items = [codec.raw(kv) for kv in page.kvs]
            else:
                items = [orjson.dumps(obj) for obj in page.objects]
            return render.json_response(render.list_bytes(registry.strategy, md, items))

        def as_yaml() -> web.Response:  # PyYAML's emitter: printed on the worker when big
            return render.object_response(
                render.list_object(registry.strategy, md, page.decoded()), output)

        return await offload.run(as_yaml, weight=8 * sum(len(kv.value) for kv in page.kvs))

    async def watch(self, request: web.Request, registry: Registry, namespace: str,
                    name: str) -> web.StreamResponse:
        labels, fields = await self.selectors(request, registry)
        if name:  # GET .../pods/web?watch=true: the legacy single-object watch
            fields = parse_field_selector(
                ",".join(filter(None, [f"metadata.name={name}", str(fields)])),
                registry.strategy.allowed_fields())
        output = output_format(request.headers.get("Accept"))
        return await serve_watch(self.serving, request, registry, namespace, labels, fields, output)

    # -- writes -------------------------------------------------------------------------
    async def decode_object(self, request: web.Request, registry: Registry) -> Obj:
        data = await read_body(request)
        body, warnings = await offload.run(
            decode_checked, data, body_type(request), registry,
            request.query.get("fieldValidation", ""),
            weight=decode_cost(data, body_type(request)))
        if warnings:
            request[WARNINGS] = [*(request.get(WARNINGS) or []), *warnings]  # after a deprecation
        return body

    async def admit(self, request: web.Request, operation: str, registry: Registry,
                    namespace: str, name: str, subresource: str, obj: Obj | None,
                    old: Obj | None = None, *, options: dict[str, Any] | None = None) -> None:
        """Run the admission chain. The stored object is read for a plugin only if one asks
        (`old` when the caller has it already, as a PATCH does)."""
        warnings = request.get(WARNINGS)
        if warnings is None:
            warnings = request[WARNINGS] = []

        async def read_old() -> Obj | None:
            return await registry.get(namespace, name)

        await self.serving.admission.admit(
            Attributes(operation, registry.strategy, namespace, name, subresource, obj,
                       dry_run=_dry_run(request), user=request.get(USER), old_obj=old,
                       warnings=warnings, read_old=read_old,
                       options=options if options is not None
                       else _operation_options(request, operation)))

    async def create(self, request: web.Request, registry: Registry,
                     namespace: str) -> web.Response:
        body = await self.decode_object(request, registry)
        md = meta.metadata(body)
        body_ns = md.get("namespace")
        if registry.strategy.namespaced and body_ns not in (None, "") and body_ns != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request")
        if not registry.strategy.namespaced:
            namespace = ""
        elif not namespace:
            raise errors.bad_request("the server could not find the requested resource: a "
                                     "namespace must be given for a namespaced resource")
        manager = self._manager(request, "Update")
        await self.admit(request, "CREATE", registry, namespace, md.get("name", ""), "", body)
        if manager:
            await offload.run(record_update, None, body, manager=manager, operation="Update",
                              now=meta.now_rfc3339(), schema=registry.strategy.apply_struct)
        # PrepareForCreate hooks that record the user; where the port checks nobody, the
        # insecure superuser (as the access reviews answer)
        with requested_by(request.get(USER) or INSECURE_SUPERUSER):
            created = await registry.create(namespace, body, dry_run=_dry_run(request))
        if TRACE.active:  # the trace names the object a create made (its path does not)
            request[CREATED] = created.get("metadata") or {}
        return await self.respond(request, created, 201)

    async def respond(self, request: web.Request, obj: Obj, status: int = 200) -> web.Response:
        output = output_format(request.headers.get("Accept"))
        warnings = warning_headers(request.get(WARNINGS) or [])
        if output is Output.TABLE:
            output = Output.JSON
        if output is Output.YAML:  # PyYAML's emitter: on the worker when the request is heavy
            resp = await offload.run(render.object_response, obj, output, status)
        else:
            resp = render.object_response(obj, output, status)
        for header in warnings:
            resp.headers.add("Warning", header)
        return resp

    def _manager(self, request: web.Request, operation: str) -> str:
        manager = request.query.get("fieldManager", "")
        if len(manager) > 128:
            raise errors.bad_request("fieldManager: Too long: may not be more than 128 bytes")
        if not manager and operation == "Update":
            manager = update_manager(request.headers.get("User-Agent", ""))
        return manager

    async def update(self, request: web.Request, registry: Registry, namespace: str, name: str,
                     subresource: str) -> web.Response:
        body = await self.decode_object(request, registry)
        check_name(body, name)  # before the object is read: a mismatch is 400, never 404
        manager = self._manager(request, "Update")
        await self.admit(request, "UPDATE", registry, namespace, name, subresource, body)

        def fresh(old: Obj | None) -> Obj:
            new = codec.clone(body)
            if manager:
                record_update(old, new, manager=manager, operation="Update",
                              now=meta.now_rfc3339(), subresource=subresource,
                              schema=registry.strategy.apply_struct)
            return new

        async def produce(old: Obj | None) -> Obj:
            return await offload.run(fresh, old)

        obj, created = await registry.update(namespace, name, produce, subresource=subresource or None,
                                             dry_run=_dry_run(request))
        return await self.respond(request, obj, 201 if created else 200)

    async def patch(self, request: web.Request, registry: Registry, namespace: str, name: str,
                    subresource: str) -> web.Response:
        content_type = request.content_type
        patch_type = PATCH_TYPES.get(content_type)
        if patch_type is None or (patch_type == "strategic" and registry.strategy.custom):
            # custom resources have no patch strategies: upstream refuses strategic merge
            accepted = [t for t, p in PATCH_TYPES.items()
                        if not (registry.strategy.custom and p == "strategic")]
            raise errors.StatusError(
                415, "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(accepted)}")
        data = await read_body(request)
        doc_type = "application/yaml" if patch_type == "apply" else None
        patch_doc = await offload.run(decode_body, data, doc_type,
                                      weight=decode_cost(data, doc_type))
        if patch_type == "json" and _copies(patch_doc):
            offload.weigh(offload.HEAVY_BYTES + 1)  # copies may add up to MAX_COPY_BYTES
        kind = registry.strategy.kind
        query = request.query
        if patch_type == "apply":
            manager = query.get("fieldManager", "")
            if not manager:
                raise errors.bad_request(
                    "PATCH, application/apply-patch+yaml: fieldManager is required for apply "
                    "requests")
            if not isinstance(patch_doc, dict):
                raise errors.bad_request("apply patches must be a YAML or JSON object")
            strictness.check_type_meta(patch_doc, registry.strategy)
            force = _flag(query, "force")
        else:
            manager = self._manager(request, "Update")
        field_validation = query.get("fieldValidation", "")
        strictness.check_fields({}, registry.strategy, field_validation)  # a bad mode is 400 first
        now = meta.now_rfc3339()
        admitted = False

        def patched(old: Obj | None) -> tuple[Obj, list[str]]:
            """The pure part: the patched object and its unknown-field warnings."""
            current_rv = (old or {}).get("metadata", {}).get("resourceVersion")
            if patch_type == "apply":
                new = server_side_apply(old, codec.clone(patch_doc), manager=manager,
                                        kind=registry.strategy.apply_struct or kind,
                                        force=force, now=now, subresource=subresource)
                if old is None:
                    new.setdefault("metadata", {})["name"] = name
            elif old is None:
                raise registry._not_found(name)
            elif patch_type == "merge":
                new = json_merge_patch(old, patch_doc)
            elif patch_type == "json":
                new = json_patch(old, patch_doc)
            else:
                new = strategic_merge_patch(old, patch_doc, kind)
            if not isinstance(new, dict):
                raise errors.bad_request("the patch must produce a JSON object")
            new_md = new.get("metadata")
            if isinstance(new_md, dict) and new_md.get("resourceVersion") == current_rv:
                # a patch is applied to the newest object and retried on conflict, unless the
                # patch itself sets another resourceVersion: that one is a precondition
                new_md.pop("resourceVersion", None)
            strictness.check_patched_type_meta(new, registry.strategy)
            strictness.check_patched_times(new, registry.strategy, patch_type, patch_doc)
            # unknown fields are judged on the result: patch documents carry directives
            # ($setElementOrder/...) that are not fields
            warnings = strictness.check_fields(new, registry.strategy, field_validation)
            if old is not None and patch_type != "apply" and manager:
                record_update(old, new, manager=manager, operation="Update", now=now,
                              subresource=subresource, schema=registry.strategy.apply_struct)
            return new, warnings

        async def produce(old: Obj | None) -> Obj:
            nonlocal admitted
            new, warnings = await offload.run(patched, old)
            if warnings:  # kept with what admission added on an earlier attempt
                request[WARNINGS] = [*(request.get(WARNINGS) or []), *warnings]
            if not admitted:
                await self.admit(request, "CREATE" if old is None else "UPDATE", registry, namespace,
                                 name, subresource, new, old)
                admitted = True
            return new

        obj, created = await registry.update(
            namespace, name, produce, subresource=subresource or None,
            allow_create=patch_type == "apply" and not subresource,
            dry_run=_dry_run(request))
        return await self.respond(request, obj, 201 if created else 200)

    async def delete_options(self, request: web.Request) -> dict[str, Any]:
        """DeleteOptions as upstream's delete handler reads them: from the body when there is
        one (the query is then not read at all), else from the query; then ValidateDeleteOptions."""
        data = await read_body(request)
        if data.strip():
            options = decode_json_object(data, body_type(request))
            dry_run = body_dry_run(options)
        else:
            query = request.query
            options = {}
            grace = int_param(query, "gracePeriodSeconds")
            if grace is not None:
                options["gracePeriodSeconds"] = grace
            if "propagationPolicy" in query:
                options["propagationPolicy"] = query["propagationPolicy"]
            if "orphanDependents" in query:
                options["orphanDependents"] = parse_bool(query["orphanDependents"])
            dry_run = query.getall("dryRun", [])
        options, request[_DRY_RUN] = check_delete_options(options, dry_run)
        return options

    async def delete(self, request: web.Request, registry: Registry, namespace: str,
                     name: str) -> web.Response:
        options = await self.delete_options(request)
        await self.admit(request, "DELETE", registry, namespace, name, "", None,
                         options={"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                  **options, **({"dryRun": ["All"]} if _dry_run(request) else {})})
        obj, deleted = await registry.delete(namespace, name, options, dry_run=_dry_run(request))
        if (registry.strategy.default_gc_warning and options.get("propagationPolicy") is None
                and options.get("orphanDependents") is None):
            request[WARNINGS] = [*(request.get(WARNINGS) or []),
                                 registry.strategy.default_gc_warning]
        if deleted and not registry.strategy.return_deleted_object:
            obj = deleted_status(registry.strategy, obj)
        return await self.respond(request, obj, 200)

    async def delete_collection(self, request: web.Request, registry: Registry,
                                namespace: str) -> web.Response:
        labels, fields = await self.selectors(request, registry)
        options = await self.delete_options(request)
        deleted = await registry.delete_collection(
            namespace or None, labels=labels, fields=fields, options=options,
            dry_run=_dry_run(request))
        revision = await registry.store.current_revision()
        return render.object_response(  # the deleted objects, negotiated as upstream
            render.list_object(registry.strategy, render.list_metadata(revision, None, None),
                               deleted), output_format(request.headers.get("Accept")))


