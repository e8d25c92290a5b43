"""The pure decisions of the DaemonSet and StatefulSet controllers and of revision history:
which nodes run a daemon pod, what a rolling update replaces, what an ordinal's pod and claims
look like, which revision is which. Table-driven, no I/O."""

from __future__ import annotations

import pytest

from minikube_py.api.nodeaffinity import required_affinity_matches
from minikube_py.controllers import daemonset_util as ds_util
from minikube_py.controllers import statefulset_util as sts_util
from minikube_py.controllers.history import (
    equal_revision,
    hash_revision,
    new_revision,
    next_revision,
    template_patch,
)

NOW = 1_000_000.0


def node(name: str, labels: dict | None = None, taints: list | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []}}


def ds(**spec) -> dict:
    template_spec = {"containers": [{"name": "c", "image": "x"}], **spec.pop("pod", {})}
    return {"metadata": {"name": "d", "namespace": "ns", "uid": "u1",
                         "annotations": {"deprecated.daemonset.template.generation": "3"}},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}}, "spec": template_spec},
                     **spec}}


def pod(name: str, labels: dict | None = None, ready: bool = True,
        created: str = "2024-01-01T00:00:00Z", phase: str = "Running") -> dict:
    conditions = [{"type": "Ready", "status": "True" if ready else "False",
                   "lastTransitionTime": "2024-01-01T00:00:00Z"}]
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels or {},
                         "creationTimestamp": created},
            "spec": {}, "status": {"phase": phase, "conditions": conditions}}


@pytest.mark.parametrize(("pod_spec", "node_obj", "expected"), [
    ({}, node("a"), (True, True)),
    ({"nodeSelector": {"disk": "ssd"}}, node("a", {"disk": "hdd"}), (False, False)),
    ({"nodeName": "b"}, node("a"), (False, False)),
    # a NoSchedule taint the pod does not tolerate: no new pod, an existing one may stay
    ({}, node("a", taints=[{"key": "k", "effect": "NoSchedule"}]), (False, True)),
    # NoExecute: not even an existing pod may stay
    ({}, node("a", taints=[{"key": "k", "effect": "NoExecute"}]), (False, False)),
    # the automatic tolerations: cordoned, not-ready and pressured nodes still run daemons
    ({}, node("a", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                           {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                           {"key": "node.kubernetes.io/memory-pressure",
                            "effect": "NoSchedule"}]), (True, True)),
    # network-unavailable is tolerated only by host-network pods
    ({}, node("a", taints=[{"key": "node.kubernetes.io/network-unavailable",
                            "effect": "NoSchedule"}]), (False, True)),
    ({"hostNetwork": True}, node("a", taints=[{"key": "node.kubernetes.io/network-unavailable",
                                               "effect": "NoSchedule"}]), (True, True)),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["z1"]}]}]}}}},
     node("a", {"zone": "z2"}), (False, False)),
])
def test_node_should_run_daemon_pod(pod_spec: dict, node_obj: dict, expected: tuple) -> None:
    assert ds_util.should_run(ds_util.daemon_pod_spec(ds(pod=pod_spec)), node_obj) == expected


def test_pod_template_labels_tolerations_and_pinning() -> None:
    template = ds_util.pod_template(ds(), "h1")
    labels = template["metadata"]["labels"]
    assert labels == {"a": "b", "pod-template-generation": "3", "controller-revision-hash": "h1"}
    pinned = ds_util.pin_to_node(template, "n7")
    assert ds_util.target_node_name({"spec": pinned["spec"]}) == "n7"
    assert "affinity" not in template["spec"]  # the shared template is not modified
    assert required_affinity_matches(pinned["spec"], node("n7"))
    assert not required_affinity_matches(pinned["spec"], node("n8"))


@pytest.mark.parametrize(("rolling", "desired", "expected"), [
    ({"maxUnavailable": 1, "maxSurge": 0}, 10, (0, 1)),
    ({"maxUnavailable": "25%", "maxSurge": 0}, 10, (0, 3)),  # rounded up
    ({"maxUnavailable": 0, "maxSurge": "10%"}, 5, (1, 0)),
    ({"maxUnavailable": "1%", "maxSurge": 0}, 0, (0, 1)),  # both 0: one at a time
])
def test_surge_and_unavailable(rolling: dict, desired: int, expected: tuple) -> None:
    obj = ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    assert ds_util.surge_and_unavailable(obj, desired) == expected


