"""Embedded store: what survives a restart, what a damaged WAL does, the data-dir lock,
snapshots, group commit, and how watchers are bounded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minikube_py.storage import (
    CompactedError,
    DataDirLockedError,
    EmbeddedStore,
    EventType,
    KeyNotFoundError,
    WALCorruptError,
    WatchCancelledError,
    metrics,
)
from minikube_py.storage.snapshot import list_snapshots
from minikube_py.storage.wal import list_segments


def only_segment(data: Path) -> Path:
    segments = list_segments(data / "wal")
    assert segments, "no WAL segment"
    return segments[-1][1]


async def test_reopen_restores_keys_revisions_and_leases(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    a = await store.create("/a", b"1")
    await store.update("/a", b"2", expected_mod_revision=a.mod_revision)
    lease = await store.grant_lease(60)
    await store.create("/leased", b"x", lease=lease)
    await store.create("/b", b"1")
    await store.delete("/b")
    revision = await store.current_revision()
    await store.close()

    store = await EmbeddedStore.open(tmp_path)
    try:
        assert await store.current_revision() == revision
        got = await store.get("/a")
        assert (got.value, got.version, got.create_revision) == (b"2", 2, a.create_revision)
        with pytest.raises(KeyNotFoundError):
            await store.get("/b")
        info = await store.lease_info(lease)
        assert info.keys == ("/leased",) and info.ttl == 60
        # New writes continue the revision sequence, and a new lease gets a fresh id.
        assert (await store.create("/c", b"1")).mod_revision == revision + 1
        assert await store.grant_lease(5) > lease
    finally:
        await store.close()


async def test_watch_resumes_across_restart_from_wal_history(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    first = await store.create("/w/a", b"1")
    await store.create("/w/b", b"1")
    await store.close()
    store = await EmbeddedStore.open(tmp_path)
    try:
        watch = await store.watch("/w/", start_revision=first.mod_revision)
        events = await asyncio.wait_for(watch.next_batch(), 5)
        assert [e.kv.key for e in events] == ["/w/a", "/w/b"]
        await watch.cancel()
    finally:
        await store.close()


async def test_torn_tail_is_truncated(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    await store.create("/a", b"1")
    await store.create("/b", b"2")
    await store.close()
    segment = only_segment(tmp_path)
    good_size = segment.stat().st_size
    with open(segment, "ab") as f:  # half a record: a write cut off by a crash
        f.write(b"\x40\x00\x00\x00\x01\x02\x03")
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert (await store.get("/b")).value == b"2"
        assert segment.stat().st_size == good_size
        await store.create("/c", b"3")
    finally:
        await store.close()
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert [kv.key for kv in (await store.range("/")).kvs] == ["/a", "/b", "/c"]
    finally:
        await store.close()


async def test_zero_filled_tail_is_truncated(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    await store.create("/a", b"1")
    await store.close()
    segment = only_segment(tmp_path)
    with open(segment, "ab") as f:
        f.write(b"\x00" * 4096)
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert (await store.get("/a")).value == b"1"
    finally:
        await store.close()


async def test_corruption_in_the_middle_names_file_and_offset(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    for i in range(5):
        await store.create(f"/k{i}", b"value-%d" % i)
    await store.close()
    segment = only_segment(tmp_path)
    data = bytearray(segment.read_bytes())
    # Find the second record and flip a byte of its payload.
    first_len = int.from_bytes(data[0:4], "little")
    second = 12 + first_len
    data[second + 12 + 3] ^= 0xFF
    segment.write_bytes(bytes(data))
    with pytest.raises(WALCorruptError) as err:
        await EmbeddedStore.open(tmp_path)
    assert err.value.path == segment and err.value.offset == second
    assert str(segment) in str(err.value) and f"offset {second}" in str(err.value)
    # The failed open must not have truncated anything or kept the lock.
    assert segment.read_bytes() == bytes(data)
    with pytest.raises(WALCorruptError):
        await EmbeddedStore.open(tmp_path)


async def test_lock_refuses_second_opener_naming_the_pid(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    try:
        with pytest.raises(DataDirLockedError) as err:
            await EmbeddedStore.open(tmp_path)
        assert err.value.holder_pid == os.getpid()
        assert str(os.getpid()) in str(err.value)
        # And from another process, the way users hit it.
        code = textwrap.dedent(
            f"""
            import asyncio
            from minikube_py.storage import EmbeddedStore, DataDirLockedError
            async def main():
                try:
                    await EmbeddedStore.open({str(tmp_path)!r})
                except DataDirLockedError as e:
                    print(e)
            asyncio.run(main())
            """
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        assert f"in use by process {os.getpid()}" in out.stdout, out.stderr
    finally:
        await store.close()
    reopened = await EmbeddedStore.open(tmp_path)  # released on close
    await reopened.close()


async def test_snapshot_truncates_wal_and_restores(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path, snapshot_count=50)
    for i in range(120):
        await store.create(f"/s/{i:04d}", b"v%d" % i)
    await asyncio.sleep(0.2)  # let the background snapshot finish
    assert store.snapshots_written >= 1, "snapshot_count records trigger a snapshot"
    await store.snapshot()
    lease = await store.grant_lease(100)
    await store.create("/s/leased", b"l", lease=lease)
    revision = await store.current_revision()
    await store.close()
    snapshots = list_snapshots(tmp_path / "snap")
    segments = list_segments(tmp_path / "wal")
    assert len(snapshots) == 1, "older snapshots are deleted"
    assert all(seq >= snapshots[0][0] for seq, _ in segments), "covered WAL segments are deleted"

    store = await EmbeddedStore.open(tmp_path, snapshot_count=50)
    try:
        assert await store.current_revision() == revision
        assert len((await store.range("/s/")).kvs) == 121
        assert (await store.lease_info(lease)).keys == ("/s/leased",)
        # History before the snapshot is gone after a restart; the compaction point says so.
        assert await store.compact_revision() >= snapshots[0][0]
    finally:
        await store.close()


async def test_group_commit_shares_fsyncs(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    try:
        rounds_before = metrics.WAL_FSYNC_SECONDS._sum.get(), _count(metrics.WAL_FSYNC_SECONDS)
        await asyncio.gather(*(store.create(f"/g/{i}", b"x" * 1024) for i in range(500)))
        fsyncs = _count(metrics.WAL_FSYNC_SECONDS) - rounds_before[1]
        assert 1 <= fsyncs < 100, f"{fsyncs} fsyncs for 500 concurrent writes"
    finally:
        await store.close()


def _count(histogram) -> float:
    for metric in histogram.collect():
        for sample in metric.samples:
            if sample.name.endswith("_count"):
                return sample.value
    return 0.0


async def test_slow_watcher_catches_up_from_history(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path, fsync=False, watch_buffer_size=16)
    try:
        watch = await store.watch("/q/")
        kvs = [await store.create(f"/q/{i:03d}", b"v") for i in range(200)]
        # The consumer never read while 200 events arrived into a 16-slot buffer; it still
        # gets all of them, in order, once it reads.
        seen = []
        async with asyncio.timeout(5):
            while len(seen) < 200:
                seen.extend(await watch.next_batch())
        assert [e.kv for e in seen] == kvs
        kv = await store.create("/q/live", b"v")
        assert [e.kv for e in await asyncio.wait_for(watch.next_batch(), 5)] == [kv]
        await watch.cancel()
    finally:
        await store.close()


async def test_stalled_watcher_is_cancelled_without_blocking_writers(tmp_path: Path):
    store = await EmbeddedStore.open(
        tmp_path, fsync=False, watch_buffer_size=8, watch_stall_timeout=0.3
    )
    try:
        stalled = await store.watch("/q/")
        healthy = await store.watch("/q/")
        received = []

        async def drain():
            while len(received) < 100:
                received.extend(await healthy.next_batch())

        consumer = asyncio.create_task(drain())
        for i in range(100):
            await store.create(f"/q/{i:03d}", b"v")
        await asyncio.wait_for(consumer, 5)
        assert len(received) == 100
        await asyncio.sleep(1.5)
        with pytest.raises(WatchCancelledError):
            async with asyncio.timeout(5):
                while True:
                    await stalled.next_batch()
    finally:
        await store.close()


async def test_history_window_compacts_lagging_watchers(tmp_path: Path):
    store = await EmbeddedStore.open(
        tmp_path, fsync=False, history_max_events=50, watch_buffer_size=4
    )
    try:
        lagging = await store.watch("/h/")
        first = await store.create("/h/0", b"v")
        for i in range(1, 200):
            await store.create(f"/h/{i}", b"v")
        assert await store.compact_revision() > first.mod_revision
        with pytest.raises(CompactedError):
            async with asyncio.timeout(5):
                while True:
                    await lagging.next_batch()
        with pytest.raises(CompactedError):
            await store.watch("/h/", start_revision=first.mod_revision)
    finally:
        await store.close()


async def test_periodic_compaction_keeps_one_interval_of_history(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path, fsync=False, compaction_interval=0.2)
    try:
        first = await store.create("/p/a", b"1")
        await asyncio.sleep(0.5)
        await store.create("/p/b", b"1")
        await asyncio.sleep(0.5)
        assert await store.compact_revision() >= first.mod_revision
    finally:
        await store.close()


async def test_lease_expiry_survives_restart(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path, fsync=False)
    lease = await store.grant_lease(1)
    await store.create("/e/a", b"1", lease=lease)
    await store.close()
    store = await EmbeddedStore.open(tmp_path, fsync=False)
    try:
        watch = await store.watch("/e/")
        events = await asyncio.wait_for(watch.next_batch(), 5)
        assert events[0].type is EventType.DELETE and events[0].kv.key == "/e/a"
    finally:
        await store.close()


async def test_cancelled_writer_does_not_disturb_its_round(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path)
    try:
        tasks = [asyncio.create_task(store.create(f"/c/{i:02d}", b"v")) for i in range(20)]
        await asyncio.sleep(0)  # every writer has applied its write and waits for the fsync
        tasks[3].cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(results[3], asyncio.CancelledError)
        assert all(not isinstance(r, BaseException) for i, r in enumerate(results) if i != 3)
        # The cancelled caller only stopped waiting: its write was applied and made durable
        # with the round, never half-done.
        assert (await store.get("/c/03")).value == b"v"
    finally:
        await store.close()
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert len((await store.range("/c/")).kvs) == 20
    finally:
        await store.close()


async def test_close_is_prompt_right_after_a_lease_grant(tmp_path: Path):
    # Regression: the lease-expiry loop used asyncio.wait_for, which on Python 3.11 swallows a
    # cancellation arriving in the same tick as its wakeup; close() then hung until the lease
    # expired.
    store = await EmbeddedStore.open(tmp_path)
    await store.grant_lease(30)
    await asyncio.wait_for(store.close(), 2)


async def test_metrics_reflect_the_store_from_open(tmp_path: Path):
    from prometheus_client import REGISTRY

    store = await EmbeddedStore.open(tmp_path)
    await store.create("/m/a", b"1")
    await store.close()
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert REGISTRY.get_sample_value("minikube_storage_revision") == 2
        assert REGISTRY.get_sample_value("minikube_storage_keys") == 1
        before = REGISTRY.get_sample_value("minikube_storage_writes_total", {"operation": "create"})
        await store.create("/m/b", b"1")
        after = REGISTRY.get_sample_value("minikube_storage_writes_total", {"operation": "create"})
        assert after == before + 1
    finally:
        await store.close()


async def test_failed_background_snapshot_is_logged_and_data_stays(tmp_path: Path, monkeypatch):
    from structlog.testing import capture_logs

    from minikube_py.storage import embedded

    async def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(embedded, "write_snapshot", disk_full)
    store = await EmbeddedStore.open(tmp_path, snapshot_count=10)
    try:
        with capture_logs() as logs:
            for i in range(15):
                await store.create(f"/f/{i:02d}", b"v")
            await asyncio.sleep(0.1)
        assert any(e["event"] == "store.snapshot_failed" for e in logs), logs
        await store.create("/f/after", b"v")  # the store keeps working
    finally:
        await store.close()
    monkeypatch.undo()
    store = await EmbeddedStore.open(tmp_path)
    try:
        assert len((await store.range("/f/")).kvs) == 16, "the WAL still held everything"
    finally:
        await store.close()
