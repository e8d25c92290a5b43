"""Store errors: one distinct type per failure the callers must tell apart.

Kubernetes v1.0 piece: pkg/tools/etcd_helper.go's error helpers (IsEtcdNotFound,
IsEtcdNodeExist, IsEtcdTestFailed) and the storage errors the registry maps to API Status
(404 NotFound, 409 AlreadyExists/Conflict, 410 Expired, 413, 503). The registry layer turns
these into Status objects; the storage layer never knows about HTTP.
"""

from __future__ import annotations

from .kv import KeyValue

#: etcd's default --max-request-bytes: values above this are refused (Kubernetes issue #72053).
MAX_VALUE_BYTES = 1536 * 1024


class StorageError(Exception):
    """Base of every error a Store raises."""


class KeyExistsError(StorageError):
    """create() of a key that exists."""

    def __init__(self, key: str, current: KeyValue | None = None) -> None:
        super().__init__(f"key already exists: {key}")
        self.key = key
        self.current = current


class KeyNotFoundError(StorageError):
    """get/update/delete of a key that does not exist (at the requested revision)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class ConflictError(StorageError):
    """A compare-and-swap lost: the key's mod_revision is not the expected one.

    `current` is the key's value now (None if it was deleted), so a GuaranteedUpdate loop
    can retry without another read.
    """

    def __init__(self, key: str, expected_mod_revision: int, current: KeyValue | None) -> None:
        actual = current.mod_revision if current is not None else "deleted"
        super().__init__(
            f"conflict on {key}: expected mod_revision {expected_mod_revision}, current {actual}"
        )
        self.key = key
        self.expected_mod_revision = expected_mod_revision
        self.current = current


class CompactedError(StorageError):
    """A read or watch asked for a revision older than the compaction point.

    Kubernetes answers this with 410 Gone (reason Expired) and clients relist.
    """

    def __init__(self, requested_revision: int, compact_revision: int) -> None:
        super().__init__(
            f"required revision {requested_revision} has been compacted "
            f"(compacted up to {compact_revision})"
        )
        self.requested_revision = requested_revision
        self.compact_revision = compact_revision


class FutureRevisionError(StorageError):
    """A read or compaction asked for a revision the store has not reached yet."""

    def __init__(self, requested_revision: int, current_revision: int) -> None:
        super().__init__(
            f"required revision {requested_revision} is a future revision "
            f"(current revision is {current_revision})"
        )
        self.requested_revision = requested_revision
        self.current_revision = current_revision


class ValueTooLargeError(StorageError):
    """A value larger than etcd's request limit (1.5 MiB)."""

    def __init__(self, key: str, size: int, limit: int = MAX_VALUE_BYTES) -> None:
        super().__init__(f"value for {key} is {size} bytes, larger than the limit of {limit} bytes")
        self.key = key
        self.size = size
        self.limit = limit


class LeaseNotFoundError(StorageError):
    """An operation named a lease that does not exist (never granted, revoked or expired)."""

    def __init__(self, lease_id: int) -> None:
        super().__init__(f"lease {lease_id} not found")
        self.lease_id = lease_id


class LeaseExistsError(StorageError):
    """grant_lease with a chosen id that is already taken (etcd's ErrLeaseExists)."""

    def __init__(self, lease_id: int) -> None:
        super().__init__(f"lease {lease_id} already exists")
        self.lease_id = lease_id


class InvalidContinueError(StorageError):
    """A continue token that is malformed or belongs to another prefix."""


class WatchCancelledError(StorageError):
    """The store ended a watch for a reason other than compaction: the consumer left its
    bounded buffer full for too long, or the store closed. The watcher should re-watch from
    its last revision + 1 (and relist if that is compacted)."""


class UnavailableError(StorageError):
    """The store cannot serve: closed, its WAL failed, or no etcd endpoint answers."""


class StorageFullError(StorageError):
    """The disk holding the data dir is full (ENOSPC/EDQUOT): the write was not made durable
    and was not acknowledged. Reads keep working; writes are refused until space returns, and
    the WAL retries what it holds, so the store resumes by itself. A write refused this way
    after it was applied in memory may still become durable on the retry (an indeterminate
    result, like etcd's request timeout)."""


class InvalidTxnError(StorageError):
    """A transaction etcd refuses before running it: too many operations in a branch, or one
    key written twice (etcd's ErrTooManyOps, ErrDuplicateKey). `reason` is etcd's text."""

    TOO_MANY_OPS = "too many operations in txn request"
    DUPLICATE_KEY = "duplicate key given in txn request"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
