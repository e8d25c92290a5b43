"""How the API server reaches a kubelet: its URL from the Node's status, and the TLS
identity it presents.

Kubernetes piece: pkg/kubelet/client (KubeletClientConfig, NodeConnectionInfoGetter:
the node's address by --kubelet-preferred-address-types and its
status.daemonEndpoints.kubeletEndpoint.Port) configured by kube-apiserver's
--kubelet-client-certificate / --kubelet-client-key (the client certificate presented to
kubelets, kubeadm's `apiserver-kubelet-client`, CN `kube-apiserver-kubelet-client`,
O `system:masters`) and --kubelet-certificate-authority (the CA that signs kubelets' serving
certificates, verified with their host names).

The scheme is the API server's decision, not the Node's: with a client certificate or a
kubelet CA configured every kubelet is dialled over https (upstream's --kubelet-https, true by
default; there is no scheme in a Node's status), else over plain http as v1.0 did. A Node
whose status an attacker rewrote can therefore never make a configured API server send a
user's exec stream in the clear.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import aiohttp

from ..api import errors
from .options import APIServerOptions

Obj = dict[str, Any]
_ADDRESS_TYPES = ("InternalIP", "Hostname", "ExternalIP")  # --kubelet-preferred-address-types


def node_address(node: Obj) -> tuple[str, int]:
    """(address, kubelet port) from the Node's status; 400 when the node does not say."""
    status = node.get("status") or {}
    address = ""
    for kind in _ADDRESS_TYPES:
        for entry in status.get("addresses") or []:
            if entry.get("type") == kind and entry.get("address"):
                address = entry["address"]
                break
        if address:
            break
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    if not address or not port:
        raise errors.bad_request(
            f'node "{node["metadata"]["name"]}" has no kubelet address or port in its status')
    return address, int(port)


def uses_tls(options: APIServerOptions) -> bool:
    return bool(options.kubelet_client_certificate or options.kubelet_certificate_authority)


def base_url(node: Obj, options: APIServerOptions | None = None) -> str:
    """`https://<InternalIP>:<port>` (or http, see the module docstring)."""
    address, port = node_address(node)
    host = f"[{address}]" if ":" in address else address
    scheme = "https" if options is not None and uses_tls(options) else "http"
    return f"{scheme}://{host}:{port}"


@functools.lru_cache(maxsize=8)
def _context(cert: str | None, key: str | None, ca: str | None) -> ssl.SSLContext:
    """The client TLS context: verifies the kubelet with `ca` (the system store without one),
    presents `cert`/`key`. Built once per configuration (files are read at first use)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert:
        context.load_cert_chain(cert, key or None)
    return context


def ssl_context(options: APIServerOptions) -> ssl.SSLContext | None:
    """The TLS context for kubelet connections, None for plain http. An unreadable file is a
    502 naming it (the connection cannot be made), not a crash."""
    if not uses_tls(options):
        return None
    try:
        return _context(options.kubelet_client_certificate, options.kubelet_client_key,
                        options.kubelet_certificate_authority)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise errors.StatusError(502, "InternalError",
                                 f"the kubelet client TLS configuration: {exc}") from None


def session(options: APIServerOptions, **kwargs: Any) -> aiohttp.ClientSession:
    """An aiohttp session to kubelets, with the API server's kubelet-client identity."""
    context = ssl_context(options)
    connector = aiohttp.TCPConnector(ssl=context if context is not None else True)
    return aiohttp.ClientSession(connector=connector, **kwargs)
