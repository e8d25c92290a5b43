"""The `endpoints.kubernetes.io/last-change-trigger-time` annotation: when the change that a
slice write publishes happened (kube-proxy measures network programming latency from it).

Kubernetes piece: pkg/controller/util/endpoint/trigger_time_tracker.go (TriggerTimeTracker:
ComputeEndpointLastChangeTriggerTime, getPodTriggerTime, getServiceTriggerTime) and the
reconciler's addTriggerTimeAnnotation. A pod's trigger time is its Ready condition's
lastTransitionTime, a Service's its creationTimestamp; a sync reports the earliest of those that
moved since the previous sync of the same Service (the Service's creation on its first sync),
and every slice it creates or updates carries it — or loses the annotation when there is none.

Times are compared as the API stores them (RFC 3339 in UTC to the second, `...Z`, which
api/timefields.py normalises every metav1.Time to), where text order is time order. Pure state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .conditions import get_condition

Obj = dict[str, Any]

ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"


@dataclass
class _State:
    pods: dict[str, str] = field(default_factory=dict)
    service: str = ""


class TriggerTimeTracker:
    """service key -> the trigger times seen at its last sync."""

    def __init__(self) -> None:
        self.states: dict[str, _State] = {}

    def compute(self, key: str, service: Obj, pods: list[Obj]) -> str:
        """ComputeEndpointLastChangeTriggerTime: "" for none."""
        state = self.states.get(key)
        known = state is not None
        state = state or _State()
        earliest = ""
        pod_times: dict[str, str] = {}
        for pod in pods:
            ready = get_condition(pod, "Ready") or {}
            when = ready.get("lastTransitionTime") or ""
            if not when:
                continue
            name = (pod.get("metadata") or {}).get("name", "")
            pod_times[name] = when
            if when > state.pods.get(name, ""):
                earliest = min(earliest, when) if earliest else when
        service_time = (service.get("metadata") or {}).get("creationTimestamp") or ""
        if service_time > state.service:
            earliest = min(earliest, service_time) if earliest else service_time
        self.states[key] = _State(pod_times, service_time)
        return earliest if known else service_time

    def delete_service(self, key: str) -> None:
        self.states.pop(key, None)


def with_trigger_time(slice_: Obj, when: str) -> Obj:
    """addTriggerTimeAnnotation: a copy carrying `when`, or without the annotation."""
    md = slice_.get("metadata") or {}
    annotations = {k: v for k, v in (md.get("annotations") or {}).items() if k != ANNOTATION}
    if when:
        annotations[ANNOTATION] = when
    return {**slice_, "metadata": {**md, "annotations": annotations}}
