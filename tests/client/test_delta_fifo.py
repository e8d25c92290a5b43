"""DeltaFIFO unit cases, modelled on upstream client-go tools/cache/delta_fifo_test.go."""

from __future__ import annotations

import asyncio

import pytest

from minikube_py.client.cache import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    DeltaFIFO,
    FIFOClosedError,
    Indexer,
    Requeue,
)


def obj(name: str, value: int) -> dict:
    return {"metadata": {"name": name, "resourceVersion": str(value)}, "value": value}


def known(*objs: dict) -> Indexer:
    ix = Indexer()
    for o in objs:
        ix.add(o)
    return ix


def pop(f: DeltaFIFO) -> list:
    got: list = []
    f.pop_nowait(lambda deltas, initial: got.extend(deltas))
    return got


def pop_all(f: DeltaFIFO) -> list[list]:
    out = []
    while len(f):
        out.append(pop(f))
    return out


def test_basic_order_and_deltas_per_object():
    """detectLineJumpers: one place in line per object, all its changes in order."""
    f = DeltaFIFO()
    f.add(obj("foo", 10))
    f.update(obj("bar", 1))
    f.add(obj("foo", 11))
    f.update(obj("foo", 13))
    f.add(obj("zab", 30))
    assert pop_all(f) == [
        [(ADDED, obj("foo", 10)), (ADDED, obj("foo", 11)), (UPDATED, obj("foo", 13))],
        [(UPDATED, obj("bar", 1))],
        [(ADDED, obj("zab", 30))],
    ]
    assert f.pop_nowait(lambda d, i: None) is None


def test_delete_of_an_unknown_unqueued_object_is_dropped():
    f = DeltaFIFO(known_objects=known())
    f.delete(obj("foo", 1))
    assert len(f) == 0
    f = DeltaFIFO()  # no known objects: only the queue counts
    f.delete(obj("foo", 1))
    assert len(f) == 0


def test_delete_existing_non_propagated():
    """An object added then deleted before it was popped: both deltas are delivered."""
    f = DeltaFIFO(known_objects=known())
    f.add(obj("foo", 5))
    f.delete(obj("foo", 6))
    assert pop(f) == [(ADDED, obj("foo", 5)), (DELETED, obj("foo", 6))]


def test_delete_of_a_known_object_is_queued():
    f = DeltaFIFO(known_objects=known(obj("foo", 5)))
    f.delete(obj("foo", 6))
    assert pop(f) == [(DELETED, obj("foo", 6))]


def test_consecutive_deletes_collapse_keeping_the_real_final_state():
    f = DeltaFIFO(known_objects=known(obj("foo", 5)))
    f.delete(obj("foo", 6))
    f.delete(obj("foo", 7))
    assert pop(f) == [(DELETED, obj("foo", 6))]


def test_replace_makes_tombstones_for_known_objects_the_list_lacks():
    """ReplaceMakesDeletions: a queued delete keeps its real state; a known object missing
    from the list gets a DeletedFinalStateUnknown with its last known state."""
    f = DeltaFIFO(known_objects=known(obj("foo", 5), obj("bar", 6), obj("baz", 7)))
    f.delete(obj("baz", 10))
    f.replace([obj("foo", 5)], "0")
    assert pop_all(f) == [
        [(DELETED, obj("baz", 10))],
        [(SYNC, obj("foo", 5))],
        [(DELETED, DeletedFinalStateUnknown("bar", obj("bar", 6)))],
    ]
    # starting with the object queued: the tombstone carries the queued (newest) state
    f = DeltaFIFO(known_objects=known(obj("foo", 5), obj("bar", 6), obj("baz", 7)))
    f.add(obj("baz", 10))
    f.replace([obj("foo", 5)], "0")
    assert pop_all(f) == [
        [(ADDED, obj("baz", 10)), (DELETED, DeletedFinalStateUnknown("baz", obj("baz", 10)))],
        [(SYNC, obj("foo", 5))],
        [(DELETED, DeletedFinalStateUnknown("bar", obj("bar", 6)))],
    ]


