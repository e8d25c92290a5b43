"""The Store contract: the only way anything in minikube_py touches data.

Kubernetes v1.0 piece: pkg/tools.EtcdClient / pkg/storage.Interface, reshaped after etcd v3
(revisions, transactions, watch with prev_kv, leases), which is what Kubernetes' storage grew
into. Two implementations pass one conformance suite (tests/conformance): the embedded MVCC
store (`EmbeddedStore`) and the real-etcd backend (`EtcdStore`).

Semantics every implementation guarantees:
- Revisions are one global, strictly increasing counter. An empty store is at revision 1; each
  successful write (create, update, delete, the deletes of a lease revocation) takes the next
  revision. A KeyValue's mod_revision is Kubernetes' resourceVersion.
- A write returns only once it is durable (for the embedded store: its WAL record is fsynced).
- Watch delivers every event with revision >= start_revision for matching keys, in revision
  order, with no gaps and no duplicates, each carrying the previous value; if that history is
  compacted the watch fails with CompactedError. Watchers are bounded: a consumer that leaves
  its buffer full for too long is cancelled (WatchCancelledError), never allowed to grow memory
  or stall writers and other watchers.
"""

from __future__ import annotations

from typing import AsyncIterator, Protocol, runtime_checkable

from .kv import Event, KeyValue, LeaseInfo, RangeResult
from .txn import TxnOp, TxnResult


@runtime_checkable
class Watch(Protocol):
    """An open watch. Iterate it for events (`async for ev in watch`) or take them in batches
    (`await watch.next_batch()`); `cancel()` ends it. Iteration ends with the error that
    cancelled the watch (CompactedError, WatchCancelledError, UnavailableError) or, after
    `cancel()`, normally."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def next_batch(self) -> list[Event]:
        """Wait for at least one event and return all that are buffered (in order). Returns an
        empty list once the watch has been cancelled by its owner."""
        ...

    async def cancel(self) -> None:
        """Stop the watch; safe to call more than once."""
        ...


@runtime_checkable
class Store(Protocol):
    """Async, etcd-shaped key-value store with revisions, CAS, watch and leases."""

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        """The key's value at `revision` (0 = now). Raises KeyNotFoundError, CompactedError,
        FutureRevisionError."""
        ...

    async def range(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_token: str | None = None,
        revision: int = 0,
    ) -> RangeResult:
        """Keys starting with `prefix`, in key order, at most `limit` (0 = all). A continue
        token from a previous page resumes at that page's revision (then `revision` must be 0
        or equal). Raises CompactedError when the revision is gone, InvalidContinueError."""
        ...

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        """Write a key that must not exist. Raises KeyExistsError, ValueTooLargeError,
        LeaseNotFoundError."""
        ...

    async def update(
        self,
        key: str,
        value: bytes,
        *,
        expected_mod_revision: int | None,
        lease: int = 0,
    ) -> KeyValue:
        """Overwrite an existing key if its mod_revision is `expected_mod_revision` (None =
        any). Raises KeyNotFoundError, ConflictError (carrying the current value),
        ValueTooLargeError, LeaseNotFoundError."""
        ...

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        """Delete a key if its mod_revision matches (None = any); returns the deleted value.
        Raises KeyNotFoundError, ConflictError."""
        ...

    async def watch(self, prefix: str, *, start_revision: int = 0) -> Watch:
        """Watch keys starting with `prefix` from `start_revision` (0 = only changes after
        now). Raises CompactedError at once if start_revision is compacted."""
        ...

    async def grant_lease(self, ttl: int) -> int:
        """A new lease of `ttl` seconds; returns its id. Keys attached to it are deleted (one
        revision, DELETE events) when it expires or is revoked."""
        ...

    async def keep_alive(self, lease_id: int) -> int:
        """Restart the lease's TTL; returns the TTL. Raises LeaseNotFoundError."""
        ...

    async def revoke_lease(self, lease_id: int) -> None:
        """Revoke the lease and delete its keys. Raises LeaseNotFoundError."""
        ...

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        """TTL, time remaining and attached keys. Raises LeaseNotFoundError."""
        ...

    async def compact(self, revision: int) -> None:
        """Discard history before `revision`: reads and watches below it then fail with
        CompactedError. Raises CompactedError if already compacted past it,
        FutureRevisionError if it is ahead of the current revision."""
        ...

    async def current_revision(self) -> int:
        """The revision of the last write (1 for an empty store)."""
        ...

    async def compact_revision(self) -> int:
        """The revision history was last compacted to (0 if never)."""
        ...

    async def close(self) -> None:
        """Flush, stop background work and release the data; later calls raise
        UnavailableError."""
        ...


@runtime_checkable
class TxnStore(Store, Protocol):
    """A Store that also runs etcd's general request shapes atomically: what serving the etcd
    v3 protocol (minikube_py/etcdserver) needs beyond the single-key calls above.

    The embedded store implements it. The real-etcd backend does not: serving etcd's protocol
    over a real etcd would be a proxy (etcd ships one, `etcd grpc-proxy`), not a store."""

    async def txn(self, txn: TxnOp) -> TxnResult:
        """Evaluate every compare, then run one branch; all writes take one revision and are
        durable when this returns. Raises InvalidTxnError, CompactedError,
        FutureRevisionError (a read op's revision), KeyNotFoundError (ignore_value/ignore_lease
        on a missing key), LeaseNotFoundError, ValueTooLargeError — before changing anything."""
        ...

    async def grant_lease(self, ttl: int, *, lease_id: int = 0) -> int:
        """As Store.grant_lease; a non-zero `lease_id` is used as the id (LeaseExistsError
        if taken)."""
        ...

    async def leases(self) -> list[int]:
        """Ids of every live lease."""
        ...

    async def progress_revision(self) -> int:
        """A revision R such that every watcher in sync has been offered every event <= R."""
        ...
