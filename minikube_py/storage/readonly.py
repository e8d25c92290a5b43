"""ReadOnlyStore: the read half of the Store contract over a data dir another process may hold.

Kubernetes v1.0 piece: etcdctl's read commands (get, ls, watch) against a running etcd, joined
with etcd's offline dump tool (tools/etcd-dump-logs), which reads a member's snapshot and WAL
without the member. Our etcd lives inside the API server process and keeps its data dir
locked, so `minikube-py storage ...` cannot open an EmbeddedStore there; it reads the files.

The rules that keep it correct without any help from the holder:
- Never lock, write or repair. Files are opened O_RDONLY; a torn tail is left alone and
  obsolete files are not deleted — the holder owns the directory.
- Bootstrap (`load`): the newest snapshot and every later segment, as recovery.recover() does,
  done here because following needs two things recover() does not expose: the byte offset
  where the last complete frame ends, and descriptors already open on the segments. If the
  holder deletes a file while we read it (a newer snapshot made it obsolete), start over.
- Following (`poll`): read the current segment from the end of the last complete frame; apply
  complete frames with MVCCState.apply — the function the writer and recovery use, so our
  state is the writer's state — and release their events with WatcherHub.notify. A frame cut
  off at the end is still being written: it is read again next time. Re-reading from the
  frame boundary also survives the holder restarting and truncating a torn tail there.
- Rotation: the writer finishes a segment before it creates the next (wal.WAL._write_round),
  so once a newer segment exists the current one is complete. Each poll first opens ("pins")
  every newer segment, then reads the current one to its end, then moves on. A pinned segment
  stays readable after a snapshot deletes it.
- Falling behind: if a segment we need was deleted before we pinned it (a whole snapshot cycle
  between two polls), its events are gone for us. Watchers end with CompactedError — for them
  it is exactly a compaction, and they re-list — and the state reloads from the newer snapshot.
- Corruption (a bad frame followed by more data, a finished segment ending inside a frame, a
  record that does not apply) ends the watchers and fails every later call with
  UnavailableError naming the file and offset. Nothing is skipped silently.

Reads see what the holder has written to the OS, which can be a moment ahead of what it has
fsynced and acknowledged: the useful view for an inspector, though a power loss could take
such a write back. Lease deadlines are runtime state of the holder and invisible here.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from pathlib import Path

import structlog

from . import reads
from .datadir import DataDir
from .errors import (
    CompactedError,
    LeaseNotFoundError,
    StorageError,
    UnavailableError,
)
from .kv import KeyValue, LeaseInfo, RangeResult
from .mvcc import COMPACT, MVCCState
from .recovery import load_newest_snapshot
from .wal import FrameProblem, WALCorruptError, decode_frames, is_torn, list_segments
from .watchable import Watcher, WatcherHub

log = structlog.get_logger(component="storage", backend="readonly")

_READ_CHUNK = 1 << 20
_LOAD_ATTEMPTS = 5


class FellBehindError(StorageError):
    """A WAL segment the reader needs was deleted before the reader could open it."""


class WALTail:
    """The records appended to one data dir's WAL, segment after segment, as they arrive.

    Plain file reading, no asyncio; each call to `read` returns the complete records appended
    since the previous call. Owned by one ReadOnlyStore.
    """

    def __init__(self, wal_dir: Path, first_seq: int) -> None:
        self._dir = wal_dir
        #: The segment being read; none is open until segment `first_seq` is found.
        self.seq = first_seq - 1
        self.path: Path | None = None
        self._fd: int | None = None
        #: Where the next frame of the current segment starts.
        self.offset = 0
        #: Newer segments, opened before the current one was read to its end.
        self._newer: deque[tuple[int, Path, int]] = deque()
        self._pinned = first_seq - 1

    def read(self) -> list[tuple]:
        """Records appended since the last call. Raises WALCorruptError, FellBehindError."""
        self._pin_newer()
        records, problem = self._read_current()
        while self._newer:
            # A newer segment existed before we read this one to its end: this one is done.
            if problem is not None:
                raise WALCorruptError(
                    self.path, self.offset, f"finished segment ends inside a record ({problem.reason})"
                )
            seq, path, fd = self._newer.popleft()
            if seq != self.seq + 1:
                os.close(fd)
                raise FellBehindError(
                    f"WAL segment {self.seq + 1} was deleted before it could be read "
                    f"(the next one left is {seq})"
                )
            self._switch(seq, path, fd)
            more, problem = self._read_current()
            records.extend(more)
        return records

    def _pin_newer(self) -> None:
        for seq, path in list_segments(self._dir):
            if seq <= self._pinned:
                continue
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue  # already obsolete; the gap is noticed when we get there
            self._newer.append((seq, path, fd))
            self._pinned = seq

    def _read_current(self) -> tuple[list[tuple], FrameProblem | None]:
        """Complete records of the current segment from `offset` on, and the unfinished frame
        at its end if there is one."""
        if self._fd is None:
            return [], None
        chunks: list[bytes] = []
        position = self.offset
        while chunk := os.pread(self._fd, _READ_CHUNK, position):
            chunks.append(chunk)
            position += len(chunk)
        data = b"".join(chunks)
        records, end, problem = decode_frames(data)
        start = self.offset
        self.offset = start + end
        if problem is not None and not is_torn(data, problem):
            raise WALCorruptError(self.path, start + problem.offset, problem.reason)
        return records, problem

    def _switch(self, seq: int, path: Path, fd: int) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self.seq, self.path, self._fd, self.offset = seq, path, fd, 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        while self._newer:
            os.close(self._newer.popleft()[2])


def load(data_dir: DataDir, *, history_max_events: int) -> tuple[MVCCState, WALTail]:
    """The state of `data_dir` as its files are now, and a tail positioned just after the last
    complete frame. Raises WALCorruptError, SnapshotCorruptError, or UnavailableError if the
    files keep changing under us."""
    problem: Exception | None = None
    for _ in range(_LOAD_ATTEMPTS):
        tail: WALTail | None = None
        try:
            state, snap_seq = load_newest_snapshot(data_dir, history_max_events=history_max_events)
            tail = WALTail(data_dir.wal, snap_seq)
            apply_records(state, tail.read())
            return state, tail
        except (FileNotFoundError, FellBehindError) as exc:
            # A newer snapshot made what we were reading obsolete: read the newer one.
            if tail is not None:
                tail.close()
            problem = exc
        except BaseException:
            if tail is not None:
                tail.close()
            raise
    raise UnavailableError(f"could not read a consistent view of {data_dir.root}: {problem}")


def apply_records(state: MVCCState, records: list[tuple]) -> None:
    for record in records:
        try:
            state.apply(record)
        except Exception as exc:  # noqa: BLE001 - a record that does not apply is damage
            raise UnavailableError(
                f"WAL record {record[:2]!r} does not apply at revision {state.revision}: {exc!r}"
            ) from exc


class ReadOnlyStore:
    """Reads (get, range, watch, revisions) of a data dir, without locking or changing it.

    Open with `await ReadOnlyStore.open(data_dir)`. Every write raises UnavailableError.
    """

    def __init__(self) -> None:  # use open()
        self._data_dir: DataDir
        self._state: MVCCState
        self._tail: WALTail
        self._hub: WatcherHub
        self._history_max_events = 50_000
        self._poll_interval = 0.1
        self._watch_buffer_size = 1024
        self._watch_stall_timeout = 60.0
        self._poll_lock = asyncio.Lock()
        self._follower: asyncio.Task | None = None
        self._failure: str | None = None
        self._closed = False

    @classmethod
    async def open(
        cls,
        data_dir: Path | str,
        *,
        history_max_events: int = 50_000,
        poll_interval: float = 0.1,
        watch_buffer_size: int = 1024,
        watch_stall_timeout: float = 60.0,
    ) -> "ReadOnlyStore":
        """Read `data_dir` as it is now. Watches follow what its holder appends, polling every
        `poll_interval` seconds. Raises UnavailableError if it is not a data dir,
        WALCorruptError or SnapshotCorruptError if its files are damaged."""
        self = cls()
        self._data_dir = DataDir(data_dir)
        root = self._data_dir.root
        if not root.is_dir():
            raise UnavailableError(f"no data dir at {root}")
        if not self._data_dir.wal.is_dir():
            raise UnavailableError(f"{root} is not a minikube-py data dir (it has no wal/ directory)")
        self._history_max_events = history_max_events
        self._poll_interval = poll_interval
        self._watch_buffer_size = watch_buffer_size
        self._watch_stall_timeout = watch_stall_timeout
        self._state, self._tail = await asyncio.to_thread(
            load, self._data_dir, history_max_events=history_max_events
        )
        self._hub = self._new_hub(self._state)
        log.debug("readonly.opened", data_dir=str(root), revision=self._state.revision)
        return self

    def _new_hub(self, state: MVCCState) -> WatcherHub:
        return WatcherHub(
            state, buffer_size=self._watch_buffer_size, stall_timeout=self._watch_stall_timeout
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._follower is not None:
            self._follower.cancel()
            try:
                await self._follower
            except asyncio.CancelledError:
                pass
        async with self._poll_lock:
            await self._hub.close(UnavailableError("store is closed"))
            self._tail.close()

    @property
    def data_dir(self) -> Path:
        return self._data_dir.root

    # ------------------------------------------------------------------------ following

    async def poll(self) -> int:
        """Apply every complete record appended since the last poll and release its events to
        watchers; returns how many were applied. Reads call it first, so they see the latest
        writes; a follower task calls it every poll_interval while watches are open."""
        self._check_open()
        async with self._poll_lock:
            self._check_open()
            try:
                records = self._tail.read()
                apply_records(self._state, records)
            except FellBehindError as exc:
                await self._resync(exc)
                return 0
            except (StorageError, OSError) as exc:
                await self._fail(exc)
                raise UnavailableError(self._failure) from exc
            if records:
                self._hub.notify(self._state.revision)
                if any(record[0] == COMPACT for record in records):
                    self._hub.wake()  # watchers now behind the compaction point end
            return len(records)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(self._poll_interval)
            try:
                await self.poll()
            except StorageError:
                return  # closed or failed; watchers have been told
            except Exception as exc:  # noqa: BLE001 - never die silently
                log.exception("readonly.follower_failed")
                await self._fail(exc)
                return

    async def _resync(self, reason: Exception) -> None:
        old_hub, old_tail, old_revision = self._hub, self._tail, self._state.revision
        try:
            state, tail = await asyncio.to_thread(
                load, self._data_dir, history_max_events=self._history_max_events
            )
        except (StorageError, OSError) as exc:
            await self._fail(exc)
            raise UnavailableError(self._failure) from exc
        self._state, self._tail, self._hub = state, tail, self._new_hub(state)
        old_tail.close()
        log.warning(
            "readonly.fell_behind",
            data_dir=str(self._data_dir.root),
            reason=str(reason),
            from_revision=old_revision,
            to_revision=state.revision,
        )
        await old_hub.close(CompactedError(old_revision + 1, state.compact_revision))

    async def _fail(self, exc: BaseException) -> None:
        if self._failure is not None:
            return
        self._failure = f"read-only view of {self._data_dir.root} stopped: {exc}"
        log.error("readonly.failed", data_dir=str(self._data_dir.root), error=str(exc))
        await self._hub.close(UnavailableError(self._failure))

    def _check_open(self) -> None:
        if self._closed:
            raise UnavailableError("store is closed")
        if self._failure is not None:
            raise UnavailableError(self._failure)

    # ---------------------------------------------------------------------------- reads

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        await self.poll()
        return reads.get(self._state, key, revision)

    async def range(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_token: str | None = None,
        revision: int = 0,
    ) -> RangeResult:
        await self.poll()
        return reads.range_keys(
            self._state, prefix, limit=limit, continue_token=continue_token, revision=revision
        )

    async def watch(self, prefix: str, *, start_revision: int = 0) -> Watcher:
        await self.poll()
        watcher = self._hub.add(prefix, start_revision)
        if self._follower is None:
            self._follower = asyncio.get_running_loop().create_task(
                self._follow(), name="readonly-follower"
            )
        return watcher

    async def current_revision(self) -> int:
        await self.poll()
        return self._state.revision

    async def compact_revision(self) -> int:
        await self.poll()
        return self._state.compact_revision

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        """Granted TTL and attached keys. The deadline lives in the holder's memory, so
        `remaining` is reported as the full TTL (an upper bound)."""
        await self.poll()
        lease = self._state.leases.get(lease_id)
        if lease is None:
            raise LeaseNotFoundError(lease_id)
        return LeaseInfo(lease_id, lease.ttl, float(lease.ttl), tuple(sorted(lease.keys)))

    # --------------------------------------------------------------------------- writes

    def _read_only(self) -> UnavailableError:
        root = self._data_dir.root
        pid = self._data_dir.holder_pid()
        if pid is not None:
            return UnavailableError(
                f"read-only: data dir {root} is held by pid {pid}; write through that process"
            )
        return UnavailableError(f"read-only: data dir {root} is opened for inspection only")

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        raise self._read_only()

    async def update(
        self, key: str, value: bytes, *, expected_mod_revision: int | None, lease: int = 0
    ) -> KeyValue:
        raise self._read_only()

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        raise self._read_only()

    async def grant_lease(self, ttl: int) -> int:
        raise self._read_only()

    async def keep_alive(self, lease_id: int) -> int:
        raise self._read_only()

    async def revoke_lease(self, lease_id: int) -> None:
        raise self._read_only()

    async def compact(self, revision: int) -> None:
        raise self._read_only()
