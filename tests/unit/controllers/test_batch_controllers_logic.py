"""The pure decisions of the Job, CronJob, TTL-after-finished and pod GC controllers, and the
perl applet's π, table-driven without a server."""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.api import batch as b
from minikube_py.controllers import job_util as ju
from minikube_py.controllers.cronjob import (
    earliest_time,
    job_from_template,
    job_name,
    scheduled_timestamp_text,
)
from minikube_py.controllers.podgc import bound_to_missing_nodes, terminated_to_delete
from minikube_py.controllers.ttl_after_finished import time_left
from minikube_py.kubelet.shell_applets_perl import _one_liner, pi_digits

Obj = dict[str, Any]


def pod(name: str, phase: str = "Running", *, codes: tuple[int, ...] = (), index: int | None = None,
        conditions: tuple[tuple[str, str], ...] = (), finalizer: bool = True,
        deleting: bool = False, restarts: int = 0) -> Obj:
    md: Obj = {"name": name, "namespace": "ns", "uid": f"uid-{name}",
               "creationTimestamp": "2024-01-01T00:00:00Z"}
    if finalizer:
        md["finalizers"] = [b.JOB_TRACKING_FINALIZER]
    if index is not None:
        md["annotations"] = {b.JOB_COMPLETION_INDEX_ANNOTATION: str(index)}
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:05Z"
    statuses = [{"name": "c", "restartCount": restarts,
                 "state": {"terminated": {"exitCode": code,
                                          "finishedAt": "2024-01-01T00:00:10Z"}}}
                for code in codes] or [{"name": "c", "restartCount": restarts, "state": {}}]
    return {"metadata": md, "status": {
        "phase": phase, "containerStatuses": statuses,
        "conditions": [{"type": t, "status": s} for t, s in conditions]}}


def job(**spec: Any) -> Obj:
    status = spec.pop("status", {})
    restart = spec.pop("restartPolicy", "Never")
    return {"metadata": {"name": "j", "namespace": "ns", "uid": "job-uid"},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6,
                     "completionMode": "NonIndexed",
                     "template": {"spec": {"restartPolicy": restart}}, **spec},
            "status": status}


POLICY = {"rules": [
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
    {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
    {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}},
]}


@pytest.mark.parametrize("failed, action, counted", [
    (pod("a", "Failed", codes=(1,), conditions=(("DisruptionTarget", "True"),)), "Ignore", False),
    (pod("a", "Failed", codes=(42,)), "FailJob", True),
    (pod("a", "Failed", codes=(7,)), "Count", True),
    (pod("a", "Failed", codes=(1,)), None, True),  # no rule: counted
])
def test_pod_failure_policy(failed: Obj, action: str | None, counted: bool) -> None:
    match = ju.match_pod_failure_policy(POLICY, failed)
    assert (match.action, match.count_failed) == (action, counted)


def test_fail_job_message() -> None:
    match = ju.match_pod_failure_policy(POLICY, pod("p", "Failed", codes=(42,)))
    assert match.message == ("Container c for pod ns/p failed with exit code 42 matching "
                             "FailJob rule at index 1")


def test_build_state_counts_and_finalizes() -> None:
    pods = [pod("ok", "Succeeded", codes=(0,)), pod("bad", "Failed", codes=(1,)),
            pod("run"), pod("gone", deleting=True), pod("old", "Succeeded", finalizer=False)]
    state = ju.build_state(job(status={"succeeded": 1}), pods, 0.0, False)
    assert state.new_succeeded == ["uid-ok"]
    assert state.new_failed == ["uid-bad", "uid-gone"]  # a deleted pod counts as failed
    assert [p["metadata"]["name"] for p in state.finalize] == ["ok", "bad", "gone"]
    # podReplacementPolicy Failed: a terminating pod is not a failure until it is Failed
    state = ju.build_state(job(podReplacementPolicy="Failed"), pods, 0.0, False)
    assert state.new_failed == ["uid-bad"]


def test_failure_order_and_limits() -> None:
    j = job(backoffLimit=1, status={"failed": 1})
    state = ju.build_state(j, [pod("bad", "Failed", codes=(1,))], 0.0, False)
    assert ju.failure_finish(state) == ju.Finish(True, "BackoffLimitExceeded",
                                                 ju.BACKOFF_MESSAGE)
    j = job(activeDeadlineSeconds=5, status={"startTime": "2024-01-01T00:00:00Z"})
    assert ju.failure_finish(ju.build_state(j, [], 1704067206.0, False)) == ju.Finish(
        True, "DeadlineExceeded", ju.DEADLINE_MESSAGE)
    assert ju.failure_finish(ju.build_state(j, [], 1704067204.0, False)) is None
    # OnFailure: container restarts count against the limit
    j = job(backoffLimit=2, restartPolicy="OnFailure")
    assert ju.past_backoff_limit_on_failure(j, [pod("r", restarts=2)])
    assert not ju.past_backoff_limit_on_failure(j, [pod("r", restarts=1)])


