"""The garbage collector's graph bookkeeping and attemptToDeleteItem's decisions (upstream
garbagecollector_test / graph_builder cases), without a server."""

from __future__ import annotations

import pytest

from minikube_py.controllers.gc_graph import (
    FOREGROUND,
    ORPHAN,
    DependencyGraph,
    OwnerState,
    Plan,
    owner_state,
    plan_attempt_to_delete,
    references_diffs,
    unblocked,
)


def obj(name: str, uid: str, *owners: dict, deleting: bool = False,
        finalizers: tuple[str, ...] = ()) -> dict:
    md = {"name": name, "namespace": "ns", "uid": uid}
    if owners:
        md["ownerReferences"] = list(owners)
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if finalizers:
        md["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": md}


def ref(name: str, uid: str, block: bool = True) -> dict:
    return {"apiVersion": "v1", "kind": "ReplicationController", "name": name, "uid": uid,
            "blockOwnerDeletion": block}


def test_unseen_owner_becomes_a_virtual_node_to_verify():
    g = DependencyGraph()
    changes = g.upsert(obj("pod", "p1", ref("rc", "r1")))
    assert changes.attempt_to_delete == ["r1"]
    owner = g.get("r1")
    assert owner is not None and not owner.observed and owner.dependents == {"p1"}
    assert owner.identity.name == "rc" and owner.identity.namespace == "ns"
    # the owner shows up: observed, nothing to do
    assert g.upsert(obj("rc", "r1")).attempt_to_delete == []
    assert g.get("r1").observed
    # a virtual owner that turned out to be absent: its dependents are looked at
    g2 = DependencyGraph()
    g2.upsert(obj("pod", "p1", ref("rc", "r9")))
    assert g2.remove_virtual("r9").attempt_to_delete == ["p1"]
    assert g2.get("r9") is None


def test_deleting_an_owner_queues_its_dependents():
    g = DependencyGraph()
    g.upsert(obj("rc", "r1"))
    g.upsert(obj("pod-a", "a", ref("rc", "r1")))
    g.upsert(obj("pod-b", "b", ref("rc", "r1")))
    assert sorted(g.remove(obj("rc", "r1")).attempt_to_delete) == ["a", "b"]
    assert g.remove_virtual("a").attempt_to_delete == []    # observed nodes are not virtual


def test_foreground_transition_queues_dependents_and_owner_and_deletion_requeues_owner():
    g = DependencyGraph()
    rc = obj("rc", "r1")
    g.upsert(rc)
    g.upsert(obj("pod", "p1", ref("rc", "r1")))
    waiting = obj("rc", "r1", deleting=True, finalizers=(FOREGROUND,))
    changes = g.upsert(waiting, rc)
    assert changes.attempt_to_delete == ["p1", "r1"]
    assert g.get("r1").deleting_dependents and g.get("r1").being_deleted
    assert g.upsert(waiting, waiting).attempt_to_delete == []   # only on the transition
    assert [d.identity.uid for d in g.blocking_dependents("r1")] == ["p1"]
    assert g.remove(obj("pod", "p1")).attempt_to_delete == ["r1"]
    assert g.blocking_dependents("r1") == []


def test_orphan_transition_queues_the_owner_for_orphaning():
    g = DependencyGraph()
    rc = obj("rc", "r1")
    g.upsert(rc)
    changes = g.upsert(obj("rc", "r1", deleting=True, finalizers=(ORPHAN,)), rc)
    assert changes.attempt_to_orphan == ["r1"] and changes.attempt_to_delete == []


def test_owner_reference_changes_update_dependents_and_unblock_waiting_owners():
    g = DependencyGraph()
    g.upsert(obj("rc", "r1"))
    g.upsert(obj("rc2", "r2"))
    pod = obj("pod", "p1", ref("rc", "r1"))
    g.upsert(pod)
    moved = obj("pod", "p1", ref("rc2", "r2", block=False))
    changes = g.upsert(moved, pod)
    assert changes.attempt_to_delete == ["r1"]            # a blocking reference went away
    assert g.get("r1").dependents == set() and g.get("r2").dependents == {"p1"}
    assert g.blocking_dependents("r2") == []               # not blocking
    unblocked = obj("pod", "p1", ref("rc2", "r2", block=True))
    g.upsert(unblocked, moved)
    back = obj("pod", "p1", ref("rc2", "r2", block=False))
    assert g.upsert(back, unblocked).attempt_to_delete == ["r2"]


def test_references_diffs():
    a, b, b2, c = ref("a", "1"), ref("b", "2"), ref("b", "2", block=False), ref("c", "3")
    assert references_diffs([a, b], [b2, c]) == ([c], [a], [(b, b2)])


def test_owner_state_from_a_live_get():
    assert owner_state(None, "u") is OwnerState.DANGLING
    assert owner_state(obj("rc", "other"), "u") is OwnerState.DANGLING   # name reused
    assert owner_state(obj("rc", "u"), "u") is OwnerState.SOLID
    assert owner_state(obj("rc", "u", deleting=True), "u") is OwnerState.SOLID
    assert owner_state(obj("rc", "u", deleting=True, finalizers=(FOREGROUND,)), "u") \
        is OwnerState.WAITING


S, D, W = OwnerState.SOLID, OwnerState.DANGLING, OwnerState.WAITING
R1, R2 = ref("a", "1"), ref("b", "2")


@pytest.mark.parametrize("states, has_dependents, finalizers, expected", [
    ({"1": S}, False, [], Plan("none")),
    ({"1": S, "2": D}, False, [], Plan("patch", owner_references=[R1])),
    ({"1": S, "2": W}, False, [], Plan("patch", owner_references=[R1])),
    ({"1": D, "2": D}, False, [], Plan("delete", "Background")),
    ({"1": D, "2": W}, False, [], Plan("delete", "Background")),
    ({"1": W}, True, [], Plan("delete", "Foreground")),       # the wait propagates down
    ({"1": D}, True, [], Plan("delete", "Background")),
    ({"1": D}, False, [ORPHAN], Plan("delete", "Orphan")),
    ({"1": D}, False, [FOREGROUND], Plan("delete", "Foreground")),
])
def test_plan_attempt_to_delete(states, has_dependents, finalizers, expected):
    refs = [r for r in (R1, R2) if r["uid"] in states]
    assert plan_attempt_to_delete(refs, states, has_dependents, finalizers) == expected


def test_a_waiting_dependent_of_a_waiting_item_unblocks_its_references():
    """upstream attemptToDeleteItem's cycle detection: owner waiting, a dependent waiting too"""
    refs = [ref("owner", "o1")]
    waiting = {"o1": OwnerState.WAITING}
    assert plan_attempt_to_delete(refs, waiting, True, [], dependent_waiting=True) == Plan(
        "delete", "Foreground", unblock=True)
    assert plan_attempt_to_delete(refs, waiting, True, []) == Plan("delete", "Foreground")
    assert unblocked([ref("a", "1"), ref("b", "2", block=False)]) == [
        ref("a", "1", block=False), ref("b", "2", block=False)]
