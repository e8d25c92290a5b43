"""storage/txn_eval.py on a bare MVCCState: etcd's Txn rules as pure functions."""

from __future__ import annotations

import pytest

from minikube_py.storage import (
    CompactedError,
    FutureRevisionError,
    InvalidTxnError,
    KeyNotFoundError,
    LeaseNotFoundError,
)
from minikube_py.storage.mvcc import COMPACT, GRANT, PUT, TXN, MVCCState
from minikube_py.storage.txn import (
    Compare,
    CompareResult,
    CompareTarget,
    DeleteOp,
    PutOp,
    RangeOp,
    SortOrder,
    SortTarget,
    TxnOp,
)
from minikube_py.storage.txn_eval import bounds, in_range, run

EQ, GT, LT, NE = CompareResult.EQUAL, CompareResult.GREATER, CompareResult.LESS, CompareResult.NOT_EQUAL


def state_with(*pairs: tuple[str, bytes]) -> MVCCState:
    state = MVCCState()
    for key, value in pairs:
        state.apply((PUT, state.revision + 1, key, value, 0))
    return state


def test_bounds_follow_etcds_range_end_forms():
    assert bounds("a", "") == ("a", None, True)
    assert bounds("a", "\0") == ("a", None, False)
    assert bounds("a", "c") == ("a", "c", False)
    assert in_range("b", "a", "c") and not in_range("c", "a", "c")
    assert in_range("zzz", "b", "\0") and not in_range("a", "b", "\0")
    assert in_range("a", "a", "") and not in_range("ab", "a", "")


def test_writes_of_one_txn_share_one_revision_and_one_record():
    state = state_with(("/a", b"1"))
    result, records = run(state, TxnOp(success=(PutOp("/b", b"2"), PutOp("/c", b"3"),
                                                DeleteOp("/a", prev_kv=True))))
    assert result.revision == 3 and state.revision == 3
    assert [r[1] for r in records] == [3, 3, 3]
    assert result.responses[2].deleted == 1 and result.responses[2].prev_kvs[0].value == b"1"
    # replaying the records as one TXN record rebuilds the same state
    replay = state_with(("/a", b"1"))
    replay.apply((TXN, 3, records))
    assert dict(replay.live) == dict(state.live)


def test_read_only_txn_keeps_the_revision():
    state = state_with(("/a", b"1"))
    result, records = run(state, TxnOp(success=(RangeOp("/a"),)))
    assert records == [] and result.revision == state.revision == 2


@pytest.mark.parametrize("target, result, operand, holds", [
    (CompareTarget.VERSION, EQ, 1, True),
    (CompareTarget.VERSION, GT, 0, True),
    (CompareTarget.CREATE, EQ, 2, True),
    (CompareTarget.MOD, LT, 2, False),
    (CompareTarget.MOD, NE, 5, True),
    (CompareTarget.VALUE, EQ, b"1", True),
    (CompareTarget.VALUE, GT, b"0", True),
    (CompareTarget.LEASE, EQ, 0, True),
])
def test_compare_targets(target, result, operand, holds):
    state = state_with(("/a", b"1"))
    outcome, _ = run(state, TxnOp(compares=(Compare("/a", target, result, operand),)))
    assert outcome.succeeded is holds


def test_missing_key_compares_as_zero_but_never_on_value():
    state = MVCCState()
    assert run(state, TxnOp(compares=(Compare("/x", CompareTarget.MOD, EQ, 0),)))[0].succeeded
    assert not run(state, TxnOp(compares=(Compare("/x", CompareTarget.VALUE, NE, b"y"),)))[0].succeeded


def test_range_compare_needs_every_key():
    state = state_with(("/r/a", b"1"), ("/r/b", b"2"))
    every = Compare("/r/", CompareTarget.VALUE, GT, b"0", range_end="/r0")
    some = Compare("/r/", CompareTarget.VALUE, EQ, b"1", range_end="/r0")
    assert run(state, TxnOp(compares=(every,)))[0].succeeded
    assert not run(state, TxnOp(compares=(some,)))[0].succeeded


def test_nested_compares_see_the_state_before_the_txn():
    state = MVCCState()
    inner = TxnOp(compares=(Compare("/a", CompareTarget.VERSION, EQ, 0),),
                  success=(PutOp("/inner-saw-nothing", b"x"),), failure=(PutOp("/inner-saw-a", b"x"),))
    run(state, TxnOp(success=(PutOp("/a", b"1"), inner)))
    assert "/inner-saw-nothing" in state.live and "/inner-saw-a" not in state.live


def test_a_read_after_a_write_in_one_txn_sees_it():
    state = MVCCState()
    result, _ = run(state, TxnOp(success=(PutOp("/a", b"new"), RangeOp("/a"))))
    assert result.responses[1].kvs[0].value == b"new"


def test_refusals_change_nothing():
    state = state_with(("/a", b"1"))
    before = state.revision
    with pytest.raises(InvalidTxnError, match="duplicate key"):
        run(state, TxnOp(success=(PutOp("/b", b"1"), PutOp("/b", b"2"))))
    with pytest.raises(InvalidTxnError, match="duplicate key"):
        run(state, TxnOp(success=(DeleteOp("/a", "\0"), PutOp("/b", b"2"))))
    with pytest.raises(InvalidTxnError, match="too many operations"):
        run(state, TxnOp(success=tuple(PutOp(f"/k{i}", b"") for i in range(129))))
    with pytest.raises(LeaseNotFoundError):
        run(state, TxnOp(success=(PutOp("/b", b"x"), PutOp("/c", b"x", lease=7))))
    with pytest.raises(KeyNotFoundError):
        run(state, TxnOp(success=(PutOp("/b", b"x"), PutOp("/missing", None))))
    with pytest.raises(FutureRevisionError):
        run(state, TxnOp(success=(PutOp("/b", b"x"), RangeOp("/a", revision=99))))
    assert state.revision == before and list(state.live) == ["/a"]