@pytest.mark.parametrize("with_known", [True, False])
@pytest.mark.parametrize("case", [
    "added", "replaced", "deleted", "synced", "multiple-replaces", "added-deleted-added"])
def test_replace_makes_deletions_for_objects_only_in_queue(case: str, with_known: bool):
    o, o2 = obj("foo", 2), obj("foo", 3)
    tomb = DeletedFinalStateUnknown("foo", o)
    f = DeltaFIFO(known_objects=known() if with_known else None,
                  emit_delta_type_replaced=case == "replaced")
    f.add(o)
    if case == "added":
        f.replace([], "0")
        expected = [(ADDED, o), (DELETED, tomb)]
    elif case == "replaced":
        f.replace([o], "0")
        f.replace([], "0")
        expected = [(ADDED, o), (REPLACED, o), (DELETED, tomb)]
    elif case == "deleted":
        f.delete(o)
        f.replace([], "0")
        expected = [(ADDED, o), (DELETED, o)]
    elif case == "synced":
        f.replace([o], "0")
        f.replace([o], "0")
        f.replace([], "0")
        expected = [(ADDED, o), (SYNC, o), (SYNC, o), (DELETED, tomb)]
    elif case == "multiple-replaces":
        f.replace([], "0")
        f.replace([], "1")
        expected = [(ADDED, o), (DELETED, tomb)]
    else:
        f.delete(o)
        f.add(o2)
        f.replace([], "0")
        expected = [(ADDED, o), (DELETED, o), (ADDED, o2),
                    (DELETED, DeletedFinalStateUnknown("foo", o2))]
    assert pop(f) == expected
    assert len(f) == 0


def test_replace_with_delete_delta_in_queue():
    f = DeltaFIFO(known_objects=known(obj("foo", 5)), emit_delta_type_replaced=True)
    f.delete(obj("foo", 6))
    f.replace([obj("foo", 6)], "0")
    assert pop(f) == [(DELETED, obj("foo", 6)), (REPLACED, obj("foo", 6))]


def test_resync_queues_sync_only_for_objects_with_nothing_queued():
    """UpdateResyncRace: a queued update must not be followed by the cache's older copy."""
    f = DeltaFIFO(known_objects=known(obj("foo", 5), obj("bar", 1)))
    f.update(obj("foo", 6))
    f.resync()
    assert pop_all(f) == [[(UPDATED, obj("foo", 6))], [(SYNC, obj("bar", 1))]]
    assert DeltaFIFO().resync() is None  # no known objects: nothing to resync


def test_has_synced_after_the_initial_replace_is_popped():
    f = DeltaFIFO(known_objects=known(obj("gone", 1)))
    assert not f.has_synced()
    f.replace([obj("a", 1), obj("b", 2)], "0")
    assert not f.has_synced()
    initial_flags = []
    for _ in range(3):  # a, b and the tombstone for "gone"
        f.pop_nowait(lambda d, initial: initial_flags.append(initial))
    assert f.has_synced() and initial_flags == [True, True, True]
    f.add(obj("c", 3))
    f.pop_nowait(lambda d, initial: initial_flags.append(initial))
    assert initial_flags[-1] is False
    empty = DeltaFIFO()
    empty.replace([], "0")
    assert empty.has_synced()
    added_first = DeltaFIFO()
    added_first.add(obj("a", 1))
    assert added_first.has_synced()  # populated by an add: nothing initial to wait for


