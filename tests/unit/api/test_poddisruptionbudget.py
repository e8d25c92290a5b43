"""PodDisruptionBudget validation and the budget arithmetic, table-driven and without a server:
upstream's ValidatePodDisruptionBudgetSpec messages, GetScaledValueFromIntOrPercent rounding,
countHealthyPods/buildDisruptedPodMap, updatePdbStatus, and the eviction decision
(canIgnorePDB, the unhealthy-pod policies, checkAndDecrement's refusals)."""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.api import poddisruptionbudget as pdbutil
from minikube_py.api.meta import rfc3339
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)

NOW = 1_800_000_000.0


def pdb(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
        generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p", "namespace": "default", "generation": generation,
                         "resourceVersion": "5"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, **(spec or {})},
            "status": status or {}}


def pod(name: str = "a", *, ready: bool = True, phase: str = "Running",
        deleting: bool = False, labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default",
                          "labels": {"app": "x"} if labels is None else labels}
    if deleting:
        md["deletionTimestamp"] = rfc3339(NOW)
    return {"metadata": md, "status": {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}}


def messages(errs) -> list[str]:
    return [e.message() for e in errs]


@pytest.mark.parametrize(("spec", "expected"), [
    ({"minAvailable": 2}, []),
    ({"maxUnavailable": "25%"}, []),
    ({}, []),  # upstream accepts neither: the budget protects nothing
    ({"minAvailable": -1}, [("spec.minAvailable: Invalid value: -1: must be greater than or "
                            "equal to 0")]),
    ({"maxUnavailable": "101%"}, [("spec.maxUnavailable: Invalid value: \"101%\": must not be "
                                  "greater than 100%")]),
    ({"unhealthyPodEvictionPolicy": "Sometimes"},
     [('spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: '
      '"AlwaysAllow", "IfHealthyBudget"')]),
])
def test_spec_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert messages(validate_create("PodDisruptionBudget", pdb(spec))) == expected


def test_both_min_and_max_is_invalid_and_the_spec_may_change() -> None:
    errs = messages(validate_create("PodDisruptionBudget",
                                    pdb({"minAvailable": 1, "maxUnavailable": 1})))
    assert len(errs) == 1 and errs[0].endswith("minAvailable and maxUnavailable cannot be both set")
    assert errs[0].startswith("spec: Invalid value: ")
    assert messages(validate_update("PodDisruptionBudget", pdb({"minAvailable": "50%"}),
                                    pdb({"minAvailable": 1}))) == []
    assert "percentage" in messages(validate_create(
        "PodDisruptionBudget", pdb({"minAvailable": 1.5})))[0]


def test_status_counts_may_not_be_negative() -> None:
    errs = validate_status_update("PodDisruptionBudget", pdb(status={"disruptionsAllowed": -1}),
                                  pdb())
    assert messages(errs) == [("status.disruptionsAllowed: Invalid value: -1: must be greater "
                              "than or equal to 0")]


@pytest.mark.parametrize(("value", "total", "up", "expected"), [
    (3, 10, True, 3), ("50%", 3, True, 2), ("50%", 3, False, 1), ("34%", 3, True, 2),
    ("0%", 7, True, 0), ("100%", 7, False, 7),
])
def test_scaled_value(value: Any, total: int, up: bool, expected: int) -> None:
    assert pdbutil.scaled_value(value, total, up) == expected


def test_scaled_value_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        pdbutil.scaled_value("half", 4, True)


def test_healthy_pods_skip_deleting_and_recently_disrupted() -> None:
    pods = [pod("a"), pod("b", ready=False), pod("c", deleting=True), pod("d"), pod("e")]
    budget = pdb(status={"disruptedPods": {"d": rfc3339(NOW - 10),
                                           "e": rfc3339(NOW - 121), "gone": rfc3339(NOW)}})
    kept, recheck, expired = pdbutil.build_disrupted_pod_map(pods, budget, NOW)
    assert kept == {"d": rfc3339(NOW - 10)}  # e timed out, `gone` no longer exists
    assert recheck == pytest.approx(NOW - 10 + pdbutil.DELETION_TIMEOUT)
    assert expired == ["e"]
    assert pdbutil.count_healthy_pods(pods, kept, NOW) == 2  # a and e


def test_next_status_and_condition() -> None:
    status = pdbutil.next_status(pdb(), 3, 2, 3, {}, NOW)
    assert status is not None
    assert {k: status[k] for k in ("currentHealthy", "desiredHealthy", "expectedPods",
                                   "disruptionsAllowed", "observedGeneration")} == {
        "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": 1,
        "observedGeneration": 1}
    [cond] = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionAllowed", "True",
                                                              "SufficientPods")
    # written once: the same inputs again change nothing
    assert pdbutil.next_status(pdb(status=status), 3, 2, 3, {}, NOW + 5) is None
    # no expected pods: nothing may be disrupted whatever is healthy
    empty = pdbutil.next_status(pdb(), 2, 0, 0, {}, NOW)
    assert empty is not None and empty["disruptionsAllowed"] == 0
    assert empty["conditions"][0]["reason"] == "InsufficientPods"


