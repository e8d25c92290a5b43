"""Subresources: status, binding, scale, log, finalize, approval — and the virtual
componentstatuses.

Kubernetes v1.0 piece: pkg/registry/pod/etcd (StatusREST, BindingREST, LogREST),
pkg/registry/controller/etcd (ScaleREST, v1.1+ as autoscaling/v1 Scale), the namespace
`finalize` REST (and, later, CertificateSigningRequests' ApprovalREST: both are a strategy's
`subresource_updates`) and pkg/registry/componentstatus. Each is a thin shape over the same generic
registry write (one compare-and-swap); nothing here touches storage directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from ..api import errors, meta
from ..api.labels import selector_from_label_selector, selector_from_set
from ..api.params import int_param
from ..api.patch import PATCH_TYPES, json_merge_patch, json_patch, strategic_merge_patch
from ..api.podutil import validate_container
from ..registry import crd_scale, pods
from ..registry.generic import Registry
from ..registry.strategy import Obj
from . import kubelet_client, proxy, render, streaming
from .connection import client_left, while_connected
from .eviction import create_eviction
from .filters import WARNINGS
from .negotiation import (
    Output,
    Partial,
    body_type,
    decode_body,
    decode_json_object,
    output_format,
    read_body,
)
from .serviceaccount.tokenrequest import create_token
from .warning import warning_headers

if TYPE_CHECKING:
    from .options import APIServerOptions
    from .requestinfo import RequestInfo
    from .serving import Verbs


async def handle(handlers: Verbs, request: web.Request, info: RequestInfo,
                 registry: Registry) -> web.StreamResponse:
    strategy = registry.strategy
    spec = strategy.subresource(info.subresource)
    if spec is None:
        raise errors.not_found_path()
    if info.subresource in streaming.SUBRESOURCES:  # exec, attach, portforward (WebSocket)
        return await streaming.connect(handlers, request, info, registry)
    if info.subresource == "proxy":  # every HTTP method, so before the verb check
        return await proxy.handle(handlers, request, info, registry)
    verb = info.verb
    if verb not in spec.verbs:
        raise errors.method_not_allowed()
    namespace = info.namespace if strategy.namespaced else ""
    name = info.name
    sub = info.subresource
    if sub == "status":
        if verb == "get":
            return await handlers.get(request, registry, namespace, name)
        if verb == "update":
            return await handlers.update(request, registry, namespace, name, "status")
        return await handlers.patch(request, registry, namespace, name, "status")
    if sub in strategy.subresource_updates:  # namespaces' finalize, CSRs' approval
        if verb == "get":
            return await handlers.get(request, registry, namespace, name)
        if verb == "update":
            return await handlers.update(request, registry, namespace, name, sub)
        return await handlers.patch(request, registry, namespace, name, sub)
    if sub == "binding":
        return await create_binding(handlers, request, info, name)
    if sub == "token":  # serviceaccounts/{name}/token: TokenRequest
        return await create_token(handlers, request, info, registry, handlers.serving.tokens)
    if sub == "scale":
        return await scale(handlers, request, registry, namespace, name, verb)
    if sub == "eviction":
        return await create_eviction(handlers, request, info, registry)
    if sub == "log":
        return await pod_log(handlers, request, registry, namespace, name)
    raise errors.not_found_path()


def _output(request: web.Request) -> Output | Partial:
    """The negotiated format of a subresource's answer; a Table (which upstream has for none of
    these) is plain JSON."""
    output = output_format(request.headers.get("Accept"))
    return Output.JSON if output is Output.TABLE else output


# -- binding ---------------------------------------------------------------------------
async def create_binding(handlers: Verbs, request: web.Request, info: RequestInfo,
                         pod_name: str | None) -> web.Response:
    """`POST pods/{name}/binding` or v1.0's `POST bindings`: assign a pod to a node."""
    binding = decode_json_object(await read_body(request), body_type(request))
    if pod_name is None:  # POST .../bindings: the pod is named in the body
        pod_name = (binding.get("metadata") or {}).get("name") or ""
        if not pod_name:
            raise errors.invalid_object("Binding", "", [errors.required("metadata.name")])
    errs = pods.validate_binding(binding, pod_name)
    if errs:
        raise errors.invalid_object("Binding", pod_name, errs)
    registry = handlers.serving.resources.registry_for("", "v1", "pods")
    await handlers.admit(request, "CREATE", registry, info.namespace, pod_name, "binding", binding)
    now = meta.now_rfc3339()

    def produce(old: Obj | None) -> Obj:
        assert old is not None
        old["metadata"].pop("resourceVersion", None)  # no precondition: retry on conflict
        return pods.assign(old, binding, now)

    await registry.update(info.namespace, pod_name, produce, subresource="binding")
    # upstream's BindingREST answers a Status, negotiated as every response (protobuf for
    # kube-scheduler)
    return render.object_response(render.success_status(201), _output(request), 201)


