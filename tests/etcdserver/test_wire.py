"""Our etcd server spoken to with aetcd's generated stubs (an independent build of etcd's
protos): the request fields etcdctl 3.4 cannot send (count_only, min/max revision filters,
sort targets, nested txns, watch filters, progress requests) and etcd's error codes/messages."""

from __future__ import annotations

import asyncio

import grpc
import pytest

rpc = pytest.importorskip("aetcd.rpc.rpc_pb2", reason="aetcd is not installed: pip install -e .[etcd]")
stubs = pytest.importorskip("aetcd.rpc.rpc_pb2_grpc", reason="aetcd is not installed: pip install -e .[etcd]")


@pytest.fixture
async def channel(served):
    async with grpc.aio.insecure_channel(served.server.endpoint) as ch:
        yield ch


def put(key: str, value: str = "v", **kw):
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key.encode(), value=value.encode(), **kw))


async def fill(kv, n: int = 5) -> None:
    for i in range(n):
        await kv.Put(rpc.PutRequest(key=f"/k/{i}".encode(), value=f"v{n - i}".encode()))


async def test_count_only_filters_and_sort(channel):
    kv = stubs.KVStub(channel)
    await fill(kv)
    await kv.Put(rpc.PutRequest(key=b"/k/1", value=b"again"))  # /k/1: mod 7, create 3
    r = await kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0", count_only=True))
    assert (r.count, list(r.kvs), r.more) == (5, [], False)
    r = await kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0", min_mod_revision=5))
    assert [x.key for x in r.kvs] == [b"/k/1", b"/k/3", b"/k/4"] and r.count == 5
    r = await kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0", max_create_revision=3))
    assert [x.key for x in r.kvs] == [b"/k/0", b"/k/1"]
    r = await kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0", sort_target=rpc.RangeRequest.MOD,
                                        sort_order=rpc.RangeRequest.DESCEND, limit=2))
    assert [x.key for x in r.kvs] == [b"/k/1", b"/k/4"] and r.more
    r = await kv.Range(rpc.RangeRequest(key=b"/k/", range_end=b"/k0", sort_target=rpc.RangeRequest.VALUE))
    assert [x.value for x in r.kvs] == [b"again", b"v1", b"v2", b"v3", b"v5"]
    r = await kv.Range(rpc.RangeRequest(key=b"\0", range_end=b"\0", keys_only=True))
    assert len(r.kvs) == 5 and all(x.value == b"" for x in r.kvs)


