"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; PreferNoSchedule ones count.

Kubernetes piece: pkg/scheduler/framework/plugins/tainttoleration (1.31), the successor of the
PodToleratesNodeTaints predicate and TaintTolerationPriority.

- Filter: the node's first NoSchedule/NoExecute taint (in the node's order) that no toleration
  tolerates makes it UnschedulableAndUnresolvable with upstream's
  "node(s) had untolerated taint {key: value}". Answered once per distinct taint set of the
  table (a handful even on thousands of nodes) and broadcast to the rows.
- PreScore keeps the tolerations that can tolerate PreferNoSchedule (empty or that effect);
  Score counts each node's PreferNoSchedule taints none of them tolerates; NormalizeScore is
  upstream's DefaultNormalizeScore reversed (fewest such taints -> 100).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_meta import PodMeta, tolerates
from ...algorithm.priorities_affinity import intolerable_count
from ...algorithm.priorities_meta import at
from ...nodetable import Mask, NodeTable
from ..interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterFailures,
    Handle,
    Rows,
    Status,
)
from .common import default_normalize_score, priority_context

NAME = "TaintToleration"


def untolerated_reason(taints: tuple, tolerations: tuple) -> str | None:
    """upstream FindMatchingUntoleratedTaint + the Filter's message, for one taint set."""
    for taint in taints:
        if not any(tolerates(t, taint) for t in tolerations):
            return f"node(s) had untolerated taint {{{taint[0]}: {taint[1]}}}"
    return None


class TaintToleration:
    name = NAME

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        # every taint set ever interned is a handful: asking each is cheaper than finding
        # which ones the rows use
        values = nodes.taint_sets.values
        reason_of = np.zeros(len(values), dtype=np.int64)  # 0: tolerated
        reasons: dict[str, int] = {}
        for set_id, taints in enumerate(values):
            if taints:
                reason = untolerated_reason(taints, pod.tolerations)
                if reason is not None:
                    reason_of[set_id] = reasons.setdefault(reason, len(reasons) + 1)
        if not reasons:
            return []
        per_row = reason_of[nodes.taint_set]
        return [(Status.unresolvable(reason), per_row == code) for reason, code in reasons.items()]

    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        priority_context(state, pod)  # the PreferNoSchedule tolerations, computed once
        return None

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        tolerations = priority_context(state, pod).meta(pod.pod).prefer_no_schedule_tolerations
        values = nodes.taint_sets.values
        per_set = np.fromiter((intolerable_count(taints, tolerations) if taints else 0
                               for taints in values), dtype=np.int64, count=len(values))
        return per_set[at(nodes.prefer_taint_set, rows)]

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: PodMeta, scores: np.ndarray) -> None:
        default_normalize_score(scores, reverse=True)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT)),
                ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATIONS))]


def new(args: Mapping[str, Any], handle: Handle) -> TaintToleration:
    return TaintToleration()
