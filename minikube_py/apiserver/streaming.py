"""`pods/{name}/exec`, `pods/{name}/attach` and `pods/{name}/portforward`: WebSocket proxies
to the kubelet of the pod's node.

Kubernetes v1.0 piece: pkg/registry/pod/etcd's ExecREST / AttachREST / PortForwardREST
(Connect: find the pod's node and its kubelet, `streamLocation` validates the container) and
pkg/apiserver's UpgradeAwareProxyHandler, which relays the upgraded connection byte for byte.
The connection to the kubelet is made with the API server's kubelet-client identity
(kubelet_client.py: https and a client certificate when configured).
Two kinds of upgrade arrive, and both are relayed without being interpreted:

- WebSocket (kubectl 1.30+ exec/attach with `v5.channel.k8s.io`, older `v4.channel.k8s.io`,
  `channel.k8s.io`, `base64.channel.k8s.io`; kubectl 1.31+ port-forward with SPDY tunnelled in
  a WebSocket, `SPDY/3.1+portforward.k8s.io`): the API server accepts the client's upgrade with
  the subprotocol the kubelet chose and relays messages both ways. A client offering
  `v5.channel.k8s.io` anywhere in its list gets v5, as upstream's stream translator (the only
  protocol it serves) gives it.
- SPDY/3.1 (`Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version`: every kubectl and client-go
  before 1.30, and port-forward before 1.31): the API server dials the kubelet with the same
  upgrade request, and once the kubelet answers 101 it answers the client 101 with the
  kubelet's chosen protocol and copies bytes both ways (httpstream/upgrade.py) — upstream's
  UpgradeAwareHandler exactly.

Before either, it asks the kubelet with a plain request (so the kubelet's refusals —
`container not found ("web")`, `pod does not exist`, `you must specify at least 1 of stdin,
stdout, stderr` — come back as Status objects with their HTTP code, as they would before an
upgrade).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote

import aiohttp
import structlog
from aiohttp import WSMsgType, web

from ..api import errors
from ..api.params import parse_bool, parse_ports
from ..api.podutil import validate_container
from ..httpstream import upgrade, wsstream
from ..registry.generic import Registry
from ..registry.strategy import Obj
from . import kubelet_client

if TYPE_CHECKING:
    from .serving import Verbs
    from .options import APIServerOptions
    from .requestinfo import RequestInfo

log = structlog.get_logger(component="apiserver")

SUBRESOURCES = frozenset({"exec", "attach", "portforward"})
#: the remotecommand protocol upstream's API server terminates itself (KEP-4006)
V5 = "v5.channel.k8s.io"
_KUBELET_PATHS = {"exec": "exec", "attach": "attach", "portforward": "portForward"}
_KUBELET_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=5, sock_read=None)
_MAX_MESSAGE = 16 << 20
#: kubelet refusals passed on with their code
_REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 503: "ServiceUnavailable"}


def _flag(request: web.Request, name: str) -> bool:
    return parse_bool(request.query.get(name))


def validate_options(sub: str, request: web.Request) -> None:
    """PodExecOptions / PodAttachOptions validation."""
    if sub == "exec" and not request.query.getall("command", []):
        raise errors.bad_request("you must specify at least one command for the container")
    if sub in ("exec", "attach") and not any(_flag(request, s) for s in
                                             ("stdin", "stdout", "stderr")):
        raise errors.bad_request("you must specify at least 1 of stdin, stdout, stderr")


def connect_options(sub: str, request: web.Request, ports: list[int]) -> Obj:
    """The PodExecOptions / PodAttachOptions / PodPortForwardOptions a CONNECT is admitted
    with (upstream decodes them from the query; false and empty fields are omitted)."""
    kinds = {"exec": "PodExecOptions", "attach": "PodAttachOptions",
             "portforward": "PodPortForwardOptions"}
    options: Obj = {"kind": kinds[sub], "apiVersion": "v1"}
    if sub == "portforward":
        if ports:
            options["ports"] = ports
        return options
    for flag in ("stdin", "stdout", "stderr", "tty"):
        if _flag(request, flag):
            options[flag] = True
    if request.query.get("container"):
        options["container"] = request.query["container"]
    if sub == "exec":
        options["command"] = request.query.getall("command", [])
    return options


async def connect(handlers: Verbs, request: web.Request, info: RequestInfo,
                  registry: Registry) -> web.StreamResponse:
    sub = info.subresource
    if request.method not in ("GET", "POST"):
        raise errors.method_not_allowed()
    namespace, name = info.namespace, info.name
    ports: list[int] = []
    if sub == "portforward":  # the options decode before the pod is read, as upstream's
        ports = parse_ports(request.query.getall("ports", []))
    pod = await registry.get(namespace, name)
    path = f"/{_KUBELET_PATHS[sub]}/{quote(namespace)}/{quote(name)}"
    if sub != "portforward":
        container = validate_container(pod, name, request.query.get("container", ""))
        validate_options(sub, request)
        path += f"/{quote(container)}"
    # upstream's ConnectResource: admission sees a CONNECT of the options object
    await handlers.admit(request, "CONNECT", registry, namespace, name, sub,
                         connect_options(sub, request, ports))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    node = await handlers.serving.resources.registry_for("", "v1", "nodes").get("", node_name)
    options = handlers.serving.options
    url = kubelet_client.base_url(node, options) + path
    query = request.rel_url.raw_query_string  # still encoded: `%26` stays inside its value
    async with kubelet_client.session(options, timeout=_KUBELET_TIMEOUT) as session:
        await _preflight(session, url, query, node_name)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await _relay(session, request, url, query, node_name, pod, sub)
    if upgrade.is_spdy_request(request.headers):
        return await _relay_spdy(request, url, query, node_name, pod, options)
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
    code = answer.status if answer.status in _REASONS else 502
    raise errors.StatusError(code, _REASONS.get(code, "InternalError"), text)


def _params(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


async def _relay_spdy(request: web.Request, url: str, query: str, node: str, pod: Obj,
                      options: APIServerOptions) -> web.StreamResponse:
    """UpgradeAwareHandler: the client's SPDY upgrade, made to the kubelet; bytes relayed."""
    offered = request.headers.getall(upgrade.PROTOCOL_HEADER, [])
    headers = [(upgrade.PROTOCOL_HEADER, p) for p in upgrade.client_protocols(offered)]
    target = url + (f"?{query}" if query else "")
    try:
        answer = await upgrade.dial(target, request.method, headers,
                                    kubelet_client.ssl_context(options))
    except (TimeoutError, OSError, ConnectionError) as exc:
        raise errors.StatusError(502, "InternalError", f"error dialing backend: {exc} (is the "
                                 f"kubelet for node {node} running?)") from None
    if answer.upgraded is None:
        text = answer.body.decode(errors="replace").strip() or f"kubelet answered {answer.status}"
        code = answer.status if answer.status in _REASONS else 502
        raise errors.StatusError(code, _REASONS.get(code, "InternalError"),
                                 f"unable to upgrade connection: {text}")
    chosen = answer.header(upgrade.PROTOCOL_HEADER)
    try:
        client = await upgrade.accept(request, {upgrade.PROTOCOL_HEADER: chosen} if chosen else {})
    except BaseException:
        answer.upgraded.close()
        raise
    log.info("streaming", pod=f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}",
             path=request.path, protocol=f"SPDY/3.1 {chosen}".strip(), node=node)
    await upgrade.relay(client, answer.upgraded)
    return client.response  # type: ignore[return-value]


