"""CachingStore's read rules (storage/remote/cached.py): consistent reads from the copy once it
has the revision the store published, the store after the timeout, paged and past reads always
from the store; and the transport's own failure modes (storage/remote/client.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minikube_py.storage import KeyNotFoundError, UnavailableError
from minikube_py.storage.remote import CachingStore, RemoteStore, RevisionBoard
from tests.storage_remote.conftest import Served


async def cached(served: Served, **options) -> CachingStore:
    store = CachingStore(await RemoteStore.connect(served.server.path),
                         RevisionBoard(served.board_path), **options)
    await store.start()
    return store


async def test_a_write_through_another_connection_is_read_from_the_copy_at_once(served):
    writer = await RemoteStore.connect(served.server.path)  # another API server's connection
    reader = await cached(served)
    try:
        for i in range(100):
            kv = await writer.create(f"/registry/pods/default/p{i}", b"v%d" % i)
            assert await reader.get(kv.key) == kv  # never stale, never missing
            page = await reader.range("/registry/pods/default/")
            assert len(page.kvs) == i + 1 and page.revision >= kv.mod_revision
            await writer.delete(kv.key) if i % 10 == 9 else None
            if i % 10 == 9:
                with pytest.raises(KeyNotFoundError):
                    await reader.get(kv.key)
                await writer.create(kv.key, b"again")
        assert reader.served["store"] == 0 and reader.served["cache"] >= 200
    finally:
        await writer.close()
        await reader.close()


async def test_a_copy_that_cannot_catch_up_reads_from_the_store(served):
    reader = await cached(served, fresh_timeout=0.1)
    try:
        kv = await served.store.create("/k", b"v")  # not through the PublishingStore
        RevisionBoard(served.board_path).publish(kv.mod_revision + 1000)  # never reached
        assert await reader.get("/k") == kv
        assert reader.served == {"cache": 0, "store": 1}
    finally:
        await reader.close()


async def test_paged_and_past_reads_go_to_the_store(served):
    reader = await cached(served)
    try:
        first = await reader.create("/p/a", b"1")
        await reader.create("/p/b", b"2")
        page = await reader.range("/p/", limit=1)
        assert [kv.key for kv in page.kvs] == ["/p/a"] and page.more
        assert await reader.get("/p/a", revision=first.mod_revision) == first
        assert reader.served == {"cache": 0, "store": 2}
    finally:
        await reader.close()


async def test_a_lost_store_fails_calls_and_ends_watches(served):
    store = await RemoteStore.connect(served.server.path)
    watch = await store.watch("/w/")
    await served.server.stop()  # the store's process went away
    with pytest.raises(UnavailableError):
        await watch.next_batch()
    with pytest.raises(UnavailableError):
        await store.get("/w/a")
    await store.close()


async def test_no_store_at_the_path_is_unavailable(tmp_path: Path):
    with pytest.raises(UnavailableError, match="cannot reach the store"):
        await RemoteStore.connect(tmp_path / "nothing.sock", timeout=1)


async def test_a_store_that_does_not_answer_times_out(tmp_path: Path):
    silent = await asyncio.start_unix_server(lambda r, w: None, str(tmp_path / "s.sock"))
    store = await RemoteStore.connect(tmp_path / "s.sock", call_timeout=0.2)
    try:
        with pytest.raises(UnavailableError, match="did not answer get within 0.2 s"):
            await store.get("/k")
    finally:
        await store.close()
        silent.close()
