"""The etcd backend's transport: endpoints, channel options, and what a gRPC error means.

Kubernetes v1.0 piece: the etcd client configuration of pkg/tools (go-etcd's cluster list and
retry rules). Kept apart from the store (etcd_backend.py) and its watches (etcd_watch.py)
because both decide retries and failover with the same rules: whether an error is the
endpoint's fault, and whether a request surely never reached etcd's raft log.
"""

from __future__ import annotations

import dataclasses

import aetcd
import grpc
from aetcd import rpc

#: Ask etcd to refuse (rather than hang) requests and close watch streams on a member that has
#: lost its leader, so failover moves on instead of waiting out the timeout (clientv3 does this).
METADATA = (("hasleader", "true"),)
#: Fast reconnects (a restarted member is used again within a second) and no 4 MiB cap on
#: responses (a large List is one Range response).
CHANNEL_OPTIONS = {
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.min_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000,
    "grpc.max_receive_message_length": -1,
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 5_000,
}
#: A key nothing writes: target of the probes that find the compaction revision.
PROBE_KEY = b"\x00minikube-py/compact-probe"
#: UNAVAILABLE details that mean the request never reached raft: no connection could be made,
#: or the member refused it up front for lack of a leader (the "hasleader" metadata).
UNSENT = ("failed to connect to all addresses", "Connection refused", "etcdserver: no leader")
#: UNKNOWN/INTERNAL details that describe the member, not the request: a broken stream, or a
#: member that timed out waiting for a leader (a linearizable read's ReadIndex, or a proposal,
#: during an election). Another member may answer; a write's outcome is settled as unknown.
ENDPOINT_FAILURES = ("Stream removed", "RST_STREAM", "Socket closed", "context deadline exceeded",
                     "etcdserver: request timed out", "etcdserver: leader changed")
CONNECTION_CODES = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}


# ---------------------------------------------------------------------------------------------
# gRPC error classification (pure)


def is_connection_error(exc: grpc.aio.AioRpcError) -> bool:
    """The endpoint failed (down, unreachable, leaderless, too slow), not the request."""
    if exc.code() in CONNECTION_CODES:
        return True
    details = exc.details() or ""
    return exc.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL) and any(
        s in details for s in ENDPOINT_FAILURES
    )


def surely_unsent(exc: grpc.aio.AioRpcError) -> bool:
    """True when the request cannot have reached etcd's raft log, so any retry is safe."""
    details = exc.details() or ""
    return exc.code() == grpc.StatusCode.UNAVAILABLE and any(s in details for s in UNSENT)


def is_compacted(exc: grpc.aio.AioRpcError) -> bool:
    return exc.code() == grpc.StatusCode.OUT_OF_RANGE and "compacted" in (exc.details() or "")


def is_future(exc: grpc.aio.AioRpcError) -> bool:
    return exc.code() == grpc.StatusCode.OUT_OF_RANGE and "future revision" in (exc.details() or "")


def bytes_prefix_end(prefix: bytes) -> bytes:
    """etcd's range_end for a prefix: bump the last byte below 0xff; b"\\0" means "to the end"."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b"\x00"
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def endpoint_address(endpoint: str) -> tuple[str, int]:
    address = endpoint.removeprefix("http://").rstrip("/")
    if "://" in address:
        raise ValueError(f"unsupported etcd endpoint {endpoint!r} (only http:// or host:port)")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"etcd endpoint {endpoint!r} is not host:port")
    return host, int(port)


@dataclasses.dataclass(frozen=True)
class Op:
    """What an error needs to be told precisely: the operation and its key/revision/lease."""

    name: str
    key: str = ""
    revision: int = 0
    lease: int = 0
    size: int = 0


class OutcomeUnknown(Exception):
    """A write failed for connection reasons after it may have reached etcd."""

    def __init__(self, op: Op, exc: grpc.aio.AioRpcError) -> None:
        super().__init__(f"{op.name} {op.key}: outcome unknown: {exc.details()}")
        self.op = op


# ---------------------------------------------------------------------------------------------
# Endpoints


class Endpoint:
    """One etcd member: an aetcd client (its gRPC channel and stubs), connected lazily."""

    def __init__(self, endpoint: str, *, timeout: float) -> None:
        host, port = endpoint_address(endpoint)
        self.address = f"{host}:{port}"
        self.client = aetcd.Client(host=host, port=port, timeout=timeout, options=CHANNEL_OPTIONS)
        self.watch_stub: rpc.WatchStub | None = None

    async def ready(self) -> "Endpoint":
        # Creating the channel does no network I/O; the first RPC connects.
        await self.client.connect()
        if self.watch_stub is None:
            self.watch_stub = rpc.WatchStub(self.client.channel)
        return self

    @property
    def kv(self) -> rpc.KVStub:
        return self.client.kvstub

    @property
    def lease(self) -> rpc.LeaseStub:
        return self.client.leasestub

    async def close(self) -> None:
        try:
            await self.client.close()
        except Exception:  # noqa: BLE001 - closing a broken channel must not fail close()
            pass
        self.watch_stub = None