async def test_errors_are_etcds(channel):
    kv = stubs.KVStub(channel)
    lease = stubs.LeaseStub(channel)

    async def code_and_details(coro):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await coro
        return info.value.code(), info.value.details()

    assert await code_and_details(kv.Put(rpc.PutRequest(key=b"", value=b"x"))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided")
    assert await code_and_details(kv.Put(rpc.PutRequest(key=b"a", value=b"x", lease=999))) == (
        grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
    assert await code_and_details(kv.Put(rpc.PutRequest(key=b"nope", ignore_value=True))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key not found")
    assert await code_and_details(kv.Range(rpc.RangeRequest(key=b"a", revision=1000))) == (
        grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")
    many = rpc.TxnRequest(success=[put(f"/m/{i}") for i in range(129)])
    assert await code_and_details(kv.Txn(many)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: too many operations in txn request")
    dup = rpc.TxnRequest(success=[put("/d"), put("/d")])
    assert await code_and_details(kv.Txn(dup)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request")
    deleted_and_put = rpc.TxnRequest(success=[
        rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=b"/d/", range_end=b"/d0")),
        put("/d/x")])
    assert (await code_and_details(kv.Txn(deleted_and_put)))[1] == (
        "etcdserver: duplicate key given in txn request")
    assert await code_and_details(lease.LeaseRevoke(rpc.LeaseRevokeRequest(ID=12345))) == (
        grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
    granted = await lease.LeaseGrant(rpc.LeaseGrantRequest(TTL=30, ID=777))
    assert granted.ID == 777
    assert await code_and_details(lease.LeaseGrant(rpc.LeaseGrantRequest(TTL=30, ID=777))) == (
        grpc.StatusCode.FAILED_PRECONDITION, "etcdserver: lease already exists")
    # nothing of the refused txns was written
    r = await kv.Range(rpc.RangeRequest(key=b"/", range_end=b"0", count_only=True))
    assert r.count == 0


async def test_nested_txn_and_compare_targets(channel, served):
    kv = stubs.KVStub(channel)
    first = await kv.Put(rpc.PutRequest(key=b"/a", value=b"1"))
    rev = first.header.revision
    inner = rpc.TxnRequest(
        compare=[rpc.Compare(key=b"/b", target=rpc.Compare.VERSION, result=rpc.Compare.EQUAL, version=0)],
        success=[put("/b", "made-by-inner")],
        failure=[put("/c")],
    )
    outer = rpc.TxnRequest(
        compare=[
            rpc.Compare(key=b"/a", target=rpc.Compare.MOD, result=rpc.Compare.EQUAL, mod_revision=rev),
            rpc.Compare(key=b"/a", target=rpc.Compare.CREATE, result=rpc.Compare.LESS, create_revision=rev + 1),
            rpc.Compare(key=b"/a", target=rpc.Compare.VALUE, result=rpc.Compare.NOT_EQUAL, value=b"2"),
            rpc.Compare(key=b"/a", target=rpc.Compare.LEASE, result=rpc.Compare.EQUAL, lease=0),
            rpc.Compare(key=b"/zz", target=rpc.Compare.VERSION, result=rpc.Compare.GREATER, version=-1),
        ],
        success=[put("/a", "2", prev_kv=True), rpc.RequestOp(request_txn=inner),
                 rpc.RequestOp(request_range=rpc.RangeRequest(key=b"/b"))],
    )
    resp = await kv.Txn(outer)
    assert resp.succeeded
    assert resp.responses[0].response_put.prev_kv.value == b"1"
    assert resp.responses[1].response_txn.succeeded
    # a read later in the txn sees the txn's own write
    assert resp.responses[2].response_range.kvs[0].value == b"made-by-inner"
    assert resp.header.revision == rev + 1
    # a value compare on a missing key never holds
    missing = rpc.TxnRequest(compare=[rpc.Compare(key=b"/none", target=rpc.Compare.VALUE,
                                                  result=rpc.Compare.NOT_EQUAL, value=b"x")])
    assert not (await kv.Txn(missing)).succeeded


async def test_watch_filters_cancel_and_progress(channel, served):
    kv = stubs.KVStub(channel)
    watch = stubs.WatchStub(channel)
    call = watch.Watch()
    await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
        key=b"/w/", range_end=b"/w0", filters=[rpc.WatchCreateRequest.NOPUT])))
    created = await asyncio.wait_for(call.read(), 5)
    assert created.created and created.watch_id == 0
    await kv.Put(rpc.PutRequest(key=b"/w/a", value=b"1"))
    deleted = await kv.DeleteRange(rpc.DeleteRangeRequest(key=b"/w/a"))
    events = await asyncio.wait_for(call.read(), 5)
    assert [e.type for e in events.events] == [1]  # only the DELETE
    assert events.header.revision == deleted.header.revision
    await call.write(rpc.WatchRequest(progress_request=rpc.WatchProgressRequest()))
    progress = await asyncio.wait_for(call.read(), 5)
    assert progress.watch_id == -1 and not progress.events
    assert progress.header.revision == deleted.header.revision
    await call.write(rpc.WatchRequest(cancel_request=rpc.WatchCancelRequest(watch_id=0)))
    cancelled = await asyncio.wait_for(call.read(), 5)
    assert cancelled.canceled and cancelled.watch_id == 0
    call.cancel()


async def test_watch_single_key_and_compaction_mid_history(channel, served):
    kv = stubs.KVStub(channel)
    for i in range(3):
        await kv.Put(rpc.PutRequest(key=b"/one", value=str(i).encode()))
    await kv.Put(rpc.PutRequest(key=b"/one-more", value=b"x"))  # same prefix, other key
    watch = stubs.WatchStub(channel)
    call = watch.Watch()
    await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"/one", start_revision=2)))
    assert (await asyncio.wait_for(call.read(), 5)).created
    events = []
    while len(events) < 3:
        events.extend((await asyncio.wait_for(call.read(), 5)).events)
    assert [e.kv.value for e in events] == [b"0", b"1", b"2"]
    current = (await kv.Range(rpc.RangeRequest(key=b"/one"))).header.revision
    await kv.Compact(rpc.CompactionRequest(revision=current))
    await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"/one", start_revision=2)))
    assert (await asyncio.wait_for(call.read(), 5)).created
    gone = await asyncio.wait_for(call.read(), 5)
    assert gone.canceled and gone.compact_revision == current
    call.cancel()


async def test_lease_keepalive_stream_and_expiry(channel, served):
    lease = stubs.LeaseStub(channel)
    kv = stubs.KVStub(channel)
    granted = await lease.LeaseGrant(rpc.LeaseGrantRequest(TTL=1))
    assert granted.TTL == 2  # raised to etcd's minimum TTL
    await kv.Put(rpc.PutRequest(key=b"/leased", value=b"v", lease=granted.ID))
    call = lease.LeaseKeepAlive()
    await call.write(rpc.LeaseKeepAliveRequest(ID=granted.ID))
    assert (await asyncio.wait_for(call.read(), 5)).TTL == 2
    await call.write(rpc.LeaseKeepAliveRequest(ID=424242))
    assert (await asyncio.wait_for(call.read(), 5)).TTL == 0  # unknown lease: etcd answers TTL 0
    call.cancel()
    leases = await lease.LeaseLeases(rpc.LeaseLeasesRequest())
    assert [x.ID for x in leases.leases] == [granted.ID]
    async with asyncio.timeout(6):
        while (await kv.Range(rpc.RangeRequest(key=b"/leased"))).count:
            await asyncio.sleep(0.1)
    ttl = await lease.LeaseTimeToLive(rpc.LeaseTimeToLiveRequest(ID=granted.ID))
    assert ttl.TTL == -1


