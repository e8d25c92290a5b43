"""Store errors as etcd's gRPC status codes and messages.

etcd piece: api/v3rpc/rpctypes/error.go (the `etcdserver: ...` strings clients match on —
clientv3 and aetcd turn these exact texts back into typed errors) and
etcdserver/api/v3rpc/util.go (togRPCError). One table, used by every service.
"""

from __future__ import annotations

import grpc

from ..storage import (
    CompactedError,
    FutureRevisionError,
    InvalidTxnError,
    KeyNotFoundError,
    LeaseExistsError,
    LeaseNotFoundError,
    StorageError,
    StorageFullError,
    UnavailableError,
    ValueTooLargeError,
)

EMPTY_KEY = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided")
KEY_NOT_FOUND = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key not found")
VALUE_PROVIDED = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: value is provided")
LEASE_PROVIDED = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: lease is provided")
COMPACTED = (grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted")
FUTURE_REV = (grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")
LEASE_NOT_FOUND = (grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
LEASE_EXISTS = (grpc.StatusCode.FAILED_PRECONDITION, "etcdserver: lease already exists")
LEASE_TTL_TOO_LARGE = (grpc.StatusCode.OUT_OF_RANGE, "etcdserver: too large lease TTL")
REQUEST_TOO_LARGE = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large")
NO_SPACE = (grpc.StatusCode.RESOURCE_EXHAUSTED, "etcdserver: mvcc: database space exceeded")
NOT_UTF8 = (grpc.StatusCode.INVALID_ARGUMENT,
            "etcdserver: key is not valid UTF-8 (minikube-py's store keeps text keys)")
INVALID_SORT = (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: invalid sort option")
INVALID_COMPARE = (grpc.StatusCode.INVALID_ARGUMENT,
                   "etcdserver: unknown compare target or result")
AUTH_NOT_ENABLED = (grpc.StatusCode.FAILED_PRECONDITION, "etcdserver: authentication is not enabled")
ONE_MEMBER = (grpc.StatusCode.UNIMPLEMENTED,
              "etcdserver: minikube-py serves a single member; membership cannot change")


class EtcdError(Exception):
    """An etcd-shaped failure the servicers abort the RPC with."""

    def __init__(self, error: tuple[grpc.StatusCode, str]) -> None:
        super().__init__(error[1])
        self.code, self.message = error


def from_storage(exc: StorageError) -> tuple[grpc.StatusCode, str]:
    """The etcd status for a Store error."""
    if isinstance(exc, CompactedError):
        return COMPACTED
    if isinstance(exc, FutureRevisionError):
        return FUTURE_REV
    if isinstance(exc, LeaseNotFoundError):
        return LEASE_NOT_FOUND
    if isinstance(exc, LeaseExistsError):
        return LEASE_EXISTS
    if isinstance(exc, KeyNotFoundError):
        return KEY_NOT_FOUND
    if isinstance(exc, ValueTooLargeError):
        return REQUEST_TOO_LARGE
    if isinstance(exc, InvalidTxnError):
        return grpc.StatusCode.INVALID_ARGUMENT, f"etcdserver: {exc.reason}"
    if isinstance(exc, StorageFullError):
        return NO_SPACE
    if isinstance(exc, UnavailableError):
        return grpc.StatusCode.UNAVAILABLE, f"etcdserver: {exc}"
    return grpc.StatusCode.UNKNOWN, f"etcdserver: {exc}"


async def abort(context: grpc.aio.ServicerContext, exc: BaseException) -> None:
    """Abort the RPC with etcd's status for `exc` (EtcdError or StorageError)."""
    if isinstance(exc, EtcdError):
        code, message = exc.code, exc.message
    else:
        assert isinstance(exc, StorageError)
        code, message = from_storage(exc)
    await context.abort(code, message)
