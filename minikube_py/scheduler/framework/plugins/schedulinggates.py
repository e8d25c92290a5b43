"""SchedulingGates: a pod with `spec.schedulingGates` is not queued for scheduling until they are gone.

Kubernetes piece: pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go (1.31,
GA since 1.30). PreEnqueue answers UnschedulableAndUnresolvable "waiting for scheduling gates:
[a b]" (Go's %v of the gate names) while any gate remains; the only event that can change that
is an update of the pod itself that removes its gates (upstream's queueing hint checks the
updated pod is the gated one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Handle,
    QueueingHint,
    Status,
)

NAME = "SchedulingGates"
Obj = dict[str, Any]


def _uid(pod: Obj | None) -> str | None:
    return ((pod or {}).get("metadata") or {}).get("uid")


class SchedulingGates:
    name = NAME

    def pre_enqueue(self, pod: Obj) -> Status | None:
        gates = (pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return None
        names = " ".join(str((gate or {}).get("name", "")) for gate in gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{names}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            self._gates_eliminated)]

    @staticmethod
    def _gates_eliminated(pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        """upstream isSchedulableAfterUpdatePodSchedulingGatesEliminated: only the pod's own
        update can ungate it."""
        return QueueingHint.QUEUE if new is not None and _uid(new) == _uid(pod) \
            else QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any], handle: Handle) -> SchedulingGates:
    return SchedulingGates()
