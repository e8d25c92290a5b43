"""Taints and tolerations: which toleration matches which taint, and for how long.

Kubernetes piece: k8s.io/api/core/v1 toleration.go (Toleration.ToleratesTaint) and the taint
eviction controller's getMatchingTolerations / getMinTolerationTime
(pkg/controller/tainteviction). Shared by the scheduler (PodToleratesNodeTaints,
TaintToleration) and the controllers (taint-based eviction); pure functions over tuples, the
form the scheduler precomputes once per pod and per node.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

#: (key, operator, value, effect) of one toleration, operator defaulted to "Equal"
Toleration = tuple[str, str, str, str]
#: (key, value, effect) of one node taint
Taint = tuple[str, str, str]

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
#: the taints the node lifecycle controller puts on a node that is not Ready (upstream
#: v1.TaintNodeNotReady, TaintNodeUnreachable)
NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
#: upstream v1.TaintNodeUnschedulable and the pressure/network condition taints
#: (TaintNodesByCondition: the scheduler reads them instead of the node's conditions)
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
MEMORY_PRESSURE, DISK_PRESSURE = "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure"
PID_PRESSURE = "node.kubernetes.io/pid-pressure"
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Upstream Toleration.ToleratesTaint: an empty effect matches every effect, an empty key
    (only valid with Exists) every key; Equal compares values, Exists ignores them."""
    key, operator, value, effect = toleration
    if effect and effect != taint[2]:
        return False
    if key and key != taint[0]:
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and value == taint[1]


def taint_of(taint: dict[str, Any]) -> Taint:
    return (taint.get("key") or "", taint.get("value") or "", taint.get("effect") or "")


def pod_tolerations(spec: dict[str, Any]) -> tuple[Toleration, ...]:
    """A pod spec's tolerations in the tuple form `tolerates` takes."""
    return tuple(
        (t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "",
         t.get("effect") or "")
        for t in spec.get("tolerations") or () if isinstance(t, dict)
    )


def toleration_time(spec: dict[str, Any], taints: Iterable[Taint]) -> float | None:
    """How long a pod with `spec` may stay on a node with these NoExecute `taints`: None when
    one taint is not tolerated at all (evict now), math.inf when every matching toleration is
    for ever, else the smallest tolerationSeconds among the tolerations that match (upstream
    getMinTolerationTime: a negative or zero value means at once)."""
    raw = [t for t in spec.get("tolerations") or () if isinstance(t, dict)]
    tuples = pod_tolerations(spec)
    used: list[dict[str, Any]] = []
    for taint in taints:
        matching = [raw[i] for i, tol in enumerate(tuples) if tolerates(tol, taint)]
        if not matching:
            return None
        used.extend(matching)
    least = math.inf
    for tol in used:
        seconds = tol.get("tolerationSeconds")
        if isinstance(seconds, int) and not isinstance(seconds, bool):
            least = min(least, max(seconds, 0))
    return least
