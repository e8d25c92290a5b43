"""The embedded store's state machine: keys, revisions, per-key history, leases, compaction.

Kubernetes v1.0 piece: what etcd did for the v1.0 apiserver (pkg/tools/etcd_helper.go talked to
etcd); the decomposition follows etcd's mvcc package — revision counter, key index with
history, event log, compaction. This module is pure and synchronous: no I/O, no clocks, no
asyncio. Every change goes through one function, `apply(record)`, used both for live writes
(after the store has checked preconditions) and for WAL replay, so the state after a restart is
the state before it by construction, not by two code paths agreeing.

Data structures (why two indexes):
- `live`: SortedDict key -> current KeyValue. Every current get and range reads only this, so
  the common path costs one dict lookup or one slice of a sorted key list.
- `changed`: SortedDict key -> KeyHistory, for keys with more than one retained revision
  (updated or deleted since the compaction point). A read at a past revision R >=
  compact_revision looks a key up here; a key that is not here has had one value only, its
  live one, since its mod_revision — so it is visible at R iff mod_revision <= R. That rule
  lets a first create skip the history entirely (half the index work of a create).
  Memory is proportional to churn, not to the number of keys.
- `events` / `event_revisions`: the watch history, in revision order (a lease revocation puts
  several events at one revision). Watchers catch up from it; compaction trims its front.

Records (msgpack-friendly tuples, also the WAL payload):
  (PUT, revision, key, value, lease)      create or overwrite
  (DELETE, revision, key)                 delete one key
  (GRANT, revision, lease_id, ttl)        grant a lease (takes no revision)
  (REVOKE, revision, lease_id)            revoke a lease; its keys are deleted at `revision`
  (COMPACT, revision, compact_revision)   discard history before compact_revision
  (TXN, revision, [PUT/DELETE records])   several writes at one revision (an etcd Txn or a
                                          DeleteRange over several keys), each key at most once
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterator

from sortedcontainers import SortedDict

from .kv import Event, EventType, KeyValue

PUT, DELETE, GRANT, REVOKE, COMPACT, TXN = range(6)

Record = tuple


class KeyHistory:
    """Retained revisions of one key, oldest first; None marks a deletion (tombstone).

    Like etcd's keyIndex with its generations flattened: the value at revision R is the last
    entry at or before R.
    """

    __slots__ = ("revisions", "values")

    def __init__(self) -> None:
        self.revisions: list[int] = []
        self.values: list[KeyValue | None] = []

    def add(self, revision: int, kv: KeyValue | None) -> None:
        self.revisions.append(revision)
        self.values.append(kv)

    def at(self, revision: int) -> KeyValue | None:
        i = bisect_right(self.revisions, revision) - 1
        return self.values[i] if i >= 0 else None

    def compact(self, compact_revision: int) -> None:
        """Drop entries no read at or after `compact_revision` can see."""
        i = bisect_right(self.revisions, compact_revision) - 1
        if i > 0:
            del self.revisions[:i]
            del self.values[:i]
        if self.values and self.values[0] is None and self.revisions[0] <= compact_revision:
            del self.revisions[0]
            del self.values[0]

    def is_settled(self, live: KeyValue | None) -> bool:
        """True when the history says nothing the live value does not: empty, or one entry
        that is the live value (visible from its mod_revision on, absent before)."""
        return not self.values or (len(self.values) == 1 and self.values[0] is live)


class Lease:
    """A lease as durable state: id, granted TTL and attached keys. Deadlines are runtime
    state kept by the store (etcd, too, restarts every lease's TTL on recovery)."""

    __slots__ = ("id", "ttl", "keys")

    def __init__(self, lease_id: int, ttl: int) -> None:
        self.id = lease_id
        self.ttl = ttl
        self.keys: set[str] = set()


class MVCCState:
    """All durable state of the embedded store, changed only through `apply`."""

    def __init__(self, *, history_max_events: int = 50_000) -> None:
        if history_max_events < 1:
            raise ValueError("history_max_events must be at least 1")
        self.revision = 1
        self.compact_revision = 0
        self.live: SortedDict = SortedDict()
        self.changed: SortedDict = SortedDict()
        self.events: list[Event] = []
        self.event_revisions: list[int] = []
        self.leases: dict[int, Lease] = {}
        self.next_lease_id = 1
        self.history_max_events = history_max_events

    # ----------------------------------------------------------------------------- writes

    def apply(self, record: Record) -> list[Event]:
        """Apply one record and return the events it produced (empty for lease grants and
        compactions). The caller has checked every precondition: apply never refuses."""
        kind = record[0]
        if kind == PUT:
            _, revision, key, value, lease = record
            events = [self._put(revision, key, value, lease)]
        elif kind == DELETE:
            _, revision, key = record
            events = [self._delete(revision, key)]
        elif kind == GRANT:
            _, _, lease_id, ttl = record
            self.leases[lease_id] = Lease(lease_id, ttl)
            self.next_lease_id = max(self.next_lease_id, lease_id + 1)
            return []
        elif kind == REVOKE:
            _, revision, lease_id = record
            lease = self.leases.pop(lease_id)
            events = [self._delete(revision, key) for key in sorted(lease.keys)]
        elif kind == COMPACT:
            self._compact(record[2])
            return []
        elif kind == TXN:
            events = [self.apply(tuple(write))[0] for write in record[2]]
            return events
        else:
            raise ValueError(f"unknown record kind {kind!r}")
        if events:
            self.revision = record[1]
            self._trim_history()
        return events

    def _put(self, revision: int, key: str, value: bytes, lease: int) -> Event:
        prev = self.live.get(key)
        if prev is None:
            kv = KeyValue(key, value, revision, revision, 1, lease)
        else:
            kv = KeyValue(key, value, prev.create_revision, revision, prev.version + 1, lease)
            if prev.lease and prev.lease != lease:
                self._detach(prev.lease, key)
        if lease:
            self.leases[lease].keys.add(key)
        self.live[key] = kv
        self._remember(key, revision, kv, prev)
        return self._log(Event(EventType.PUT, kv, prev))

    def _delete(self, revision: int, key: str) -> Event:
        prev = self.live.pop(key)
        if prev.lease:
            self._detach(prev.lease, key)
        self._remember(key, revision, None, prev)
        return self._log(Event(EventType.DELETE, KeyValue(key, b"", 0, revision, 0, 0), prev))

    def _detach(self, lease_id: int, key: str) -> None:
        lease = self.leases.get(lease_id)
        if lease is not None:
            lease.keys.discard(key)

    def _remember(self, key: str, revision: int, kv: KeyValue | None, prev: KeyValue | None) -> None:
        history = self.changed.get(key)
        if history is None:
            if prev is None:
                return  # a first create: the live value alone answers every past read
            history = self.changed[key] = KeyHistory()
            if prev is not None:
                history.add(prev.mod_revision, prev)
        history.add(revision, kv)

    def _log(self, event: Event) -> Event:
        self.events.append(event)
        self.event_revisions.append(event.kv.mod_revision)
        return event

    def _trim_history(self) -> None:
        """Keep the event history within history_max_events by compacting its oldest part.

        Trims in steps of an eighth of the limit so the list's front is cut rarely (each cut
        moves the whole list), keeping the cost per write constant.
        """
        limit = self.history_max_events
        if len(self.events) > limit + max(1, limit // 8):
            self._compact(self.event_revisions[len(self.events) - limit])

    def _compact(self, compact_revision: int) -> None:
        if compact_revision <= self.compact_revision:
            return
        cut = bisect_left(self.event_revisions, compact_revision)
        touched = {event.kv.key for event in self.events[:cut]}
        del self.events[:cut]
        del self.event_revisions[:cut]
        self.compact_revision = compact_revision
        for key in touched:
            history = self.changed.get(key)
            if history is None:
                continue
            history.compact(compact_revision)
            if history.is_settled(self.live.get(key)):
                del self.changed[key]

    # ------------------------------------------------------------------------------ reads

    def value_at(self, key: str, revision: int) -> KeyValue | None:
        """The key's value at a retained revision (the caller checked the bounds)."""
        if revision >= self.revision:
            return self.live.get(key)
        history = self.changed.get(key)
        if history is not None:
            return history.at(revision)
        kv = self.live.get(key)
        return kv if kv is not None and kv.mod_revision <= revision else None

    def keys_between(self, start: str, end: str | None, revision: int) -> Iterator[KeyValue]:
        """Values of keys in [start, end) at `revision`, in key order (end None = no bound)."""
        if revision >= self.revision:
            live = self.live
            for key in live.irange(start, end, inclusive=(True, False)):
                yield live[key]
            return
        live_keys = self.live.irange(start, end, inclusive=(True, False))
        changed_keys = self.changed.irange(start, end, inclusive=(True, False))
        for key in _merge_unique(live_keys, changed_keys):
            kv = self.value_at(key, revision)
            if kv is not None:
                yield kv

    def count_between(self, start: str, end: str | None) -> int:
        """Number of live keys in [start, end), in O(log n)."""
        live = self.live
        stop = live.bisect_left(end) if end is not None else len(live)
        return max(0, stop - live.bisect_left(start))

    def events_from(self, revision: int) -> int:
        """Index in `events` of the first event at or after `revision`."""
        return bisect_left(self.event_revisions, revision)


def _merge_unique(a: Iterator[str], b: Iterator[str]) -> Iterator[str]:
    """Merge two sorted key iterators, yielding each key once."""
    sentinel = None
    x = next(a, sentinel)
    y = next(b, sentinel)
    while x is not None or y is not None:
        if y is None or (x is not None and x < y):
            yield x
            x = next(a, sentinel)
        elif x is None or y < x:
            yield y
            y = next(b, sentinel)
        else:
            yield x
            x = next(a, sentinel)
            y = next(b, sentinel)
