"""EtcdStore against real etcd servers: what the shared conformance suite cannot show.

The conformance suite (tests/conformance) checks the Store contract on one healthy etcd. These
tests cover what only the etcd backend has: key-prefix isolation of stores sharing one etcd,
snapshot paging with raw Range requests, compaction numbers recovered from etcd, a watch that
survives a server restart, failover in a 3-member cluster, writes whose outcome is unknown, and
that every failure surfaces as a StorageError.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import AsyncIterator

import grpc
import pytest
from structlog.testing import capture_logs

from tests.etcd_server import (
    EtcdServer,
    etcd_binary,
    start_cluster,
    start_single,
    stop_all,
)

if etcd_binary() is None:
    pytest.skip("etcd binary not found: install Debian's etcd-server", allow_module_level=True)
pytest.importorskip(
    "aetcd", reason="aetcd (etcd's client) is not installed: pip install -e '.[etcd]' (or '.[test]')")

from aetcd import rpc  # noqa: E402

from minikube_py.storage import (  # noqa: E402
    CompactedError,
    EventType,
    FutureRevisionError,
    InvalidContinueError,
    KeyNotFoundError,
    LeaseNotFoundError,
    StorageError,
    UnavailableError,
    ValueTooLargeError,
    WatchCancelledError,
)
from minikube_py.storage.etcd_backend import EtcdStore  # noqa: E402

pytestmark = pytest.mark.etcd

P = "/registry/pods/"


def unique_prefix() -> str:
    return f"/it-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def etcd_store(etcd_server: EtcdServer) -> AsyncIterator[EtcdStore]:
    store = await EtcdStore.connect([etcd_server.endpoint], key_prefix=unique_prefix())
    try:
        yield store
    finally:
        await store.close()


async def collect(watch, n: int, timeout: float = 10.0) -> list:
    """Exactly n events from the watch, or a failure naming what did arrive."""
    events: list = []
    try:
        async with asyncio.timeout(timeout):
            while len(events) < n:
                events.extend(await watch.next_batch())
    except TimeoutError:
        pytest.fail(f"{len(events)} of {n} events after {timeout} s: {events}")
    assert len(events) == n, events
    return events


async def wait_until(predicate, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


# ------------------------------------------------------------------------- key prefix


async def test_key_prefix_isolates_stores_sharing_one_etcd(etcd_server: EtcdServer):
    base = unique_prefix()
    a = await EtcdStore.connect([f"http://{etcd_server.endpoint}"], key_prefix=base + "-a")
    b = await EtcdStore.connect([etcd_server.endpoint], key_prefix=base + "-b")
    raw = await EtcdStore.connect([etcd_server.endpoint], key_prefix=base)
    try:
        watch_a = await a.watch("/")
        ka = await a.create("/k", b"A")
        kb = await b.create("/k", b"B")  # same key, other store: no KeyExistsError
        assert (await a.get("/k")).value == b"A" and (await b.get("/k")).value == b"B"
        assert [kv.key for kv in (await a.range("")).kvs] == ["/k"]
        assert [kv.key for kv in (await a.range("/")).kvs] == ["/k"]
        assert [(kv.key, kv.value) for kv in (await raw.range("")).kvs] == [
            ("-a/k", b"A"),
            ("-b/k", b"B"),
        ]
        await b.update("/k", b"B2", expected_mod_revision=kb.mod_revision)
        ka2 = await a.update("/k", b"A2", expected_mod_revision=ka.mod_revision)
        events = await collect(watch_a, 2)
        assert [(e.type, e.kv.key, e.kv.value) for e in events] == [
            (EventType.PUT, "/k", b"A"),
            (EventType.PUT, "/k", b"A2"),
        ]
        assert events[1].prev_kv == ka and events[1].kv == ka2
        lease = await a.grant_lease(30)
        await a.create("/leased", b"x", lease=lease)
        assert (await a.lease_info(lease)).keys == ("/leased",)
        await a.delete("/k")
        assert (await b.get("/k")).value == b"B2"
        with pytest.raises(KeyNotFoundError):
            await a.get("/k")
        await a.revoke_lease(lease)
        await watch_a.cancel()
    finally:
        for store in (a, b, raw):
            await store.close()


# ------------------------------------------------------------------------------ range


async def test_range_pages_at_a_pinned_revision(etcd_store: EtcdStore):
    keys = [f"{P}default/p{i:02d}" for i in range(10)]
    kvs = [await etcd_store.create(k, k.encode()) for k in keys]
    pinned = await etcd_store.current_revision()
    await etcd_store.update(keys[3], b"changed", expected_mod_revision=kvs[3].mod_revision)
    await etcd_store.delete(keys[4])
    for i in range(10, 13):
        await etcd_store.create(f"{P}default/p{i:02d}", b"late")

    page = await etcd_store.range(P, limit=4, revision=pinned)
    seen, remaining = list(page.kvs), [page.remaining]
    while page.more:
        assert page.revision == pinned
        page = await etcd_store.range(P, limit=4, continue_token=page.continue_token)
        seen.extend(page.kvs)
        remaining.append(page.remaining)
    assert page.revision == pinned and page.continue_token is None
    assert remaining == [6, 2, 0]
    assert seen == kvs
    assert (await etcd_store.range(P, revision=pinned)).kvs == kvs

    first = await etcd_store.range(P, limit=4, revision=pinned)
    again = await etcd_store.range(P, limit=4, continue_token=first.continue_token, revision=pinned)
    assert again.kvs == kvs[4:8]
    with pytest.raises(InvalidContinueError):
        await etcd_store.range(P, continue_token=first.continue_token, revision=pinned + 1)
    now = await etcd_store.range(P, limit=100)
    assert len(now.kvs) == 12 and not now.more and now.remaining == 0
    assert now.revision == await etcd_store.current_revision()


# ------------------------------------------------------------------------- compaction


async def test_compaction_errors_carry_etcd_compact_revision(etcd_server, etcd_store):
    kv1 = await etcd_store.create("/c/a", b"1")
    await etcd_store.create("/c/b", b"1")
    token = (await etcd_store.range("/c/", limit=1)).continue_token
    kv2 = await etcd_store.update("/c/a", b"2", expected_mod_revision=kv1.mod_revision)
    kv3 = await etcd_store.update("/c/a", b"3", expected_mod_revision=kv2.mod_revision)
    await etcd_store.compact(kv3.mod_revision)

    # A second client has not seen the compaction: it must learn the number from etcd.
    other = await EtcdStore.connect([etcd_server.endpoint], key_prefix="/unrelated")
    try:
        assert await other.compact_revision() == kv3.mod_revision
    finally:
        await other.close()
    assert await etcd_store.compact_revision() == kv3.mod_revision
    with pytest.raises(CompactedError) as err:
        await etcd_store.range("/c/", revision=kv1.mod_revision)
    assert (err.value.requested_revision, err.value.compact_revision) == (
        kv1.mod_revision,
        kv3.mod_revision,
    )
    with pytest.raises(CompactedError):
        await etcd_store.get("/c/a", revision=kv2.mod_revision)
    with pytest.raises(CompactedError):
        await etcd_store.range("/c/", limit=1, continue_token=token)
    with pytest.raises(CompactedError) as err:
        await etcd_store.watch("/c/", start_revision=kv2.mod_revision)
    assert err.value.compact_revision == kv3.mod_revision
    watch = await etcd_store.watch("/c/", start_revision=kv3.mod_revision)
    assert [e.kv for e in await collect(watch, 1)] == [kv3]
    await watch.cancel()
    with pytest.raises(CompactedError):
        await etcd_store.compact(kv2.mod_revision)
    with pytest.raises(FutureRevisionError):
        await etcd_store.compact(await etcd_store.current_revision() + 100)


# ------------------------------------------------------------------------------ watch


async def test_watch_survives_server_restart(tmp_path: Path):
    server = start_single(tmp_path)
    store = probe = None
    try:
        store = await EtcdStore.connect([server.endpoint], timeout=2.0, retry_timeout=5.0)
        probe = await EtcdStore.connect([server.endpoint], timeout=0.5, retry_timeout=0.3)
        watch = await store.watch("/r/")
        first = [await store.create(f"/r/{i}", b"before") for i in range(3)]
        assert [e.kv for e in await collect(watch, 3)] == first
        # Two more are buffered (delivered by etcd, not yet consumed) when the server dies.
        buffered = [await store.create(f"/r/{i}", b"buffered") for i in range(3, 5)]
        await wait_until(lambda: watch.next_revision == buffered[-1].mod_revision + 1)

        with capture_logs() as logs:
            await asyncio.to_thread(server.kill)
            with pytest.raises(UnavailableError):
                await probe.get("/r/0")
            await asyncio.to_thread(server.restart)
            after = [await store.create(f"/r/{i}", b"after") for i in range(5, 8)]
            events = await collect(watch, 5)
        assert [e.kv for e in events] == buffered + after
        revisions = [e.revision for e in events]
        assert revisions == list(range(revisions[0], revisions[0] + 5))
        assert any(log["event"] == "etcd watch lost, re-establishing" for log in logs), logs
        await watch.cancel()
    finally:
        for s in (store, probe):
            if s is not None:
                await s.close()
        server.kill()


async def test_slow_watch_consumer_is_cancelled(etcd_server: EtcdServer):
    store = await EtcdStore.connect(
        [etcd_server.endpoint],
        key_prefix=unique_prefix(),
        watch_buffer_size=5,
        watch_stall_timeout=0.3,
    )
    try:
        watch = await store.watch("/s/")
        for i in range(20):
            await store.create(f"/s/{i:02d}", b"v")
        await asyncio.sleep(1.0)
        assert len(await watch.next_batch()) == 5  # what was buffered, then the error
        with pytest.raises(WatchCancelledError):
            await watch.next_batch()
    finally:
        await store.close()


# --------------------------------------------------------------------------- failover


async def leader_first(members: list[EtcdServer]) -> list[EtcdServer]:
    for member in members:
        async with grpc.aio.insecure_channel(member.endpoint) as channel:
            status = await rpc.MaintenanceStub(channel).Status(rpc.StatusRequest(), timeout=2)
        if status.leader == status.header.member_id:
            return [member] + [m for m in members if m is not member]
    return members


async def test_failover_when_the_used_member_dies(tmp_path: Path):
    members = await asyncio.to_thread(start_cluster, 3, tmp_path)
    try:
        # The store uses the first endpoint: make that the leader, the harder case to lose.
        ordered = await leader_first(members)
        # Short attempts, long budget: an election on a busy 2-core machine may take seconds.
        endpoints = [m.endpoint for m in ordered]
        store = await EtcdStore.connect(endpoints, timeout=1.0, retry_timeout=10.0)
        try:
            kv = await store.create("/f/a", b"0")
            watch = await store.watch("/f/", start_revision=kv.mod_revision)
            used = ordered[0]
            assert store.endpoint == used.endpoint
            with capture_logs() as logs:
                await asyncio.to_thread(used.kill)
                assert await store.get("/f/a") == kv
                assert store.endpoint != used.endpoint
                written = [kv]
                for i in range(3):
                    value = b"%d" % (i + 1)
                    kv = await store.update("/f/a", value, expected_mod_revision=kv.mod_revision)
                    written.append(kv)
                b = await store.create("/f/b", b"b")
                deleted = await store.delete("/f/b", expected_mod_revision=b.mod_revision)
                assert deleted == b
                last = await store.update("/f/a", b"any", expected_mod_revision=None)
                assert [x.key for x in (await store.range("/f/")).kvs] == ["/f/a"]
                lease = await store.grant_lease(30)
                assert await store.keep_alive(lease) == 30
                events = await collect(watch, 7)
            assert [e.kv for e in events[:4]] == written
            assert events[4].kv == b and events[5].type is EventType.DELETE
            assert events[6].kv == last
            revisions = [e.revision for e in events]
            assert revisions == list(range(revisions[0], revisions[0] + 7))
            assert any(log["event"] == "etcd endpoint failed, switching" for log in logs), logs
            await watch.cancel()
        finally:
            await store.close()
    finally:
        stop_all(members)


class FlakyKV:
    """A KV stub whose next Txn fails like a dropped connection, before or after etcd got it."""

    def __init__(self, real, *, landed: bool) -> None:
        self.real, self.landed, self.armed = real, landed, False

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    async def Txn(self, request, **kwargs):  # noqa: N802 - gRPC method name
        if not self.armed:
            return await self.real.Txn(request, **kwargs)
        self.armed = False
        if self.landed:
            await self.real.Txn(request, **kwargs)
        empty = grpc.aio.Metadata()
        raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, empty, empty, "Socket closed")


def make_flaky(store: EtcdStore, *, landed: bool) -> FlakyKV:
    client = store._endpoints[0].client
    flaky = FlakyKV(client.kvstub, landed=landed)
    client.kvstub = flaky
    return flaky


async def test_cas_write_with_unknown_outcome_is_settled_by_reading(etcd_store: EtcdStore):
    landed = make_flaky(etcd_store, landed=True)
    landed.armed = True
    kv = await etcd_store.create("/u/a", b"1")
    assert kv == await etcd_store.get("/u/a") and kv.version == 1
    landed.armed = True
    kv2 = await etcd_store.update("/u/a", b"2", expected_mod_revision=kv.mod_revision)
    assert kv2 == await etcd_store.get("/u/a") and kv2.version == 2
    landed.armed = True
    assert await etcd_store.delete("/u/a", expected_mod_revision=kv2.mod_revision) == kv2
    with pytest.raises(KeyNotFoundError):
        await etcd_store.get("/u/a")
    kv = await etcd_store.create("/u/a", b"1")
    landed.armed = True
    with pytest.raises(UnavailableError):  # no revision to compare: cannot be settled
        await etcd_store.update("/u/a", b"blind", expected_mod_revision=None)

    lost = make_flaky(etcd_store, landed=False)
    current = await etcd_store.get("/u/a")
    lost.armed = True
    kv3 = await etcd_store.update("/u/a", b"3", expected_mod_revision=current.mod_revision)
    assert kv3.version == current.version + 1, "re-sent exactly once"
    assert kv3 == await etcd_store.get("/u/a")


# ----------------------------------------------------------------------------- errors


async def test_every_failure_is_a_storage_error(tmp_path: Path):
    server = EtcdServer(tmp_path, max_request_bytes=64 * 1024)
    server.start()
    try:
        store = await EtcdStore.connect([server.endpoint], timeout=0.5, retry_timeout=0.2)
        try:
            with pytest.raises(ValueTooLargeError):  # etcd's "request is too large"
                await store.create("/big", b"x" * 100_000)
            with pytest.raises(LeaseNotFoundError):
                await store.keep_alive(123456789)
            with pytest.raises(LeaseNotFoundError):
                await store.revoke_lease(123456789)
            kv = await store.create("/k", b"v")
            lease = await store.grant_lease(30)
            watch = await store.watch("/")

            await asyncio.to_thread(server.stop)
            operations = [
                lambda: store.get("/k"),
                lambda: store.range("/", limit=1),
                lambda: store.create("/k2", b"v"),
                lambda: store.update("/k", b"v2", expected_mod_revision=kv.mod_revision),
                lambda: store.update("/k", b"v2", expected_mod_revision=None),
                lambda: store.delete("/k"),
                lambda: store.watch("/"),
                lambda: store.grant_lease(10),
                lambda: store.keep_alive(lease),
                lambda: store.lease_info(lease),
                lambda: store.revoke_lease(lease),
                lambda: store.compact(kv.mod_revision),
                lambda: store.current_revision(),
                lambda: store.compact_revision(),
            ]
            for operation in operations:
                with pytest.raises(UnavailableError):
                    await operation()
            with pytest.raises(UnavailableError):
                await EtcdStore.connect([server.endpoint], timeout=0.5, retry_timeout=0.2)
        finally:
            await store.close()
        # The watch kept retrying while etcd was down; closing the store ends it.
        with pytest.raises(WatchCancelledError):
            await watch.next_batch()
        with pytest.raises(UnavailableError):
            await store.get("/k")
        with pytest.raises(ValueError):
            await EtcdStore.connect(["https://127.0.0.1:1"])
        assert issubclass(UnavailableError, StorageError)
    finally:
        server.kill()
