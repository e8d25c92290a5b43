"""NodePorts: the pod's host ports must be free on the node.

Kubernetes piece: pkg/scheduler/framework/plugins/nodeports (1.31), v1.0's PodFitsPorts. PreFilter
collects the pod's host ports and answers Skip when there are none (so Filter is not run);
Filter reuses the PodFitsHostPorts predicate, which reads the table's port -> rows index
instead of walking pods. Unschedulable (a preemption may free the port).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...algorithm.predicates import pod_fits_host_ports
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
    Status,
)
from .common import failing

NAME = "NodePorts"
#: upstream nodeports.ErrReason
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, Status(Code.SKIP)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        taken = nodes.everywhere(False)
        for _reason, rows in pod_fits_host_ports(pod, nodes):
            taken |= rows
        return failing(Status.unschedulable(ERR_REASON), taken)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE))]


def new(args: Mapping[str, Any], handle: Handle) -> NodePorts:
    return NodePorts()