def test_rolling_update_replaces_unavailable_old_pods_first_within_budget() -> None:
    obj = ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})
    old = {"controller-revision-hash": "old"}
    by_node = {
        "n1": [pod("p1", old)],
        "n2": [pod("p2", old)],
        "n3": [pod("p3", old, ready=False)],  # not available: always replaceable
        "n4": [pod("p4", {"controller-revision-hash": "new"})],
    }
    delete, create = ds_util.rolling_update_plan(obj, by_node, ["n1", "n2", "n3", "n4"], "new",
                                                 NOW)
    assert [p["metadata"]["name"] for p in delete] == ["p3", "p1"] and create == []
    # a node without a pod counts as unavailable: the budget is spent
    delete, _ = ds_util.rolling_update_plan(obj, {"n1": [pod("p1", old)]}, ["n1", "n5"], "new",
                                            NOW)
    assert delete == []


def test_rolling_update_with_surge_creates_then_deletes() -> None:
    obj = ds(updateStrategy={"type": "RollingUpdate",
                             "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})
    old = {"controller-revision-hash": "old"}
    new = {"controller-revision-hash": "new"}
    delete, create = ds_util.rolling_update_plan(
        obj, {"n1": [pod("p1", old)], "n2": [pod("p2", old)]}, ["n1", "n2"], "new", NOW)
    assert delete == [] and create == ["n1"]
    delete, create = ds_util.rolling_update_plan(
        obj, {"n1": [pod("p1", old), pod("q1", new)], "n2": [pod("p2", old)]}, ["n1", "n2"],
        "new", NOW)
    assert [p["metadata"]["name"] for p in delete] == ["p1"] and create == ["n2"]


def test_plan_node_deletes_failed_and_duplicate_pods() -> None:
    obj = ds()
    plan = ds_util.NodePlan()
    ds_util.plan_node(obj, (True, True), "a", [
        pod("young", created="2024-01-02T00:00:00Z"), pod("old", created="2024-01-01T00:00:00Z"),
        pod("failed", phase="Failed")], "h", NOW, plan)
    assert [p["metadata"]["name"] for p in plan.delete] == ["young"]
    assert [(n, p["metadata"]["name"]) for n, p in plan.failed] == [("a", "failed")]
    assert plan.create_on == []


def test_failed_pod_backoff_doubles_and_resets() -> None:
    backoff = ds_util.FailedPodBackoff(initial=1, maximum=4)
    assert backoff.wait("k", 0) == 0
    backoff.next("k", 0)
    assert backoff.wait("k", 0.5) == 0.5 and backoff.wait("k", 1) == 0
    for now, delay in ((1, 2), (3, 4), (7, 4)):
        backoff.next("k", now)
        assert backoff.wait("k", now) == delay
    backoff.next("k", 100)  # quiet for more than twice the maximum: from the start again
    assert backoff.wait("k", 100) == 1


def test_daemon_status_counts() -> None:
    obj = ds(pod={"nodeSelector": {"run": "yes"}})
    spec = ds_util.daemon_pod_spec(obj)
    nodes = [node("a", {"run": "yes"}), node("b", {"run": "yes"}), node("c")]
    by_node = {"a": [pod("p1", {"pod-template-generation": "3"})],
               "c": [pod("p3", ready=False)]}
    status = ds_util.calculate_status(obj, ds_util.verdicts(spec, nodes), by_node, "h", NOW)
    assert status == {"currentNumberScheduled": 1, "numberMisscheduled": 1,
                      "desiredNumberScheduled": 2, "numberReady": 1,
                      "updatedNumberScheduled": 1, "numberAvailable": 1, "numberUnavailable": 1}


# ---------------------------------------------------------------------------------------------
# StatefulSets


def sts(**spec) -> dict:
    return {"metadata": {"name": "web", "namespace": "ns", "uid": "s1"},
            "spec": {"serviceName": "nginx", "replicas": 2,
                     "selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"metadata": {"labels": {"app": "nginx"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}],
                                           "volumes": [{"name": "www", "emptyDir": {}}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "www"},
                                               "spec": {"accessModes": ["ReadWriteOnce"]},
                                               "status": {"phase": "Pending"}}],
                     **spec}}


def test_ordinals_and_names() -> None:
    assert sts_util.parent_and_ordinal({"metadata": {"name": "web-12"}}) == ("web", 12)
    assert sts_util.parent_and_ordinal({"metadata": {"name": "web"}}) == ("", -1)
    assert sts_util.is_member_of(sts(), {"metadata": {"name": "web-0"}})
    assert not sts_util.is_member_of(sts(), {"metadata": {"name": "webby-0"}})


def test_new_pod_identity_and_storage() -> None:
    made = sts_util.new_pod(sts(), 1, "web-abc")
    md = made["metadata"]
    assert md["name"] == "web-1" and "generateName" not in md
    assert md["labels"] == {"app": "nginx", "statefulset.kubernetes.io/pod-name": "web-1",
                            "apps.kubernetes.io/pod-index": "1",
                            "controller-revision-hash": "web-abc"}
    assert (made["spec"]["hostname"], made["spec"]["subdomain"]) == ("web-1", "nginx")
    # the claim replaces the template's own volume of the same name
    assert made["spec"]["volumes"] == [{"name": "www",
                                        "persistentVolumeClaim": {"claimName": "www-web-1"}}]
    claim = sts_util.claims_for(sts(), 1)["www"]
    assert claim["metadata"]["name"] == "www-web-1" and "status" not in claim
    assert claim["metadata"]["labels"] == {"app": "nginx"}


