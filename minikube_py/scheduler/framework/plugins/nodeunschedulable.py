"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate it.

Kubernetes piece: pkg/scheduler/framework/plugins/nodeunschedulable (1.31), the successor of
v1.x's CheckNodeUnschedulable predicate. A pod tolerating the
`node.kubernetes.io/unschedulable:NoSchedule` taint (DaemonSet pods do) may land on a cordoned
node; any other pod is UnschedulableAndUnresolvable there (preemption cannot help).
Column-wise: one read of the table's `unschedulable` column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...algorithm.predicates_meta import PodMeta
from ...nodetable import Mask, NodeTable
from ..interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterFailures,
    Handle,
    Status,
)
from .common import failing

NAME = "NodeUnschedulable"
#: upstream ErrReasonUnschedulable
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: upstream ErrReasonUnknownCondition (a NodeInfo without its node object)
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"


class NodeUnschedulable:
    name = NAME

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        if pod.tolerates_unschedulable:
            return []
        return failing(Status.unresolvable(ERR_REASON_UNSCHEDULABLE), nodes.unschedulable)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
