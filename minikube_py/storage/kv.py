"""Value types of the Store contract: KeyValue, Event, RangeResult, LeaseInfo.

Kubernetes v1.0 piece: the etcd client types pkg/tools/etcd_helper.go consumed (etcd's
`mvccpb.KeyValue` and `mvccpb.Event`). They are immutable so the embedded store can hand the
same object to every reader and watcher without copying: nobody can change history under
someone else's feet.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class KeyValue(NamedTuple):
    """One key at one revision, as etcd's mvccpb.KeyValue.

    create_revision: revision of the write that created this incarnation of the key.
    mod_revision: revision of the last write to it (Kubernetes' resourceVersion).
    version: number of writes since creation (1 after create; 0 on a deletion record).
    lease: id of the attached lease, 0 for none.
    """

    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    version: int
    lease: int = 0


class EventType(enum.Enum):
    PUT = "PUT"
    DELETE = "DELETE"


class Event(NamedTuple):
    """A change at one revision. For DELETE, `kv` carries the key and the deletion revision
    (empty value, version 0) and `prev_kv` the value that was deleted."""

    type: EventType
    kv: KeyValue
    prev_kv: KeyValue | None

    @property
    def revision(self) -> int:
        return self.kv.mod_revision


class RangeResult(NamedTuple):
    """One page of a range read.

    revision: the store revision the page was read at; every page of one paged read shares it.
    more: whether keys remain after this page; `continue_token` then resumes the read.
    remaining: how many keys remain after this page (Kubernetes' remainingItemCount).
    """

    kvs: list[KeyValue]
    revision: int
    more: bool
    continue_token: str | None
    remaining: int


class LeaseInfo(NamedTuple):
    """What the store knows of a lease (etcd's LeaseTimeToLiveResponse)."""

    id: int
    ttl: int
    remaining: float
    keys: tuple[str, ...]


def prefix_end(prefix: str) -> str:
    """The first key after every key that starts with `prefix` (etcd's range_end for a prefix).

    Keys are compared as Python str (code point order), which for UTF-8 equals byte order, so
    bumping the last code point gives the same bound etcd computes on bytes.
    """
    if not prefix:
        return ""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
