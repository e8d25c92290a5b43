"""How the node lifecycle controller judges a node: when it last heard from the kubelet, by
its own clock, and what it writes when the kubelet has gone quiet.

Kubernetes v1.0 piece: pkg/cloudprovider/nodecontroller's tryUpdateNodeStatus and the
eviction checks of monitorNodeStatus (later pkg/controller/nodelifecycle's tryUpdateNodeHealth).
The controller does not trust the kubelet's clock: it only notices that the Ready condition's
lastHeartbeatTime *changed*, and stamps that moment with its own time (nodeStatusData's
probeTimestamp and readyTransitionTimestamp). Since 1.14 the node's Lease in kube-node-lease
counts too: a renewTime later than the one saved also moves the probe timestamp (a kubelet in
lease mode posts its status only every 5 minutes), so a node is stale only when *neither* has
moved for the grace period. Pure functions over (saved health, node, lease, now).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

from ..api import meta
from ..api.taints import (
    DISK_PRESSURE,
    MEMORY_PRESSURE,
    NETWORK_UNAVAILABLE,
    NO_EXECUTE,
    NO_SCHEDULE,
    NOT_READY,
    PID_PRESSURE,
    UNREACHABLE,
    UNSCHEDULABLE,
)
from .conditions import get_condition

Obj = dict[str, Any]

STOPPED_REASON = "NodeStatusUnknown"
STOPPED_MESSAGE = "Kubelet stopped posting node status."
NEVER_REASON = "NodeStatusNeverUpdated"
NEVER_MESSAGE = "Kubelet never posted node status."
#: conditions the kubelet posts besides Ready (upstream remainingNodeConditionTypes); they go
#: Unknown with Ready. NetworkUnavailable belongs to the route controller and is left alone.
REMAINING_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
NOT_KUBELET_CONDITIONS = frozenset({"NetworkUnavailable"})


@dataclass(frozen=True)
class NodeHealth:
    """upstream nodeStatusData: our times (seconds, our clock) of the last heartbeat change and
    of the last Ready transition, and the Ready condition stamps we saw then."""

    probe_timestamp: float
    ready_transition_timestamp: float
    heartbeat: str | None = None     # Ready.lastHeartbeatTime as last seen (None: no Ready)
    transition: str | None = None    # Ready.lastTransitionTime as last seen
    #: the node Lease as last seen: seen at all, and its renewTime (seconds; None: unset)
    lease_seen: bool = False
    lease_renew_time: float | None = None


def creation_time(node: Obj) -> float:
    text = (node.get("metadata") or {}).get("creationTimestamp")
    try:
        return meta.parse_rfc3339(text) if text else 0.0
    except ValueError:
        return 0.0


def observe(saved: NodeHealth | None, node: Obj, now: float) -> NodeHealth:
    """Fold what the node shows now into our record (upstream's case list):
    - no Ready condition: the kubelet never posted; times are the node's creation;
    - first sight, or Ready newly appeared: both times are now;
    - heartbeat changed: probe is now; the transition is now too if lastTransitionTime moved;
    - heartbeat unchanged: nothing happened on that node; keep the record."""
    ready = get_condition(node, "Ready")
    if ready is None:
        if saved is not None:  # keep our times (a renewed lease may have moved them)
            return replace(saved, heartbeat=None, transition=None)
        created = creation_time(node)
        return NodeHealth(created, created)
    heartbeat = ready.get("lastHeartbeatTime")
    transition = ready.get("lastTransitionTime")
    if saved is None or saved.heartbeat is None:
        return NodeHealth(now, now, heartbeat, transition, *_lease_of(saved))
    if saved.heartbeat != heartbeat:
        moved = now if saved.transition != transition else saved.ready_transition_timestamp
        return NodeHealth(now, moved, heartbeat, transition, *_lease_of(saved))
    return saved


def _lease_of(saved: NodeHealth | None) -> tuple[bool, float | None]:
    return (False, None) if saved is None else (saved.lease_seen, saved.lease_renew_time)


def lease_renew_time(lease: Obj) -> float | None:
    text = (lease.get("spec") or {}).get("renewTime")
    if not isinstance(text, str):
        return None
    try:
        return meta.parse_rfc3339(text)
    except ValueError:
        return None


def observe_lease(health: NodeHealth, lease: Obj | None, now: float) -> NodeHealth:
    """tryUpdateNodeHealth's "always update the probe time if node lease is renewed": a Lease
    seen for the first time, or renewed later than the one saved, is a heartbeat. A kubelet
    that renews its lease but never posted a status is thus taken as healthy, as upstream."""
    if lease is None:
        return health
    renewed = lease_renew_time(lease)
    if not health.lease_seen or (health.lease_renew_time is not None and renewed is not None
                                 and health.lease_renew_time < renewed):
        return replace(health, probe_timestamp=now, lease_seen=True, lease_renew_time=renewed)
    return health


def grace_period(node: Obj, monitor_grace: float, startup_grace: float) -> float:
    """A node that never posted Ready gets the (longer) startup grace period."""
    return startup_grace if get_condition(node, "Ready") is None else monitor_grace


def stale(health: NodeHealth, grace: float, now: float) -> bool:
    """The heartbeat has not changed for longer than the grace period."""
    return now > health.probe_timestamp + grace


def conditions_unknown(node: Obj, now_text: str) -> list[Obj]:
    """The node's conditions after the kubelet went quiet: Ready and the kubelet's other
    conditions set to Unknown (missing ones added as never updated); heartbeats are kept —
    they are the last time we heard from the kubelet."""
    created = (node.get("metadata") or {}).get("creationTimestamp")
    out = [dict(c) for c in (node.get("status") or {}).get("conditions") or ()]
    present = {c.get("type") for c in out}
    for cond in out:
        if cond.get("type") in NOT_KUBELET_CONDITIONS or cond.get("status") == "Unknown":
            continue
        cond.update(status="Unknown", reason=STOPPED_REASON, message=STOPPED_MESSAGE,
                    lastTransitionTime=now_text)
    for ctype in ("Ready", *REMAINING_CONDITIONS):
        if ctype not in present:
            out.append({"type": ctype, "status": "Unknown", "reason": NEVER_REASON,
                        "message": NEVER_MESSAGE, "lastHeartbeatTime": created,
                        "lastTransitionTime": now_text})
    return out


def after_marked_unknown(health: NodeHealth, node_after: Obj, now: float) -> NodeHealth:
    """Our own write moved the Ready transition (upstream stores readyTransitionTimestamp =
    now with the status it wrote), so the next observation sees no change."""
    ready = get_condition(node_after, "Ready") or {}
    return replace(health, ready_transition_timestamp=now,
                   heartbeat=ready.get("lastHeartbeatTime"),
                   transition=ready.get("lastTransitionTime"))


class Eviction(enum.Enum):
    EVICT = "evict"
    CANCEL = "cancel"
    NONE = "none"


def eviction_decision(ready_status: str | None, health: NodeHealth, now: float,
                      timeout: float) -> Eviction:
    """upstream monitorNodeStatus: NotReady (False) for longer than the eviction timeout since
    the Ready transition, or Unknown for longer than it since the last heartbeat -> evict its
    pods; Ready again -> cancel a pending eviction."""
    if ready_status == "False" and now > health.ready_transition_timestamp + timeout:
        return Eviction.EVICT
    if ready_status == "Unknown" and now > health.probe_timestamp + timeout:
        return Eviction.EVICT
    if ready_status == "True":
        return Eviction.CANCEL
    return Eviction.NONE


def no_execute_taint_key(ready_status: str | None) -> str | None:
    """upstream doNoExecuteTaintingPass: the NoExecute taint a node's Ready status calls for
    (False -> not-ready, Unknown -> unreachable, True -> none)."""
    if ready_status == "False":
        return NOT_READY
    if ready_status == "True":
        return None
    return UNREACHABLE


#: upstream nodeConditionToTaintKeyStatusMap: (condition, status) -> its NoSchedule taint
NO_SCHEDULE_TAINTS = {
    ("Ready", "False"): NOT_READY, ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): MEMORY_PRESSURE, ("DiskPressure", "True"): DISK_PRESSURE,
    ("NetworkUnavailable", "True"): NETWORK_UNAVAILABLE, ("PIDPressure", "True"): PID_PRESSURE,
}
#: the NoSchedule taint keys this controller owns (it leaves a user's other taints alone)
_OWNED_NO_SCHEDULE = frozenset((*NO_SCHEDULE_TAINTS.values(), UNSCHEDULABLE))


def no_schedule_taint_keys(node: Obj, ready_status: str | None) -> list[str]:
    """upstream doNoScheduleTaintingPass (TaintNodesByCondition, GA in 1.17): the NoSchedule
    taints the node's conditions call for — `ready_status` stands for its Ready condition, as
    this pass just wrote it — plus `unschedulable` for a cordoned node. The scheduling
    framework keeps pods off such nodes through these taints (TaintToleration), not by
    reading conditions as v1.x's predicates did."""
    statuses = {c.get("type"): c.get("status")
                for c in (node.get("status") or {}).get("conditions") or () if isinstance(c, dict)}
    if "Ready" in statuses or ready_status != "Unknown":
        statuses["Ready"] = ready_status
    keys = [NO_SCHEDULE_TAINTS[item] for item in statuses.items() if item in NO_SCHEDULE_TAINTS]
    if (node.get("spec") or {}).get("unschedulable") is True:
        keys.append(UNSCHEDULABLE)
    return sorted(keys)


def with_condition_taints(node: Obj, no_execute_key: str | None, no_schedule_keys: list[str],
                          now_text: str, *, manage_no_execute: bool = True) -> list[Obj] | None:
    """The node's taints with exactly the not-ready/unreachable NoExecute taint
    `no_execute_key` (None: neither; left alone unless `manage_no_execute`) and exactly the
    condition NoSchedule taints `no_schedule_keys`; None when they already are so. A kept taint
    keeps its timeAdded (for NoExecute, the moment the taint eviction clock started); upstream
    stamps timeAdded on the NoExecute taints it adds, not on NoSchedule ones."""
    taints = [t for t in (node.get("spec") or {}).get("taints") or () if isinstance(t, dict)]
    executes = [t for t in taints if manage_no_execute and t.get("effect") == NO_EXECUTE
                and t.get("key") in (NOT_READY, UNREACHABLE)]
    schedules = [t for t in taints if t.get("effect") == NO_SCHEDULE
                 and t.get("key") in _OWNED_NO_SCHEDULE]
    wanted_executes = [no_execute_key] if manage_no_execute and no_execute_key else []
    if ([t.get("key") for t in executes] == wanted_executes
            and sorted(t.get("key") for t in schedules) == no_schedule_keys):
        return None
    kept = [t for t in taints if t not in executes and t not in schedules]
    kept += [t for t in schedules if t.get("key") in no_schedule_keys]
    present = {t.get("key") for t in schedules}
    kept += [{"key": key, "effect": NO_SCHEDULE} for key in no_schedule_keys if key not in present]
    if wanted_executes:
        kept += executes or [{"key": no_execute_key, "effect": NO_EXECUTE, "timeAdded": now_text}]
    return kept