async def test_large_range_is_served_whole(channel):
    """Thousands of keys: the response is built on offload's worker, and nothing is lost."""
    kv = stubs.KVStub(channel)
    for start in range(0, 3000, 100):
        batch = [put(f"/big/{i:05d}", "x" * 100) for i in range(start, start + 100)]
        await kv.Txn(rpc.TxnRequest(success=batch))
    r = await kv.Range(rpc.RangeRequest(key=b"/big/", range_end=b"/big0"))
    assert len(r.kvs) == r.count == 3000
    assert r.kvs[0].key == b"/big/00000" and r.kvs[-1].key == b"/big/02999"


async def test_progress_notify_on_a_quiet_watch(tmp_path):
    from tests.etcdserver.conftest import serve

    s = await serve(tmp_path, progress_interval=0.2)
    try:
        async with grpc.aio.insecure_channel(s.server.endpoint) as ch:
            call = stubs.WatchStub(ch).Watch()
            await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
                key=b"/quiet", progress_notify=True)))
            created = await asyncio.wait_for(call.read(), 5)
            assert created.created
            notice = await asyncio.wait_for(call.read(), 5)
            assert notice.watch_id == created.watch_id and not notice.events
            assert notice.header.revision == await s.store.current_revision()
            call.cancel()
    finally:
        await s.server.stop(None)
        await s.store.close()


async def test_a_watch_that_stops_reading_gets_every_event_in_order_later(channel, served):
    """A client that does not read: the server's queue and the store watcher's buffer fill,
    the store sets the watcher aside and catches it up from history once the client reads."""
    call = stubs.WatchStub(channel).Watch()
    await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"/bp/", range_end=b"/bp0")))
    assert (await asyncio.wait_for(call.read(), 5)).created
    n = 3000
    for i in range(n):
        await served.store.create(f"/bp/{i:05d}", b"v" * 512)
    await asyncio.sleep(0.5)  # not reading meanwhile
    seen: list[bytes] = []
    async with asyncio.timeout(20):
        while len(seen) < n:
            seen.extend(e.kv.key for e in (await call.read()).events)
    assert seen == [f"/bp/{i:05d}".encode() for i in range(n)]
    call.cancel()


async def test_grpc_health_check(channel):
    check = channel.unary_unary("/grpc.health.v1.Health/Check")
    assert await check(b"") == b"\x08\x01"  # SERVING
    assert await check(b"\x0a\x0fetcdserverpb.KV") == b"\x08\x01"
    assert await check(b"\x0a\x05other") == b"\x08\x03"  # SERVICE_UNKNOWN


async def test_metrics_count_rpcs_and_open_watches(channel):
    from minikube_py.etcdserver import metrics

    before = metrics.HANDLED["KV/Put", "OK"], metrics.HANDLED["KV/Put", "INVALID_ARGUMENT"]
    open_before = metrics.WATCHES["open"]
    kv = stubs.KVStub(channel)
    await kv.Put(rpc.PutRequest(key=b"/m", value=b"v"))
    with pytest.raises(grpc.aio.AioRpcError):
        await kv.Put(rpc.PutRequest(key=b"", value=b"v"))
    # the server counts a call as it finishes it, which may be just after the client has its
    # answer (an error status goes out first)
    async with asyncio.timeout(5):
        while (metrics.HANDLED["KV/Put", "OK"], metrics.HANDLED["KV/Put", "INVALID_ARGUMENT"]) \
                != (before[0] + 1, before[1] + 1):
            await asyncio.sleep(0.02)
    call = stubs.WatchStub(channel).Watch()
    await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(key=b"/m")))
    assert (await asyncio.wait_for(call.read(), 5)).created
    assert metrics.WATCHES["open"] == open_before + 1
    call.cancel()
    async with asyncio.timeout(5):  # the client left: the server closes that watch
        while metrics.WATCHES["open"] != open_before:
            await asyncio.sleep(0.02)


async def test_unknown_enum_values_are_invalid_argument(channel):
    kv = stubs.KVStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as bad_sort:
        await kv.Range(rpc.RangeRequest(key=b"a", sort_order=7))
    assert (bad_sort.value.code(), bad_sort.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: invalid sort option")
    with pytest.raises(grpc.aio.AioRpcError) as bad_compare:
        await kv.Txn(rpc.TxnRequest(compare=[rpc.Compare(key=b"a", target=9)]))
    assert bad_compare.value.code() == grpc.StatusCode.INVALID_ARGUMENT
