"""Forwarding a request to an aggregated API server.

Kubernetes piece: kube-aggregator's pkg/apiserver/handler_proxy.go (proxyHandler.ServeHTTP)
with client-go's transport.NewAuthProxyRoundTripper and apimachinery's UpgradeAwareHandler.
The request was authenticated and authorized here first; the backend learns who asked from
the front-proxy headers — `X-Remote-User`, one `X-Remote-Group` per group, `X-Remote-Extra-*`
— which it trusts because the connection presents the proxy client certificate
(--proxy-client-cert-file; CN `front-proxy-client`). Any such headers the client sent are
dropped first, and so is its `Authorization` (upstream's authentication filter removes it).
The path, query, method and body go as they came; the answer streams back chunk by chunk, so
a watch through the proxy is a watch. Connection upgrades are relayed too, as
UpgradeAwareHandler does: a SPDY/3.1 upgrade byte for byte once the backend answers 101
(httpstream/upgrade.py), a WebSocket message by message (streaming.py's pump).

Errors are upstream's, which are plain text, not Status objects: an APIService whose
`Available` condition is not True answers 503 `service unavailable`, as does one whose service
cannot be resolved; a backend that cannot be reached answers 503 with the dial error.
A discovery request (`/apis/<group>/<version>`) gets 5 s, like upstream's
aggregatedDiscoveryTimeout; other requests run under the server's request deadline (watches
are long-running and exempt).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable, Mapping
from urllib.parse import quote

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from ...httpstream import upgrade
from ..authn import INSECURE_SUPERUSER, UserInfo
from ..streaming import _pump, is_websocket

DISCOVERY_TIMEOUT = 5.0
CONNECT_TIMEOUT = 30.0
#: a response of known length up to this size is read whole and sent in one write; longer
#: ones, and any without a length (a watch), stream chunk by chunk
BUFFERED_BODY = 256 << 10
#: the largest WebSocket message relayed (as streaming.py bounds exec/attach messages)
WS_MAX_MESSAGE = 16 << 20
#: hop-by-hop headers (RFC 7230 6.1) and what the proxy sets itself
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                         "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                         "host"})
#: a WebSocket handshake's own headers: the client library makes its own
_WEBSOCKET_HANDSHAKE = frozenset({"sec-websocket-key", "sec-websocket-version",
                                  "sec-websocket-extensions", "sec-websocket-protocol",
                                  "content-length"})
#: the identity of a request on the insecure port (upstream's pre-1.20 InsecureSuperuser)
UNSECURED = INSECURE_SUPERUSER


def plain_error(message: str, status: int) -> web.Response:
    """Go's http.Error: the text plus a newline, text/plain, nosniff."""
    return web.Response(status=status, text=message + "\n", content_type="text/plain",
                        charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})


def front_proxy_headers(incoming: Iterable[tuple[str, str]], user: UserInfo,
                        extra: Mapping[str, Iterable[str]] | None = None,
                        remote: str | None = None) -> CIMultiDict[str]:
    """The headers the backend gets: the client's minus hop-by-hop, Authorization and any
    X-Remote-*, plus the front-proxy identity (transport.SetAuthProxyHeaders)."""
    headers: CIMultiDict[str] = CIMultiDict()
    for name, value in incoming:
        lower = name.lower()
        if lower in _HOP_BY_HOP or lower == "authorization" or lower.startswith("x-remote-"):
            continue
        headers.add(name, value)
    headers["X-Remote-User"] = user.name
    for group in user.groups:
        headers.add("X-Remote-Group", group)
    for key, values in (extra or {}).items():
        for value in values:
            headers.add(f"X-Remote-Extra-{quote(key, safe='')}", value)
    if remote:
        prior = headers.get("X-Forwarded-For")
        headers["X-Forwarded-For"] = f"{prior}, {remote}" if prior else remote
    return headers


def _response_headers(upstream: aiohttp.ClientResponse) -> CIMultiDict[str]:
    headers: CIMultiDict[str] = CIMultiDict()
    for name, value in upstream.headers.items():
        if name.lower() not in _HOP_BY_HOP:
            headers.add(name, value)
    return headers


def is_discovery(path: str) -> bool:
    return len([p for p in path.split("/") if p]) == 3


