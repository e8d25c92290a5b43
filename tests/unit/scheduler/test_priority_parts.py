"""The v1.x algorithm's per-priority scores, kept for the explanation (the console's decision
table, /debug/scheduler/last): each priority's 0-10 score per node, its weight and product,
summing to the total the node was ranked by."""

from __future__ import annotations

from minikube_py.scheduler.algorithm.priorities import PRIORITIES, PriorityConfig
from minikube_py.scheduler.generic_scheduler import GenericScheduler
from minikube_py.scheduler.nodetable import build
from minikube_py.scheduler.scheduler import Attempt
from tests.unit.scheduler.test_generic_scheduler import V10_PREDICATES, node, pod

PRIORITY_CONFIGS = [PriorityConfig("LeastRequestedPriority", PRIORITIES["LeastRequestedPriority"], 2),
                    PriorityConfig("BalancedResourceAllocation",
                                   PRIORITIES["BalancedResourceAllocation"], 1)]


async def test_priority_scores_add_up_to_the_totals() -> None:
    sched = GenericScheduler(V10_PREDICATES, PRIORITY_CONFIGS)
    busy = node("busy")
    busy.add_pod({**pod("x", cpu="3", memory="2Gi"),
                  "spec": {**pod("x", "3", "2Gi")["spec"], "nodeName": "busy"}})
    result = await sched.schedule(pod("p"), build([busy, node("idle")]))
    parts = result.priority_scores()
    assert set(parts) == {"busy", "idle"}
    for name, total in result.scores.items():
        assert sum(p["weighted"] for p in parts[name].values()) == total
        assert parts[name]["LeastRequestedPriority"]["weight"] == 2
        assert all(0 <= p["score"] <= 10 for p in parts[name].values())
    assert parts["idle"]["LeastRequestedPriority"]["score"] > \
        parts["busy"]["LeastRequestedPriority"]["score"]
    attempt = Attempt("default/p", "", "scheduled", result.node, "", result.feasible,
                      result.total, 0.0, decision=result)
    assert attempt.to_dict()["priorityScores"] == parts
