"""`pods/{name}[:port]/proxy/{path}` and `services/{name}[:port]/proxy/{path}`.

Kubernetes v1.0 piece: pkg/registry/pod/etcd ProxyREST and pkg/registry/service's ProxyREST
(ResourceLocation: a pod's IP and port; for a service, the service port named or numbered in
the request — the first when none is — and a random ready address of the matching Endpoints
subset port), served by pkg/apiserver's UpgradeAwareProxyHandler for every HTTP method.
Upstream dials the pod IP; simulated pods have no reachable IP, so the request goes to the
kubelet of the pod's node (`/podProxy/{ns}/{pod}/{port}/{path}`), which answers with the
container's simulated HTTP server (kubelet/http_sim.py). Upstream's errors are kept: a pod
without an IP is 400 `address not allowed`, a closed port or an unreachable backend is 503
`error trying to reach service: ...`, a service without ready endpoints 503
`no endpoints available for service "web"`.

`nodes/{name}[:port]/proxy/{path}` (upstream's NodeProxyOptions / node ResourceLocation) goes
to the node's kubelet API itself — `/pods`, `/containerLogs/...`, the simulated nodes' stop/start
toggle — answered as the kubelet answers. Every request to a kubelet carries the API server's
kubelet-client identity (kubelet_client.py), so users reach the kubelet API through the API
server's own authentication and authorization, as upstream.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING
from urllib.parse import quote

import aiohttp
from aiohttp import web
from yarl import URL

from ..api import errors
from ..registry.generic import Registry
from ..registry.strategy import Obj
from .negotiation import read_body
from . import kubelet_client

if TYPE_CHECKING:
    from .serving import Verbs
    from .options import APIServerOptions
    from .requestinfo import RequestInfo

#: hop-by-hop headers (RFC 7230 6.1) and those the proxy recomputes
_REQUEST_DROP = frozenset({"host", "connection", "keep-alive", "proxy-connection", "te",
                           "trailer", "transfer-encoding", "upgrade", "authorization",
                           "content-length", "proxy-authorization"})
_RESPONSE_DROP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer",
                            "transfer-encoding", "upgrade", "content-length",
                            "content-encoding"})
_TIMEOUT = aiohttp.ClientTimeout(total=60, connect=5)


def split_scheme_name_port(ident: str) -> tuple[str, str, str] | None:
    """utilnet.SplitSchemeNamePort: `name`, `name:port`, `scheme:name:port`."""
    parts = ident.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


def proxied_path(request: web.Request, ident: str) -> str:
    """The path after `.../{ident}/proxy` (`/` when there is none), query kept."""
    raw = request.rel_url.raw_path
    marker = f"/{quote(ident, safe=':')}/proxy"
    index = raw.find(marker)
    if index < 0:
        marker = f"/{ident}/proxy"
        index = raw.find(marker)
    rest = raw[index + len(marker):] if index >= 0 else ""
    path = rest if rest.startswith("/") else "/" + rest
    return f"{path}?{request.query_string}" if request.query_string else path


async def handle(handlers: Verbs, request: web.Request, info: RequestInfo,
                 registry: Registry) -> web.StreamResponse:
    kind = {"pods": "pod", "nodes": "node"}.get(info.resource, "service")
    parsed = split_scheme_name_port(info.name)
    if parsed is None:
        raise errors.bad_request(f"invalid {kind} request {info.name!r}")
    _, name, port = parsed
    path = proxied_path(request, info.name)
    # upstream's ConnectResource: admission sees a CONNECT of the {Pod,Service,Node}ProxyOptions
    options = {"kind": f"{kind.capitalize()}ProxyOptions", "apiVersion": "v1",
               "path": path.split("?", 1)[0]}
    await handlers.admit(request, "CONNECT", registry, info.namespace, info.name, "proxy",
                         options)
    if info.resource == "nodes":
        return await _to_node(handlers, request, await registry.get("", name), port, path)
    if info.resource == "pods":
        pod = await registry.get(info.namespace, name)
        return await _to_pod(handlers, request, pod, port, path)
    service = await registry.get(info.namespace, name)
    pod, target = await _service_backend(handlers, info.namespace, service, port)
    return await _to_pod(handlers, request, pod, str(target), path)


async def _service_backend(handlers: Verbs, namespace: str, service: Obj,
                           port: str) -> tuple[Obj, int]:
    """A random ready endpoint of the service port `port` (the first port when empty)."""
    name = service["metadata"]["name"]
    for svc_port in (service.get("spec") or {}).get("ports") or []:
        if port and port != svc_port.get("name") and port != str(svc_port.get("port")):
            continue
        port_name = svc_port.get("name") or ""
        try:
            endpoints = await handlers.serving.resources.registry_for("", "v1", "endpoints").get(
                namespace, name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            break
        subsets = list(endpoints.get("subsets") or [])
        random.shuffle(subsets)
        for subset in subsets:
            addresses = subset.get("addresses") or []
            if not addresses:
                continue
            for ep_port in subset.get("ports") or []:
                if (ep_port.get("name") or "") == port_name:
                    address = random.choice(addresses)
                    return await _endpoint_pod(handlers, namespace, address), ep_port["port"]
        break
    else:
        raise errors.StatusError(503, "ServiceUnavailable",
                                 f'no service port "{port}" found for service "{name}"')
    raise errors.StatusError(503, "ServiceUnavailable",
                             f'no endpoints available for service "{name}"')


async def _endpoint_pod(handlers: Verbs, namespace: str, address: Obj) -> Obj:
    ref = address.get("targetRef") or {}
    if ref.get("kind") != "Pod" or not ref.get("name"):
        raise errors.StatusError(503, "ServiceUnavailable",
                                 f"error trying to reach service: endpoint {address.get('ip')} "
                                 "is not a pod (only pods have simulated servers)")
    pods = handlers.serving.resources.registry_for("", "v1", "pods")
    return await pods.get(ref.get("namespace") or namespace, ref["name"])


async def _to_pod(handlers: Verbs, request: web.Request, pod: Obj, port: str,
                  path: str) -> web.StreamResponse:
    status = pod.get("status") or {}
    ip = status.get("podIP") or ""
    if not ip:
        raise errors.bad_request("address not allowed")
    number = _port(pod, port, ip)
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    node = await handlers.serving.resources.registry_for("", "v1", "nodes").get("", node_name)
    md = pod["metadata"]
    options = handlers.serving.options
    url = (f"{kubelet_client.base_url(node, options)}/podProxy/"
           f"{quote(md.get('namespace', ''))}/{quote(md['name'])}/{number}{path}")
    return await _forward(request, url, options, backend_errors=True)


async def _to_node(handlers: Verbs, request: web.Request, node: Obj, port: str,
                   path: str) -> web.StreamResponse:
    """The node's kubelet API (its own port unless the request names one)."""
    options = handlers.serving.options
    base = kubelet_client.base_url(node, options)
    if port:
        if not port.isdigit():
            raise errors.bad_request(f"invalid node request {node['metadata']['name']}:{port!r}")
        base = base.rsplit(":", 1)[0] + f":{port}"
    return await _forward(request, base + path, options, backend_errors=False)


