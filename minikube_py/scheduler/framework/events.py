"""The cluster events that requeue unschedulable pods, and what changed in an updated pod or node.

Kubernetes piece: pkg/scheduler/framework/events.go and types.go's ClusterEvent.Match (1.31).
The scheduler's event handlers turn every informer event into a `ClusterEvent` (a resource and
the kind of change, with upstream's label) and hand it to the queue; the queue requeues only the
pods whose rejecting plugins registered for a matching event (EnqueueExtensions) and whose
queueing hint says the event may help. An updated node or unscheduled pod is split into the
specific changes that matter (labels, taints, allocatable, scheduling gates ...), so a plugin
that cares only about taints is not woken by a heartbeat. The labels are the values of the
`event` label of `scheduler_queue_incoming_pods_total`.
"""

from __future__ import annotations

from typing import Any

from ..nodeinfo import pod_requests
from .interface import ActionType, ClusterEvent

Obj = dict[str, Any]

WILDCARD = "*"
POD = "Pod"
NODE = "Node"

# queue-internal moves (strings, as upstream: they are only metric labels)
POD_ADD = "PodAdd"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
POD_UPDATE = "PodUpdate"

ASSIGNED_POD_ADD = ClusterEvent(POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent(
    POD, ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_SCALE_DOWN, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent(POD, ActionType.DELETE, "AssignedPodDelete")
UNSCHEDULED_POD_UPDATE = ClusterEvent(POD, ActionType.UPDATE, "UnschedulablePodUpdate")
POD_LABEL_CHANGE = ClusterEvent(POD, ActionType.UPDATE_POD_LABEL, "PodLabelChange")
POD_REQUEST_SCALED_DOWN = ClusterEvent(POD, ActionType.UPDATE_POD_SCALE_DOWN, "PodRequestScaledDown")
POD_TOLERATION_CHANGE = ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATIONS, "PodTolerationChange")
POD_SCHEDULING_GATE_ELIMINATED = ClusterEvent(
    POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "PodSchedulingGateEliminatedChange")
#: an update that matches none of the specific changes (upstream assignedPodOtherUpdate, whose
#: action is the updatePodOther bit only a registration for every Pod update covers; the
#: contract's ActionType has no such bit, so `matches` treats this event specially)
POD_OTHER_UPDATE = ClusterEvent(POD, ActionType.UPDATE, "AssignedPodUpdate")

NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(NODE, ActionType.DELETE, "NodeDelete")
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT,
                                              "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NODE_LABEL_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
NODE_ANNOTATION_CHANGE = ClusterEvent(NODE, ActionType.UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")

#: someone wants every unschedulable pod retried (upstream WildCardEvent)
WILDCARD_EVENT = ClusterEvent(WILDCARD, ActionType.ALL, "WildCardEvent")
#: a pod sat in unschedulablePods longer than podMaxInUnschedulablePodsDuration
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")


def is_wildcard(event: ClusterEvent) -> bool:
    return event.resource == WILDCARD and event.action == ActionType.ALL


def matches(registered: ClusterEvent, event: ClusterEvent) -> bool:
    """upstream ClusterEvent.Match: does a plugin's registered event cover `event`?"""
    if is_wildcard(registered):
        return True
    if registered.resource not in (WILDCARD, event.resource):
        return False
    if event == POD_OTHER_UPDATE:  # a status-only or other unspecific change
        return registered.action & ActionType.UPDATE == ActionType.UPDATE
    return bool(registered.action & event.action)


def _get(obj: Obj | None, *path: str) -> Any:
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj


def _scaled_down(new: Obj, old: Obj) -> bool:
    """upstream extractPodScaleDown: some container asks for less than before. Compared as
    parsed quantities so "1" vs "1000m" is no change."""
    before, after = pod_requests(old), pod_requests(new)
    return after.milli_cpu < before.milli_cpu or after.memory < before.memory


def pod_scheduling_properties_change(new: Obj, old: Obj | None) -> list[ClusterEvent]:
    """upstream PodSchedulingPropertiesChange: the specific changes of a pod (unscheduled:
    the queue's own update; assigned: AssignedPodUpdated), or the generic update when none
    of them happened."""
    events: list[ClusterEvent] = []
    if old is not None:
        if _get(new, "metadata", "labels") != _get(old, "metadata", "labels"):
            events.append(POD_LABEL_CHANGE)
        if _scaled_down(new, old):
            events.append(POD_REQUEST_SCALED_DOWN)
        if not _get(new, "spec", "schedulingGates") and _get(old, "spec", "schedulingGates"):
            events.append(POD_SCHEDULING_GATE_ELIMINATED)
        if _get(new, "spec", "tolerations") != _get(old, "spec", "tolerations"):
            events.append(POD_TOLERATION_CHANGE)
    return events or [POD_OTHER_UPDATE]


def node_scheduling_properties_change(new: Obj, old: Obj) -> list[ClusterEvent]:
    """upstream nodeSchedulingPropertiesChange (eventhandlers.go): which node changes can make
    a pod schedulable; an update that changes none of them (a heartbeat) gives no event."""
    events: list[ClusterEvent] = []
    if bool(_get(new, "spec", "unschedulable")) != bool(_get(old, "spec", "unschedulable")):
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if _get(new, "status", "allocatable") != _get(old, "status", "allocatable"):
        events.append(NODE_ALLOCATABLE_CHANGE)
    if _get(new, "metadata", "labels") != _get(old, "metadata", "labels"):
        events.append(NODE_LABEL_CHANGE)
    if _get(new, "spec", "taints") != _get(old, "spec", "taints"):
        events.append(NODE_TAINT_CHANGE)
    if _conditions(new) != _conditions(old):
        events.append(NODE_CONDITION_CHANGE)
    if _get(new, "metadata", "annotations") != _get(old, "metadata", "annotations"):
        events.append(NODE_ANNOTATION_CHANGE)
    return events


def _conditions(node: Obj) -> dict[str, Any]:
    """Condition type -> status, ignoring heartbeat times (upstream strips them too)."""
    return {c.get("type"): c.get("status") for c in _get(node, "status", "conditions") or []
            if isinstance(c, dict)}
