"""The MVCC state machine: history per key, compaction, lease revocation, history window."""

from __future__ import annotations

from minikube_py.storage.kv import EventType, prefix_end
from minikube_py.storage.mvcc import COMPACT, DELETE, GRANT, PUT, REVOKE, MVCCState


def test_history_reads_and_compaction_forget_settled_keys():
    s = MVCCState()
    s.apply((PUT, 2, "/a", b"1", 0))
    s.apply((PUT, 3, "/a", b"2", 0))
    s.apply((PUT, 4, "/b", b"1", 0))
    s.apply((DELETE, 5, "/b"))
    assert s.value_at("/a", 2).value == b"1"
    assert s.value_at("/a", 3).value == b"2"
    assert s.value_at("/b", 4).value == b"1" and s.value_at("/b", 5) is None
    assert [kv.key for kv in s.keys_between("/", None, 4)] == ["/a", "/b"]
    s.apply((COMPACT, 5, 5))
    assert s.compact_revision == 5
    assert "/a" not in s.changed and "/b" not in s.changed, "nothing left to remember"
    assert s.events == [] or all(e.revision >= 5 for e in s.events)
    assert s.value_at("/a", 5).value == b"2"


def test_revoke_deletes_every_key_at_one_revision():
    s = MVCCState()
    s.apply((GRANT, 1, 7, 10))
    s.apply((PUT, 2, "/x", b"1", 7))
    s.apply((PUT, 3, "/y", b"1", 7))
    s.apply((PUT, 4, "/z", b"1", 0))
    events = s.apply((REVOKE, 5, 7))
    assert [(e.type, e.kv.key, e.revision) for e in events] == [
        (EventType.DELETE, "/x", 5),
        (EventType.DELETE, "/y", 5),
    ]
    assert s.revision == 5 and 7 not in s.leases and list(s.live) == ["/z"]


def test_revoking_an_empty_lease_takes_no_revision():
    s = MVCCState()
    s.apply((GRANT, 1, 1, 10))
    assert s.apply((REVOKE, 2, 1)) == [] and s.revision == 1


def test_history_window_compacts_oldest_events():
    s = MVCCState(history_max_events=10)
    for i in range(40):
        s.apply((PUT, 2 + i, f"/k{i % 3}", b"v", 0))
    assert len(s.events) <= 10 + 10 // 8 + 1
    assert s.compact_revision == s.events[0].revision
    # Reads at the compaction point still work.
    assert len(list(s.keys_between("/", None, s.compact_revision))) == 3


def test_prefix_end():
    assert prefix_end("/registry/pods/") == "/registry/pods0"
    assert prefix_end("") == ""


def test_compaction_frees_deleted_keys_index_entries_and_value_bytes():
    """After a create/update/delete burst, compacting at the current revision leaves nothing
    of the deleted keys: no history entry, no watch event, and their value bytes freed (what
    bench/scale.py --burst relies on for memory to come back)."""
    import gc
    import tracemalloc

    s = MVCCState(history_max_events=1_000_000)
    s.apply((PUT, 2, "/keep", b"k", 0))
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        revision = 2
        for i in range(2000):
            for _ in range(3):  # create, two updates: ~1.6 KB values, like a pod's writes
                revision += 1
                s.apply((PUT, revision, f"/pods/p{i}", bytes(1600) + revision.to_bytes(4, "big"), 0))
        for i in range(2000):
            revision += 1
            s.apply((DELETE, revision, f"/pods/p{i}"))
        grown = tracemalloc.get_traced_memory()[0] - before
        assert grown > 2000 * 3 * 1600, "the burst's values are held until compaction"
        assert len(s.changed) == 2000 and len(s.events) == 8001
        s.apply((COMPACT, revision, revision))
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert list(s.live) == ["/keep"] and not s.changed
    # etcd keeps the compaction revision itself: its one event (the last delete) stays
    assert [(e.kv.key, e.revision) for e in s.events] == [("/pods/p1999", revision)]
    assert left < grown / 50, f"{left} bytes still held after compaction (of {grown})"
