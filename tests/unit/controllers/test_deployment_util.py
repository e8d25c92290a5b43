"""The deployment controller's pure decisions: hash, fenceposts, new/old ReplicaSets,
annotations, rolling-update arithmetic, proportional scaling, cleanup, conditions, status."""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.api import meta
from minikube_py.controllers import deployment_status as ds
from minikube_py.controllers import deployment_util as du

Obj = dict[str, Any]
T0 = 1_700_000_000.0


def deployment(replicas: int = 3, surge: Any = "25%", unavailable: Any = "25%", *,
               strategy: str = "RollingUpdate", image: str = "nginx:1", generation: int = 1,
               status: Obj | None = None, **spec: Any) -> Obj:
    strat: Obj = {"type": strategy}
    if strategy == "RollingUpdate":
        strat["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "web", "namespace": "default", "uid": "d-uid",
                         "generation": generation},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}},
                     "strategy": strat, "revisionHistoryLimit": 10,
                     "progressDeadlineSeconds": 600, **spec},
            "status": status or {}}


def rs(name: str, replicas: int, *, available: int = 0, actual: int | None = None,
       created: float = T0, revision: int | None = None, image: str = "nginx:1",
       annotations: dict[str, str] | None = None, generation: int = 1,
       observed: int = 1) -> Obj:
    ann = dict(annotations or {})
    if revision is not None:
        ann[du.REVISION_ANNOTATION] = str(revision)
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "creationTimestamp": meta.rfc3339(created), "annotations": ann,
                         "generation": generation},
            "spec": {"replicas": replicas,
                     "template": {"metadata": {"labels": {"app": "web",
                                                          du.POD_TEMPLATE_HASH_LABEL: name}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"replicas": replicas if actual is None else actual,
                       "readyReplicas": available, "availableReplicas": available,
                       "observedGeneration": observed}}


# -- hashing ----------------------------------------------------------------------------------


def test_fnv32a_and_safe_encoding():
    assert du.fnv32a(b"") == 0x811C9DC5
    assert du.fnv32a(b"a") == 0xE40C292C
    assert du.fnv32a(b"foobar") == 0xBF9CF968
    assert du.safe_encode_string("123") == "567"
    assert du.safe_encode_string("0") == "4"


def test_compute_hash_follows_the_template_and_collision_count():
    t = deployment()["spec"]["template"]
    h = du.compute_hash(t)
    assert h == du.compute_hash({"spec": t["spec"], "metadata": t["metadata"]})  # key order
    assert h == du.compute_hash({**t, "metadata": {**t["metadata"], "creationTimestamp": None}})
    assert h != du.compute_hash(deployment(image="nginx:2")["spec"]["template"])
    assert h != du.compute_hash(t, 1) != du.compute_hash(t, 2)
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and 6 <= len(h) <= 10


def test_equal_ignore_hash():
    d = deployment()
    new = rs("web-abc", 3)
    assert du.equal_ignore_hash(new["spec"]["template"], d["spec"]["template"])
    assert not du.equal_ignore_hash(rs("x", 1, image="nginx:2")["spec"]["template"],
                                    d["spec"]["template"])


# -- fenceposts -------------------------------------------------------------------------------


@pytest.mark.parametrize("surge, unavailable, desired, expected", [
    ("25%", "25%", 3, (1, 0)),     # surge rounds up, unavailable down
    ("25%", "25%", 4, (1, 1)),
    ("50%", "50%", 5, (3, 2)),
    (0, 0, 3, (0, 1)),             # both zero would never progress
    (1, 0, 3, (1, 0)),
    ("0%", "0%", 10, (0, 1)),
    (None, None, 10, (0, 1)),
])
def test_resolve_fenceposts(surge, unavailable, desired, expected):
    assert du.resolve_fenceposts(surge, unavailable, desired) == expected


def test_scaled_value_rejects_non_percent_strings():
    with pytest.raises(ValueError):
        du.scaled_value("5", 10, True)


def test_max_surge_and_unavailable():
    assert (du.max_surge(deployment(10)), du.max_unavailable(deployment(10))) == (3, 2)
    assert du.max_unavailable(deployment(2, surge=0, unavailable=5)) == 2  # capped
    assert du.max_unavailable(deployment(0)) == 0
    recreate = deployment(strategy="Recreate")
    assert (du.max_surge(recreate), du.max_unavailable(recreate)) == (0, 0)


# -- new and old ReplicaSets --------------------------------------------------------------------


def test_find_new_and_old_replica_sets():
    d = deployment(image="nginx:2")
    older_match = rs("a", 0, image="nginx:2", created=T0)
    newer_match = rs("b", 0, image="nginx:2", created=T0 + 5)
    old = rs("c", 3, image="nginx:1")
    stopped = rs("d", 0, image="nginx:0")
    rss = [newer_match, old, older_match, stopped]
    assert du.find_new_replica_set(d, rss) is older_match
    required, every = du.find_old_replica_sets(d, rss)
    assert required == [old]
    assert {r["metadata"]["name"] for r in every} == {"b", "c", "d"}
    assert du.find_new_replica_set(deployment(image="nginx:9"), rss) is None


def test_new_rs_new_replicas():
    d = deployment(3, surge=1, unavailable=0)
    new = rs("n", 0)
    assert du.new_rs_new_replicas(d, [rs("o", 3), new], new) == 1
    grown = rs("n", 1)
    assert du.new_rs_new_replicas(d, [rs("o", 3), grown], grown) == 1  # at 4 = max already
    assert du.new_rs_new_replicas(d, [rs("o", 2), grown], grown) == 2
    assert du.new_rs_new_replicas(deployment(3, strategy="Recreate"), [rs("o", 3), new], new) == 3


def test_new_replica_set_object():
    d = deployment()
    made = du.new_replica_set(d, "5d4f8", 2)
    assert made["metadata"]["name"] == "web-5d4f8"
    assert made["metadata"]["labels"] == {"app": "web", "pod-template-hash": "5d4f8"}
    assert made["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": "5d4f8"}}
    assert made["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == "5d4f8"
    assert d["spec"]["template"]["metadata"]["labels"] == {"app": "web"}  # not mutated
    assert made["metadata"]["ownerReferences"] == [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-uid",
        "controller": True, "blockOwnerDeletion": True}]
    assert made["spec"]["replicas"] == 2


