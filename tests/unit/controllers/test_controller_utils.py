"""Pure parts of the workload controllers: expectations, pod activity and availability, the
order pods are deleted in, pods made from templates, slow-start batches, and the replica
status computed from pods."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from minikube_py.api import meta
from minikube_py.api.labels import NOTHING
from minikube_py.controllers.controller_utils import (
    ControllerExpectations,
    controller_ref,
    deletion_rank,
    get_controller_of,
    is_pod_active,
    is_pod_available,
    label_selector,
    pod_from_template,
    pods_to_delete,
    slow_start_batch,
)
from minikube_py.controllers.replicaset import calculate_status, status_unchanged

Obj = dict[str, Any]
T0 = 1_700_000_000.0


def pod(name: str, *, node: str = "", phase: str = "Pending", ready: bool | None = None,
        ready_since: float = T0, restarts: int = 0, created: float = T0,
        labels: dict[str, str] | None = None, deleting: bool = False) -> Obj:
    status: Obj = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                 "lastTransitionTime": meta.rfc3339(ready_since)}]
    if restarts:
        status["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    md: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}",
               "creationTimestamp": meta.rfc3339(created), "labels": labels or {"app": "x"}}
    if deleting:
        md["deletionTimestamp"] = meta.rfc3339(created)
    return {"metadata": md, "spec": {"nodeName": node}, "status": status}


# -- expectations ------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_expectations_wait_for_every_creation():
    exp = ControllerExpectations()
    assert exp.satisfied("ns/rc")  # never set: sync
    exp.expect_creations("ns/rc", 2)
    assert not exp.satisfied("ns/rc")
    exp.creation_observed("ns/rc")
    assert not exp.satisfied("ns/rc")
    exp.creation_observed("ns/rc")
    assert exp.satisfied("ns/rc")
    assert exp.get("ns/rc") == (0, 0)
    exp.delete("ns/rc")
    assert exp.get("ns/rc") is None


def test_expectations_count_each_deleted_pod_once():
    exp = ControllerExpectations()
    exp.expect_deletions("ns/rc", ["ns/a", "ns/b"])
    exp.deletion_observed("ns/rc", "ns/a")
    exp.deletion_observed("ns/rc", "ns/a")  # graceful delete: seen again when it is gone
    exp.deletion_observed("ns/rc", "ns/zzz")  # not one we deleted
    assert exp.get("ns/rc") == (0, 1)
    assert not exp.satisfied("ns/rc")
    exp.lower("ns/rc", delete=1, pod_keys=["ns/b"])  # the delete call failed
    assert exp.satisfied("ns/rc")


def test_expectations_expire_after_ttl():
    clock = Clock()
    exp = ControllerExpectations(ttl=300, clock=clock)
    exp.expect_creations("ns/rc", 3)
    clock.now = 299
    assert not exp.satisfied("ns/rc")
    clock.now = 301
    assert exp.satisfied("ns/rc")


# -- pods ----------------------------------------------------------------------------------


def test_active_and_available():
    assert is_pod_active(pod("a"))
    assert not is_pod_active(pod("a", phase="Succeeded"))
    assert not is_pod_active(pod("a", phase="Failed"))
    assert not is_pod_active(pod("a", deleting=True))
    ready = pod("a", phase="Running", ready=True, ready_since=T0)
    assert is_pod_available(ready, 0, T0)
    assert not is_pod_available(ready, 10, T0 + 10)  # must be ready for more than 10 s
    assert is_pod_available(ready, 10, T0 + 10.5)
    assert not is_pod_available(pod("b", phase="Running", ready=False), 0, T0)


@pytest.mark.parametrize("first, second, colocated", [
    (pod("unassigned"), pod("assigned", node="n1"), (0, 0)),
    (pod("pending", node="n1"), pod("running", node="n1", phase="Running"), (0, 0)),
    (pod("unknown", node="n1", phase="Unknown"), pod("running", node="n1", phase="Running"),
     (0, 0)),
    (pod("notready", node="n1", phase="Running", ready=False),
     pod("ready", node="n1", phase="Running", ready=True), (0, 0)),
    (pod("doubled", node="n1", phase="Running", ready=True),
     pod("alone", node="n2", phase="Running", ready=True), (2, 1)),
    (pod("recent", node="n1", phase="Running", ready=True, ready_since=T0 + 50),
     pod("longer", node="n1", phase="Running", ready=True, ready_since=T0), (0, 0)),
    (pod("crashy", node="n1", phase="Running", ready=True, restarts=5),
     pod("steady", node="n1", phase="Running", ready=True, restarts=1), (0, 0)),
    (pod("newer", node="n1", phase="Running", created=T0 + 9),
     pod("older", node="n1", phase="Running", created=T0), (0, 0)),
])
def test_deletion_rank_orders_pods_like_active_pods_with_ranks(first, second, colocated):
    assert deletion_rank(first, colocated[0]) < deletion_rank(second, colocated[1])
    assert not deletion_rank(second, colocated[1]) < deletion_rank(first, colocated[0])


def test_pods_to_delete_prefers_not_ready_and_doubled_up():
    pods = [pod("r1", node="n1", phase="Running", ready=True),
            pod("r2", node="n1", phase="Running", ready=True),
            pod("r3", node="n2", phase="Running", ready=True),
            pod("p1", node="n3")]
    doomed = pods_to_delete(pods, pods, 2)
    assert [p["metadata"]["name"] for p in doomed][0] == "p1"
    assert doomed[1]["metadata"]["name"] in ("r1", "r2")  # n1 has two: one goes
    assert pods_to_delete(pods, pods, 9) == pods


# -- owner references and templates -----------------------------------------------------------


def test_pod_from_template_carries_labels_owner_and_a_copy_of_the_spec():
    owner = {"metadata": {"name": "web", "uid": "u1"}}
    template = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    ref = controller_ref(owner, "v1", "ReplicationController")
    made = pod_from_template(template, owner, ref)
    assert made["metadata"]["generateName"] == "web-"
    assert made["metadata"]["labels"] == {"app": "web"}
    assert made["metadata"]["annotations"] == {"a": "b"}
    assert made["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "ReplicationController", "name": "web", "uid": "u1",
        "controller": True, "blockOwnerDeletion": True}]
    made["spec"]["containers"][0]["image"] = "changed"
    made["metadata"]["labels"]["x"] = "y"
    assert template["spec"]["containers"][0]["image"] == "nginx"
    assert template["metadata"]["labels"] == {"app": "web"}
    assert get_controller_of(made) == ref
    assert get_controller_of({"metadata": {"ownerReferences": [{"uid": "x"}]}}) is None


def test_label_selector_none_selects_nothing_and_is_cached():
    assert label_selector(None) is NOTHING
    a = label_selector({"matchLabels": {"app": "x"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]}]})
    b = label_selector({"matchExpressions": [{"values": ["a", "b"], "operator": "In",
                                              "key": "tier"}], "matchLabels": {"app": "x"}})
    assert a is b
    assert a.matches({"app": "x", "tier": "b"}) and not a.matches({"app": "x", "tier": "c"})


# -- slow start ------------------------------------------------------------------------------


async def test_slow_start_batch_doubles_and_stops_at_the_first_failing_batch():
    starts: list[int] = []  # calls finished when each call started: equal within a batch
    finished = 0

    async def ok() -> None:
        nonlocal finished
        starts.append(finished)
        await asyncio.sleep(0)
        finished += 1

    assert await slow_start_batch(10, 1, ok) == (10, None)
    assert [starts.count(v) for v in dict.fromkeys(starts)] == [1, 2, 4, 3]

    calls = 0

    async def fails_from_fourth() -> None:
        nonlocal calls
        calls += 1
        if calls >= 4:
            raise RuntimeError("quota exceeded")

    successes, error = await slow_start_batch(10, 1, fails_from_fourth)
    assert (successes, str(error)) == (3, "quota exceeded")  # batches 1, 2, then 4 of which 1 ok
    assert calls == 7


# -- replica status ----------------------------------------------------------------------------


def test_calculate_status_counts_and_failure_condition():
    owner = {"metadata": {"generation": 2},
             "spec": {"replicas": 3, "minReadySeconds": 5,
                      "template": {"metadata": {"labels": {"app": "x", "tier": "fe"}}}},
             "status": {"replicas": 1, "observedGeneration": 1}}
    pods = [pod("a", phase="Running", ready=True, ready_since=T0,
                labels={"app": "x", "tier": "fe"}),
            pod("b", phase="Running", ready=True, ready_since=T0 + 8, labels={"app": "x"}),
            pod("c", labels={"app": "x", "tier": "fe"})]
    status = calculate_status(owner, pods, None, 0, T0 + 10)
    assert {k: status[k] for k in ("replicas", "fullyLabeledReplicas", "readyReplicas",
                                   "availableReplicas")} == {
        "replicas": 3, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 1}
    assert "conditions" not in status
    failed = calculate_status(owner, pods[:1], RuntimeError("forbidden"), -2, T0)
    assert failed["conditions"] == [{"type": "ReplicaFailure", "status": "True",
                                     "lastTransitionTime": meta.rfc3339(T0),
                                     "reason": "FailedCreate", "message": "forbidden"}]
    recovered = calculate_status({**owner, "status": failed}, pods, None, 0, T0)
    assert "conditions" not in recovered
    assert not status_unchanged(owner, status)
    written = {**owner, "status": {**status, "observedGeneration": 2}}
    assert status_unchanged(written, calculate_status(written, pods, None, 0, T0 + 10))
