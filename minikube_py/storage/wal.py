"""Write-ahead log: checksummed msgpack records, group-committed fsyncs, segment files.

Kubernetes v1.0 piece: etcd's wal package (v1.0 ran on etcd, which made every write durable
before answering). Here the log lives in `<data-dir>/wal/` as numbered segments
`<seq>.wal`. A snapshot covers every segment before a given sequence number, so after a
snapshot the older segments are deleted — that is how the log is truncated without rewriting
a file.

Frame: `<u32 length><u32 crc32(payload)><u32 crc32(first 8 bytes)><payload>`, little-endian;
payload is one msgpack record (see mvcc.py). The header has its own checksum so a damaged
length field is recognised as damage instead of being mistaken for a torn final write.

Group commit: writers call `append()`, which only adds bytes to an in-memory buffer and
returns the future of the current *round*. One flusher task takes the whole buffer, writes it
and fsyncs in a worker thread (the event loop keeps running and new appends form the next
round), then calls `on_durable(marker)` and resolves the round's future. One fsync therefore
covers every write that arrived while the previous fsync ran. Without fsync (`--fsync never`)
a round is only a write into the page cache and is done on the loop itself.

Recovery (`read_segments`): a record cut short at the end of the last segment is a torn write
and is truncated away; a bad checksum anywhere else is corruption and raises WALCorruptError
naming the file and the offset — recovery never skips a record silently. Frame decoding itself
(`decode_frames`) is pure and incremental, so the read-only store (readonly.py) follows a log
another process is appending to with the same decoder, deciding for itself what a cut-off
final frame means there (not written yet, rather than torn).
"""

from __future__ import annotations

import asyncio
import errno
import os
import struct
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import msgpack
import structlog

from ..fileperms import PRIVATE_FILE, create_file
from .errors import StorageError, StorageFullError, UnavailableError

log = structlog.get_logger(component="storage", backend="embedded")

_HEADER = struct.Struct("<III")
_LENGTH_AND_CRC = struct.Struct("<II")
_U32 = struct.Struct("<I")
#: A frame longer than this cannot come from us (values are capped at 1.5 MiB).
_MAX_FRAME = 64 * 1024 * 1024
SEGMENT_SUFFIX = ".wal"
#: Errors that mean "the disk is full": recoverable once space returns.
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
#: How often a full log retries writing what it holds.
FULL_RETRY_SECONDS = 0.2


class WALCorruptError(StorageError):
    """A record in the middle of the log fails its checksum or does not decode."""

    def __init__(self, path: Path, offset: int, reason: str) -> None:
        super().__init__(f"WAL corrupt: {path} at offset {offset}: {reason}")
        self.path = path
        self.offset = offset


def encode_frame(record: tuple) -> bytes:
    payload = msgpack.packb(record, use_bin_type=True)
    head = _LENGTH_AND_CRC.pack(len(payload), zlib.crc32(payload))
    return head + _U32.pack(zlib.crc32(head)) + payload


def segment_path(wal_dir: Path, seq: int) -> Path:
    return wal_dir / f"{seq:016d}{SEGMENT_SUFFIX}"


def list_segments(wal_dir: Path) -> list[tuple[int, Path]]:
    """(sequence, path) of every segment, in order."""
    found = []
    for path in wal_dir.glob(f"*{SEGMENT_SUFFIX}"):
        try:
            found.append((int(path.name[: -len(SEGMENT_SUFFIX)]), path))
        except ValueError:
            continue
    return sorted(found)


@dataclass
class TornTail:
    """Where the last segment's valid records end (recovery truncates there)."""

    path: Path
    offset: int
    size: int


@dataclass(frozen=True)
class FrameProblem:
    """Why `decode_frames` stopped before the end of its data."""

    #: Where the damaged (or unfinished) frame starts.
    offset: int
    reason: str
    #: The frame is cut off by the end of the data: what a torn final write looks like, and
    #: what a reader of a live log sees while a frame is being appended.
    reaches_eof: bool
    #: The frame's checksums hold but its payload does not decode: never a torn write.
    cause: Exception | None = None


