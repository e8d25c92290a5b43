"""NodePreferAvoidPods (upstream 1.19-1.23 only): honour the preferAvoidPods node annotation.

Kubernetes piece: pkg/scheduler/framework/plugins/nodepreferavoidpods (removed in 1.24), the
successor of NodePreferAvoidPodsPriority (weight 10000 in v1.5's DefaultProvider and in the
legacy mapping). Wraps the v1.5 priority: 0 on a node whose
`scheduler.alpha.kubernetes.io/preferAvoidPods` annotation names the pod's controlling
ReplicationController / ReplicaSet, else 100 (v1.5's 0/10, x10).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_meta import PodMeta
from ...algorithm.priorities_avoid import node_prefer_avoid_pods_priority
from ...algorithm.priorities_meta import MAX_PRIORITY
from ...nodetable import NodeTable
from ..interface import MAX_NODE_SCORE, CycleState, Handle, Rows
from .common import priority_context

NAME = "NodePreferAvoidPods"


class NodePreferAvoidPods:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass  # no args upstream

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        scores = node_prefer_avoid_pods_priority(pod.pod, nodes, rows, priority_context(state, pod))
        return scores * (MAX_NODE_SCORE // MAX_PRIORITY)

    def score_extensions(self) -> None:
        return None