# -- annotations ----------------------------------------------------------------------------------


def test_new_replica_set_annotations_for_a_new_and_a_rolled_back_replica_set():
    d = deployment(4)
    d["metadata"]["annotations"] = {"team": "a", du.REVISION_ANNOTATION: "7",
                                    du.LAST_APPLIED_ANNOTATION: "{}"}
    fresh = {"metadata": {}}
    assert du.set_new_replica_set_annotations(d, fresh, "3", exists=False)
    assert fresh["metadata"]["annotations"] == {
        "team": "a", du.REVISION_ANNOTATION: "3", du.DESIRED_REPLICAS_ANNOTATION: "4",
        du.MAX_REPLICAS_ANNOTATION: "5"}
    # an old ReplicaSet made current again (a rollback) remembers its old revision
    back = rs("old", 0, revision=1, annotations={"team": "a"})
    assert du.set_new_replica_set_annotations(d, back, "4", exists=True)
    ann = back["metadata"]["annotations"]
    assert ann[du.REVISION_ANNOTATION] == "4" and ann[du.REVISION_HISTORY_ANNOTATION] == "1"
    back["metadata"]["annotations"][du.REVISION_ANNOTATION] = "4"
    du.set_new_replica_set_annotations(d, back, "6", exists=True)
    assert back["metadata"]["annotations"][du.REVISION_HISTORY_ANNOTATION] == "1,4"
    assert not du.set_new_replica_set_annotations(d, back, "6", exists=True)  # no change


# -- rolling update arithmetic ------------------------------------------------------------------


def test_old_replica_set_scale_down_budget_and_plans():
    d = deployment(3, surge=1, unavailable=0)
    new = rs("new", 1, available=0, created=T0 + 10)
    old = rs("old", 3, available=3)
    # 4 pods, 3 must stay available, the new one is not available yet: nothing may go
    assert du.old_scale_down_budget(d, [old, new], new) == 0
    ready_new = rs("new", 1, available=1, created=T0 + 10)
    assert du.old_scale_down_budget(d, [old, ready_new], ready_new) == 1
    assert du.scale_down_old_plan(d, [old, ready_new], [old]) == [(old, 2)]


