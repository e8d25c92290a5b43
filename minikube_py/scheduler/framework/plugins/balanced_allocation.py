"""NodeResourcesBalancedAllocation: favour nodes whose resources fill up evenly.

Kubernetes piece: pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (1.31),
the successor of BalancedResourceAllocation (v1.5: 10 - |cpu% - mem%| * 10; since 1.23 one
minus the standard deviation of the used fractions, over NodeResourcesBalancedAllocationArgs
`resources`, default cpu and memory). Uses the node's real requested sums plus the pod's real
requests (upstream's useRequested), unlike NodeResourcesFit's scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_meta import PodMeta
from ...nodetable import NodeTable
from ..interface import CycleState, Handle, Rows, Status
from . import resource_allocation as ra

NAME = "NodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation:
    name = NAME

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.resources = ra.resources_of(args)

    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        """Upstream computes the pod's requests here; PodMeta already holds them."""
        return None

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        requested, allocatable = ra.requested_and_allocatable(
            nodes, rows, self.resources, {"cpu": pod.milli_cpu, "memory": pod.memory},
            nonzero=False)
        return ra.balanced(requested, allocatable)

    def score_extensions(self) -> None:
        return None


def new(args: Mapping[str, Any], handle: Handle) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args)
