"""`pods/{name}/exec`, `pods/{name}/attach` and `pods/{name}/portforward`: WebSocket proxies
to the kubelet of the pod's node.

Kubernetes v1.0 piece: pkg/registry/pod/etcd's ExecREST / AttachREST / PortForwardREST
(Connect: find the pod's node and its kubelet, `streamLocation` validates the container) and
pkg/apiserver's UpgradeAwareProxyHandler, which relays the upgraded connection byte for byte.
The connection to the kubelet is made with the API server's kubelet-client identity
(kubelet_client.py: https and a client certificate when configured).
The protocols are today's (KEP-4006): kubectl 1.30+ execs over a WebSocket with the
remotecommand subprotocol `v5.channel.k8s.io` (older `v4.channel.k8s.io`, `channel.k8s.io`,
`base64.channel.k8s.io` are accepted too), and kubectl 1.31+ port-forwards over a WebSocket
carrying SPDY (`SPDY/3.1+portforward.k8s.io`). The API server does not interpret the frames: it
checks the request, asks the kubelet first with a plain request (so the kubelet's refusals —
`container not found ("web")`, `pod does not exist` — come back as Status objects with their
HTTP code, as they would before an upgrade), then accepts the client's upgrade with the
subprotocol the kubelet chose and relays messages both ways until either side closes.

Older kubectl (<= 1.29 for exec/attach, <= 1.30 for port-forward) only speaks SPDY
(`Upgrade: SPDY/3.1`): it gets a 400 Status naming the kubectl version it needs, not a hang.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote

import aiohttp
import structlog
from aiohttp import WSMsgType, web

from ..api import errors
from ..api.params import parse_bool
from ..registry.generic import Registry
from ..registry.strategy import Obj
from . import kubelet_client

if TYPE_CHECKING:
    from .handlers import ResourceHandlers
    from .requestinfo import RequestInfo

log = structlog.get_logger(component="apiserver")

SUBRESOURCES = frozenset({"exec", "attach", "portforward"})
#: the first kubectl that reaches each subresource over WebSockets by default
MIN_KUBECTL = {"exec": "1.30", "attach": "1.30", "portforward": "1.31"}
_KUBELET_PATHS = {"exec": "exec", "attach": "attach", "portforward": "portForward"}
_KUBELET_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=5, sock_read=None)
_MAX_MESSAGE = 16 << 20


def container_for(pod: Obj, name: str, requested: str) -> str:
    """upstream streamLocation: the container named in the request, else the only one."""
    spec = pod.get("spec") or {}
    containers = [c.get("name", "") for c in spec.get("containers") or []]
    init = [c.get("name", "") for c in spec.get("initContainers") or []]
    if not requested:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {name}")
        message = (f"a container name must be specified for pod {name}, choose one of: "
                   f"[{' '.join(containers)}]")
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise errors.bad_request(message)
    if requested not in containers + init:
        raise errors.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _flag(request: web.Request, name: str) -> bool:
    return parse_bool(request.query.get(name))


def validate_options(sub: str, request: web.Request) -> None:
    """PodExecOptions / PodAttachOptions validation."""
    if sub == "exec" and not request.query.getall("command", []):
        raise errors.bad_request("you must specify at least one command for the container")
    if sub in ("exec", "attach") and not any(_flag(request, s) for s in
                                             ("stdin", "stdout", "stderr")):
        raise errors.bad_request("you must specify at least 1 of stdin, stdout, stderr")


def spdy_only(request: web.Request) -> bool:
    return "spdy" in request.headers.get("Upgrade", "").lower() and \
        "websocket" not in request.headers.get("Upgrade", "").lower()


def spdy_refusal(sub: str) -> errors.StatusError:
    command = "port-forward" if sub == "portforward" else sub
    version = MIN_KUBECTL[sub]
    return errors.bad_request(
        f"kubectl {command} needs kubectl {version} or newer: this server streams over "
        f"WebSockets only (the SPDY/3.1 upgrade of older kubectl is not supported); "
        f"upgrade kubectl to {version}+")


async def connect(handlers: ResourceHandlers, request: web.Request, info: RequestInfo,
                  registry: Registry) -> web.StreamResponse:
    sub = info.subresource
    if request.method not in ("GET", "POST"):
        raise errors.method_not_allowed()
    namespace, name = info.namespace, info.name
    pod = await registry.get(namespace, name)
    path = f"/{_KUBELET_PATHS[sub]}/{quote(namespace)}/{quote(name)}"
    if sub != "portforward":
        container = container_for(pod, name, request.query.get("container", ""))
        validate_options(sub, request)
        path += f"/{quote(container)}"
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    node = await handlers.server.registry_for("", "v1", "nodes").get("", node_name)
    options = handlers.server.options
    url = kubelet_client.base_url(node, options) + path
    query = request.query_string
    async with kubelet_client.session(options, timeout=_KUBELET_TIMEOUT) as session:
        await _preflight(session, url, query, node_name)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await _relay(session, request, url, query, node_name, pod)
    if spdy_only(request):
        raise spdy_refusal(sub)
    raise errors.bad_request("Upgrade request required")


async def _preflight(session: aiohttp.ClientSession, url: str, query: str, node: str) -> None:
    """Ask the kubelet without upgrading: 426 means it would accept the upgrade; anything
    else is its refusal, returned as a Status."""
    try:
        async with session.get(url, params=_params(query)) as answer:
            if answer.status == 426:
                return
            text = (await answer.text()).strip() or f"kubelet answered {answer.status}"
    except aiohttp.ClientError as exc:
        raise errors.StatusError(502, "InternalError", f"error dialing backend: {exc} (is the "
                                 f"kubelet for node {node} running?)") from None
    reasons = {400: "BadRequest", 404: "NotFound", 503: "ServiceUnavailable"}
    code = answer.status if answer.status in reasons else 502
    raise errors.StatusError(code, reasons.get(code, "InternalError"), text)


def _params(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


async def _relay(session: aiohttp.ClientSession, request: web.Request, url: str, query: str,
                 node: str, pod: Obj) -> web.StreamResponse:
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
               if p.strip()]
    try:
        upstream = await session.ws_connect(url, params=_params(query), protocols=offered,
                                            max_msg_size=_MAX_MESSAGE, autoping=True)
    except aiohttp.WSServerHandshakeError as exc:
        raise errors.StatusError(exc.status if 400 <= exc.status < 500 else 502,
                                 "BadRequest" if exc.status < 500 else "InternalError",
                                 f"error upgrading connection to the kubelet: {exc.message}") from None
    except aiohttp.ClientError as exc:
        raise errors.StatusError(502, "InternalError", f"error dialing backend: {exc} (is the "
                                 f"kubelet for node {node} running?)") from None
    async with upstream:
        client = web.WebSocketResponse(
            protocols=(upstream.protocol,) if upstream.protocol else (),
            max_msg_size=_MAX_MESSAGE)
        await client.prepare(request)
        log.info("streaming", pod=f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}",
                 path=request.path, protocol=upstream.protocol, node=node)
        up = asyncio.ensure_future(_pump(client, upstream))
        down = asyncio.ensure_future(_pump(upstream, client))
        try:
            await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
            await asyncio.wait([up, down], timeout=5)
        finally:
            for task in (up, down):
                task.cancel()
            await upstream.close()
            await client.close()
    return client


async def _pump(source: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
                sink: web.WebSocketResponse | aiohttp.ClientWebSocketResponse) -> None:
    """Messages from one side to the other; when `source` closes, close `sink`."""
    async for msg in source:
        if sink.closed:
            break
        if msg.type == WSMsgType.BINARY:
            await sink.send_bytes(msg.data)
        elif msg.type == WSMsgType.TEXT:
            await sink.send_str(msg.data)
        else:
            break
    code = source.close_code if source.close_code else 1000
    await sink.close(code=code)
