"""EmbeddedStore: the etcd-shaped Store inside our own process, durable on disk.

Kubernetes v1.0 piece: the etcd server v1.0 ran beside the apiserver, folded into the
process so the control plane starts in well under a second with no external binary.

How a write flows (the ordering rules that make it correct):
1. Check preconditions against the current state (exists? expected mod_revision? lease?).
2. Build the record, encode it (an encoding failure must not leave the state changed), apply
   it to the in-memory state and append its frame to the WAL buffer — all synchronously, so
   concurrent writers are serialised by the event loop and revisions are assigned in order.
3. Await the WAL round: the write is acknowledged only after its frame is fsynced.
4. The WAL calls `_on_durable(revision)` after each fsync; that releases the events up to that
   revision to watchers. Watchers therefore never see a write that could still be lost.

Reads see the in-memory state, which includes writes whose fsync is in flight (a window of a
millisecond or so). A process crash loses nothing of that (the bytes are already written to
the OS); only a power loss in that window can lose a write some reader saw, and that write's
writer was never told it succeeded. docs/storage.md states this promise.

Background work, each one task: the WAL flusher, the watch catch-up loop, lease expiry,
periodic compaction (like kube-apiserver's --etcd-compaction-interval: every interval, compact
to the revision seen at the previous tick, so at least one interval of history is kept), and
snapshots (taken once the records since the last one outnumber max(snapshot_count, keys), so
restart replays a bounded log and the write amplification stays constant).
"""

from __future__ import annotations

import asyncio
import heapq
import time
from pathlib import Path

import structlog

from . import metrics, reads
from .datadir import DataDir
from .errors import (
    MAX_VALUE_BYTES,
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    LeaseExistsError,
    LeaseNotFoundError,
    StorageError,
    UnavailableError,
    ValueTooLargeError,
)
from .kv import KeyValue, LeaseInfo, RangeResult
from . import txn_eval
from .mvcc import COMPACT, DELETE, GRANT, PUT, REVOKE, TXN, MVCCState
from .recovery import recover, remove_obsolete, repair
from .snapshot import SnapshotImage, write_snapshot
from .txn import TxnOp, TxnResult, has_writes
from .wal import WAL, encode_frame
from .watchable import Watcher, WatcherHub

log = structlog.get_logger(component="storage", backend="embedded")


