"""NodeName: a pod that names its node (spec.nodeName) fits only that node.

Kubernetes piece: pkg/scheduler/framework/plugins/nodename (1.31), v1.0's HostName predicate
(seed 004 draws it as the first framework Filter plugin). UnschedulableAndUnresolvable with
upstream's reason; one comparison of the table's interned name column.
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

NAME = "NodeName"
#: upstream nodename.ErrReason
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        if not pod.node_name:
            return []
        return failing(Status.unresolvable(ERR_REASON),
                       nodes.name_id != nodes.strings.lookup(pod.node_name))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeName:
    return NodeName()
