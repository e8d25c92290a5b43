"""Calling out of the API server: admission webhooks, conversion webhooks, aggregated APIs.

Kubernetes pieces: k8s.io/apiserver/pkg/util/webhook (ClientConfig: a `url`, or a `service`
reference {namespace, name, path, port=443}, plus a `caBundle`; the TLS ServerName of a service
is `<name>.<namespace>.svc`) and k8s.io/apiserver/pkg/util/proxy's ResolveEndpoint (a
service's port, then a ready address of its Endpoints with the same port name; an
ExternalName service resolves to its external name).

Upstream resolves a service to its cluster IP unless `--enable-aggregator-routing` is set.
Cluster IPs are not routed on this machine (no kube-proxy), so we always resolve through the
Endpoints, as upstream does with aggregator routing on: a webhook server in a test listens
on 127.0.0.1:PORT; upstream (and we) reject loopback Endpoints addresses, so tests publish it as an
ExternalName service to `localhost` (which resolves to `localhost:<port>`).

The pure half (parsing a client config, choosing an endpoint) is separate from the I/O
(reading the Service and Endpoints, TLS contexts, the POST) so it can be tested alone. Every
call has a deadline: a webhook that is slow or down costs the request its timeout, never the
event loop.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import os
import random
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from ..api import errors
from ..api.webhookconfig import validate_url

Obj = dict[str, Any]
#: (namespace, name) -> the object, or StatusError 404
Getter = Callable[[str, str], Awaitable[Obj]]

__all__ = ["ClientConfig", "ServiceReference", "Target", "WebhookCallError", "WebhookClient",
           "choose_endpoint", "resolve", "ssl_context", "validate_url"]


class WebhookCallError(Exception):
    """A call that did not produce a usable answer; the text reads like Go's client errors
    (`Post "https://...": context deadline exceeded`), which callers wrap in their own
    message (`failed calling webhook "x": failed to call webhook: ...`)."""


@dataclass(frozen=True)
class ServiceReference:
    namespace: str
    name: str
    path: str = ""
    port: int = 443


@dataclass(frozen=True)
class ClientConfig:
    """A validated `clientConfig` (admission and conversion webhooks) or APIService spec."""
    url: str = ""
    service: ServiceReference | None = None
    ca_bundle: bytes = b""

    @classmethod
    def from_api(cls, config: Mapping[str, Any]) -> ClientConfig:
        """From the API's camelCase form; `caBundle` is base64 on the wire."""
        service = config.get("service")
        ref = None
        if isinstance(service, Mapping):
            ref = ServiceReference(namespace=str(service.get("namespace") or ""),
                                   name=str(service.get("name") or ""),
                                   path=str(service.get("path") or ""),
                                   port=int(service.get("port") or 443))
        bundle = config.get("caBundle") or b""
        if isinstance(bundle, str):
            try:
                bundle = base64.b64decode(bundle, validate=True)
            except ValueError:
                bundle = b""
        return cls(url=str(config.get("url") or ""), service=ref, ca_bundle=bytes(bundle))


@dataclass(frozen=True)
class Target:
    """Where to connect and which name the server's certificate must carry."""
    url: str
    server_hostname: str


def service_hostname(ref: ServiceReference) -> str:
    return f"{ref.name}.{ref.namespace}.svc"


def choose_endpoint(service: Obj, endpoints: Obj | None, port: int,
                    pick: Callable[[list[str]], str] = random.choice) -> tuple[str, int]:
    """Upstream ResolveEndpoint: the service port numbered `port`, then an address of the
    Endpoints subset carrying a port of the same name. Errors as upstream's."""
    spec = service.get("spec") or {}
    name = (service.get("metadata") or {}).get("name", "")
    namespace = (service.get("metadata") or {}).get("namespace", "")
    service_port = next((p for p in spec.get("ports") or () if p.get("port") == port), None)
    if service_port is None:
        raise WebhookCallError(f"no service port {port} found for service {name!r}")
    kind = spec.get("type") or "ClusterIP"
    if kind == "ExternalName":
        return str(spec.get("externalName") or ""), port
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer"):
        raise WebhookCallError(f'unsupported service type "{kind}"')
    port_name = service_port.get("name") or ""
    for subset in (endpoints or {}).get("subsets") or ():
        target = next((p.get("port") for p in subset.get("ports") or ()
                       if (p.get("name") or "") == port_name), None)
        addresses = [a.get("ip") for a in subset.get("addresses") or () if a.get("ip")]
        if target and addresses:
            return pick(addresses), int(target)
    raise WebhookCallError(f'no endpoints available for service "{namespace}/{name}"')


