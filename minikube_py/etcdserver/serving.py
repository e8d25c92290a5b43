"""Where the etcd server listens: parse `--listen-client-urls`/`--etcd-listen` and start it.

etcd piece: embed.Config's ListenClientUrls (`http://host:port`, etcd's flag
--listen-client-urls). Only plain http (no TLS) and one URL; port 0 asks the OS for a free
port, and the server reports the one it bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..storage import Store, TxnStore

if TYPE_CHECKING:
    from .server import EtcdServer


class ListenError(ValueError):
    """A listen address we cannot serve (the CLI prints it as a usage error)."""


def parse_listen(value: str) -> str:
    """`http://host:port` or `host:port` -> `host:port`."""
    text = value.strip()
    if "," in text:
        raise ListenError(f"{value!r}: one URL only (this etcd server has one listener)")
    if "://" in text:
        parts = urlsplit(text)
        if parts.scheme != "http":
            raise ListenError(f"{value!r}: only http:// is served (no client TLS yet)")
        if parts.port is None or parts.hostname is None:
            raise ListenError(f"{value!r}: needs a host and a port, e.g. http://127.0.0.1:2379")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return f"{host}:{parts.port}"
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ListenError(f"{value!r}: expected HOST:PORT or http://HOST:PORT")
    if not 0 <= int(port) <= 65535:
        raise ListenError(f"{value!r}: port out of range 0-65535")
    return text


async def serve_store(store: Store, listen: str, *, name: str = "minikube-py") -> EtcdServer:
    """Start the etcd v3 API on `listen` over `store` (which must be a TxnStore)."""
    if not isinstance(store, TxnStore):
        raise ListenError("the etcd v3 API serves the embedded store; a store that is already "
                          "an etcd needs no second server in front of it")
    try:
        from .server import EtcdServer
    except ImportError as exc:
        raise ListenError(f"the etcd v3 API needs grpcio and protobuf ({exc}): "
                          "pip install 'minikube_py[etcd-server]'") from None
    return await EtcdServer.start(store, parse_listen(listen), name=name)