async def _relay(session: aiohttp.ClientSession, request: web.Request, url: str, query: str,
                 node: str, pod: Obj, sub: str) -> web.StreamResponse:
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
               if p.strip()]
    if sub != "portforward" and V5 in offered:
        offered = [V5]  # upstream's translator serves v5 whenever it is offered
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


def is_websocket(request: web.Request) -> bool:
    """wsstream.IsWebSocketRequest: `Upgrade: websocket` with `Connection: upgrade`."""
    return (request.headers.get("Upgrade", "").lower() == "websocket"
            and "upgrade" in request.headers.get("Connection", "").lower())


async def websocket_body(request: web.Request,
                         chunks: AsyncIterator[bytes]) -> web.WebSocketResponse:
    """A streamed body (pods/log) as upstream's responsewriters.StreamObject sends it to a
    WebSocket client: wsstream.Reader with `binary.k8s.io` (or no protocol: binary messages)
    or `base64.binary.k8s.io` (base64 text); what the client sends is ignored, and its close
    ends the stream."""
    offered = request.headers.get("Sec-WebSocket-Protocol", "")
    protocol = wsstream.choose(offered, wsstream.READER)
    if protocol is None:
        raise errors.bad_request(f"requested protocol(s) are not supported: [{offered}]; "
                                 f"supported protocols are [binary.k8s.io, base64.binary.k8s.io]")
    ws = web.WebSocketResponse(protocols=(protocol,) if protocol else ())
    await ws.prepare(request)
    binary = wsstream.READER[protocol]
    ignore = asyncio.ensure_future(_ignore_receives(ws))
    try:
        async for chunk in chunks:
            if ignore.done() or ws.closed:
                break
            for message in wsstream.reader_messages(chunk, binary):
                if isinstance(message, str):
                    await ws.send_str(message)
                else:
                    await ws.send_bytes(message)
    except (ConnectionError, aiohttp.ClientError):
        pass  # either side went away: the stream just ends
    finally:
        ignore.cancel()
        await asyncio.gather(ignore, return_exceptions=True)
        await ws.close()
    return ws


async def _ignore_receives(ws: web.WebSocketResponse) -> None:
    """wsstream.IgnoreReceives: read until the client closes."""
    async for _ in ws:
        pass