def test_then_and_else_may_write_the_same_key():
    state = MVCCState()
    nested = TxnOp(success=(PutOp("/k", b"then"),), failure=(PutOp("/k", b"else"),))
    run(state, TxnOp(success=(nested,)))
    assert state.live["/k"].value == b"then"


def test_ignore_value_and_ignore_lease_keep_the_current_ones():
    state = MVCCState()
    state.apply((GRANT, state.revision, 5, 60))
    state.apply((PUT, 2, "/a", b"kept", 5))
    run(state, TxnOp(success=(PutOp("/a", None, lease=None),)))
    kv = state.live["/a"]
    assert (kv.value, kv.lease, kv.version) == (b"kept", 5, 2)


def test_range_count_filters_sort_and_limit():
    state = state_with(("/k/a", b"3"), ("/k/b", b"1"), ("/k/c", b"2"), ("/other", b"0"))
    state.apply((PUT, state.revision + 1, "/k/a", b"0", 0))
    op = RangeOp("/k/", "/k0", sort_target=SortTarget.VALUE, limit=2)
    result, _ = run(state, TxnOp(success=(op,)))
    rng = result.responses[0]
    assert [kv.key for kv in rng.kvs] == ["/k/a", "/k/b"] and rng.more and rng.count == 3
    op = RangeOp("/k/", "/k0", min_mod_revision=5, keys_only=True)
    rng = run(state, TxnOp(success=(op,)))[0].responses[0]
    assert [(kv.key, kv.value) for kv in rng.kvs] == [("/k/a", b"")] and rng.count == 3
    op = RangeOp("/k/", "/k0", sort_order=SortOrder.DESCEND, count_only=True)
    rng = run(state, TxnOp(success=(op,)))[0].responses[0]
    assert (rng.kvs, rng.count) == ([], 3)
    past = run(state, TxnOp(success=(RangeOp("/k/a", revision=2),)))[0].responses[0]
    assert past.kvs[0].value == b"3"


def test_range_below_the_compaction_point_is_refused():
    state = state_with(("/a", b"1"), ("/a", b"2"), ("/a", b"3"))
    state.apply((COMPACT, state.revision, 3))
    with pytest.raises(CompactedError):
        run(state, TxnOp(success=(RangeOp("/a", revision=2),)))


async def test_embedded_store_txn_is_one_durable_record_replayed_on_open(tmp_path):
    from minikube_py.storage import EmbeddedStore

    store = await EmbeddedStore.open(tmp_path / "d", compaction_interval=0)
    try:
        watch = await store.watch("/", start_revision=0)
        result = await store.txn(TxnOp(success=(PutOp("/a", b"1"), PutOp("/b", b"2"))))
        events = await watch.next_batch()
        assert [e.kv.key for e in events] == ["/a", "/b"]
        assert {e.kv.mod_revision for e in events} == {result.revision}
    finally:
        await store.close()
    reopened = await EmbeddedStore.open(tmp_path / "d", compaction_interval=0)
    try:
        assert await reopened.current_revision() == result.revision
        assert (await reopened.get("/b")).mod_revision == result.revision
    finally:
        await reopened.close()


async def test_read_only_view_of_a_held_data_dir_applies_txn_records(tmp_path):
    """`minikube-py storage ls` reads a data dir `etcd-server` holds: TXN records included."""
    from minikube_py.storage import EmbeddedStore, ReadOnlyStore

    store = await EmbeddedStore.open(tmp_path / "d", compaction_interval=0)
    try:
        await store.txn(TxnOp(success=(PutOp("/a", b"1"), PutOp("/b", b"2"))))
        view = await ReadOnlyStore.open(tmp_path / "d")
        try:
            page = await view.range("/")
            assert [(kv.key, kv.mod_revision) for kv in page.kvs] == [("/a", 2), ("/b", 2)]
        finally:
            await view.close()
    finally:
        await store.close()


def test_nesting_cannot_multiply_the_work_past_a_bound():
    """128 nested txns of 128 ops each would make the duplicate-key check compare thousands
    of puts with thousands of range deletions on the shared event loop: refused at once."""
    import time

    inner = TxnOp(success=tuple(DeleteOp(f"/d{i}", f"/d{i}z") for i in range(64))
                  + tuple(PutOp(f"/p{i}", b"") for i in range(64)))
    wide = TxnOp(success=tuple(inner for _ in range(128)))
    began = time.perf_counter()
    with pytest.raises(InvalidTxnError, match="too many operations"):
        run(MVCCState(), wide)
    assert time.perf_counter() - began < 0.5
    ok = TxnOp(success=tuple(inner for _ in range(7)))  # 7 * 128 + 7 ops: within the bound
    with pytest.raises(InvalidTxnError, match="duplicate key"):
        run(MVCCState(), ok)  # the same puts in sibling txns
