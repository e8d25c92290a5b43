"""A Deployment's status: its counts, and the Available, Progressing and ReplicaFailure
conditions that `kubectl rollout status` and `kubectl describe` read.

Kubernetes piece: pkg/controller/deployment/sync.go calculateStatus, progress.go
(syncRolloutStatus, getReplicaFailures, requeueStuckDeployment) and the condition helpers of
deployment/util (NewDeploymentCondition, SetDeploymentCondition, DeploymentComplete,
DeploymentProgressing, DeploymentTimedOut). Pure functions of the Deployment, its ReplicaSets
and the time, so a rollout's reported state is tested without a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..api import meta
from . import conditions
from .deployment_util import (
    AVAILABLE,
    MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE,
    NEW_RS_AVAILABLE_REASON,
    PROGRESSING,
    REPLICA_FAILURE,
    RS_UPDATED_REASON,
    TIMED_OUT_REASON,
    has_progress_deadline,
    max_unavailable,
    replicas,
    total_replicas,
    total_status,
)

Obj = dict[str, Any]


def new_condition(ctype: str, status: str, reason: str, message: str, now: float) -> Obj:
    stamp = meta.rfc3339(now)
    return {"type": ctype, "status": status, "lastUpdateTime": stamp,
            "lastTransitionTime": stamp, "reason": reason, "message": message}


def get_condition(status: Obj, ctype: str) -> Obj | None:
    """The condition of this type in a status (not an object) dict."""
    return conditions.get_condition({"status": status}, ctype)


def set_condition(status: Obj, condition: Obj) -> None:
    """SetDeploymentCondition: same status and reason = no change; same status keeps the
    lastTransitionTime; the condition goes to the end of the list."""
    current = get_condition(status, condition["type"])
    if (current is not None and current.get("status") == condition["status"]
            and current.get("reason") == condition["reason"]):
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    status["conditions"] = [*(c for c in status.get("conditions") or ()
                              if c.get("type") != condition["type"]), condition]


def remove_condition(status: Obj, ctype: str) -> None:
    conditions = [c for c in status.get("conditions") or () if c.get("type") != ctype]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def calculate_status(all_rss: Sequence[Obj | None], new_rs: Obj | None, d: Obj,
                     now: float) -> Obj:
    """The Deployment's counts and its Available condition (calculateStatus)."""
    available = total_status(all_rss, "availableReplicas")
    unavailable = max(0, total_replicas(all_rss) - available)
    old = d.get("status") or {}
    status: Obj = {
        "observedGeneration": (d.get("metadata") or {}).get("generation"),
        "replicas": total_status(all_rss, "replicas"),
        "updatedReplicas": total_status([new_rs], "replicas"),
        "readyReplicas": total_status(all_rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if available >= replicas(d) - max_unavailable(d):
        set_condition(status, new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE,
                                            "Deployment has minimum availability.", now))
    else:
        set_condition(status, new_condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                            "Deployment does not have minimum availability.",
                                            now))
    return status


def deployment_complete(d: Obj, status: Obj) -> bool:
    want = replicas(d)
    return (int(status.get("updatedReplicas") or 0) == want
            and int(status.get("replicas") or 0) == want
            and int(status.get("availableReplicas") or 0) == want
            and int(status.get("observedGeneration") or 0)
            >= int((d.get("metadata") or {}).get("generation") or 0))


def deployment_progressing(d: Obj, status: Obj) -> bool:
    """More updated, fewer old, more ready or more available than last time."""
    old = d.get("status") or {}

    def n(s: Obj, k: str) -> int:
        return int(s.get(k) or 0)

    return (n(status, "updatedReplicas") > n(old, "updatedReplicas")
            or n(status, "replicas") - n(status, "updatedReplicas")
            < n(old, "replicas") - n(old, "updatedReplicas")
            or n(status, "readyReplicas") > n(old, "readyReplicas")
            or n(status, "availableReplicas") > n(old, "availableReplicas"))


def _stamp(text: Any) -> float:
    try:
        return meta.parse_rfc3339(str(text))
    except ValueError:
        return 0.0


def deployment_timed_out(d: Obj, status: Obj, now: float) -> bool:
    """No progress reported for progressDeadlineSeconds (DeploymentTimedOut)."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.get("reason") == TIMED_OUT_REASON:
        return True
    deadline = int(d["spec"]["progressDeadlineSeconds"])
    return _stamp(cond.get("lastUpdateTime")) + deadline < now


def rollout_status(d: Obj, all_rss: Sequence[Obj | None], new_rs: Obj | None,
                   now: float) -> Obj:
    """The status syncRolloutStatus writes: counts, Available, Progressing (complete,
    progressing, or timed out) and ReplicaFailure copied from the ReplicaSets."""
    status = calculate_status(all_rss, new_rs, d, now)
    if not has_progress_deadline(d):
        remove_condition(status, PROGRESSING)
    current = get_condition(d.get("status") or {}, PROGRESSING)
    complete_already = (int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
                        and current is not None
                        and current.get("reason") == NEW_RS_AVAILABLE_REASON)
    name = (new_rs or {}).get("metadata", {}).get("name")
    subject = f'ReplicaSet "{name}"' if new_rs is not None else f'Deployment "{d["metadata"]["name"]}"'
    if has_progress_deadline(d) and not complete_already:
        if deployment_complete(d, status):
            set_condition(status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON,
                                                f"{subject} has successfully progressed.", now))
        elif deployment_progressing(d, status):
            cond = new_condition(PROGRESSING, "True", RS_UPDATED_REASON,
                                 f"{subject} is progressing.", now)
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime")
                remove_condition(status, PROGRESSING)
            set_condition(status, cond)
        elif deployment_timed_out(d, status, now):
            set_condition(status, new_condition(PROGRESSING, "False", TIMED_OUT_REASON,
                                                f"{subject} has timed out progressing.", now))
    failure = replica_failure(all_rss, new_rs)
    if failure is not None:
        set_condition(status, failure)
    else:
        remove_condition(status, REPLICA_FAILURE)
    return status


def replica_failure(all_rss: Sequence[Obj | None], new_rs: Obj | None) -> Obj | None:
    """The first ReplicaFailure of the new ReplicaSet, else of any (getReplicaFailures),
    as a Deployment condition."""
    for group in ([new_rs], all_rss):
        for rs in group:
            if rs is None:
                continue
            for cond in (rs.get("status") or {}).get("conditions") or ():
                if cond.get("type") == REPLICA_FAILURE:
                    return {"type": REPLICA_FAILURE, "status": cond.get("status"),
                            "lastUpdateTime": cond.get("lastTransitionTime"),
                            "lastTransitionTime": cond.get("lastTransitionTime"),
                            "reason": cond.get("reason"), "message": cond.get("message")}
    return None


def progress_recheck_after(d: Obj, status: Obj, now: float) -> float | None:
    """When to look again for a timed-out rollout (requeueStuckDeployment): None when no
    deadline, complete or already timed out; else seconds until the deadline (0 = now)."""
    current = get_condition(d.get("status") or {}, PROGRESSING)
    if not has_progress_deadline(d) or current is None:
        return None
    if deployment_complete(d, status) or current.get("reason") == TIMED_OUT_REASON:
        return None
    after = _stamp(current.get("lastUpdateTime")) + int(d["spec"]["progressDeadlineSeconds"]) - now
    return 0.0 if after < 1 else after + 1