def test_cleanup_unhealthy_replicas_goes_first_oldest_first():
    older = rs("older", 3, available=1, created=T0)
    newer = rs("newer", 2, available=0, created=T0 + 1)
    healthy = rs("healthy", 2, available=2, created=T0 - 5)
    plan = du.cleanup_unhealthy_plan([newer, healthy, older], 3)
    assert [(r["metadata"]["name"], n) for r, n in plan] == [("older", 1), ("newer", 1)]


def test_scale_down_old_plan_respects_minimum_availability():
    d = deployment(4, surge=1, unavailable=1)  # min available 3
    old1 = rs("o1", 2, available=2, created=T0)
    old2 = rs("o2", 2, available=2, created=T0 + 1)
    new = rs("new", 1, available=1, created=T0 + 2)
    plan = du.scale_down_old_plan(d, [old1, old2, new], [old2, old1])
    assert [(r["metadata"]["name"], n) for r, n in plan] == [("o1", 0)]  # 5 available, 3 kept
    assert du.scale_down_old_plan(d, [rs("o", 3, available=3)], [rs("o", 3, available=3)]) == []


# -- scaling ---------------------------------------------------------------------------------------


def test_proportional_scale_shares_new_replicas_by_size():
    d = deployment(12, surge=3, unavailable=0)
    ann = {du.MAX_REPLICAS_ANNOTATION: "13"}
    old = rs("old", 8, annotations=ann, created=T0)
    new = rs("new", 5, annotations=ann, created=T0 + 1)
    plan, operation = du.proportional_scale(d, [new, old])
    assert operation == "up"
    assert [(r["metadata"]["name"], n) for r, n in plan] == [("old", 9), ("new", 6)]
    # scaling to zero removes everything
    plan, operation = du.proportional_scale(deployment(0, surge=3, unavailable=0), [new, old])
    assert operation == "down" and [n for _, n in plan] == [0, 0]


def test_saturation_active_or_latest_and_scaling_events():
    d = deployment(3)
    full = rs("n", 3, available=3, annotations={du.DESIRED_REPLICAS_ANNOTATION: "3"})
    assert du.is_saturated(d, full)
    assert not du.is_saturated(d, rs("n", 3, available=2,
                                     annotations={du.DESIRED_REPLICAS_ANNOTATION: "3"}))
    assert not du.is_saturated(d, None)
    only = rs("a", 2)
    assert du.find_active_or_latest(None, [only, rs("b", 0)]) is only
    assert du.find_active_or_latest(rs("n", 1), [only]) is None
    latest = rs("z", 0, created=T0 + 9)
    assert du.find_active_or_latest(None, [rs("y", 0), latest]) is latest
    assert du.scaling_event(deployment(5), [full])
    assert not du.scaling_event(d, [full, rs("x", 1)])


def test_cleanup_candidates_keep_history_limit_and_skip_busy_ones():
    d = deployment(revisionHistoryLimit=1)
    r1, r2, r3 = rs("r1", 0, revision=1), rs("r2", 0, revision=2), rs("r3", 0, revision=3)
    assert du.cleanup_candidates(d, [r3, r1, r2]) == [r1, r2]
    busy = rs("r1", 0, revision=1, actual=1)  # pods still terminating
    unobserved = rs("r2", 0, revision=2, generation=3, observed=2)
    assert du.cleanup_candidates(d, [busy, unobserved, r3]) == []
    assert du.cleanup_candidates(deployment(revisionHistoryLimit=5), [r1, r2, r3]) == []


def test_old_pods_running():
    new = rs("new", 2)
    old = rs("old", 0, actual=0)
    pending = {"status": {"phase": "Pending"}}
    done = {"status": {"phase": "Succeeded"}}
    assert not du.old_pods_running(new, [old], {"uid-old": [done], "uid-new": [pending]})
    assert du.old_pods_running(new, [old], {"uid-old": [pending]})
    assert du.old_pods_running(new, [rs("old", 0, actual=1)], {})


# -- conditions and status ---------------------------------------------------------------------------