def test_requeue_on_pop():
    f = DeltaFIFO()
    f.add(obj("foo", 10))

    def requeue(deltas, initial):
        raise Requeue()

    f.pop_nowait(requeue)
    assert f.get_by_key("foo") == [(ADDED, obj("foo", 10))]

    def requeue_with_error(deltas, initial):
        raise Requeue(ValueError("boom"))

    with pytest.raises(ValueError, match="boom"):
        f.pop_nowait(requeue_with_error)
    assert f.list_keys() == ["foo"]

    def plain_error(deltas, initial):
        raise KeyError("not requeued")

    with pytest.raises(KeyError):
        f.pop_nowait(plain_error)
    assert f.list_keys() == [] and len(f) == 0


def test_requeue_keeps_newer_deltas_when_some_arrived():
    f = DeltaFIFO()
    f.add(obj("foo", 1))

    def add_newer_then_requeue(deltas, initial):
        f.update(obj("foo", 2))
        raise Requeue()

    f.pop_nowait(add_newer_then_requeue)
    assert pop(f) == [(UPDATED, obj("foo", 2))]


def test_add_if_not_present():
    f = DeltaFIFO()
    f.add(obj("b", 3))
    b3 = pop(f)
    f.add(obj("c", 4))
    f.add_if_not_present(b3)
    f.add_if_not_present([(ADDED, obj("c", 5))])  # c is queued: ignored
    assert pop_all(f) == [[(ADDED, obj("c", 4))], [(ADDED, obj("b", 3))]]


def test_key_of_objects_tombstones_and_deltas():
    f = DeltaFIFO()
    assert f.key_of({"metadata": {"name": "p", "namespace": "ns"}}) == "ns/p"
    assert f.key_of(DeletedFinalStateUnknown("ns/q", None)) == "ns/q"
    assert f.key_of([(ADDED, obj("a", 1)), (DELETED, DeletedFinalStateUnknown("b", None))]) == "b"
    with pytest.raises(ValueError):
        f.key_of([])


def test_transformer_runs_once_per_object_never_on_tombstones_or_syncs():
    seen: list = []

    def transform(o):
        seen.append(o["metadata"]["name"])
        return dict(o, transformed=True)

    cache = known(obj("k", 1))
    f = DeltaFIFO(known_objects=cache, transformer=transform, emit_delta_type_replaced=True)
    f.add(obj("a", 1))
    f.update(obj("a", 2))
    f.replace([obj("b", 1)], "0")  # a and k go as tombstones: not transformed
    assert seen == ["a", "a", "b"]
    deltas = pop_all(f)
    assert deltas[0][:2] == [(ADDED, dict(obj("a", 1), transformed=True)),
                             (UPDATED, dict(obj("a", 2), transformed=True))]
    assert deltas[0][2] == (DELETED, DeletedFinalStateUnknown(
        "a", dict(obj("a", 2), transformed=True)))
    f.resync()  # k is still in the (unchanged) cache: Sync from the cache, not transformed
    assert seen == ["a", "a", "b"] and pop(f) == [(SYNC, obj("k", 1))]


def test_list_get_and_close():
    f = DeltaFIFO()
    f.add(obj("a", 1))
    f.update(obj("a", 2))
    assert f.list() == [obj("a", 2)]
    assert f.get(obj("a", 9)) == [(ADDED, obj("a", 1)), (UPDATED, obj("a", 2))]
    assert f.get_by_key("missing") is None
    copy = f.get_by_key("a")
    copy.clear()  # a copy: the queue is untouched
    assert len(f.get_by_key("a")) == 2


async def test_pop_waits_for_an_item_and_fails_once_closed():
    f = DeltaFIFO()
    got: list = []
    waiter = asyncio.create_task(f.pop(lambda d, i: got.extend(d)))
    await asyncio.sleep(0)
    assert not waiter.done()
    f.add(obj("a", 1))
    assert await asyncio.wait_for(waiter, 1) == [(ADDED, obj("a", 1))]
    closed = asyncio.create_task(f.pop(lambda d, i: None))
    await asyncio.sleep(0)
    f.close()
    with pytest.raises(FIFOClosedError):
        await asyncio.wait_for(closed, 1)