async def forward(request: web.Request, *, base_url: str, server_hostname: str,
                  context: ssl.SSLContext, user: UserInfo,
                  session: aiohttp.ClientSession) -> web.StreamResponse:
    """Send `request` to `base_url` + its path and query; stream the answer back."""
    url = base_url.rstrip("/") + request.rel_url.raw_path_qs
    headers = front_proxy_headers(request.headers.items(), user, user.extra,
                                  remote=request.remote)
    if upgrade.is_spdy_request(request.headers):
        return await _relay_spdy(request, url, headers, context, server_hostname)
    if is_websocket(request):
        return await _relay_websocket(request, url, headers, context, server_hostname, session)
    timeout = aiohttp.ClientTimeout(total=DISCOVERY_TIMEOUT if is_discovery(request.path)
                                    else None, sock_connect=CONNECT_TIMEOUT)
    body = request.content.iter_any() if request.body_exists else None
    response: web.StreamResponse | None = None
    try:
        async with session.request(request.method, url, headers=headers, data=body,
                                   ssl=context, server_hostname=server_hostname or None,
                                   allow_redirects=False, timeout=timeout) as upstream:
            headers = _response_headers(upstream)
            length = upstream.content_length
            if length is not None and length <= BUFFERED_BODY:  # one write, not three
                headers.popall("Content-Length", None)  # aiohttp sets it from the body
                return web.Response(status=upstream.status, reason=upstream.reason,
                                    body=await upstream.read(), headers=headers)
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason,
                                          headers=headers)
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        if response is not None and response.prepared:
            return response  # the backend went away mid-stream: the stream just ends
        return plain_error(f"error trying to reach service: {exc or type(exc).__name__}", 503)


async def _relay_spdy(request: web.Request, url: str, headers: CIMultiDict[str],
                      context: ssl.SSLContext, server_hostname: str) -> web.StreamResponse:
    """The client's SPDY upgrade made to the backend; on its 101, bytes both ways."""
    try:
        answer = await upgrade.dial(url, request.method, list(headers.items()), context,
                                    timeout=CONNECT_TIMEOUT, server_hostname=server_hostname)
    except (TimeoutError, OSError, ConnectionError) as exc:
        return plain_error(f"error trying to reach service: {exc or type(exc).__name__}", 503)
    if answer.upgraded is None:  # the backend's refusal, as it sent it
        return web.Response(status=answer.status, body=answer.body, headers={
            "Content-Type": answer.header("content-type") or "text/plain; charset=utf-8"})
    chosen = answer.header(upgrade.PROTOCOL_HEADER)
    try:
        client = await upgrade.accept(request, {upgrade.PROTOCOL_HEADER: chosen} if chosen
                                      else {})
    except BaseException:
        answer.upgraded.close()
        raise
    await upgrade.relay(client, answer.upgraded)
    return client.response  # type: ignore[return-value]


async def _relay_websocket(request: web.Request, url: str, headers: CIMultiDict[str],
                           context: ssl.SSLContext, server_hostname: str,
                           session: aiohttp.ClientSession) -> web.StreamResponse:
    """A WebSocket to the backend with the client's subprotocols; messages both ways."""
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
               if p.strip()]
    for name in list(headers):
        if name.lower() in _WEBSOCKET_HANDSHAKE:
            del headers[name]
    try:
        backend = await session.ws_connect(url, protocols=offered, headers=headers, ssl=context,
                                           server_hostname=server_hostname or None,
                                           max_msg_size=WS_MAX_MESSAGE, timeout=aiohttp.ClientWSTimeout(
                                               ws_receive=None, ws_close=10.0))
    except aiohttp.WSServerHandshakeError as exc:
        return plain_error(f"error upgrading connection: {exc.message}", exc.status or 503)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return plain_error(f"error trying to reach service: {exc or type(exc).__name__}", 503)
    async with backend:
        client = web.WebSocketResponse(protocols=(backend.protocol,) if backend.protocol else (),
                                       max_msg_size=WS_MAX_MESSAGE)
        await client.prepare(request)
        pumps = [asyncio.ensure_future(_pump(client, backend)),
                 asyncio.ensure_future(_pump(backend, client))]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            await asyncio.wait(pumps, timeout=5)
        finally:
            for task in pumps:
                task.cancel()
            await backend.close()
            await client.close()
    return client
