"""genericScheduler.Schedule: findNodesThatFit -> PrioritizeNodes -> selectHost.

Kubernetes v1.0 piece: plugin/pkg/scheduler/generic_scheduler.go. Pure: given a pod and the
NodeInfos, run every predicate on every node (a node fails on its first failing predicate,
and every reason of that predicate is kept for the FitError), score the feasible nodes with the
weighted priorities, and pick one among the best. The result carries the explanation learners
ask for: per node, the failed predicate reasons or the per-priority scores.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .algorithm.predicates import PodMeta, Predicate
from .algorithm.priorities import PriorityConfig, PriorityContext, prioritize
from .algorithm.select_host import HostSelector
from .nodeinfo import NodeInfo

Obj = dict[str, Any]


class FitError(Exception):
    """No node fits: upstream's message `0/5 nodes are available: 3 Insufficient cpu, 2
    node(s) didn't match node selector.` (reasons counted over nodes, sorted)."""

    def __init__(self, pod: Obj, total: int, failed: Mapping[str, list[str]]) -> None:
        self.pod = pod
        self.total = total
        self.failed = dict(failed)
        super().__init__(self.message())

    def message(self) -> str:
        counts = collections.Counter(r for reasons in self.failed.values() for r in reasons)
        parts = sorted(f"{n} {reason}" for reason, n in counts.items())
        text = f"0/{self.total} nodes are available"
        return f"{text}: {', '.join(parts)}." if parts else f"{text}."


@dataclass
class ScheduleResult:
    node: str
    score: int
    feasible: int
    total: int
    #: per node: failed predicate reasons, or the weighted score (the explanation endpoint)
    failed: dict[str, list[str]] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def sample_size(total: int, percentage: int) -> int:
    """How many feasible nodes to find before scoring (upstream numFeasibleNodesToFind):
    all when percentage >= 100 or the cluster is small, else a share with a floor of 100."""
    if percentage >= 100 or total <= 100:
        return total
    return max(100, total * percentage // 100)


class GenericScheduler:
    def __init__(
        self,
        predicates: Mapping[str, Predicate],
        priorities: list[PriorityConfig],
        *,
        selector: HostSelector | None = None,
        context: Callable[[], PriorityContext] | None = None,
        percentage_of_nodes_to_score: int = 100,
    ) -> None:
        self.predicates = list(predicates.items())
        self.priorities = priorities
        self.selector = selector or HostSelector()
        self.context = context or PriorityContext.empty
        self.percentage = percentage_of_nodes_to_score
        self._next_start = 0  # rotate the sampling start so every node gets its turn

    def find_nodes_that_fit(self, meta: PodMeta, nodes: list[NodeInfo]
                            ) -> tuple[list[NodeInfo], dict[str, list[str]]]:
        wanted = sample_size(len(nodes), self.percentage)
        feasible: list[NodeInfo] = []
        failed: dict[str, list[str]] = {}
        count = len(nodes)
        start = self._next_start % count if count else 0
        checked = 0
        for i in range(count):
            info = nodes[(start + i) % count]
            checked += 1
            for _, predicate in self.predicates:
                fits, reasons = predicate(meta, info)
                if not fits:
                    failed[info.name] = reasons
                    break
            else:
                feasible.append(info)
                if len(feasible) >= wanted:
                    break
        self._next_start = start + checked
        return feasible, failed

    def schedule(self, pod: Obj, nodes: list[NodeInfo]) -> ScheduleResult:
        started = time.perf_counter()
        if not nodes:
            raise FitError(pod, 0, {})
        meta = PodMeta.of(pod)
        feasible, failed = self.find_nodes_that_fit(meta, nodes)
        if not feasible:
            raise FitError(pod, len(nodes), failed)
        if len(feasible) == 1:
            host, scores = feasible[0].name, {feasible[0].name: 0}
        else:
            ranked = prioritize(pod, feasible, self.priorities, self.context())
            scores = dict(ranked)
            host = self.selector.select(ranked)
        return ScheduleResult(host, scores[host], len(feasible), len(nodes), failed, scores,
                              time.perf_counter() - started)
