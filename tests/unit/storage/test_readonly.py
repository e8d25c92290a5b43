"""ReadOnlyStore: reading a data dir another store holds, without locking or changing it.

The writer here is a real EmbeddedStore in the same process (the lock is per open file, so the
reader sees exactly what it would see from another process; tests/integration/test_cli.py
does it across processes). Following is driven either by the store's own follower (short poll
interval) or by calling `poll()` directly where a test needs a precise interleaving.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from minikube_py.storage import (
    CompactedError,
    EmbeddedStore,
    EventType,
    FutureRevisionError,
    KeyNotFoundError,
    Store,
    UnavailableError,
    WALCorruptError,
)
from minikube_py.storage.mvcc import PUT
from minikube_py.storage.readonly import ReadOnlyStore
from minikube_py.storage.wal import decode_frames, encode_frame, is_torn, list_segments

P = "/registry/pods/default/"


async def open_writer(data: Path, **options) -> EmbeddedStore:
    options.setdefault("fsync", False)
    options.setdefault("compaction_interval", 0)
    return await EmbeddedStore.open(data, **options)


async def collect(watch, n: int, timeout: float = 5.0) -> list:
    events: list = []
    async with asyncio.timeout(timeout):
        while len(events) < n:
            events.extend(await watch.next_batch())
    assert len(events) == n, events
    return events


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def last_segment(data: Path) -> Path:
    return list_segments(data / "wal")[-1][1]


# ------------------------------------------------------------------------------- decoding


def test_decode_frames_stops_at_an_unfinished_frame_and_resumes():
    frames = [encode_frame((PUT, r, f"/k{r}", b"v" * r, 0)) for r in range(2, 6)]
    data = b"".join(frames)
    cut = len(frames[0]) + len(frames[1]) + 5
    records, end, problem = decode_frames(data[:cut])
    assert [r[1] for r in records] == [2, 3]
    assert end == len(frames[0]) + len(frames[1])
    assert problem is not None and problem.reaches_eof and is_torn(data[:cut], problem)
    records, end, problem = decode_frames(data, end)
    assert [r[1] for r in records] == [4, 5] and end == len(data) and problem is None


def test_decode_frames_reports_damage_in_the_middle():
    frames = [encode_frame((PUT, r, "/k", b"value", 0)) for r in range(2, 5)]
    data = bytearray(b"".join(frames))
    data[len(frames[0]) + 14] ^= 0xFF  # a payload byte of the second frame
    records, end, problem = decode_frames(bytes(data))
    assert len(records) == 1 and end == len(frames[0])
    assert problem is not None and problem.reason == "checksum mismatch"
    assert not problem.reaches_eof and not is_torn(bytes(data), problem)


# ---------------------------------------------------------------------------------- reads


async def test_reads_a_held_dir_without_locking_or_changing_it(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    try:
        a1 = await writer.create(P + "a", b'{"v": 1}')
        await writer.create(P + "b", b"two")
        a2 = await writer.update(P + "a", b'{"v": 2}', expected_mod_revision=a1.mod_revision)
        await writer.delete(P + "b")
        before = files_of(data)

        reader = await ReadOnlyStore.open(data)
        assert isinstance(reader, Store)
        try:
            assert await reader.current_revision() == await writer.current_revision()
            assert await reader.compact_revision() == 0
            assert await reader.get(P + "a") == a2
            assert await reader.get(P + "a", revision=a1.mod_revision) == a1
            assert (await reader.get(P + "b", revision=a1.mod_revision + 1)).value == b"two"
            with pytest.raises(KeyNotFoundError):
                await reader.get(P + "b")
            with pytest.raises(FutureRevisionError):
                await reader.get(P + "a", revision=100)
            page = await reader.range(P, limit=1, revision=a1.mod_revision + 1)
            assert [kv.key for kv in page.kvs] == [P + "a"] and page.more and page.remaining == 1
            rest = await reader.range(P, continue_token=page.continue_token)
            assert [kv.key for kv in rest.kvs] == [P + "b"] and rest.revision == page.revision
            assert (await reader.range(P)).kvs == [a2]
            past = await collect(await reader.watch(P, start_revision=1), 4)
            assert [e.type for e in past] == [EventType.PUT] * 3 + [EventType.DELETE]
        finally:
            await reader.close()
        # The writer still works and nothing on disk was touched by the reader.
        assert files_of(data) == before
        await writer.create(P + "c", b"3")
    finally:
        await writer.close()


async def test_writes_are_refused_naming_the_holder(tmp_path: Path):
    writer = await open_writer(tmp_path / "data")
    reader = await ReadOnlyStore.open(tmp_path / "data")
    try:
        for attempt in (
            reader.create("/k", b"v"),
            reader.update("/k", b"v", expected_mod_revision=None),
            reader.delete("/k"),
            reader.grant_lease(5),
            reader.compact(1),
        ):
            with pytest.raises(UnavailableError, match=f"read-only: .* held by pid {os.getpid()}"):
                await attempt
    finally:
        await reader.close()
        await writer.close()
    reader = await ReadOnlyStore.open(tmp_path / "data")
    try:
        with pytest.raises(UnavailableError, match="read-only"):
            await reader.create("/k", b"v")
    finally:
        await reader.close()


async def test_missing_or_foreign_dir_is_refused(tmp_path: Path):
    with pytest.raises(UnavailableError, match="no data dir at"):
        await ReadOnlyStore.open(tmp_path / "nothing")
    with pytest.raises(UnavailableError, match="not a minikube-py data dir"):
        await ReadOnlyStore.open(tmp_path)
    assert not (tmp_path / "nothing").exists()


async def test_reads_see_later_writes(tmp_path: Path):
    writer = await open_writer(tmp_path / "data")
    reader = await ReadOnlyStore.open(tmp_path / "data")
    try:
        kv = await writer.create(P + "late", b"x")
        assert await reader.get(P + "late") == kv
        assert await reader.current_revision() == kv.mod_revision
    finally:
        await reader.close()
        await writer.close()


# ------------------------------------------------------------------------------ following


async def test_watch_follows_writes_across_snapshot_rotation(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    reader = await ReadOnlyStore.open(data, poll_interval=0.01)
    try:
        await writer.create(P + "before", b"0")
        mine = await writer.watch(P)
        theirs = await reader.watch(P)
        first_segment = last_segment(data)
        for i in range(12):
            kv = await writer.create(P + f"k{i}", b"v%d" % i)
            await writer.update(kv.key, b"w%d" % i, expected_mod_revision=kv.mod_revision)
            if i % 3 == 0:
                await writer.delete(kv.key)
            if i in (4, 8):
                await writer.snapshot()
                # One poll must fall between two snapshots, or the reader has fallen a whole
                # segment behind (the next test covers that).
                await asyncio.sleep(0.05)
        expected = await collect(mine, 12 * 2 + 4)
        assert await collect(theirs, len(expected)) == expected
        assert not first_segment.exists(), "the writer rotated and deleted the first segment"
        assert writer.snapshots_written >= 2
        assert (await reader.range(P)).kvs == (await writer.range(P)).kvs
    finally:
        await reader.close()
        await writer.close()


async def test_reader_on_an_empty_dir_follows_a_writer_that_starts_later(tmp_path: Path):
    data = tmp_path / "data"
    (data / "wal").mkdir(parents=True)
    reader = await ReadOnlyStore.open(data, poll_interval=0.01)
    try:
        assert await reader.current_revision() == 1
        watch = await reader.watch("/")
        writer = await open_writer(data)
        try:
            kv = await writer.create("/x", b"1")
            [event] = await collect(watch, 1)
            assert event.kv == kv
        finally:
            await writer.close()
    finally:
        await reader.close()


async def test_an_unfinished_final_frame_is_read_once_complete(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    await writer.create("/a", b"1")
    await writer.close()
    frame = encode_frame((PUT, 3, "/b", b"2", 0))
    segment = last_segment(data)
    with open(segment, "ab") as f:
        f.write(frame[:7])
    reader = await ReadOnlyStore.open(data, poll_interval=3600)
    try:
        assert await reader.current_revision() == 2
        watch = await reader.watch("/")
        with open(segment, "ab") as f:
            f.write(frame[7:-1])
        assert await reader.poll() == 0
        with open(segment, "ab") as f:
            f.write(frame[-1:])
        assert await reader.poll() == 1
        [event] = await collect(watch, 1)
        assert event.kv.key == "/b" and event.revision == 3
    finally:
        await reader.close()


async def test_holder_restart_truncating_a_torn_tail_is_followed(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    await writer.create("/a", b"1")
    await writer.close()
    with open(last_segment(data), "ab") as f:
        f.write(encode_frame((PUT, 3, "/torn", b"never acknowledged", 0))[:20])
    reader = await ReadOnlyStore.open(data, poll_interval=0.01)
    try:
        watch = await reader.watch("/")
        writer = await open_writer(data)  # recovery truncates the torn tail, then appends
        try:
            kv = await writer.create("/b", b"2")
            [event] = await collect(watch, 1)
            assert event.kv == kv
        finally:
            await writer.close()
    finally:
        await reader.close()


async def test_falling_behind_a_whole_snapshot_ends_watchers_as_compacted(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    reader = await ReadOnlyStore.open(data, poll_interval=3600)
    try:
        watch = await reader.watch("/")
        await writer.create("/a", b"1")
        await reader.poll()
        await collect(watch, 1)
        # Two snapshots without a poll in between: the segment after ours is deleted unread.
        await writer.create("/b", b"2")
        await writer.snapshot()
        await writer.create("/c", b"3")
        await writer.snapshot()
        last = await writer.create("/d", b"4")
        assert await reader.poll() == 0
        with pytest.raises(CompactedError):
            await collect(watch, 10)
        assert await reader.current_revision() == last.mod_revision
        assert [kv.key for kv in (await reader.range("/")).kvs] == ["/a", "/b", "/c", "/d"]
        fresh = await reader.watch("/")
        kv = await writer.create("/e", b"5")
        await reader.poll()
        assert (await collect(fresh, 1))[0].kv == kv
    finally:
        await reader.close()
        await writer.close()


# ----------------------------------------------------------------------------- corruption


async def test_corruption_at_open_is_raised_with_file_and_offset(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    await writer.create("/a", b"1")
    await writer.create("/b", b"2")
    await writer.close()
    segment = last_segment(data)
    raw = bytearray(segment.read_bytes())
    raw[14] ^= 0xFF  # payload of the first frame; the second follows it
    segment.write_bytes(bytes(raw))
    with pytest.raises(WALCorruptError, match=f"{segment.name} at offset 0"):
        await ReadOnlyStore.open(data)


async def test_corruption_while_following_fails_watchers_and_reads(tmp_path: Path):
    data = tmp_path / "data"
    writer = await open_writer(data)
    await writer.create("/a", b"1")
    await writer.close()
    reader = await ReadOnlyStore.open(data, poll_interval=3600)
    try:
        watch = await reader.watch("/")
        bad = bytearray(encode_frame((PUT, 3, "/b", b"2", 0)))
        bad[-1] ^= 0xFF
        with open(last_segment(data), "ab") as f:
            f.write(bytes(bad) + encode_frame((PUT, 4, "/c", b"3", 0)))
        with pytest.raises(UnavailableError, match="WAL corrupt: .* checksum mismatch"):
            await reader.poll()
        with pytest.raises(UnavailableError, match="WAL corrupt"):
            await watch.next_batch()
        with pytest.raises(UnavailableError, match="stopped"):
            await reader.get("/a")
    finally:
        await reader.close()
