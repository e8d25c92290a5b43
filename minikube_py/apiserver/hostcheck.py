"""The insecure port's Host check, against DNS rebinding.

Kubernetes piece: none. v1.0's insecure port (--insecure-bind-address, 127.0.0.1:8080)
served whoever reached it, with no authentication, trusting that only local processes could.
A web page defeats that trust with DNS rebinding: evil.example first resolves to the
attacker's server, then to 127.0.0.1, so the browser sends the page's requests to this port
with `Host: evil.example:8080`, and, the origin being the same, lets the page read the
answers. The insecure port was removed upstream in 1.20; etcd added a Host allow-list to its
plain-HTTP listener for the same attack (--host-whitelist, etcd PR #9372), and Transmission's
RPC server did the same, always admitting IP literals and localhost.

The rule, for plain-HTTP requests only (the secure port authenticates every request; the
in-process transport of this process's own components has no Host to check):
- an IP literal is admitted: a rebinding attack needs a DNS name, and which addresses reach
  the port at all is what --insecure-bind-address decides;
- so are `localhost`, any `*.localhost` (RFC 6761: always loopback) and this machine's host
  name (socket.gethostname(): what a local client may use for itself);
- any other name is refused with a 403 Status that says what to use instead.
The port in the header may be anything (port forwards, proxies). No Host header at all
(HTTP/1.0) is admitted: a browser always sends one.

The decision is pure (`allowed`) and cached per Host value, so the cost per request is one
dict lookup.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp import web

from ..api import errors
from .connection import IN_PROCESS_PEER

#: distinct Host values remembered; beyond this the cache starts over (a client sending
#: random names must not grow memory)
_CACHE_SIZE = 1024


def split_host(value: str) -> str:
    """The host part of a Host header value, lower-cased, without port, brackets or the
    trailing dot of a fully qualified name: "[::1]:8080" -> "::1", "LocalHost.:80" ->
    "localhost"."""
    value = value.strip()
    if value.startswith("["):
        host = value[1:value.find("]")] if "]" in value else value[1:]
    elif value.count(":") == 1:
        host = value.split(":", 1)[0]
    else:
        host = value  # a bare name, IPv4 address, or (unbracketed) IPv6 address
    return host.rstrip(".").lower()


def allowed(host_header: str, hostname: str) -> bool:
    """Whether a plain-HTTP request with this Host header may be served (see the module
    docstring); `hostname` is this machine's name."""
    host = split_host(host_header)
    if not host:
        return False
    try:
        ipaddress.ip_address(host.split("%", 1)[0])  # a zone index (fe80::1%eth0) is fine
        return True
    except ValueError:
        pass
    return host == "localhost" or host.endswith(".localhost") or host == hostname


class HostCheck:
    """The filter: `check(request)` raises a 403 StatusError for a refused Host."""

    def __init__(self, hostname: str | None = None) -> None:
        self.hostname = split_host(hostname if hostname is not None else socket.gethostname())
        self._verdicts: dict[str, bool] = {}

    def check(self, request: web.BaseRequest) -> None:
        value = request.headers.get("Host")
        if value is None:
            return
        verdict = self._verdicts.get(value)
        if verdict is None:
            if len(self._verdicts) >= _CACHE_SIZE:
                self._verdicts.clear()
            verdict = self._verdicts[value] = allowed(value, self.hostname)
        if not verdict and request.remote != IN_PROCESS_PEER:  # (peername costs ~1 µs)
            raise errors.forbidden_request(
                f'Host "{value}" is not allowed on the insecure port ({_port_of(request)}): use '
                f"a loopback address, localhost or this host's name ({self.hostname}), or "
                f"the secure port")


def _port_of(request: web.BaseRequest) -> str:
    """Where the request arrived, "127.0.0.1:8080", for the message."""
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    if not sockname:
        return "plain HTTP"
    host, port = sockname[0], sockname[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