def test_versioned_pod_keeps_ordinals_below_the_partition_at_the_current_revision() -> None:
    current = sts(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    update = {**current, "spec": {**current["spec"], "template": {
        "metadata": {"labels": {"app": "nginx"}},
        "spec": {"containers": [{"name": "c", "image": "y"}]}}}}
    low = sts_util.versioned_pod(current, update, "cur", "upd", 1)
    high = sts_util.versioned_pod(current, update, "cur", "upd", 2)
    assert low["metadata"]["labels"]["controller-revision-hash"] == "cur"
    assert high["metadata"]["labels"]["controller-revision-hash"] == "upd"
    assert high["spec"]["containers"][0]["image"] == "y"


@pytest.mark.parametrize(("policy", "replicas", "expected"), [
    ({"whenDeleted": "Retain", "whenScaled": "Retain"}, 1, []),
    ({"whenDeleted": "Delete", "whenScaled": "Retain"}, 3, ["StatefulSet"]),
    ({"whenDeleted": "Retain", "whenScaled": "Delete"}, 3, []),
    ({"whenDeleted": "Retain", "whenScaled": "Delete"}, 1, ["Pod"]),  # ordinal 2 condemned
    ({"whenDeleted": "Delete", "whenScaled": "Delete"}, 1, ["Pod"]),
])
def test_claim_owners_follow_the_retention_policy(policy: dict, replicas: int,
                                                  expected: list) -> None:
    obj = sts(persistentVolumeClaimRetentionPolicy=policy, replicas=replicas)
    the_pod = {"metadata": {"name": "web-2", "uid": "p2"}}
    owners = sts_util.wanted_claim_owners(obj, the_pod, 2)
    assert [o["kind"] for o in owners] == expected


def test_replica_status_and_completed_rolling_update() -> None:
    pods = [pod("web-0", {"controller-revision-hash": "r2"}),
            pod("web-1", {"controller-revision-hash": "r2"}, ready=False)]
    status = sts_util.replica_status(pods, "r1", "r2", 0, NOW)
    assert status == {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                      "currentReplicas": 0, "updatedReplicas": 2}
    status.update(currentRevision="r1", updateRevision="r2", readyReplicas=2)
    sts_util.complete_rolling_update(sts(updateStrategy={"type": "RollingUpdate"}), status)
    assert (status["currentRevision"], status["currentReplicas"]) == ("r2", 2)


# ---------------------------------------------------------------------------------------------
# Revisions


def test_revision_data_hash_and_equality() -> None:
    obj = sts()
    data = template_patch(obj)
    assert data["spec"]["template"]["$patch"] == "replace"
    assert "$patch" not in obj["spec"]["template"]  # the owner is not modified
    ref = {"kind": "StatefulSet", "name": "web", "uid": "s1", "controller": True}
    rev = new_revision(obj, ref, {"app": "nginx"}, data, 4, 0)
    assert rev["metadata"]["name"] == f"web-{hash_revision(data, 0)}"
    assert rev["metadata"]["labels"]["controller.kubernetes.io/hash"] == hash_revision(data, 0)
    assert hash_revision(data, 0) != hash_revision(data, 1)
    assert equal_revision(rev, new_revision(obj, ref, {}, data, 9, 0))
    other = new_revision(obj, ref, {}, template_patch({"spec": {"template": {}}}), 4, 0)
    assert not equal_revision(rev, other)
    assert next_revision([rev, {"revision": 7}]) == 8 and next_revision([]) == 1
    restored = sts_util.apply_revision(sts(replicas=5), rev)
    assert restored["spec"]["template"] == obj["spec"]["template"]
    assert restored["spec"]["replicas"] == 5


def test_min_ready_seconds_delays_availability() -> None:
    from minikube_py.api.meta import parse_rfc3339

    now = parse_rfc3339("2024-01-01T00:00:05Z")  # the pods turned Ready 5 s before
    pods = [pod("web-0", {"controller-revision-hash": "r"})]
    assert sts_util.replica_status(pods, "r", "r", 3, now)["availableReplicas"] == 1
    assert sts_util.replica_status(pods, "r", "r", 10, now)["availableReplicas"] == 0
    assert not sts_util.is_healthy(pods[0], 10, now)
    obj = ds(minReadySeconds=10)
    status = ds_util.calculate_status(obj, {"a": (True, True)}, {"a": pods}, "r", now)
    assert (status["numberReady"], status["numberAvailable"]) == (1, 0)