async def _forward(request: web.Request, url: str, options: "APIServerOptions", *,
                   backend_errors: bool) -> web.StreamResponse:
    """One request to a kubelet and its answer; `backend_errors`: the kubelet's 404/503 mean
    the pod's server is not there (503 `error trying to reach service`), else they are
    relayed as they are."""
    body = await read_body(request) if request.can_read_body else None
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _REQUEST_DROP}
    try:
        async with kubelet_client.session(options, timeout=_TIMEOUT,
                                          auto_decompress=False) as session:
            async with session.request(request.method, URL(url, encoded=True), data=body, headers=headers,
                                       allow_redirects=False) as answer:
                content = await answer.read()
                if backend_errors and answer.status in (503, 404):
                    raise errors.StatusError(503, "ServiceUnavailable",
                                             "error trying to reach service: "
                                             + content.decode(errors="replace").strip())
                out = {k: v for k, v in answer.headers.items()
                       if k.lower() not in _RESPONSE_DROP}
                return web.Response(status=answer.status, body=content, headers=out)
    except aiohttp.ClientError as exc:
        raise errors.StatusError(503, "ServiceUnavailable",
                                 f"error trying to reach service: {exc}") from None


def _port(pod: Obj, port: str, ip: str) -> int:
    """The port number: as given, by container port name, or 80 (http's) when empty."""
    if not port:
        return 80
    if port.isdigit():
        return int(port)
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == port and isinstance(p.get("containerPort"), int):
                return p["containerPort"]
    raise errors.StatusError(503, "ServiceUnavailable",
                             f"error trying to reach service: dial tcp {ip}:{port}: "
                             f"unknown port")