def test_wanted_active_and_indexes() -> None:
    assert ju.wanted_active(ju.build_state(job(completions=5, parallelism=3,
                                               status={"succeeded": 4}), [], 0, False)) == 1
    # a work queue (no completions) wants none once one pod succeeded
    assert ju.wanted_active(ju.build_state(job(completions=None, parallelism=3,
                                               status={"succeeded": 1}), [], 0, False)) == 0
    j = job(completionMode="Indexed", completions=4, parallelism=4,
            status={"completedIndexes": "0,2"})
    state = ju.build_state(j, [pod("p1", index=1)], 0, False)
    assert ju.wanted_active(state) == 2
    assert ju.indexes_to_create(state, 5) == [3]


def test_success_policy() -> None:
    j = job(completionMode="Indexed", completions=5, successPolicy={"rules": [
        {"succeededIndexes": "0-2", "succeededCount": 2}, {"succeededIndexes": "4"}]})
    assert ju.success_policy_match(j, {0}) is None
    assert ju.success_policy_match(j, {0, 2}) == "Matched rules at index 0"
    assert ju.success_policy_match(j, {4}) == "Matched rules at index 1"


def test_pod_template_for_an_index() -> None:
    j = job(completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    j["spec"]["template"] = {"metadata": {"labels": {"a": "b"}},
                             "spec": {"containers": [{"name": "c", "env": [{"name": "X"}]}]}}
    t = ju.pod_template_for(j, 2, 1)
    assert t["metadata"]["finalizers"] == [b.JOB_TRACKING_FINALIZER]
    assert t["metadata"]["annotations"] == {b.JOB_COMPLETION_INDEX_ANNOTATION: "2",
                                            b.JOB_INDEX_FAILURE_COUNT_ANNOTATION: "1"}
    assert t["metadata"]["labels"] == {"a": "b", b.JOB_COMPLETION_INDEX_ANNOTATION: "2"}
    assert [e["name"] for e in t["spec"]["containers"][0]["env"]] == ["X",
                                                                      "JOB_COMPLETION_INDEX"]
    assert t["spec"]["hostname"] == "j-2"
    assert "finalizers" not in j["spec"]["template"]["metadata"]  # the Job is not touched


def test_pod_failure_backoff() -> None:
    failed = [pod("f", "Failed", codes=(1,))]
    last = 1704067210.0  # finishedAt
    assert ju.pod_failure_backoff(failed, 1, last + 3, 10.0) == pytest.approx(7.0)
    assert ju.pod_failure_backoff(failed, 3, last, 10.0) == pytest.approx(40.0)
    assert ju.pod_failure_backoff(failed, 20, last, 10.0) == pytest.approx(600.0)
    assert ju.pod_failure_backoff(failed, 0, last, 10.0) == 0.0


def test_ttl_time_left() -> None:
    j = job(ttlSecondsAfterFinished=60, status={"conditions": [{
        "type": "Complete", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]})
    assert time_left(j, 1704067200.0 + 20) == 40
    assert time_left(job(ttlSecondsAfterFinished=60), 0) is None  # not finished
    assert time_left(job(), 0) is None


def test_podgc_choices() -> None:
    pods = [pod(f"p{i}", "Succeeded") for i in range(5)] + [pod("live")]
    for i, p in enumerate(pods):
        p["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:0{i}Z"
    assert [p["metadata"]["name"] for p in terminated_to_delete(pods, 3)] == ["p0", "p1"]
    assert terminated_to_delete(pods, 0) == []
    pods[5]["spec"] = {"nodeName": "gone"}
    assert list(bound_to_missing_nodes(pods, {"n1"})) == ["gone"]


def test_cronjob_naming_and_template() -> None:
    cj = {"metadata": {"name": "hello", "namespace": "ns", "uid": "cj-uid",
                       "creationTimestamp": "2024-01-01T00:00:00Z"},
          "spec": {"timeZone": "Europe/Paris", "startingDeadlineSeconds": 100,
                   "jobTemplate": {"metadata": {"labels": {"x": "y"}},
                                   "spec": {"template": {"spec": {}}}}}}
    assert job_name(cj, 1704067260.0) == "hello-28401121"
    assert scheduled_timestamp_text(1704067260.0, "Europe/Paris") == "2024-01-01T01:01:00+01:00"
    assert scheduled_timestamp_text(1704067260.0, None) == "2024-01-01T00:01:00Z"
    made = job_from_template(cj, 1704067260.0)
    assert made["metadata"]["labels"] == {"x": "y"}
    assert made["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert made["metadata"]["annotations"][b.CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION] == \
        "2024-01-01T01:01:00+01:00"
    # a long outage: look back no further than startingDeadlineSeconds
    assert earliest_time(cj, 1704067200.0 + 10_000) == 1704067200.0 + 9_900


def test_perl_pi() -> None:
    assert pi_digits(10) == "3.141592654"  # rounded, as Math::BigFloat rounds
    assert pi_digits(1) == "3"
    text = pi_digits(2000)
    assert len(text) == 2001 and text.startswith("3.14159265358979323846")
    assert _one_liner(["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]) == "print bpi(2000)"
    assert _one_liner(["perl", "server.pl"]) is None
