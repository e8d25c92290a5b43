"""The request shapes kube-apiserver's etcd3 storage sends (the shapes kine documents for
serving Kubernetes from another store), replayed with aetcd's stubs against our server.

Upstream: staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go (Create, GuaranteedUpdate,
Delete, GetList, Count), compact.go (the compactor's version-guarded compact_rev_key) and
watcher.go (prefix watch with prev_kv and progress notify from resourceVersion + 1)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

rpc = pytest.importorskip("aetcd.rpc.rpc_pb2", reason="aetcd is not installed: pip install -e .[etcd]")
stubs = pytest.importorskip("aetcd.rpc.rpc_pb2_grpc", reason="aetcd is not installed: pip install -e .[etcd]")

PODS = b"/registry/pods/default/"


def mod_equals(key: bytes, revision: int):
    return rpc.Compare(key=key, target=rpc.Compare.MOD, result=rpc.Compare.EQUAL, mod_revision=revision)


def put(key: bytes, value: bytes, lease: int = 0):
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value, lease=lease))


def get(key: bytes):
    return rpc.RequestOp(request_range=rpc.RangeRequest(key=key))


async def test_create_update_delete_list_count_watch_compact(served):
    async with grpc.aio.insecure_channel(served.server.endpoint) as channel:
        kv, watch, lease = stubs.KVStub(channel), stubs.WatchStub(channel), stubs.LeaseStub(channel)
        # Create: If(ModRevision(key) == 0).Then(Put)
        created = await kv.Txn(rpc.TxnRequest(compare=[mod_equals(PODS + b"a", 0)],
                                              success=[put(PODS + b"a", b"v1")]))
        assert created.succeeded
        rv = created.header.revision
        again = await kv.Txn(rpc.TxnRequest(compare=[mod_equals(PODS + b"a", 0)],
                                            success=[put(PODS + b"a", b"v1")]))
        assert not again.succeeded  # storage.NewKeyExistsError upstream
        # watch from rv+1 with prev_kv and progress notify, as the watch cache's reflector does
        call = watch.Watch()
        await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
            key=PODS, range_end=b"/registry/pods/default0", start_revision=rv + 1, prev_kv=True,
            progress_notify=True)))
        assert (await asyncio.wait_for(call.read(), 5)).created
        # GuaranteedUpdate: If(ModRevision == rv).Then(Put).Else(Get); a stale rv gets the
        # current object back in the else branch
        updated = await kv.Txn(rpc.TxnRequest(compare=[mod_equals(PODS + b"a", rv)],
                                              success=[put(PODS + b"a", b"v2")],
                                              failure=[get(PODS + b"a")]))
        assert updated.succeeded
        stale = await kv.Txn(rpc.TxnRequest(compare=[mod_equals(PODS + b"a", rv)],
                                            success=[put(PODS + b"a", b"v3")],
                                            failure=[get(PODS + b"a")]))
        assert not stale.succeeded
        current = stale.responses[0].response_range.kvs[0]
        assert (current.value, current.mod_revision) == (b"v2", updated.header.revision)
        # events for objects with a TTL (kube-apiserver attaches Events to leases)
        granted = await lease.LeaseGrant(rpc.LeaseGrantRequest(TTL=3600))
        await kv.Txn(rpc.TxnRequest(compare=[mod_equals(PODS + b"b", 0)],
                                    success=[put(PODS + b"b", b"event", granted.ID)]))
        # GetList: paged range at a pinned revision; Count: count_only over the prefix
        page = await kv.Range(rpc.RangeRequest(key=PODS, range_end=b"/registry/pods/default0", limit=1))
        assert page.more and page.count == 2 and page.kvs[0].key == PODS + b"a"
        rest = await kv.Range(rpc.RangeRequest(key=PODS + b"a\x00", range_end=b"/registry/pods/default0",
                                               revision=page.header.revision, limit=1))
        assert [x.key for x in rest.kvs] == [PODS + b"b"] and not rest.more
        count = await kv.Range(rpc.RangeRequest(key=PODS, range_end=b"/registry/pods/default0",
                                                count_only=True))
        assert count.count == 2
        # Delete: If(ModRevision == current).Then(Delete).Else(Get)
        deleted = await kv.Txn(rpc.TxnRequest(
            compare=[mod_equals(PODS + b"a", updated.header.revision)],
            success=[rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=PODS + b"a"))],
            failure=[get(PODS + b"a")]))
        assert deleted.succeeded and deleted.responses[0].response_delete_range.deleted == 1
        # the watcher saw update, event create and delete, in order, with previous values
        events = []
        async with asyncio.timeout(5):
            while len(events) < 3:
                events.extend((await call.read()).events)
        assert [(e.type, e.kv.key) for e in events] == [
            (0, PODS + b"a"), (0, PODS + b"b"), (1, PODS + b"a")]
        assert events[0].prev_kv.value == b"v1" and events[2].prev_kv.value == b"v2"
        call.cancel()
        # the compactor: If(Version(compact_rev_key) == 0).Then(Put(compact_rev_key, rev)),
        # then Compact(rev, physical)
        key = b"compact_rev_key"
        guard = rpc.Compare(key=key, target=rpc.Compare.VERSION, result=rpc.Compare.EQUAL, version=0)
        won = await kv.Txn(rpc.TxnRequest(compare=[guard], success=[put(key, str(rv).encode())],
                                          failure=[get(key)]))
        assert won.succeeded
        await kv.Compact(rpc.CompactionRequest(revision=updated.header.revision, physical=True))
        with pytest.raises(grpc.aio.AioRpcError) as gone:
            await kv.Range(rpc.RangeRequest(key=PODS + b"a", revision=rv))
        assert gone.value.details() == "etcdserver: mvcc: required revision has been compacted"
