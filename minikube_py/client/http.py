"""HTTP transport: aiohttp with keep-alive, a bearer token, TLS, and kubeconfig loading.

Kubernetes v1.0 piece: pkg/client's HTTP RoundTripper plus clientcmd (kubeconfig -> server URL,
token, CA). One ClientSession per transport keeps connections alive across requests; watches
hold their own connection for as long as they stream.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import struct
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from .errors import error_from_response
from .transport import RawResponse

_NO_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10)
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: a protobuf watch frame's big-endian uint32 length prefix
_FRAME_LENGTH = struct.Struct(">I")


class WatchStartFailed(Exception):
    """A watch answered with an error status before streaming (the response, to decode)."""

    def __init__(self, response: RawResponse) -> None:
        super().__init__(response.status)
        self.response = response


class HTTPTransport:
    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        ca_data: bytes | None = None,
        insecure_skip_tls_verify: bool = False,
        user_agent: str = "minikube-py",
        request_timeout: float = 60.0,
        connections: int = 100,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {"User-Agent": user_agent}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._ssl: Any = None
        if self.base_url.startswith("https"):
            if insecure_skip_tls_verify:
                self._ssl = False
            elif ca_data:
                self._ssl = ssl.create_default_context(cadata=ca_data.decode())
        self._timeout = aiohttp.ClientTimeout(total=request_timeout)
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_kubeconfig(cls, path: str | Path, context: str | None = None,
                        **kwargs: Any) -> HTTPTransport:
        """The server, token and CA of a kubeconfig's (current) context."""
        config = yaml.safe_load(Path(path).expanduser().read_text()) or {}
        name = context or config.get("current-context")
        ctx = _named(config.get("contexts"), name, "context")
        cluster = _named(config.get("clusters"), ctx.get("cluster"), "cluster")
        user = _named(config.get("users"), ctx.get("user"), "user") if ctx.get("user") else {}
        ca = cluster.get("certificate-authority-data")
        if not ca and cluster.get("certificate-authority"):
            ca_bytes = Path(cluster["certificate-authority"]).read_bytes()
        else:
            ca_bytes = base64.b64decode(ca) if ca else None
        return cls(cluster["server"], token=user.get("token"), ca_data=ca_bytes,
                   insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
                   **kwargs)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._connections, ssl=self._ssl)
            self._session = aiohttp.ClientSession(connector=connector, headers=self.headers)
        return self._session

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      body: bytes | None = None, content_type: str = "application/json",
                      accept: str = "application/json") -> RawResponse:
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        async with self._client().request(method, self.base_url + path, params=query or None,
                                          data=body, headers=headers,
                                          timeout=self._timeout) as resp:
            return RawResponse(resp.status, resp.content_type, await resp.read())

    async def stream(self, path: str, *,
                     query: Mapping[str, str] | None = None) -> AsyncIterator[bytes]:
        async with self._client().get(self.base_url + path, params=query or None,
                                      timeout=_NO_TIMEOUT) as resp:
            if resp.status != 200:
                raise error_from_response(resp.status, await resp.read())
            while True:
                line = await resp.content.readline()
                if not line:
                    return
                yield line

    async def watch_stream(self, path: str, *, query: Mapping[str, str] | None = None,
                           accept: str) -> AsyncIterator[tuple[bool, bytes]]:
        """`GET path` (a watch) asking for `accept`: yields (framed, payload) — a protobuf
        `;stream=watch` answer as its length-prefixed frames (framed=True, prefix removed),
        a JSON one as its lines (the server answers JSON for kinds without a protobuf
        message). A failed start raises the RawResponse as WatchStartFailed."""
        async with self._client().get(self.base_url + path, params=query or None,
                                      headers={"Accept": accept}, timeout=_NO_TIMEOUT) as resp:
            if resp.status != 200:
                raise WatchStartFailed(RawResponse(resp.status, resp.content_type,
                                                   await resp.read()))
            if resp.content_type != PROTOBUF:
                while line := await resp.content.readline():
                    yield False, line
                return
            while True:
                try:
                    header = await resp.content.readexactly(4)
                except asyncio.IncompleteReadError:
                    return  # the server ended the stream
                (length,) = _FRAME_LENGTH.unpack(header)
                yield True, await resp.content.readexactly(length)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def _named(items: Any, name: str | None, what: str) -> dict[str, Any]:
    for item in items or []:
        if item.get("name") == name:
            return item.get(what) or {}
    raise ValueError(f"kubeconfig has no {what} named {name!r}")
