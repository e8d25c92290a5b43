"""Freed heap memory goes back to the OS (minikube_py/memtrim.py): glibc keeps freed chunks
until malloc_trim, and a compaction of the store asks the process's trimmer for one."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from minikube_py import memtrim
from minikube_py.storage import EmbeddedStore

pytestmark = pytest.mark.skipif(not memtrim.available(),
                                reason="malloc_trim is glibc's: nothing to test on this libc")


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_trim_returns_freed_chunks_that_glibc_keeps() -> None:
    # 60 MiB of 3 KB values (glibc's, not pymalloc's), one in 16 kept: the free chunks
    # between them cannot shrink the heap from its top, so only a trim returns them
    blocks = [bytes(3000) + i.to_bytes(4, "little") for i in range(20_000)]
    keep = blocks[::16]
    del blocks
    gc.collect()
    before = rss()
    assert memtrim.trim() is True
    assert before - rss() > 30 * 2**20
    assert len(keep) == 1250


async def test_a_compaction_asks_the_running_trimmer_for_a_trim(tmp_path: Path) -> None:
    trimmer = memtrim.MemoryTrimmer(interval=3600, request_delay=0.01)
    trimmer.start()
    store = await EmbeddedStore.open(tmp_path / "data", compaction_interval=0)
    try:
        kv = await store.create("/k", b"v")
        await store.update("/k", b"w", expected_mod_revision=None)
        await asyncio.sleep(0.1)
        assert trimmer.trims == 0, "nothing asked for a trim yet"
        await store.compact(kv.mod_revision + 1)
        async with asyncio.timeout(5):
            while trimmer.trims == 0:
                await asyncio.sleep(0.01)
    finally:
        await store.close()
        await trimmer.stop()
    memtrim.request()  # stopped: no trimmer to ask, and no error
    assert memtrim._current is None


async def test_the_trimmer_trims_periodically() -> None:
    trimmer = memtrim.MemoryTrimmer(interval=0.05)
    trimmer.start()
    try:
        async with asyncio.timeout(5):
            while trimmer.trims < 2:
                await asyncio.sleep(0.02)
    finally:
        await trimmer.stop()