def test_set_condition_keeps_transition_time_when_status_holds():
    status: Obj = {}
    ds.set_condition(status, ds.new_condition("Progressing", "True", "A", "m", T0))
    ds.set_condition(status, ds.new_condition("Progressing", "True", "A", "m2", T0 + 5))
    assert status["conditions"][0]["message"] == "m"  # same status and reason: unchanged
    ds.set_condition(status, ds.new_condition("Progressing", "True", "B", "m3", T0 + 9))
    cond = status["conditions"][0]
    assert (cond["reason"], cond["lastTransitionTime"], cond["lastUpdateTime"]) == (
        "B", meta.rfc3339(T0), meta.rfc3339(T0 + 9))
    ds.remove_condition(status, "Progressing")
    assert "conditions" not in status


def test_calculate_status_counts_and_availability():
    d = deployment(4, surge=1, unavailable=1, generation=3)
    old = rs("old", 1, available=1)
    new = rs("new", 3, available=2)
    status = ds.calculate_status([old, new], new, d, T0)
    assert {k: status[k] for k in ("observedGeneration", "replicas", "updatedReplicas",
                                   "readyReplicas", "availableReplicas",
                                   "unavailableReplicas")} == {
        "observedGeneration": 3, "replicas": 4, "updatedReplicas": 3, "readyReplicas": 3,
        "availableReplicas": 3, "unavailableReplicas": 1}
    available = ds.get_condition(status, "Available")
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    status = ds.calculate_status([rs("new", 4, available=2)], None, d, T0)
    available = ds.get_condition(status, "Available")
    assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")


def test_rollout_status_progress_complete_timeout_and_failures():
    started = ds.new_condition("Progressing", "True", du.NEW_RS_REASON, "created", T0)
    d = deployment(2, status={"replicas": 2, "updatedReplicas": 0, "availableReplicas": 2,
                              "readyReplicas": 2, "conditions": [started]})
    old, new = rs("old", 1, available=1), rs("new", 1, available=1, created=T0 + 1)
    status = ds.rollout_status(d, [old, new], new, T0 + 5)
    cond = ds.get_condition(status, "Progressing")
    assert (cond["reason"], cond["message"]) == ("ReplicaSetUpdated",
                                                 'ReplicaSet "new" is progressing.')
    assert cond["lastTransitionTime"] == meta.rfc3339(T0)
    done = ds.rollout_status(d, [rs("old", 0, actual=0), rs("new", 2, available=2)],
                             rs("new", 2, available=2), T0 + 6)
    cond = ds.get_condition(done, "Progressing")
    assert (cond["reason"], cond["message"]) == ("NewReplicaSetAvailable",
                                                 'ReplicaSet "new" has successfully progressed.')
    assert ds.progress_recheck_after(d, done, T0 + 6) is None
    # no progress since the last report, past the deadline
    stuck = deployment(2, progressDeadlineSeconds=10, status={
        "replicas": 3, "updatedReplicas": 1, "availableReplicas": 2, "readyReplicas": 2,
        "conditions": [started]})
    old, new = rs("old", 2, available=2), rs("new", 1, available=0, created=T0 + 1)
    assert ds.progress_recheck_after(stuck, stuck["status"], T0 + 4) == pytest.approx(7)
    assert ds.progress_recheck_after(stuck, stuck["status"], T0 + 9.5) == 0
    status = ds.rollout_status(stuck, [old, new], new, T0 + 11)
    cond = ds.get_condition(status, "Progressing")
    assert (cond["status"], cond["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert not ds.deployment_timed_out(stuck, stuck["status"], T0 + 9)
    failing = rs("new", 1, created=T0 + 1)
    failing["status"]["conditions"] = [{"type": "ReplicaFailure", "status": "True",
                                        "reason": "FailedCreate", "message": "quota",
                                        "lastTransitionTime": meta.rfc3339(T0)}]
    status = ds.rollout_status(stuck, [old, failing], failing, T0 + 2)
    failure = ds.get_condition(status, "ReplicaFailure")
    assert (failure["reason"], failure["message"]) == ("FailedCreate", "quota")


def test_deployment_complete_needs_the_generation_observed():
    d = deployment(2, generation=2)
    status = {"replicas": 2, "updatedReplicas": 2, "availableReplicas": 2,
              "observedGeneration": 1}
    assert not ds.deployment_complete(d, status)
    assert ds.deployment_complete(d, {**status, "observedGeneration": 2})
