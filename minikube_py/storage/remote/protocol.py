"""The wire of the remote Store: msgpack frames, the values of the contract, its errors.

Kubernetes piece: what etcd's `etcdserverpb` messages are to kube-apiserver's storage
(k8s.io/apiserver/pkg/storage/etcd3) — but only the calls of our Store contract, as msgpack
arrays, so a call costs a pack and an unpack instead of a protobuf message and a gRPC call.
Pure: no sockets, no asyncio. The frames (one msgpack array each, back to back on the stream):

    request   [rid, op, args]                      op: a Store method name (OPS)
    reply     [rid, OK, result] | [rid, ERROR, error]
    watch     [rid, EVENTS, [event, ...]] ... [rid, END, error | None]

`rid` is the caller's request id; a watch's events carry the rid of the `watch` call that
opened it and `cancel` names that rid. Values travel as tuples in the NamedTuples' field
order; errors as [class name, constructor args] of the storage errors, so a caller gets
exactly the exception the store raised (a ConflictError still carries the current value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

from ..errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    InvalidContinueError,
    InvalidTxnError,
    KeyExistsError,
    KeyNotFoundError,
    LeaseExistsError,
    LeaseNotFoundError,
    StorageError,
    StorageFullError,
    UnavailableError,
    ValueTooLargeError,
    WatchCancelledError,
)
from ..kv import Event, EventType, KeyValue, LeaseInfo, RangeResult

OK, ERROR, EVENTS, END = 0, 1, 2, 3

#: the calls a client may make, by wire name; each maps to the Store method of that name
OPS = frozenset({
    "get", "range", "create", "update", "delete", "watch", "cancel", "grant_lease",
    "keep_alive", "revoke_lease", "lease_info", "compact", "current_revision",
    "compact_revision",
})
#: calls with no side effect that the embedded store answers without suspending: the server
#: runs them inline, no task per request
READS = frozenset({"get", "range", "current_revision", "compact_revision", "lease_info"})

_PUT, _DELETE = 0, 1


def pack(frame: list) -> bytes:
    return msgpack.packb(frame, use_bin_type=True)


def unpacker() -> msgpack.Unpacker:
    """A streaming decoder: feed it socket bytes, iterate it for whole frames. Arrays come back
    as tuples (cheaper, and what the NamedTuples are built from); 64 MiB bounds one frame (a
    range of every key is the largest; a corrupt length cannot make it allocate more)."""
    return msgpack.Unpacker(raw=False, use_list=False, max_buffer_size=64 * 1024 * 1024)


# --------------------------------------------------------------------------- values


def kv_in(t: Any) -> KeyValue | None:
    return None if t is None else KeyValue._make(t)


def event_out(event: Event) -> tuple:
    return (_PUT if event.type is EventType.PUT else _DELETE, event.kv, event.prev_kv)


def event_in(t: tuple) -> Event:
    kind, kv, prev = t
    return Event(EventType.PUT if kind == _PUT else EventType.DELETE, KeyValue._make(kv),
                 None if prev is None else KeyValue._make(prev))


def result_out(op: str, value: Any) -> Any:
    """The wire form of `op`'s return value (NamedTuples pack as arrays as they are)."""
    return value


def result_in(op: str, value: Any) -> Any:
    """`op`'s return value from its wire form."""
    if op in ("get", "create", "update", "delete"):
        return KeyValue._make(value)
    if op == "range":
        kvs, revision, more, token, remaining = value
        return RangeResult([KeyValue._make(kv) for kv in kvs], revision, more, token, remaining)
    if op == "lease_info":
        lease, ttl, remaining, keys = value
        return LeaseInfo(lease, ttl, remaining, tuple(keys))
    return value


# --------------------------------------------------------------------------- errors

#: error class -> (its arguments for the wire, its constructor from them)
_ERRORS: dict[str, tuple[type[StorageError], Callable[[Any], tuple], Callable[..., StorageError]]] = {
    cls.__name__: (cls, out, make) for cls, out, make in (
        (KeyExistsError, lambda e: (e.key, e.current),
         lambda key, cur: KeyExistsError(key, kv_in(cur))),
        (KeyNotFoundError, lambda e: (e.key,), KeyNotFoundError),
        (ConflictError, lambda e: (e.key, e.expected_mod_revision, e.current),
         lambda key, exp, cur: ConflictError(key, exp, kv_in(cur))),
        (CompactedError, lambda e: (e.requested_revision, e.compact_revision), CompactedError),
        (FutureRevisionError, lambda e: (e.requested_revision, e.current_revision),
         FutureRevisionError),
        (ValueTooLargeError, lambda e: (e.key, e.size, e.limit), ValueTooLargeError),
        (LeaseNotFoundError, lambda e: (e.lease_id,), LeaseNotFoundError),
        (LeaseExistsError, lambda e: (e.lease_id,), LeaseExistsError),
        (InvalidTxnError, lambda e: (e.reason,), InvalidTxnError),
        (InvalidContinueError, lambda e: (str(e),), InvalidContinueError),
        (WatchCancelledError, lambda e: (str(e),), WatchCancelledError),
        (StorageFullError, lambda e: (str(e),), StorageFullError),
        (UnavailableError, lambda e: (str(e),), UnavailableError),
    )
}


def error_out(exc: BaseException) -> tuple[str, tuple]:
    """[name, args] of a storage error; anything else travels as UnavailableError with its
    text (the caller learns the store failed, not a traceback's worth of internals)."""
    entry = _ERRORS.get(type(exc).__name__)
    if entry is not None and type(exc) is entry[0]:
        return type(exc).__name__, entry[1](exc)
    return "UnavailableError", (f"store error: {type(exc).__name__}: {exc}",)


def error_in(t: tuple) -> StorageError:
    name, args = t
    entry = _ERRORS.get(name)
    if entry is None:
        return UnavailableError(f"unknown store error {name}: {args}")
    return entry[2](*args)
