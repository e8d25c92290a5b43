"""PodDisruptionBudget arithmetic shared by the eviction subresource and the disruption
controller: the DisruptionAllowed condition, scaled int-or-percent values, which pods count as
healthy, the status a budget should have, and whether one eviction may proceed.

Kubernetes pieces: k8s.io/component-helpers/apps/poddisruptionbudget (UpdateDisruption-
AllowedCondition, ConditionsAreUpToDate), apimachinery's intstr.GetScaledValueFromIntOrPercent,
pkg/controller/disruption (countHealthyPods, buildDisruptedPodMap, updatePdbStatus's
arithmetic) and pkg/registry/core/pod/storage/eviction.go (canIgnorePDB, checkAndDecrement).
Pure functions of decoded JSON: the API server and the controller manager both import them, so
the two sides of the budget can never disagree on the arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import errors
from .labels import LabelSelector, selector_from_label_selector
from .meta import parse_rfc3339, rfc3339

Obj = dict[str, Any]

DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
#: the pod condition an eviction sets before it deletes the pod
DISRUPTION_TARGET = "DisruptionTarget"
#: policy/v1 DisruptionBudgetCause, the StatusCause type of a refused eviction
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
#: upstream's DeletionTimeout: how long an eviction's entry in status.disruptedPods keeps the
#: pod out of currentHealthy while the API server deletes it (pkg/controller/disruption)
DELETION_TIMEOUT = 120.0
#: eviction.go's MaxDisruptedPodSize
MAX_DISRUPTED_POD_SIZE = 2000
ALWAYS_ALLOW = "AlwaysAllow"
IF_HEALTHY_BUDGET = "IfHealthyBudget"
UNHEALTHY_POD_EVICTION_POLICIES = (ALWAYS_ALLOW, IF_HEALTHY_BUDGET)
VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS_MESSAGE = ("This pod has more than one PodDisruptionBudget, which the eviction "
                         "subresource does not support.")


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def parse_timestamp(value: Any) -> float | None:
    try:
        return parse_rfc3339(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- conditions -------------------------------------------------------------------------------
def set_condition(conditions: list[Obj], new: Obj, now: float) -> list[Obj]:
    """apimachinery meta.SetStatusCondition: replace the condition of the same type, keeping
    its lastTransitionTime unless the status changed."""
    out = [dict(c) for c in conditions if isinstance(c, dict)]
    for cond in out:
        if cond.get("type") == new["type"]:
            if cond.get("status") != new["status"]:
                cond["lastTransitionTime"] = rfc3339(now)
            cond.update(status=new["status"], reason=new["reason"],
                        message=new.get("message", ""),
                        observedGeneration=new.get("observedGeneration", 0))
            return out
    out.append({"type": new["type"], "status": new["status"],
                "observedGeneration": new.get("observedGeneration", 0),
                "lastTransitionTime": rfc3339(now), "reason": new["reason"],
                "message": new.get("message", "")})
    return out


def update_disruption_allowed_condition(status: Obj, now: float) -> None:
    """UpdateDisruptionAllowedCondition: True/SufficientPods while disruptions are allowed,
    else False/InsufficientPods; in place on `status`."""
    allowed = _int(status.get("disruptionsAllowed")) > 0
    status["conditions"] = set_condition(status.get("conditions") or [], {
        "type": DISRUPTION_ALLOWED, "status": "True" if allowed else "False",
        "reason": SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
        "observedGeneration": _int(status.get("observedGeneration"))}, now)


def conditions_up_to_date(pdb: Obj) -> bool:
    """ConditionsAreUpToDate: the condition exists, the generation was observed, and the
    condition agrees with disruptionsAllowed."""
    status = _d(pdb.get("status"))
    cond = next((c for c in status.get("conditions") or () if isinstance(c, dict)
                 and c.get("type") == DISRUPTION_ALLOWED), None)
    if cond is None:
        return False
    if _int(status.get("observedGeneration")) != _int(_d(pdb.get("metadata")).get("generation")):
        return False
    if _int(status.get("disruptionsAllowed")) > 0:
        return cond.get("status") == "True" and cond.get("reason") == SUFFICIENT_PODS
    return cond.get("status") == "False" and cond.get("reason") == INSUFFICIENT_PODS


# -- counting -------------------------------------------------------------------------------
def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, `N%` of `total` rounded up or
    down. Raises ValueError for anything else (validation keeps it from being stored)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    raise ValueError(f"invalid value for IntOrString: invalid value {value!r}")


def is_pod_ready(pod: Obj) -> bool:
    for cond in _d(pod.get("status")).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _terminating(pod: Obj) -> bool:
    return bool(_d(pod.get("metadata")).get("deletionTimestamp"))


def build_disrupted_pod_map(pods: list[Obj], pdb: Obj,
                            now: float) -> tuple[dict[str, str], float | None, list[str]]:
    """buildDisruptedPodMap: the disruptedPods entries still worth keeping (the pod exists,
    is not being deleted yet, and its entry is younger than DELETION_TIMEOUT), when to look
    again, and the pods whose entries expired (upstream warns `NotDeleted` for them)."""
    recorded = _d(_d(pdb.get("status")).get("disruptedPods"))
    kept: dict[str, str] = {}
    recheck: float | None = None
    expired: list[str] = []
    for pod in pods:
        name = _d(pod.get("metadata")).get("name", "")
        if _terminating(pod) or name not in recorded:
            continue
        when = parse_timestamp(recorded[name])
        if when is None:
            continue
        deadline = when + DELETION_TIMEOUT
        if deadline < now:
            expired.append(name)
            continue
        kept[name] = recorded[name]
        recheck = deadline if recheck is None else min(recheck, deadline)
    return kept, recheck, expired


def count_healthy_pods(pods: list[Obj], disrupted: dict[str, str], now: float) -> int:
    """countHealthyPods: ready pods that are neither being deleted nor recently evicted."""
    healthy = 0
    for pod in pods:
        if _terminating(pod):
            continue
        when = parse_timestamp(disrupted.get(_d(pod.get("metadata")).get("name", "")))
        if when is not None and when + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def next_status(pdb: Obj, current_healthy: int, desired_healthy: int, expected: int,
                disrupted: dict[str, str], now: float) -> Obj | None:
    """updatePdbStatus: the status to write, or None when the stored one is already it.
    A budget that expects no pods allows nothing (its first pods may appear before the
    controller looks again)."""
    allowed = current_healthy - desired_healthy
    if expected <= 0 or allowed <= 0:
        allowed = 0
    old = _d(pdb.get("status"))
    generation = _int(_d(pdb.get("metadata")).get("generation"))
    if (_int(old.get("currentHealthy")) == current_healthy
            and _int(old.get("desiredHealthy")) == desired_healthy
            and _int(old.get("expectedPods")) == expected
            and _int(old.get("disruptionsAllowed")) == allowed
            and _d(old.get("disruptedPods")) == disrupted
            and _int(old.get("observedGeneration")) == generation
            and conditions_up_to_date(pdb)):
        return None
    status: Obj = {"observedGeneration": generation, "disruptionsAllowed": allowed,
                   "currentHealthy": current_healthy, "desiredHealthy": desired_healthy,
                   "expectedPods": expected}
    if disrupted:
        status["disruptedPods"] = dict(disrupted)
    status["conditions"] = old.get("conditions") or []
    update_disruption_allowed_condition(status, now)
    return status


def fail_safe_status(pdb: Obj, message: str, now: float) -> Obj:
    """failSafe: after a sync error, allow no disruption and say why (SyncFailed)."""
    status = dict(_d(pdb.get("status")))
    status["disruptionsAllowed"] = 0
    status["conditions"] = set_condition(status.get("conditions") or [], {
        "type": DISRUPTION_ALLOWED, "status": "False", "reason": SYNC_FAILED,
        "message": message, "observedGeneration": _int(status.get("observedGeneration"))}, now)
    return status


# -- eviction -------------------------------------------------------------------------------
def can_ignore_pdb(pod: Obj) -> bool:
    """canIgnorePDB: a terminal, pending or already terminating pod is evicted without
    consulting any budget (it is not contributing to availability)."""
    phase = _d(pod.get("status")).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or _terminating(pod)


def should_enforce_resource_version(pod: Obj) -> bool:
    """shouldEnforceResourceVersion: delete only the pod version the decision was made on,
    unless it is terminal or terminating (then nothing can make it count again)."""
    phase = _d(pod.get("status")).get("phase")
    return not (phase in ("Succeeded", "Failed") or _terminating(pod))


def with_disruption_target(conditions: list[Obj], now: float) -> list[Obj]:
    """The pod's conditions with DisruptionTarget=True (EvictionByEvictionAPI), as
    podutil.UpdatePodCondition sets it before an eviction deletes the pod (1.31 GA)."""
    out = [dict(c) for c in conditions if isinstance(c, dict)
           and c.get("type") != DISRUPTION_TARGET]
    previous = next((c for c in conditions if isinstance(c, dict)
                     and c.get("type") == DISRUPTION_TARGET), None)
    since = previous.get("lastTransitionTime") if previous and previous.get(
        "status") == "True" else None
    out.append({"type": DISRUPTION_TARGET, "status": "True",
                "lastProbeTime": None, "lastTransitionTime": since or rfc3339(now),
                "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"})
    return out


#: upstream's stalePodDisruptionTimeout: a DisruptionTarget condition on a pod that is still
#: not terminating this long after it was set is withdrawn by the disruption controller
STALE_POD_DISRUPTION_TIMEOUT = 120.0


def stale_disruption_deadline(pod: Obj) -> float | None:
    """nonTerminatingPodHasStaleDisruptionCondition: when this pod's DisruptionTarget=True
    condition becomes stale (None: it has none that can go stale — the pod is terminating or
    terminal, or the kubelet set it)."""
    if _terminating(pod) or _d(pod.get("status")).get("phase") in ("Succeeded", "Failed"):
        return None
    for cond in _d(pod.get("status")).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == DISRUPTION_TARGET:
            if cond.get("status") != "True" or cond.get("reason") == "TerminationByKubelet":
                return None
            since = parse_timestamp(cond.get("lastTransitionTime"))
            return (since or 0.0) + STALE_POD_DISRUPTION_TIMEOUT
    return None


@dataclass(frozen=True)
class Refusal:
    """Why an eviction may not proceed: the HTTP code, reason, and the StatusCause message
    (`retry_after`: Details.retryAfterSeconds)."""

    code: int
    reason: str
    message: str
    cause: str = ""
    retry_after: int = 0


def still_processing(pdb_name: str) -> Refusal:
    """createTooManyRequestsError: the controller has not caught up with this budget."""
    return Refusal(429, "TooManyRequests", VIOLATION_MESSAGE,
                   f"The disruption budget {pdb_name} is still being processed by the server.",
                   retry_after=10)


def unhealthy_pod_may_go(pod: Obj, pdb: Obj) -> bool:
    """An unready pod does not count towards currentHealthy, so evicting it spends no budget:
    always under `AlwaysAllow`, and under the default `IfHealthyBudget` while the budget is
    met (eviction.go's unhealthyPodEvictionPolicy branch)."""
    if is_pod_ready(pod):
        return False
    if _d(pdb.get("spec")).get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW:
        return True
    status = _d(pdb.get("status"))
    desired = _int(status.get("desiredHealthy"))
    return _int(status.get("currentHealthy")) >= desired > 0


def check_and_decrement(pdb: Obj, pod_name: str, now: float,
                        dry_run: bool) -> Obj | Refusal:
    """checkAndDecrement: the budget's new status after spending one disruption on
    `pod_name` (recorded in disruptedPods unless dry run), or why it may not be spent."""
    name = _d(pdb.get("metadata")).get("name", "")
    status = dict(_d(pdb.get("status")))
    if _int(status.get("observedGeneration")) < _int(_d(pdb.get("metadata")).get("generation")):
        return still_processing(name)
    allowed = _int(status.get("disruptionsAllowed"))
    if allowed < 0:
        return Refusal(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: '
                       "pdb disruptions allowed is negative")
    if len(_d(status.get("disruptedPods"))) > MAX_DISRUPTED_POD_SIZE:
        return Refusal(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: '
                       "DisruptedPods map too big - too many evictions not confirmed by PDB "
                       "controller")
    if allowed == 0:
        return Refusal(429, "TooManyRequests", VIOLATION_MESSAGE,
                       f"The disruption budget {name} needs "
                       f"{_int(status.get('desiredHealthy'))} healthy pods and has "
                       f"{_int(status.get('currentHealthy'))} currently")
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        update_disruption_allowed_condition(status, now)
    if not dry_run:
        status["disruptedPods"] = dict(_d(status.get("disruptedPods")), **{pod_name: rfc3339(now)})
    return status


def budget_covers(pdb: Obj, pod: Obj) -> bool:
    """getPodDisruptionBudgets' rule: the budget is in the pod's namespace and its selector
    matches the pod's labels; a nil, empty or invalid selector covers no pod here ("it
    should match nothing, not everything")."""
    if _d(pdb.get("metadata")).get("namespace") != _d(pod.get("metadata")).get("namespace"):
        return False
    selector = budget_selector(pdb)
    return selector is not None and selector.matches(_d(pod.get("metadata")).get("labels") or {})


def budget_selector(pdb: Obj) -> LabelSelector | None:
    """The budget's selector, None when it covers no pod (nil, empty or invalid); callers
    matching many pods (the scheduler's preemption) parse it once with this."""
    try:
        selector = selector_from_label_selector(_d(pdb.get("spec")).get("selector"))
    except (errors.StatusError, ValueError):
        return None
    return None if selector.empty() else selector