def decode_frames(data: bytes, offset: int = 0) -> tuple[list[tuple], int, FrameProblem | None]:
    """Decode the complete frames in `data` from `offset` on. Pure: no I/O; damage is reported.

    Returns the records, the offset just past the last good frame, and the problem that
    stopped decoding there (None when the data ended exactly at a frame boundary). Whether a
    problem is a torn tail or corruption depends on where the data came from, so callers
    decide: `read_segment` for a file at rest, the read-only store's follower for a live log.
    """
    records: list[tuple] = []
    size = len(data)
    while offset < size:
        if size - offset < _HEADER.size:
            return records, offset, FrameProblem(offset, "truncated record header", True)
        length, crc, head_crc = _HEADER.unpack_from(data, offset)
        end = offset + _HEADER.size + length
        if zlib.crc32(data[offset : offset + 8]) != head_crc or length > _MAX_FRAME:
            return records, offset, FrameProblem(offset, "record header checksum mismatch", False)
        if end > size:
            return records, offset, FrameProblem(offset, "record runs past the end of the file", True)
        payload = data[offset + _HEADER.size : end]
        if zlib.crc32(payload) != crc:
            return records, offset, FrameProblem(offset, "checksum mismatch", end == size)
        try:
            record = msgpack.unpackb(payload, raw=False, use_list=False)
        except (ValueError, msgpack.UnpackException) as exc:
            return records, offset, FrameProblem(offset, f"undecodable record: {exc}", False, exc)
        records.append(tuple(record))
        offset = end
    return records, offset, None


def is_torn(data: bytes, problem: FrameProblem) -> bool:
    """Whether `problem` looks like an unfinished final write rather than damage: a frame cut
    off by the end of the data, or a stretch of zeros (space allocated, never written)."""
    if problem.cause is not None:
        return False
    return problem.reaches_eof or not any(data[problem.offset :])


def read_segment(path: Path, *, last: bool) -> tuple[list[tuple], TornTail | None]:
    """Decode every record of one segment file.

    Returns the records and, for the last segment, the torn tail if one was found. A damaged
    record followed by more data is corruption (WALCorruptError); only the final record of the
    last segment may be torn. A tail of zero bytes (a file extended but never written) counts
    as torn too.
    """
    data = path.read_bytes()
    records, offset, problem = decode_frames(data)
    if problem is None:
        return records, None
    if problem.cause is not None:
        raise WALCorruptError(path, offset, problem.reason) from problem.cause
    # Only the last thing in the log can be a torn write: a record cut off by the end of
    # the file, or a stretch of zeros (space allocated, never written). Anything else
    # means a record in the middle went bad.
    if last and is_torn(data, problem):
        return records, TornTail(path, offset, len(data))
    raise WALCorruptError(path, offset, problem.reason)


def read_segments(wal_dir: Path, from_seq: int) -> Iterator[tuple[int, list[tuple], TornTail | None]]:
    """Records of every segment with sequence >= from_seq, segment by segment."""
    segments = [(seq, p) for seq, p in list_segments(wal_dir) if seq >= from_seq]
    for i, (seq, path) in enumerate(segments):
        records, torn = read_segment(path, last=i == len(segments) - 1)
        yield seq, records, torn


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RoundFuture(asyncio.Future):
    """The future every writer of one group-commit round awaits.

    It refuses cancellation: when a waiting writer's task is cancelled, asyncio would cancel
    the future it awaits — here shared by every writer of the round. Refusing makes the task
    raise CancelledError once the round completes (a millisecond or so later), and the other
    writers are unaffected. Cheaper than wrapping every wait in asyncio.shield.
    """

    def cancel(self, msg=None) -> bool:  # noqa: ARG002 - signature of Future.cancel
        return False


