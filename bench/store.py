"""Store benchmark: one workload, two backends, through the Store contract.

Runs the same workloads against
  (a) the embedded MVCC store (durable: fsync on, in a temporary directory on the real disk), and
  (b) a Debian etcd started by the benchmark on free loopback ports, through EtcdStore,
in the same run, then prints a table (median of --runs runs, individual runs in brackets, ratio
embedded/etcd, target verdicts) and writes JSON (default bench/results/store.json).

    /tmp/devvenv/bin/python -m bench.store            # full run (a few minutes)
    /tmp/devvenv/bin/python -m bench.store --quick    # smoke run, < 30 s
    /tmp/devvenv/bin/python bench/store.py --no-etcd --only get,range_1000

Workloads (JSON names):
  put_sequential       one writer, durable creates of 1 KiB values: ops/s, p50/p99 latency
  put_concurrent_64    64 tasks creating 1 KiB values: ops/s, p50/p99 latency
  get                  sequential gets of existing keys by one task: ops/s
  range_1000           range over a prefix holding exactly 1000 keys of 1 KiB among others
  watch_one_watcher    (a) catch-up: a watch from an old revision replays N historical events;
                       (b) live: events delivered while 64 writers write (bounded by the
                       durable write rate, which is reported next to it)
  watch_1000_watchers  W watchers on one prefix, then a burst of M concurrent writes; every
                       watcher must get every event exactly once, in order (`lost` = missing)
  reopen_100k          restart with 100k keys: embedded = EmbeddedStore.open() of a snapshot
                       plus 10k WAL records; etcd = process start until the first read answers

Fairness notes: both backends make every write durable (etcd fsyncs its WAL, the embedded store
fsyncs its own with group commit). etcd runs on the same 2 cores as the benchmark process and
each etcd request is a gRPC round trip, which is the point of the comparison. Embedded stores
are opened with compaction_interval=0 (the test etcd has no auto-compaction either) and, for the
watch workloads, with an event history large enough to hold the replayed events.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import common  # noqa: E402
from minikube_py.storage.embedded import EmbeddedStore  # noqa: E402
from minikube_py.storage.errors import StorageError  # noqa: E402

pc = time.perf_counter

#: One 1 KiB value for every write (random, so nothing along the way can compress it).
VALUE = random.Random(1).randbytes(1024)
WRITERS = 64

# ------------------------------------------------------------------------------ sizes
# A value that is a dict is per backend ({"embedded": ..., "etcd": ...}); everything else is
# shared. Per-backend counts only where etcd would take minutes at the embedded size (reads
# that are round trips, watch fan-out); every figure is a rate or a latency, and the JSON
# records the sizes used.

FULL: dict[str, dict[str, Any]] = {
    "put_sequential": {"n": 2000},
    "put_concurrent_64": {"n": 20_000, "tasks": WRITERS},
    "get": {"keys": 10_000, "n": {"embedded": 300_000, "etcd": 5_000}},
    "range_1000": {"target": 1000, "others": 9000, "n": {"embedded": 500, "etcd": 100}},
    "watch_one_watcher": {
        "catchup": 100_000,
        "keys": 1000,
        "live": {"embedded": 30_000, "etcd": 10_000},
        "writers": WRITERS,
    },
    "watch_1000_watchers": {
        "watchers": {"embedded": 1000, "etcd": 1000},
        "writes": {"embedded": 10_000, "etcd": 1000},
        "writers": WRITERS,
    },
    "reopen_100k": {"keys": 100_000, "updates": 10_000},
}

QUICK: dict[str, dict[str, Any]] = {
    "put_sequential": {"n": 200},
    "put_concurrent_64": {"n": 1280, "tasks": WRITERS},
    "get": {"keys": 1000, "n": {"embedded": 20_000, "etcd": 300}},
    "range_1000": {"target": 1000, "others": 1000, "n": {"embedded": 50, "etcd": 10}},
    "watch_one_watcher": {
        "catchup": 5000,
        "keys": 500,
        "live": {"embedded": 2000, "etcd": 500},
        "writers": WRITERS,
    },
    "watch_1000_watchers": {
        "watchers": {"embedded": 1000, "etcd": 50},
        "writes": {"embedded": 1000, "etcd": 200},
        "writers": WRITERS,
    },
    "reopen_100k": {"keys": 5000, "updates": 500},
}


def sizes_for(sizes: dict[str, Any], backend: str) -> dict[str, Any]:
    return {k: (v[backend] if isinstance(v, dict) else v) for k, v in sizes.items()}


# ---------------------------------------------------------------------------- backends


class EmbeddedBackend:
    """Fresh durable EmbeddedStores in directories under `root`."""

    name = "embedded"

    def __init__(self, root: Path) -> None:
        self.root = root / "embedded"

    async def begin(self, workload: str) -> None:
        self.dir = self.root / workload
        self.dir.mkdir(parents=True, exist_ok=True)

    async def end(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    async def open(self, tag: str, **options: Any) -> Any:
        options.setdefault("compaction_interval", 0)
        return await EmbeddedStore.open(self.dir / tag, fsync=True, **options)


class EtcdBackend:
    """One fresh etcd per workload (so no workload pays for another's database); a store per
    run is an EtcdStore with its own key prefix."""

    name = "etcd"

    def __init__(self, root: Path) -> None:
        from minikube_py.storage.etcd_backend import EtcdStore
        from tests import etcd_server

        self.EtcdStore = EtcdStore
        self.etcd_server = etcd_server
        self.root = root / "etcd"
        self.server = None
        self.version = _etcd_version(etcd_server.etcd_binary())

    async def begin(self, workload: str) -> None:
        self.dir = self.root / workload
        if workload == "reopen_100k":
            return  # manages its own server
        self.server = await asyncio.to_thread(self.etcd_server.start_single, self.dir)

    async def end(self) -> None:
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)
            self.server = None
        shutil.rmtree(self.dir, ignore_errors=True)

    async def open(self, tag: str, **_embedded_only: Any) -> Any:
        return await self.EtcdStore.connect([self.server.endpoint], key_prefix=f"/{tag}")


def _etcd_version(binary: str | None) -> str | None:
    if binary is None:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.splitlines()[0].split(":", 1)[1].strip()
    except Exception:  # noqa: BLE001 - informational only
        return None


# ------------------------------------------------------------------------------ helpers


async def fill(
    store: Any,
    keys: list[str],
    *,
    writers: int = WRITERS,
    update: bool = False,
    latencies: list[float] | None = None,
) -> int:
    """Write VALUE to every key with `writers` concurrent tasks (creates, or blind updates);
    returns the highest revision written. Keys are handed out in order from one iterator."""
    it = iter(keys)
    highest = 0

    async def worker() -> None:
        nonlocal highest
        for key in it:
            started = pc()
            if update:
                kv = await store.update(key, VALUE, expected_mod_revision=None)
            else:
                kv = await store.create(key, VALUE)
            if latencies is not None:
                latencies.append(pc() - started)
            if kv.mod_revision > highest:
                highest = kv.mod_revision

    await asyncio.gather(*(worker() for _ in range(max(1, min(writers, len(keys))))))
    return highest


class Tally:
    """What one watcher received, checked against the expected revisions first..first+n-1
    (every write in these workloads takes exactly one revision and produces one event).

    An event counts once if its revision is above the last one seen; one at or below it is
    out of order / a duplicate. lost = expected - counted."""

    __slots__ = ("first", "end", "expected", "last", "unique", "disorder", "unexpected", "done_at", "error")

    def __init__(self, first: int, expected: int) -> None:
        self.first = first
        self.end = first + expected - 1
        self.expected = expected
        self.last = first - 1
        self.unique = 0
        self.disorder = 0
        self.unexpected = 0
        self.done_at: float | None = None
        self.error: str | None = None

    def feed(self, batch: list) -> None:
        n = len(batch)
        start = self.last + 1
        stop = start + n
        # Fast path: the batch is exactly the next n revisions.
        if stop - 1 <= self.end and [ev.kv.mod_revision for ev in batch] == list(range(start, stop)):
            self.last = stop - 1
            self.unique += n
            return
        for ev in batch:
            rev = ev.kv.mod_revision
            if rev <= self.last:
                self.disorder += 1
                continue
            self.last = rev
            if self.first <= rev <= self.end:
                self.unique += 1
            else:
                self.unexpected += 1

    @property
    def complete(self) -> bool:
        return self.unique >= self.expected

    @property
    def lost(self) -> int:
        return self.expected - self.unique


async def consume(watch: Any, tally: Tally) -> None:
    """Take batches until the tally is complete (or the watch ends); stamps done_at."""
    try:
        while not tally.complete:
            batch = await watch.next_batch()
            if not batch:
                break
            tally.feed(batch)
    except StorageError as exc:
        tally.error = f"{type(exc).__name__}: {exc}"
    finally:
        tally.done_at = pc()


def summed_check(tallies: list[Tally]) -> dict[str, Any]:
    errors = sorted({t.error for t in tallies if t.error})
    return {
        "lost": sum(t.lost for t in tallies),
        "out_of_order": sum(t.disorder for t in tallies),
        "unexpected": sum(t.unexpected for t in tallies),
        "watch_errors": len([t for t in tallies if t.error]),
        **({"errors": errors[:3]} if errors else {}),
    }


# ---------------------------------------------------------------------------- workloads


async def wl_put_sequential(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    n = sz["n"]

    async def one(i: int) -> dict:
        store = await backend.open(f"putseq{i}")
        try:
            await fill(store, [f"/warm/{j}" for j in range(50)], writers=1)
            keys = [f"/bench/seq/{j:08d}" for j in range(n)]
            latencies = []
            create = store.create
            started = pc()
            for key in keys:
                t = pc()
                await create(key, VALUE)
                latencies.append(pc() - t)
            elapsed = pc() - started
        finally:
            await store.close()
        return {"ops_per_s": n / elapsed, **common.latency_summary(latencies), "seconds": elapsed}

    return {"runs": await common.repeat(runs, one)}


async def wl_put_concurrent(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    n, tasks = sz["n"], sz["tasks"]

    async def one(i: int) -> dict:
        store = await backend.open(f"putconc{i}")
        try:
            await fill(store, [f"/warm/{j}" for j in range(tasks * 2)], writers=tasks)
            keys = [f"/bench/conc/{j:08d}" for j in range(n)]
            latencies: list[float] = []
            started = pc()
            await fill(store, keys, writers=tasks, latencies=latencies)
            elapsed = pc() - started
        finally:
            await store.close()
        return {"ops_per_s": n / elapsed, **common.latency_summary(latencies), "seconds": elapsed}

    return {"runs": await common.repeat(runs, one)}


async def wl_get(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    nkeys, n = sz["keys"], sz["n"]
    store = await backend.open("get")
    try:
        keys = [f"/bench/get/{j:08d}" for j in range(nkeys)]
        await fill(store, keys)
        for key in keys[:1000]:  # warm-up
            await store.get(key)

        async def one(i: int) -> dict:
            rng = random.Random(i)
            order = [keys[rng.randrange(nkeys)] for _ in range(n)]
            get = store.get
            started = pc()
            for key in order:
                await get(key)
            elapsed = pc() - started
            kv = await store.get(order[-1])
            assert kv.value == VALUE, "get returned a wrong value"
            return {"ops_per_s": n / elapsed, "us_per_op": elapsed / n * 1e6, "seconds": elapsed}

        return {"runs": await common.repeat(runs, one)}
    finally:
        await store.close()


async def wl_range(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    target, others, n = sz["target"], sz["others"], sz["n"]
    store = await backend.open("range")
    try:
        before = [f"/bench/range/a/{j:06d}" for j in range(others // 2)]
        inside = [f"/bench/range/m/{j:06d}" for j in range(target)]
        after = [f"/bench/range/z/{j:06d}" for j in range(others - others // 2)]
        # Also keys that share a textual prefix with the target but are outside it.
        near = ["/bench/range/m", "/bench/range/m0", "/bench/range/n/x"]
        everything = before + inside + after + near
        random.Random(7).shuffle(everything)
        await fill(store, everything)
        prefix = "/bench/range/m/"
        for _ in range(5):  # warm-up
            await store.range(prefix)

        async def one(i: int) -> dict:
            latencies = []
            rng = store.range
            started = pc()
            for _ in range(n):
                t = pc()
                result = await rng(prefix)
                latencies.append(pc() - t)
                if len(result.kvs) != target or result.more:
                    raise AssertionError(f"range returned {len(result.kvs)} keys, more={result.more}")
            elapsed = pc() - started
            return {
                "median_ms": common.percentile(latencies, 50) * 1e3,
                "p99_ms": common.percentile(latencies, 99) * 1e3,
                "ranges_per_s": n / elapsed,
                "keys_per_s": n * target / elapsed,
            }

        return {"runs": await common.repeat(runs, one)}
    finally:
        await store.close()


async def wl_watch_one(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    """Catch-up runs first (read-only over the same history), then live runs."""
    n, nkeys, live_n, writers = sz["catchup"], sz["keys"], sz["live"], sz["writers"]
    store = await backend.open("watch1", history_max_events=n + runs * live_n + 10_000)
    try:
        prefix = "/bench/watch1/hist/"
        keys = [f"{prefix}{j:05d}" for j in range(nkeys)]
        first = await store.current_revision() + 1
        setup = pc()
        await fill(store, keys, writers=writers)
        await fill(store, [keys[j % nkeys] for j in range(n - nkeys)], writers=writers, update=True)
        setup = pc() - setup
        last = await store.current_revision()
        if last != first + n - 1:
            raise AssertionError(f"history is revisions {first}..{last}, expected {n} events")

        async def catch_up(i: int) -> dict:
            tally = Tally(first, n)
            started = pc()
            watch = await store.watch(prefix, start_revision=first)
            try:
                await asyncio.wait_for(consume(watch, tally), timeout)
            except asyncio.TimeoutError:
                tally.error = f"timeout after {timeout:g} s"
            finally:
                await watch.cancel()
            elapsed = tally.done_at - started
            return {
                "catchup_events_per_s": tally.unique / elapsed,
                "catchup_s": elapsed,
                **{f"catchup_{k}": v for k, v in summed_check([tally]).items()},
            }

        async def live(i: int) -> dict:
            live_prefix = f"/bench/watch1/live{i}/"
            watch = await store.watch(live_prefix)
            tally = Tally(await store.current_revision() + 1, live_n)
            consumer = asyncio.create_task(consume(watch, tally))
            await asyncio.sleep(0)
            keys = [f"{live_prefix}{j:06d}" for j in range(live_n)]
            started = pc()
            await fill(store, keys, writers=writers)
            written = pc()
            try:
                await asyncio.wait_for(asyncio.shield(consumer), timeout)
            except asyncio.TimeoutError:
                consumer.cancel()
                tally.error = f"timeout after {timeout:g} s"
            await watch.cancel()
            delivered = tally.done_at - started
            return {
                "live_events_per_s": tally.unique / delivered,
                "live_write_ops_per_s": live_n / (written - started),
                "live_delivered_vs_written": (tally.unique / delivered) / (live_n / (written - started)),
                "live_lag_ms": (tally.done_at - written) * 1e3,
                **{f"live_{k}": v for k, v in summed_check([tally]).items()},
            }

        catch_runs = await common.repeat(runs, catch_up)
        live_runs = await common.repeat(runs, live)
        merged = [{**c, **l} for c, l in zip(catch_runs, live_runs)]
        return {"runs": merged, "setup": {"history_events": n, "history_write_s": setup}}
    finally:
        await store.close()


async def wl_watch_many(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    nwatch, nwrites, writers = sz["watchers"], sz["writes"], sz["writers"]

    async def one(i: int) -> dict:
        store = await backend.open(f"watchmany{i}")
        watches: list[Any] = []
        consumers: list[asyncio.Task] = []
        try:
            await fill(store, [f"/warm/{j}" for j in range(writers)], writers=writers)
            prefix = "/bench/watchmany/"
            started = pc()
            for lo in range(0, nwatch, 100):
                batch = range(lo, min(nwatch, lo + 100))
                watches += await asyncio.gather(*(store.watch(prefix) for _ in batch))
            setup = pc() - started
            first = await store.current_revision() + 1
            tallies = [Tally(first, nwrites) for _ in watches]
            consumers = [asyncio.create_task(consume(w, t)) for w, t in zip(watches, tallies)]
            await asyncio.sleep(0)
            keys = [f"{prefix}{j:06d}" for j in range(nwrites)]
            started = pc()
            await fill(store, keys, writers=writers)
            written = pc()
            done, pending = await asyncio.wait(consumers, timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
            timed_out = bool(pending)
            finished = max(t.done_at for t in tallies)
            all_s = math.nan if timed_out else finished - started
            delivered = sum(t.unique for t in tallies)
            return {
                "watchers": nwatch,
                "writes": nwrites,
                **summed_check(tallies),
                "all_delivered_s": all_s,
                "events_per_s": delivered / (finished - started),
                "write_ops_per_s": nwrites / (written - started),
                "lag_after_last_write_ms": (finished - written) * 1e3,
                "watch_setup_s": setup,
                "timed_out": timed_out,
            }
        finally:
            for task in consumers:
                task.cancel()
            await asyncio.gather(*(w.cancel() for w in watches), return_exceptions=True)
            await store.close()

    return {"runs": await common.repeat(runs, one)}


async def wl_reopen(backend: Any, sz: dict, runs: int, timeout: float) -> dict:
    if isinstance(backend, EmbeddedBackend):
        return await reopen_embedded(backend, sz, runs)
    return await reopen_etcd(backend, sz, runs, timeout)


def _reopen_keys(sz: dict) -> tuple[list[str], list[str]]:
    keys = [f"/bench/reopen/{j:07d}" for j in range(sz["keys"])]
    updates = random.Random(3).sample(keys, sz["updates"])
    return keys, updates


async def reopen_embedded(backend: EmbeddedBackend, sz: dict, runs: int) -> dict:
    keys, updates = _reopen_keys(sz)
    path = backend.dir / "reopen"
    setup = pc()
    # No automatic snapshots while filling: exactly one snapshot (forced) + the updates' WAL.
    store = await EmbeddedStore.open(path, fsync=True, compaction_interval=0, snapshot_count=10**9)
    try:
        await fill(store, keys)
        await store.snapshot()
        await fill(store, updates, update=True)
        revision = await store.current_revision()
    finally:
        await store.close()
    setup = pc() - setup
    snap_bytes = common.dir_bytes(path / "snap") if (path / "snap").exists() else None
    wal_bytes = common.dir_bytes(path / "wal") if (path / "wal").exists() else None

    async def one(i: int) -> dict:
        started = pc()
        store = await EmbeddedStore.open(path, fsync=True, compaction_interval=0)
        opened = pc()
        try:
            kv = await store.get(keys[-1])
            read = pc()
            assert kv.value == VALUE
            assert await store.current_revision() == revision, "reopened at another revision"
            page = await store.range("/bench/reopen/", limit=1)
            assert len(page.kvs) + page.remaining == len(keys), "reopened with missing keys"
        finally:
            await store.close()
        return {"open_s": opened - started, "first_read_s": read - started}

    result = await common.repeat(runs, one)
    return {
        "runs": result,
        "setup": {
            "keys": len(keys),
            "wal_updates_after_snapshot": len(updates),
            "snapshot_bytes": snap_bytes,
            "wal_bytes": wal_bytes,
            "fill_s": setup,
            "page_cache": "warm (files just written/read)",
        },
    }


async def reopen_etcd(backend: EtcdBackend, sz: dict, runs: int, timeout: float) -> dict:
    keys, updates = _reopen_keys(sz)
    EtcdStore = backend.EtcdStore
    server = backend.etcd_server.EtcdServer(backend.dir)
    backend.server = server  # so end() stops it whatever happens
    setup = pc()
    await asyncio.to_thread(server.start)
    store = await EtcdStore.connect([server.endpoint], key_prefix="/reopen")
    try:
        await fill(store, keys)
        await fill(store, updates, update=True)
    finally:
        await store.close()
    await asyncio.to_thread(server.stop)
    setup = pc() - setup
    member = server.data_dir / f"{server.name}.etcd" / "member"

    async def one(i: int) -> dict:
        started = pc()
        server.start(wait=False)
        attempts = 0
        try:
            # /health answers once etcd serves (the request is held until then, or fails
            # fast), so polling it every ~5 ms finds the ready moment without the gRPC
            # channel's reconnect backoff inflating the figure; then the real read.
            while not await asyncio.to_thread(server.healthy):
                if not server.running:
                    raise RuntimeError(f"etcd exited:\n{server.log_tail()}")
                if pc() - started > timeout:
                    raise TimeoutError("etcd did not become healthy")
                await asyncio.sleep(0.005)
            healthy = pc()
            while True:
                attempts += 1
                try:
                    st = await EtcdStore.connect(
                        [server.endpoint], key_prefix="/reopen", timeout=0.5, retry_timeout=0.5
                    )
                except StorageError:
                    if pc() - started > timeout:
                        raise
                    await asyncio.sleep(0.005)
                    continue
                try:
                    kv = await st.get(keys[-1])
                    read = pc()
                    break
                except StorageError:
                    if pc() - started > timeout:
                        raise
                finally:
                    await st.close()
            assert kv.value == VALUE
        finally:
            await asyncio.to_thread(server.stop)
        return {"first_read_s": read - started, "health_ok_s": healthy - started, "connect_attempts": attempts}

    result = await common.repeat(runs, one)
    return {
        "runs": result,
        "setup": {
            "keys": len(keys),
            "updates": len(updates),
            "db_bytes": common.dir_bytes(member / "snap") if member.exists() else None,
            "wal_bytes": common.dir_bytes(member / "wal") if member.exists() else None,
            "fill_s": setup,
            "measures": "etcd process start -> first successful EtcdStore.get (exec, bbolt open, "
            "WAL replay, raft election, gRPC connect); readiness found by polling /health every ~5 ms",
        },
    }


@dataclass
class Workload:
    name: str
    fn: Callable[..., Awaitable[dict]]
    description: str


WORKLOADS = [
    Workload("put_sequential", wl_put_sequential, "1 writer, durable creates, 1 KiB"),
    Workload("put_concurrent_64", wl_put_concurrent, "64 tasks, durable creates, 1 KiB"),
    Workload("get", wl_get, "sequential gets of existing keys, 1 task"),
    Workload("range_1000", wl_range, "range of a prefix with exactly 1000 keys of 1 KiB"),
    Workload("watch_one_watcher", wl_watch_one, "1 watcher: catch-up replay, live"),
    Workload("watch_1000_watchers", wl_watch_many, "N watchers on one prefix, write burst"),
    Workload("reopen_100k", wl_reopen, "restart with 100k keys of 1 KiB"),
]

# ---------------------------------------------------------------------------- reporting


@dataclass
class Row:
    workload: str
    metric: str
    label: str
    lower_is_better: bool = False
    target: tuple[str, str, float] | None = None  # (who, op, value); who = embedded|etcd|both|ratio
    target_note: str = ""
    ratio: bool = True  # a ratio is meaningful (same sizes, or a rate)


ROWS = [
    Row("put_sequential", "ops_per_s", "ops/s"),
    Row("put_sequential", "p50_ms", "p50 ms", lower_is_better=True),
    Row("put_sequential", "p99_ms", "p99 ms", lower_is_better=True),
    Row("put_concurrent_64", "ops_per_s", "ops/s", target=("ratio", ">=", 5.0)),
    Row("put_concurrent_64", "p50_ms", "p50 ms", lower_is_better=True),
    Row("put_concurrent_64", "p99_ms", "p99 ms", lower_is_better=True),
    Row("get", "ops_per_s", "ops/s", target=("embedded", ">=", 200_000)),
    Row("range_1000", "median_ms", "median ms/range", lower_is_better=True, target=("embedded", "<=", 1.0)),
    Row("range_1000", "p99_ms", "p99 ms/range", lower_is_better=True),
    Row("range_1000", "keys_per_s", "keys/s returned"),
    Row("watch_one_watcher", "catchup_events_per_s", "catch-up events/s", target=("embedded", ">=", 100_000)),
    Row("watch_one_watcher", "catchup_lost", "catch-up lost", target=("both", "==", 0), ratio=False),
    Row(
        "watch_one_watcher",
        "live_events_per_s",
        "live delivered events/s",
        target=("embedded", ">=", 100_000),
        target_note="bounded by the durable write rate (next row)",
    ),
    Row("watch_one_watcher", "live_write_ops_per_s", "live write ops/s (64 writers)"),
    Row("watch_one_watcher", "live_delivered_vs_written", "live delivered rate / write rate", ratio=False),
    Row("watch_one_watcher", "live_lag_ms", "live: last event minus last write ack, ms (<0: event first)", lower_is_better=True, ratio=False),
    Row("watch_one_watcher", "live_lost", "live lost", target=("both", "==", 0), ratio=False),
    Row("watch_1000_watchers", "watchers", "watchers", ratio=False),
    Row("watch_1000_watchers", "writes", "writes in burst", ratio=False),
    Row("watch_1000_watchers", "lost", "lost events (all watchers)", target=("both", "==", 0), ratio=False),
    Row("watch_1000_watchers", "out_of_order", "out-of-order/duplicate events", target=("both", "==", 0), ratio=False),
    Row("watch_1000_watchers", "all_delivered_s", "s until all watchers have all", lower_is_better=True, ratio=False),
    Row("watch_1000_watchers", "events_per_s", "delivered events/s (all watchers)"),
    Row("watch_1000_watchers", "write_ops_per_s", "burst write ops/s"),
    Row("watch_1000_watchers", "lag_after_last_write_ms", "last delivery minus last write ack, ms", lower_is_better=True, ratio=False),
    Row("reopen_100k", "open_s", "embedded: EmbeddedStore.open() s", lower_is_better=True, target=("embedded", "<=", 1.5), ratio=False),
    Row("reopen_100k", "first_read_s", "start -> first read s (etcd: process start)", lower_is_better=True),
    Row("reopen_100k", "health_ok_s", "etcd: process start -> /health ok s", lower_is_better=True, ratio=False),
]


def _cmp(value: float, op: str, bound: float) -> bool:
    return {">=": value >= bound, "<=": value <= bound, "==": value == bound}[op]


def evaluate_target(row: Row, emb: Any, etcd: Any, ratio: Any) -> tuple[str, str]:
    """(rule text, verdict) for a row with a target."""
    who, op, bound = row.target
    rule = f"{'emb/etcd' if who == 'ratio' else who} {op} {common.fmt(bound)}"
    if row.target_note:
        rule += f" ({row.target_note})"
    if who == "ratio":
        values = [ratio]
    elif who == "both":
        values = [emb, etcd] if etcd is not None else [emb]
    elif who == "embedded":
        values = [emb]
    else:
        values = [etcd]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return rule, "n/a"
    return rule, "MET" if all(_cmp(v, op, bound) for v in values) else "MISSED"


def _cell(entry: dict | None, metric: str) -> tuple[Any, str]:
    if entry is None:
        return None, "-"
    if entry.get("missing"):
        return None, "missing"
    if "error" in entry:
        return None, "error"
    median = entry.get("median", {}).get(metric)
    if median is None:
        return None, "-"
    runs = [r.get(metric) for r in entry.get("runs", [])]
    text = common.fmt(median)
    if len(runs) > 1:
        text += " [" + ", ".join(common.fmt(r) for r in runs) + "]"
    return median, text


def build_table(results: dict[str, Any]) -> tuple[str, list[dict]]:
    headers = ["workload", "metric", "embedded median [runs]", "etcd median [runs]", "emb/etcd", "target", "verdict"]
    rows = []
    verdicts = []
    for row in ROWS:
        wl = results.get(row.workload)
        if wl is None:
            continue
        emb, emb_text = _cell(wl.get("embedded"), row.metric)
        etcd, etcd_text = _cell(wl.get("etcd"), row.metric)
        if emb is None and etcd is None and emb_text == "-" and etcd_text == "-":
            continue
        ratio = None
        ratio_text = "-"
        if row.ratio and isinstance(emb, (int, float)) and isinstance(etcd, (int, float)) and etcd:
            ratio = emb / etcd
            ratio_text = f"{ratio:.3g}x" if ratio < 1000 else f"{ratio:,.0f}x"
        rule, verdict = ("", "")
        if row.target is not None:
            rule, verdict = evaluate_target(row, emb, etcd, ratio)
            if row.metric == "live_events_per_s" and verdict == "MISSED":
                share = (wl.get("embedded") or {}).get("median", {}).get("live_delivered_vs_written")
                if share is not None and share >= 0.95:
                    verdict = "MISSED (write-bound)"
            verdicts.append(
                {"workload": row.workload, "metric": row.metric, "rule": rule, "embedded": emb,
                 "etcd": etcd, "ratio": ratio, "verdict": verdict}
            )
        rows.append([row.workload, row.label, emb_text, etcd_text, ratio_text, rule, verdict])
    return common.render_table(headers, rows), verdicts


def size_notes(results: dict[str, Any]) -> list[str]:
    """Say where the backends ran different sizes, and what the reopen figures measure."""
    notes = []
    for name, wl in results.items():
        emb, etcd = wl.get("embedded") or {}, wl.get("etcd") or {}
        if "params" in emb and "params" in etcd:
            diff = {k: (emb["params"][k], etcd["params"].get(k)) for k in emb["params"]
                    if emb["params"][k] != etcd["params"].get(k)}
            if diff:
                text = ", ".join(f"{k} embedded={common.fmt(a)} etcd={common.fmt(b)}" for k, (a, b) in diff.items())
                notes.append(f"{name}: sizes differ ({text}); compare rates, not totals")
    if "reopen_100k" in results:
        notes.append(
            "reopen_100k: embedded = EmbeddedStore.open() of snapshot + WAL tail (warm page cache); "
            "etcd = process start until the first EtcdStore.get answers (exec, bbolt, WAL replay, "
            "raft election, gRPC connect; readiness polled via /health every ~5 ms, then the read)"
        )
    if "watch_one_watcher" in results:
        notes.append(
            "watch_one_watcher live: delivery can only be as fast as durable writes; "
            "'live delivered rate / write rate' ~1.0 means the watcher kept up"
        )
    return notes


def print_runs(name: str, backend: str, entry: dict) -> None:
    if "error" in entry:
        print(f"    {backend}: ERROR {entry['error']}")
        return
    for i, run in enumerate(entry["runs"], 1):
        items = ", ".join(f"{k}={common.fmt(v)}" for k, v in run.items() if not isinstance(v, list))
        print(f"    {backend} run {i}: {items}")


# --------------------------------------------------------------------------------- main


async def run_all(args: argparse.Namespace, loop_name: str) -> dict[str, Any]:
    sizes = QUICK if args.quick else FULL
    if args.etcd_watchers is not None:
        sizes["watch_1000_watchers"]["watchers"]["etcd"] = args.etcd_watchers
    if args.etcd_watch_writes is not None:
        sizes["watch_1000_watchers"]["writes"]["etcd"] = args.etcd_watch_writes
    selected = [w for w in WORKLOADS if not args.only or w.name in args.only]
    unknown = set(args.only or ()) - {w.name for w in WORKLOADS}
    if unknown:
        raise SystemExit(f"unknown workload(s): {', '.join(sorted(unknown))}")

    workdir = Path(tempfile.mkdtemp(prefix="bench-store-", dir=args.workdir))
    facts = common.machine_facts(loop_name)
    facts["workdir"] = str(workdir)
    facts["workdir_fs"] = _fs_type(workdir)
    facts["git"] = _git_state()
    backends: list[Any] = [EmbeddedBackend(workdir)]
    etcd_missing: str | None = None
    if args.no_etcd:
        etcd_missing = "skipped (--no-etcd)"
    else:
        try:
            etcd = EtcdBackend(workdir)
            if etcd.etcd_server.etcd_binary() is None:
                raise RuntimeError("etcd binary not found")
            backends.append(etcd)
            facts["etcd_version"] = etcd.version
        except Exception as exc:  # noqa: BLE001 - report, never invent
            etcd_missing = f"unavailable: {type(exc).__name__}: {exc}"
    facts["etcd"] = etcd_missing or "Debian etcd on loopback, started by the bench"

    print(f"store benchmark  {'QUICK' if args.quick else 'FULL'}  runs={args.runs}  loop={loop_name}")
    print(
        f"  {facts['date']}  nproc={facts['nproc']}  python={facts['python']}  cpu={facts['cpu_model']}"
        f"  load={facts['loadavg_start']}"
    )
    print(f"  workdir={workdir} ({facts['workdir_fs']})  etcd={facts.get('etcd_version') or etcd_missing}")

    results: dict[str, Any] = {}
    total = pc()
    try:
        for wl in selected:
            results[wl.name] = {"description": wl.description}
            for backend in backends:
                sz = sizes_for(sizes[wl.name], backend.name)
                print(f"  [{wl.name}] {backend.name} {sz} ...", flush=True)
                started = pc()
                entry: dict[str, Any] = {"params": sz}
                try:
                    await backend.begin(wl.name)
                    out = await wl.fn(backend, sz, args.runs, args.timeout)
                    entry["runs"] = out["runs"]
                    entry["median"] = common.aggregate(out["runs"])
                    if "setup" in out:
                        entry["setup"] = out["setup"]
                except Exception as exc:  # noqa: BLE001 - one failure must not hide the rest
                    traceback.print_exc()
                    entry["error"] = f"{type(exc).__name__}: {exc}"
                finally:
                    try:
                        await backend.end()
                    except Exception:  # noqa: BLE001
                        traceback.print_exc()
                entry["wall_s"] = pc() - started
                entry["loadavg_after"] = common.loadavg()
                results[wl.name][backend.name] = entry
                print_runs(wl.name, backend.name, entry)
                gc.collect()
            if etcd_missing:
                results[wl.name]["etcd"] = {"missing": True, "reason": etcd_missing}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    table, verdicts = build_table(results)
    notes = size_notes(results)
    print()
    print(table)
    print()
    for note in notes:
        print(f"note: {note}")
    print(f"total {pc() - total:.1f} s; figures are medians of {args.runs} run(s), runs in brackets;"
          f" emb/etcd > 1 means the embedded figure is larger.")
    facts["loadavg_end"] = common.loadavg()
    return {
        "benchmark": "store",
        "mode": "quick" if args.quick else "full",
        "runs": args.runs,
        "machine": facts,
        "value_bytes": len(VALUE),
        "workloads": results,
        "targets": verdicts,
        "table": table,
        "notes": notes,
    }


def _git_state() -> dict[str, Any] | None:
    """Commit and locally modified files: the figures belong to this code."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=5).stdout.split("\n")
        return {"head": head, "modified": [line[3:] for line in dirty if line.strip()]}
    except Exception:  # noqa: BLE001 - informational only
        return None


def _fs_type(path: Path) -> str:
    try:
        out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(path)], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or "?"
    except Exception:  # noqa: BLE001
        return "?"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=None, help="runs per figure (default 3; 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="small sizes, 1 run: a smoke run under 30 s")
    p.add_argument("--no-etcd", action="store_true", help="skip etcd (reported as missing)")
    p.add_argument("--json", default=str(REPO / "bench" / "results" / "store.json"), help="JSON output path")
    p.add_argument("--only", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=None,
                   help="comma-separated workload names")
    p.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    p.add_argument("--workdir", default=None, help="parent of the temporary data dirs (default: system tmp)")
    p.add_argument("--timeout", type=float, default=300.0, help="per-phase timeout for watch waits, s")
    p.add_argument("--etcd-watchers", type=int, default=None, help="watchers for etcd in watch_1000_watchers")
    p.add_argument("--etcd-watch-writes", type=int, default=None, help="burst writes for etcd in watch_1000_watchers")
    args = p.parse_args(argv)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.quiet_logs()
    loop_name = common.choose_loop(args.loop)
    report = asyncio.run(run_all(args, loop_name))
    path = common.write_json(args.json, report)
    print(f"JSON written to {path}")
    errors = [
        f"{name}/{b}" for name, wl in report["workloads"].items() for b, e in wl.items()
        if isinstance(e, dict) and "error" in e
    ]
    if errors:
        print(f"errors in: {', '.join(errors)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