# -- scale -----------------------------------------------------------------------------
def scale_of(obj: Obj, registry: Registry) -> Obj:
    """The autoscaling/v1 Scale view of an RC, ReplicaSet or Deployment."""
    md = obj["metadata"]
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if registry.strategy.group == "apps":
        text = str(selector_from_label_selector(selector)) if isinstance(selector, dict) else ""
    else:
        text = str(selector_from_set(selector or {}))
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                        "creationTimestamp") if k in md},
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": text},
    }


def _replicas(scale_body: Any, name: str) -> int:
    replicas = ((scale_body or {}).get("spec") or {}).get("replicas", 0) if isinstance(
        scale_body, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid_object("Scale", name, [errors.invalid(
            "spec.replicas", replicas, "must be greater than or equal to 0")], "autoscaling")
    return replicas


def _scale_views(registry: Registry) -> tuple[Any, Any, Any]:
    """(read view, the view an update starts from, set replicas) of the resource's Scale:
    the built-in workloads' spec.replicas, or a custom resource's CRD paths (crd_scale.py)."""
    paths = registry.strategy.scale
    if paths is None:
        def set_replicas(old: Obj, replicas: int) -> Obj:
            return dict(old, spec=dict(old.get("spec") or {}, replicas=replicas))

        def view(obj: Obj) -> Obj:
            return scale_of(obj, registry)
        return view, view, set_replicas
    return (lambda obj: crd_scale.get_scale(obj, paths),
            lambda obj: crd_scale.current_scale(obj, paths),
            lambda old, replicas: crd_scale.with_replicas(old, paths, replicas))


async def scale(handlers: Verbs, request: web.Request, registry: Registry,
                namespace: str, name: str, verb: str) -> web.Response:
    view, start, set_replicas = _scale_views(registry)
    if verb == "get":
        return render.object_response(view(await registry.get(namespace, name)),
                                      _output(request))
    if verb == "update":
        body = decode_json_object(await read_body(request), body_type(request))
        patch_type, patch_doc = None, None
    else:
        patch_type = PATCH_TYPES.get(request.content_type)
        if patch_type not in ("merge", "json", "strategic"):
            raise errors.StatusError(415, "UnsupportedMediaType",
                                     f"unsupported patch type {request.content_type!r} for scale")
        patch_doc = decode_body(await read_body(request), None)
        body = None

    admitted = False

    async def produce(old: Obj | None) -> Obj:
        nonlocal admitted
        assert old is not None
        current = start(old)
        if patch_type == "merge":
            desired = json_merge_patch(current, patch_doc)
        elif patch_type == "json":
            desired = json_patch(current, patch_doc)
        elif patch_type == "strategic":
            desired = strategic_merge_patch(current, patch_doc, "Scale")
        else:
            desired = body
        if not admitted:  # upstream admits the Scale (UPDATE of <resource>/scale) once
            await handlers.admit(request, "UPDATE", registry, namespace, name, "scale",
                                 desired, current)
            admitted = True
        if isinstance(desired, dict) and (desired.get("spec") or {}).get(
                "replicas") == crd_scale.UNSET:
            set_replicas(old, crd_scale.UNSET)  # raises: the write left the field unset
        new = set_replicas(old, _replicas(desired, name))
        new["metadata"] = dict(old["metadata"])
        rv = (desired.get("metadata") or {}).get("resourceVersion")
        if rv:
            new["metadata"]["resourceVersion"] = rv  # the Scale's precondition
        else:
            new["metadata"].pop("resourceVersion", None)
        return new

    obj, _ = await registry.update(namespace, name, produce)
    resp = render.object_response(view(obj), _output(request))
    for header in warning_headers(request.get(WARNINGS) or []):  # admission's Warn
        resp.headers.add("Warning", header)
    return resp


# -- log -------------------------------------------------------------------------------
def validate_log_options(query: Any, name: str) -> None:
    """PodLogOptions as upstream's LogREST checks them before it looks at the pod: the integers
    parse as Go's (400 otherwise), then ValidatePodLogOptions (422)."""
    tail, limit, since = (int_param(query, key) for key in ("tailLines", "limitBytes", "sinceSeconds"))
    errs = []
    if tail is not None and tail < 0:
        errs.append(errors.invalid("tailLines", tail, "must be greater than or equal to 0"))
    if limit is not None and limit < 1:
        errs.append(errors.invalid("limitBytes", limit, "must be greater than 0"))
    if since is not None and query.get("sinceTime") is not None:
        errs.append(errors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif since is not None and since < 1:
        errs.append(errors.invalid("sinceSeconds", since, "must be greater than 0"))
    if errs:
        raise errors.invalid_object("PodLogOptions", name, errs)


async def pod_log(handlers: Verbs, request: web.Request, registry: Registry,
                  namespace: str, name: str) -> web.StreamResponse:
    """Proxy `pods/{name}/log` to the kubelet of the pod's node (v1.0 LogREST)."""
    validate_log_options(request.query, name)
    pod = await registry.get(namespace, name)
    container = validate_container(pod, name, request.query.get("container", ""))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        return web.Response(body=b"", content_type="text/plain")
    status_of = pod.get("status") or {}
    for status in [*(status_of.get("initContainerStatuses") or []),
                   *(status_of.get("containerStatuses") or [])]:
        waiting = (status.get("state") or {}).get("waiting")
        if status.get("name") == container and waiting:
            raise errors.bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: '
                f'{waiting.get("reason", "")}')
    node = await handlers.serving.resources.registry_for("", "v1", "nodes").get("", node_name)
    options = handlers.serving.options
    url = kubelet_log_url(node, namespace, name, container, options)
    params = {k: v for k, v in request.query.items()
              if k in ("follow", "tailLines", "timestamps", "previous", "sinceSeconds",
                       "limitBytes")}
    return await _proxy_stream(request, url, params, node_name, options)


def kubelet_log_url(node: Obj, namespace: str, pod: str, container: str,
                    options: APIServerOptions | None = None) -> str:
    return f"{kubelet_base_url(node, options)}/containerLogs/{namespace}/{pod}/{container}"


def kubelet_base_url(node: Obj, options: APIServerOptions | None = None) -> str:
    """`https://<InternalIP>:<kubelet port>` from the Node's status, http when the API server
    has no kubelet TLS configured (kubelet_client.py); 400 when the node does not say."""
    return kubelet_client.base_url(node, options)


async def _proxy_stream(request: web.Request, url: str, params: dict[str, str],
                        node: str, options: APIServerOptions) -> web.StreamResponse:
    timeout = aiohttp.ClientTimeout(total=None, connect=5)
    try:
        async with kubelet_client.session(options, timeout=timeout) as session:
            async with session.get(url, params=params) as upstream:
                if upstream.status != 200:
                    text = (await upstream.read()).decode(errors="replace")
                    raise errors.StatusError(upstream.status if 400 <= upstream.status < 500 else 502,
                                             "BadRequest" if upstream.status < 500 else "InternalError",
                                             text or f"kubelet answered {upstream.status}")
                if streaming.is_websocket(request):  # wsstream.Reader framing
                    return await streaming.websocket_body(request, upstream.content.iter_any())
                response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
                await response.prepare(request)

                async def copy() -> None:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)

                # a follower that leaves ends the stream now, not at the container's next line
                await while_connected(request, copy())
                return response
    except aiohttp.ClientError as exc:
        if client_left(request, exc):
            raise  # our client (kubectl logs -f) left, not the kubelet: one debug line
        raise errors.StatusError(
            502, "InternalError",
            f'Get "{url}": {exc} (is the kubelet for node {node} running?)') from None


# -- componentstatuses -----------------------------------------------------------------
async def component_statuses(handlers: Verbs, request: web.Request,
                             info: RequestInfo) -> web.Response:
    statuses = handlers.serving.component_statuses
    output = output_format(request.headers.get("Accept"))
    objects = [await statuses.get(info.name)] if info.name else await statuses.list()
    headers = {"Warning": '299 - "v1 ComponentStatus is deprecated in v1.19+"'}
    if output is Output.TABLE:
        body = render.table("ComponentStatus", objects, {})
    elif info.name:
        body = objects[0]
    else:
        body = {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                "items": objects}
    response = render.object_response(body, Output.JSON if output is Output.TABLE else output)
    response.headers.update(headers)
    return response