class _Rotate:
    """Marker in the pending queue: later records go to segment `seq`."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq


class WAL:
    """The append side of the log, with group commit.

    `append(frame, marker)` is synchronous and cheap; await the returned future to know the
    frame is durable. `on_durable(marker)` runs once per round, after the fsync and before the
    round's waiters resume, with the marker of the round's last frame (the store passes
    revisions, so it can release watch events exactly up to what is durable).
    """

    def __init__(
        self,
        wal_dir: Path,
        seq: int,
        *,
        fsync: bool = True,
        on_durable: Callable[[int], None] = lambda marker: None,
        on_fsync: Callable[[float, int], None] = lambda seconds, nbytes: None,
    ) -> None:
        self._dir = wal_dir
        self._seq = seq
        self._fsync = fsync
        self._on_durable = on_durable
        self._on_fsync = on_fsync
        self._fd = self._open_segment(seq)
        self._pending: list[bytes | _Rotate] = []
        self._pending_marker = 0
        self._round: RoundFuture | None = None
        self._wakeup = asyncio.Event()
        self._failure: BaseException | None = None
        #: set while the disk is full: appends are refused, the flusher retries `_held`
        self._full: OSError | None = None
        self._closing = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wal-fsync")
        self._task = asyncio.get_running_loop().create_task(self._flush_loop(), name="wal-flusher")

    @property
    def segment(self) -> int:
        """Sequence number of the segment new appends go to."""
        return self._seq

    def _open_segment(self, seq: int) -> int:
        path = segment_path(self._dir, seq)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        if path.exists():
            return os.open(path, flags)
        fd = create_file(path, PRIVATE_FILE, flags)  # 0600 whatever the umask (etcd's)
        fsync_dir(self._dir)
        return fd

    def check(self) -> None:
        """Raise UnavailableError if the log has failed or is closed."""
        if self._failure is not None:
            raise UnavailableError(f"write-ahead log failed: {self._failure}") from self._failure
        if self._full is not None:
            raise StorageFullError(f"storage full: {self._full.strerror or self._full}; "
                                   f"writes are refused until space is freed in {self._dir}")
        if self._closing:
            raise UnavailableError("store is closed")

    def append(self, frame: bytes, marker: int) -> RoundFuture:
        self.check()
        self._pending.append(frame)
        self._pending_marker = marker
        if self._round is None:
            self._round = RoundFuture()
            self._wakeup.set()
        return self._round

    def rotate(self) -> tuple[int, RoundFuture]:
        """Start a new segment for everything appended from now on.

        Synchronous, so the caller can capture a snapshot at exactly this point of the log.
        Returns the new segment's sequence and a future that resolves once every earlier
        record is durable in the older segments (only then may they be deleted).
        """
        self.check()
        self._seq += 1
        self._pending.append(_Rotate(self._seq))
        if self._round is None:
            self._round = RoundFuture()
            self._wakeup.set()
        return self._seq, self._round

    async def _flush_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if self._round is None:
                if self._closing:
                    return
                continue
            pending, self._pending = self._pending, []
            marker, waiters, self._round = self._pending_marker, self._round, None
            try:
                if self._fsync or any(isinstance(item, _Rotate) for item in pending):
                    await loop.run_in_executor(self._executor, self._write_round, pending)
                else:
                    # `--fsync never`: the round is a write into the page cache, microseconds
                    # of work; handing it to the worker thread cost more (the GIL hand-off
                    # both ways) than the write itself. Rotations still go to the thread:
                    # opening a segment syncs the directory.
                    self._write_round(pending)
            except _DiskFull as full:
                # Nothing half-written stays on disk (_write_and_sync truncated it) and
                # `pending` holds exactly what is not durable yet: refuse new writes, answer
                # this round's writers with the error, and retry until space returns.
                marker = await self._hold_until_space(pending, waiters, full.error)
                if marker is None:
                    return
                self._notify_durable(marker)
                continue
            except BaseException as exc:  # noqa: BLE001 - any failure makes the log unusable
                self._failure = exc
                error = UnavailableError(f"write-ahead log failed: {exc}")
                waiters.set_exception(error)
                waiters.exception()  # retrieved: writers that already left must not warn
                if self._round is not None:
                    self._round.set_exception(error)
                    self._round.exception()
                    self._round = None
                return
            self._notify_durable(marker)
            waiters.set_result(marker)
            if self._closing and self._round is None:
                return

    def _notify_durable(self, marker: int) -> None:
        try:
            self._on_durable(marker)
        except Exception:  # noqa: BLE001 - writers must be answered whatever a callback does
            log.exception("wal.on_durable_failed", marker=marker)

    async def _hold_until_space(self, pending: list[bytes | _Rotate], waiters: RoundFuture,
                                error: OSError) -> int | None:
        """The disk is full: fail the writers waiting (this round's and the next one's, whose
        frames are already applied in memory), then retry writing everything held until it
        succeeds. Returns the marker now durable, or None if the log closed or failed."""
        loop = asyncio.get_running_loop()
        self._full = error
        held = pending + self._pending
        self._pending = []
        marker = self._pending_marker
        full = StorageFullError(f"storage full: {error.strerror or error}; the write was not "
                                f"acknowledged (it may still be applied once space is freed)")
        for future in (waiters, self._round):
            if future is not None:
                future.set_exception(full)
                future.exception()  # retrieved: writers that already left must not warn
        self._round = None
        log.error("wal.storage_full", error=str(error), dir=str(self._dir))
        while True:
            if self._closing:
                return None
            try:
                await loop.run_in_executor(self._executor, self._write_round, held)
            except _DiskFull:
                await asyncio.sleep(FULL_RETRY_SECONDS)
                continue
            except BaseException as exc:  # noqa: BLE001 - as in _flush_loop
                self._failure = exc
                return None
            self._full = None
            log.info("wal.storage_resumed", dir=str(self._dir))
            return marker

    def _write_round(self, pending: list[bytes | _Rotate]) -> None:
        """Runs in the worker thread: write the round's frames, switching segments at each
        rotation marker, and make them durable. What is durable is removed from `pending`,
        so after a _DiskFull the list holds exactly what must be retried."""
        while pending:
            cut = next((i for i, item in enumerate(pending) if isinstance(item, _Rotate)), len(pending))
            self._write_and_sync(pending[:cut])  # type: ignore[arg-type]
            del pending[:cut]
            if pending:
                rotate = pending[0]
                assert isinstance(rotate, _Rotate)
                try:
                    fd = self._open_segment(rotate.seq)
                except OSError as exc:
                    if exc.errno in _FULL_ERRNOS:
                        raise _DiskFull(exc) from exc
                    raise
                os.close(self._fd)
                self._fd = fd
                del pending[0]

    def _write_and_sync(self, frames: list[bytes]) -> None:
        if not frames:
            return
        data = b"".join(frames)
        view = memoryview(data)
        start = os.fstat(self._fd).st_size
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            if exc.errno not in _FULL_ERRNOS:
                raise
            # Cut the partial frames away so a retry appends at a frame boundary.
            os.ftruncate(self._fd, start)
            raise _DiskFull(exc) from exc
        if self._fsync:
            started = time.perf_counter()
            os.fdatasync(self._fd)
            self._on_fsync(time.perf_counter() - started, len(data))

    async def close(self) -> None:
        """Flush what is pending, then close the segment. Idempotent."""
        if self._closing:
            return
        self._closing = True
        self._wakeup.set()
        try:
            await self._task
        finally:
            self._executor.shutdown(wait=True)
            os.close(self._fd)


class _DiskFull(Exception):
    """Raised in the writer thread: the disk is full and nothing of the chunk stayed on disk."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error