class EmbeddedStore:
    """The embedded MVCC store. Open with `await EmbeddedStore.open(data_dir)`."""

    def __init__(self) -> None:  # use open()
        self._data_dir: DataDir
        self._state: MVCCState
        self._wal: WAL
        self._hub: WatcherHub
        self._fsync = True
        self._closed = False
        self._tasks: list[asyncio.Task] = []
        self._lease_deadlines: dict[int, float] = {}
        self._lease_heap: list[tuple[float, int]] = []
        self._lease_wakeup = asyncio.Event()
        self._records_since_snapshot = 0
        self._snapshot_count = 10_000
        self._snapshot_task: asyncio.Task | None = None
        self.snapshots_written = 0

    # ------------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        data_dir: Path | str,
        *,
        fsync: bool = True,
        history_max_events: int = 50_000,
        watch_buffer_size: int = 1024,
        watch_stall_timeout: float = 60.0,
        compaction_interval: float = 300.0,
        snapshot_count: int = 10_000,
    ) -> "EmbeddedStore":
        """Lock `data_dir` (created if missing), recover it, and start background work.

        Raises DataDirLockedError if another process holds it, WALCorruptError or
        SnapshotCorruptError if its files are damaged (never skipping data silently).
        """
        started = time.perf_counter()
        self = cls()
        self._data_dir = DataDir(data_dir)
        self._data_dir.lock()
        try:
            recovered = recover(self._data_dir, history_max_events=history_max_events)
            repair(self._data_dir, recovered)
        except BaseException:
            self._data_dir.unlock()
            raise
        if recovered.torn_tail is not None:
            log.warning(
                "wal.torn_tail_truncated",
                file=str(recovered.torn_tail.path),
                offset=recovered.torn_tail.offset,
                dropped_bytes=recovered.torn_tail.size - recovered.torn_tail.offset,
            )
        self._state = recovered.state
        self._fsync = fsync
        self._snapshot_count = snapshot_count
        self._records_since_snapshot = recovered.replayed_records
        self._hub = WatcherHub(
            self._state, buffer_size=watch_buffer_size, stall_timeout=watch_stall_timeout
        )
        self._wal = WAL(
            self._data_dir.wal,
            recovered.wal_seq,
            fsync=fsync,
            on_durable=self._on_durable,
            on_fsync=_observe_fsync,
        )
        now = time.monotonic()
        for lease in self._state.leases.values():
            self._set_deadline(lease.id, now + lease.ttl)
        self._tasks = [
            asyncio.create_task(self._expire_leases(), name="lease-expiry"),
        ]
        if compaction_interval > 0:
            self._tasks.append(
                asyncio.create_task(self._compact_periodically(compaction_interval), name="compactor")
            )
        elapsed = time.perf_counter() - started
        metrics.RECOVERY_SECONDS.set(elapsed)
        self._update_gauges()
        log.info(
            "store.opened",
            data_dir=str(self._data_dir.root),
            revision=self._state.revision,
            keys=len(self._state.live),
            replayed_records=recovered.replayed_records,
            fsync=fsync,
            seconds=round(elapsed, 3),
        )
        return self

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        if self._snapshot_task is not None:
            self._snapshot_task.cancel()
        await asyncio.gather(*self._tasks, *(t for t in [self._snapshot_task] if t), return_exceptions=True)
        await self._wal.close()
        await self._hub.close(UnavailableError("store is closed"))
        self._data_dir.unlock()
        log.info("store.closed", revision=self._state.revision)

    # ---------------------------------------------------------------------------- reads

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        self._check_open()
        return reads.get(self._state, key, revision)

    async def range(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_token: str | None = None,
        revision: int = 0,
    ) -> RangeResult:
        self._check_open()
        return reads.range_keys(
            self._state, prefix, limit=limit, continue_token=continue_token, revision=revision
        )

    async def current_revision(self) -> int:
        self._check_open()
        return self._state.revision

    async def compact_revision(self) -> int:
        self._check_open()
        return self._state.compact_revision

    # --------------------------------------------------------------------------- writes

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        self._check_writable()
        _check_value(key, value)
        state = self._state
        current = state.live.get(key)
        if current is not None:
            raise KeyExistsError(key, current)
        self._check_lease(lease)
        event = await self._commit((PUT, state.revision + 1, key, value, lease), "create")
        return event.kv

    async def update(
        self, key: str, value: bytes, *, expected_mod_revision: int | None, lease: int = 0
    ) -> KeyValue:
        self._check_writable()
        _check_value(key, value)
        self._check_current(key, expected_mod_revision)
        self._check_lease(lease)
        event = await self._commit((PUT, self._state.revision + 1, key, value, lease), "update")
        return event.kv

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        self._check_writable()
        current = self._check_current(key, expected_mod_revision)
        await self._commit((DELETE, self._state.revision + 1, key), "delete")
        return current

    def _check_current(self, key: str, expected_mod_revision: int | None) -> KeyValue:
        current = self._state.live.get(key)
        if current is None:
            raise KeyNotFoundError(key)
        if expected_mod_revision is not None and current.mod_revision != expected_mod_revision:
            raise ConflictError(key, expected_mod_revision, current)
        return current

    def _check_lease(self, lease: int) -> None:
        if lease and lease not in self._state.leases:
            raise LeaseNotFoundError(lease)

    async def _commit(self, record: tuple, operation: str):
        """Apply a checked record and wait until it is durable; returns its first event."""
        frame = encode_frame(record)
        events = self._state.apply(record)
        await self._persist(frame, operation)
        return events[0] if events else None

    async def _persist(self, frame: bytes, operation: str) -> None:
        """Append an applied record's frame to the WAL and wait until it is durable."""
        round_done = self._wal.append(frame, self._state.revision)
        self._records_since_snapshot += 1
        if self._records_since_snapshot >= max(self._snapshot_count, len(self._state.live)):
            self._start_snapshot()
        await round_done
        metrics.WRITES_BY_OPERATION[operation] += 1

    # ----------------------------------------------------------------------- transactions

    async def txn(self, txn: TxnOp) -> TxnResult:
        """Run an etcd-shaped transaction atomically (storage/txn_eval.py): every write takes
        one revision and one WAL record, acknowledged once durable like any write."""
        if has_writes(txn):
            self._check_writable()
        else:
            self._check_open()
        result, records = txn_eval.run(self._state, txn)
        if records:
            record = records[0] if len(records) == 1 else (TXN, self._state.revision, records)
            await self._persist(encode_frame(record), "txn")
        return result

    async def progress_revision(self) -> int:
        """The newest revision every synced watcher has been offered (the durable one): a
        watch progress notification may promise no event at or below it is still to come."""
        self._check_open()
        return self._hub.durable_revision

    def _on_durable(self, revision: int) -> None:
        self._hub.notify(revision)
        metrics.REVISION.set(revision)
        metrics.KEYS.set(len(self._state.live))
        metrics.HISTORY_EVENTS.set(len(self._state.events))

    # ---------------------------------------------------------------------------- watch

    async def watch(self, prefix: str, *, start_revision: int = 0) -> Watcher:
        self._check_open()
        return self._hub.add(prefix, start_revision)

    # --------------------------------------------------------------------------- leases

    async def grant_lease(self, ttl: int, *, lease_id: int = 0) -> int:
        """A new lease; `lease_id` 0 picks the next free id (etcd lets a client choose one).
        Raises LeaseExistsError for a chosen id that is taken."""
        self._check_writable()
        if ttl <= 0:
            raise ValueError("lease TTL must be positive")
        if lease_id:
            if lease_id in self._state.leases:
                raise LeaseExistsError(lease_id)
        else:
            lease_id = self._state.next_lease_id
            while lease_id in self._state.leases:
                lease_id += 1
        await self._commit((GRANT, self._state.revision, lease_id, int(ttl)), "lease_grant")
        self._set_deadline(lease_id, time.monotonic() + ttl)
        return lease_id

    async def keep_alive(self, lease_id: int) -> int:
        self._check_writable()
        lease = self._state.leases.get(lease_id)
        if lease is None:
            raise LeaseNotFoundError(lease_id)
        self._set_deadline(lease_id, time.monotonic() + lease.ttl)
        return lease.ttl

    async def revoke_lease(self, lease_id: int) -> None:
        self._check_writable()
        if lease_id not in self._state.leases:
            raise LeaseNotFoundError(lease_id)
        self._lease_deadlines.pop(lease_id, None)
        await self._commit((REVOKE, self._state.revision + 1, lease_id), "lease_revoke")

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        self._check_open()
        lease = self._state.leases.get(lease_id)
        if lease is None:
            raise LeaseNotFoundError(lease_id)
        remaining = max(0.0, self._lease_deadlines.get(lease_id, 0.0) - time.monotonic())
        return LeaseInfo(lease_id, lease.ttl, remaining, tuple(sorted(lease.keys)))

    async def leases(self) -> list[int]:
        """Ids of every live lease, ascending."""
        self._check_open()
        return sorted(self._state.leases)

    def _set_deadline(self, lease_id: int, deadline: float) -> None:
        self._lease_deadlines[lease_id] = deadline
        heapq.heappush(self._lease_heap, (deadline, lease_id))
        self._lease_wakeup.set()

    async def _expire_leases(self) -> None:
        """Revoke leases whose deadline passed. The heap may hold stale deadlines (a
        keep-alive pushes a new one); an entry counts only if it matches the current one."""
        heap = self._lease_heap
        while not self._closed:
            now = time.monotonic()
            while heap and heap[0][0] <= now:
                deadline, lease_id = heapq.heappop(heap)
                if self._lease_deadlines.get(lease_id) != deadline:
                    continue
                try:
                    await self.revoke_lease(lease_id)
                except LeaseNotFoundError:
                    continue
                except UnavailableError:
                    return
                log.info("lease.expired", lease=lease_id)
            self._lease_wakeup.clear()
            timeout = min(1.0, heap[0][0] - now) if heap else 1.0
            # asyncio.timeout, not wait_for: on 3.11, wait_for swallows a cancellation that
            # arrives in the same tick as the wakeup, and close() would then wait for a lease.
            try:
                async with asyncio.timeout(max(0.0, timeout)):
                    await self._lease_wakeup.wait()
            except TimeoutError:
                pass

    # ----------------------------------------------------------------------- compaction

    async def compact(self, revision: int) -> None:
        self._check_writable()
        state = self._state
        if revision <= state.compact_revision:
            raise CompactedError(revision, state.compact_revision)
        if revision > state.revision:
            raise FutureRevisionError(revision, state.revision)
        await self._commit((COMPACT, state.revision, revision), "compact")
        self._hub.wake()
        self._update_gauges()
        log.info("store.compacted", compact_revision=revision, history_events=len(state.events))

    async def _compact_periodically(self, interval: float) -> None:
        previous_tick = self._state.revision
        while True:
            await asyncio.sleep(interval)
            if previous_tick > self._state.compact_revision:
                try:
                    await self.compact(previous_tick)
                except UnavailableError:
                    return
                except StorageError as exc:  # e.g. the history window compacted further meanwhile
                    log.info("store.compaction_skipped", reason=str(exc))
            previous_tick = self._state.revision

    # ------------------------------------------------------------------------ snapshots

    def _start_snapshot(self) -> None:
        if self._snapshot_task is None or self._snapshot_task.done():
            self._records_since_snapshot = 0
            self._snapshot_task = asyncio.get_running_loop().create_task(self.snapshot(), name="snapshot")
            self._snapshot_task.add_done_callback(_log_snapshot_failure)

    async def snapshot(self) -> Path:
        """Write a snapshot of the current state and drop the WAL segments it covers."""
        self._check_writable()
        started = time.perf_counter()
        seq, rotated = self._wal.rotate()
        image = SnapshotImage.capture(self._state, seq)
        await rotated
        path = await write_snapshot(image, self._data_dir.snap, fsync=self._fsync)
        remove_obsolete(self._data_dir, seq)
        elapsed = time.perf_counter() - started
        metrics.SNAPSHOT_SECONDS.observe(elapsed)
        self.snapshots_written += 1
        log.info("store.snapshot", revision=image.revision, keys=len(image.kvs), seconds=round(elapsed, 3))
        return path

    # ----------------------------------------------------------------------------- misc

    def _check_open(self) -> None:
        if self._closed:
            raise UnavailableError("store is closed")

    def _check_writable(self) -> None:
        self._check_open()
        self._wal.check()

    def _update_gauges(self) -> None:
        metrics.REVISION.set(self._state.revision)
        metrics.KEYS.set(len(self._state.live))
        metrics.HISTORY_EVENTS.set(len(self._state.events))
        metrics.COMPACT_REVISION.set(self._state.compact_revision)

    @property
    def data_dir(self) -> Path:
        return self._data_dir.root


def _check_value(key: str, value: bytes) -> None:
    if not isinstance(key, str) or not key:
        raise TypeError("key must be a non-empty str")
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError("value must be bytes")
    if len(value) > MAX_VALUE_BYTES:
        raise ValueTooLargeError(key, len(value))


def _log_snapshot_failure(task: asyncio.Task) -> None:
    """A failed background snapshot is logged; the WAL still holds everything, so the store
    keeps working and tries again after the next snapshot_count records."""
    if not task.cancelled() and task.exception() is not None:
        log.error("store.snapshot_failed", error=repr(task.exception()))


def _observe_fsync(seconds: float, nbytes: int) -> None:
    metrics.WAL_FSYNC_SECONDS.observe(seconds)
    metrics.WAL_ROUND_BYTES.observe(nbytes)
