"""Reading status conditions of pods and nodes.

Kubernetes piece: pkg/api/pod's GetPodCondition / IsPodReady and pkg/util/node's
GetNodeCondition (v1.0 had them as api.IsPodReady and nodecontroller.getCondition). The
endpoints controller sorts addresses by readiness and the node lifecycle controller judges
nodes by their Ready condition; both read conditions the same way, here.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def get_condition(obj: Obj, condition_type: str) -> Obj | None:
    """The `status.conditions` entry of this type, or None."""
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == condition_type:
            return cond
    return None


def is_pod_ready(pod: Obj) -> bool:
    """Upstream IsPodReady: the pod's Ready condition is True."""
    cond = get_condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def is_pod_terminal(pod: Obj) -> bool:
    """Succeeded or Failed: the pod's containers will not run again."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
