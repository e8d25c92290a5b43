"""NodeVolumeLimits: a node can attach only so many disks of a kind.

Kubernetes piece: pkg/scheduler/framework/plugins/nodevolumelimits (1.31: csi.go, and the
in-tree EBSLimits / GCEPDLimits / AzureDiskLimits of non_csi.go that 1.19-1.22 mapped
MaxEBSVolumeCount & co. to). Upstream 1.31 counts in-tree volumes against the limit their CSI
driver reports in the node's CSINode (CSI migration); this cluster has no CSI drivers, so the
limits are the in-tree defaults (EBS 39, GCE PD 16, Azure Disk 16, or KUBE_MAX_PD_VOLS), and
the counting is the Max*VolumeCount predicates' (predicates_volume_count: distinct volume IDs,
direct and through bound claims, on the node plus the pod's new ones). Unschedulable
"node(s) exceed max volume count". PreFilter answers Skip for a pod without volumes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_volume_count import (
    AZURE_DISK,
    DEFAULT_MAX_AZURE_DISK_VOLUMES,
    DEFAULT_MAX_EBS_VOLUMES,
    DEFAULT_MAX_GCE_PD_VOLUMES,
    EBS,
    ERR_MAX_VOLUME_COUNT_EXCEEDED,
    GCE_PD,
    max_pd_volume_count,
    max_volumes_default,
)
from ...algorithm.volume_listers import VolumeLister
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
from .cluster_lookups import volume_lister

NAME = "NodeVolumeLimits"
KINDS = ((EBS, DEFAULT_MAX_EBS_VOLUMES), (GCE_PD, DEFAULT_MAX_GCE_PD_VOLUMES),
         (AZURE_DISK, DEFAULT_MAX_AZURE_DISK_VOLUMES))


class NodeVolumeLimits:
    name = NAME

    def __init__(self, lister: VolumeLister) -> None:
        self._checks = [max_pd_volume_count(kind, max_volumes_default(default), lister)
                        for kind, default in KINDS]

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        """Skip for a pod without volumes (upstream CSILimits.PreFilter)."""
        if not (pod.pod.get("spec") or {}).get("volumes"):
            return None, Status(Code.SKIP)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        if not (pod.pod.get("spec") or {}).get("volumes"):
            return []
        over = nodes.everywhere(False)
        for check in self._checks:
            for _reason, rows in check(pod, nodes):
                over |= rows
        return [(Status.unschedulable(ERR_MAX_VOLUME_COUNT_EXCEEDED), over)] if over.any() else []

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD)),
                ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", ActionType.ADD))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits(volume_lister(handle))