def test_fail_safe_allows_nothing() -> None:
    status = pdbutil.fail_safe_status(pdb(status={"disruptionsAllowed": 2}), "boom", NOW)
    assert status["disruptionsAllowed"] == 0
    assert [(c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("False", "SyncFailed", "boom")]


@pytest.mark.parametrize(("the_pod", "ignorable"), [
    (pod(phase="Pending"), True), (pod(phase="Succeeded"), True), (pod(phase="Failed"), True),
    (pod(deleting=True), True), (pod(), False), (pod(ready=False), False),
])
def test_can_ignore_pdb(the_pod: dict[str, Any], ignorable: bool) -> None:
    assert pdbutil.can_ignore_pdb(the_pod) is ignorable


@pytest.mark.parametrize(("policy", "current", "desired", "may_go"), [
    (None, 3, 2, True), (None, 1, 2, False), (None, 3, 0, False),
    ("IfHealthyBudget", 2, 2, True), ("AlwaysAllow", 0, 2, True),
])
def test_unhealthy_pod_policies(policy: str | None, current: int, desired: int,
                                may_go: bool) -> None:
    spec = {"unhealthyPodEvictionPolicy": policy} if policy else {}
    budget = pdb(spec, {"currentHealthy": current, "desiredHealthy": desired})
    assert pdbutil.unhealthy_pod_may_go(pod(ready=False), budget) is may_go
    assert pdbutil.unhealthy_pod_may_go(pod(), budget) is False  # a ready pod spends budget


def test_check_and_decrement() -> None:
    ok = pdbutil.check_and_decrement(
        pdb(status={"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 3,
                    "desiredHealthy": 2}), "a", NOW, dry_run=False)
    assert isinstance(ok, dict)
    assert ok["disruptionsAllowed"] == 0 and ok["disruptedPods"] == {"a": rfc3339(NOW)}
    assert ok["conditions"][0]["reason"] == "InsufficientPods"
    dry = pdbutil.check_and_decrement(
        pdb(status={"observedGeneration": 1, "disruptionsAllowed": 2}), "a", NOW, dry_run=True)
    assert isinstance(dry, dict) and "disruptedPods" not in dry

    refused = pdbutil.check_and_decrement(
        pdb(status={"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 2,
                    "desiredHealthy": 2}), "a", NOW, dry_run=False)
    assert refused == pdbutil.Refusal(
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption "
        "budget.", "The disruption budget p needs 2 healthy pods and has 2 currently")
    stale = pdbutil.check_and_decrement(
        pdb(status={"observedGeneration": 1, "disruptionsAllowed": 5}, generation=2), "a", NOW,
        dry_run=False)
    assert isinstance(stale, pdbutil.Refusal)
    assert (stale.code, stale.retry_after, stale.cause) == (
        429, 10, "The disruption budget p is still being processed by the server.")
    negative = pdbutil.check_and_decrement(
        pdb(status={"observedGeneration": 1, "disruptionsAllowed": -1}), "a", NOW, False)
    assert isinstance(negative, pdbutil.Refusal) and negative.code == 403


@pytest.mark.parametrize(("selector", "labels", "covers"), [
    ({"matchLabels": {"app": "x"}}, {"app": "x"}, True),
    ({"matchLabels": {"app": "x"}}, {"app": "y"}, False),
    ({}, {"app": "x"}, False),  # empty selector: no pod in the eviction path
    (None, {"app": "x"}, False),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["x", "z"]}]},
     {"app": "z"}, True),
])
def test_budget_covers(selector: Any, labels: dict[str, str], covers: bool) -> None:
    budget = pdb()
    budget["spec"]["selector"] = selector
    assert pdbutil.budget_covers(budget, pod(labels=labels)) is covers
    other_namespace = pod(labels=labels)
    other_namespace["metadata"]["namespace"] = "elsewhere"
    assert pdbutil.budget_covers(budget, other_namespace) is False


def _marked(reason: str = "EvictionByEvictionAPI", status: str = "True", **kw: Any) -> dict:
    marked = pod(**kw)
    marked["status"]["conditions"].append({"type": "DisruptionTarget", "status": status,
                                           "reason": reason,
                                           "lastTransitionTime": rfc3339(NOW)})
    return marked


def test_stale_disruption_deadline() -> None:
    assert pdbutil.stale_disruption_deadline(_marked()) == NOW + 120
    assert pdbutil.stale_disruption_deadline(pod()) is None
    assert pdbutil.stale_disruption_deadline(_marked(status="False")) is None
    assert pdbutil.stale_disruption_deadline(_marked(reason="TerminationByKubelet")) is None
    assert pdbutil.stale_disruption_deadline(_marked(deleting=True)) is None
    assert pdbutil.stale_disruption_deadline(_marked(phase="Failed")) is None


def test_disruption_target_keeps_its_transition_time() -> None:
    first = pdbutil.with_disruption_target([{"type": "Ready", "status": "True"}], NOW)
    assert [c["type"] for c in first] == ["Ready", "DisruptionTarget"]
    again = pdbutil.with_disruption_target(first, NOW + 30)
    assert again[-1]["lastTransitionTime"] == rfc3339(NOW)