async def resolve(config: ClientConfig, services: Getter, endpoints: Getter) -> Target:
    """The URL to dial for `config`: its `url` as is, or its service through the Endpoints."""
    if config.url:
        return Target(config.url, urlsplit(config.url).hostname or "")
    ref = config.service
    if ref is None:
        raise WebhookCallError("webhook client config has neither url nor service")
    try:
        service = await services(ref.namespace, ref.name)
    except errors.StatusError as exc:
        if exc.code == 404:  # upstream's lister error names the singular resource
            raise WebhookCallError(f'service "{ref.name}" not found') from None
        raise WebhookCallError(exc.message) from None
    try:
        eps: Obj | None = await endpoints(ref.namespace, ref.name)
    except errors.StatusError:
        eps = None
    host, port = choose_endpoint(service, eps, ref.port)
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    path = ref.path if ref.path.startswith("/") or not ref.path else "/" + ref.path
    return Target(f"https://{netloc}{path}", service_hostname(ref))


@functools.lru_cache(maxsize=256)
def _context_for(bundle_digest: str, bundle: bytes, cert: str | None,
                 key: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH,
                                         cadata=bundle.decode("ascii", "replace") or None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert:
        context.load_cert_chain(cert, key or None)
    return context


def ssl_context(ca_bundle: bytes, client_cert: str | None = None,
                client_key: str | None = None) -> ssl.SSLContext:
    """A client TLS context trusting `ca_bundle` (PEM; the system roots when empty), cached
    per bundle: webhook configurations are read on every admission call."""
    digest = hashlib.sha256(ca_bundle).hexdigest()
    try:
        return _context_for(digest, ca_bundle, client_cert, client_key)
    except (ssl.SSLError, ValueError, OSError) as exc:
        raise WebhookCallError(f"invalid caBundle or client certificate: {exc}") from None


def dial_error(exc: aiohttp.ClientConnectorError) -> str:
    """A failed connect as Go's net.Dial words it (`dial tcp 127.0.0.1:1: connect: connection
    refused`, `dial tcp: lookup nowhere.invalid: no such host`)."""
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"dial tcp: lookup {exc.host}: no such host"
    host = f"[{exc.host}]" if ":" in str(exc.host) else exc.host
    code = exc.os_error.errno if exc.os_error is not None else None
    reason = os.strerror(code).lower() if code else str(exc.os_error or exc)
    return f"dial tcp {host}:{exc.port}: connect: {reason}"


class WebhookClient:
    """One aiohttp session for every outbound webhook call of an API server (connections are
    reused, as Go's transport does), created on first use inside the running loop."""

    def __init__(self, services: Getter, endpoints: Getter,
                 client_cert: str | None = None, client_key: str | None = None) -> None:
        self.services, self.endpoints = services, endpoints
        self.client_cert, self.client_key = client_cert, client_key
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def target(self, config: ClientConfig) -> tuple[Target, ssl.SSLContext]:
        target = await resolve(config, self.services, self.endpoints)
        return target, ssl_context(config.ca_bundle, self.client_cert, self.client_key)

    async def post_json(self, config: ClientConfig, body: Obj, timeout: float,
                        query: str = "") -> Obj:
        """POST `body` as JSON and decode the JSON answer, all within `timeout` seconds."""
        target, context = await self.target(config)
        url = target.url + (("&" if "?" in target.url else "?") + query if query else "")
        try:
            async with asyncio.timeout(timeout):
                async with self.session().post(
                        url, data=orjson.dumps(body), ssl=context,
                        server_hostname=target.server_hostname,
                        headers={"Content-Type": "application/json",
                                 "Accept": "application/json"}) as response:
                    payload = await response.read()
        except TimeoutError:
            raise WebhookCallError(f'Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientSSLError as exc:
            raise WebhookCallError(f'Post "{url}": tls: {exc}') from None
        except aiohttp.ClientConnectorError as exc:
            raise WebhookCallError(f'Post "{url}": {dial_error(exc)}') from None
        except (aiohttp.ClientError, OSError) as exc:
            raise WebhookCallError(f'Post "{url}": {exc}') from None
        if response.status != 200:
            raise WebhookCallError(f"the server responded with the status code "
                                   f"{response.status} but did not return a valid response")
        try:
            answer = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise WebhookCallError(f"failed to decode the webhook's response: {exc}") from None
        if not isinstance(answer, dict):
            raise WebhookCallError("the webhook's response is not a JSON object")
        return answer
