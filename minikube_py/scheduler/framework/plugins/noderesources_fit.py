"""NodeResourcesFit: the pod's requests must fit what the node has left; scoring by strategy.

Kubernetes piece: pkg/scheduler/framework/plugins/noderesources/fit.go (1.31), the successor of
PodFitsResources and of LeastRequestedPriority / MostRequestedPriority /
RequestedToCapacityRatioPriority (NodeResourcesFitArgs.scoringStrategy: LeastAllocated — the
default —, MostAllocated, RequestedToCapacityRatio, each with `resources` weights).

- PreFilter computes the pod's requests once (init containers as their max, overhead added:
  PodMeta) and stores them in the cycle state; upstream never skips it.
- Filter: "Too many pods", "Insufficient cpu", "Insufficient memory" — every shortage of a
  node in one Unschedulable status, as upstream (a pod requesting neither cpu nor memory only
  needs the pod slot). Rows are grouped by their combination of shortages.
- Score: the strategy's scorer (resource_allocation.py) over the node's non-zero requested
  sums plus the pod's non-zero requests, 0..100.
Extended resources and ephemeral-storage are not columns of the NodeTable, so they are neither
checked nor scored (documented limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_errors import (
    ERR_INSUFFICIENT_CPU,
    ERR_INSUFFICIENT_MEMORY,
    ERR_TOO_MANY_PODS,
)
from ...algorithm.predicates_meta import PodMeta
from ...nodetable import Mask, NodeTable
from ..interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterFailures,
    Handle,
    PreFilterResult,
    Rows,
    Status,
)
from . import resource_allocation as ra
from .common import arg, group_by_reasons, priority_context

NAME = "NodeResourcesFit"
LEAST_ALLOCATED, MOST_ALLOCATED = "LeastAllocated", "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_STATE_KEY = "PreFilter" + NAME


def build_scorer(strategy: Mapping[str, Any] | None) -> tuple[str, ra.Scorer, list[tuple[str, int]]]:
    """(type, scorer, resources) of a scoringStrategy, with upstream's defaults."""
    strategy = strategy or {}
    kind = strategy.get("type") or LEAST_ALLOCATED
    resources = ra.resources_of(strategy)
    weights = [w for _n, w in resources]
    if kind == MOST_ALLOCATED:
        return kind, ra.most_allocated(weights), resources
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or ra.DEFAULT_SHAPE
        return kind, ra.requested_to_capacity_ratio(weights, shape), resources
    if kind != LEAST_ALLOCATED:
        raise ValueError(f"scoring strategy {kind} is not supported")
    return kind, ra.least_allocated(weights), resources


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.strategy, self._scorer, self.resources = build_scorer(arg(args, "scoringStrategy", None))

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_STATE_KEY, {"cpu": pod.milli_cpu, "memory": pod.memory})
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        request = state.get(_STATE_KEY) or {"cpu": pod.milli_cpu, "memory": pod.memory}
        checks = [(ERR_TOO_MANY_PODS, nodes.pod_count + 1 > nodes.max_pods)]
        if request["cpu"] or request["memory"]:
            checks.append((ERR_INSUFFICIENT_CPU, (request["cpu"] > 0)
                           & (request["cpu"] > nodes.alloc_cpu - nodes.requested_cpu)))
            checks.append((ERR_INSUFFICIENT_MEMORY, (request["memory"] > 0)
                           & (request["memory"] > nodes.alloc_memory - nodes.requested_memory)))
        return group_by_reasons(nodes, checks, lambda _reasons: Code.UNSCHEDULABLE)

    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        priority_context(state, pod)
        return None

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        nonzero = priority_context(state, pod).meta(pod.pod).nonzero_requests
        requested, allocatable = ra.requested_and_allocatable(
            nodes, rows, self.resources, {"cpu": nonzero.milli_cpu, "memory": nonzero.memory},
            nonzero=True)
        return self._scorer(requested, allocatable)

    def score_extensions(self) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeResourcesFit:
    return NodeResourcesFit(args)
