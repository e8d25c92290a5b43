"""VolumeZone: a node must be in the zone/region of the pod's bound PersistentVolumes.

Kubernetes piece: pkg/scheduler/framework/plugins/volumezone (1.31), the successor of
NoVolumeZoneConflict. Reuses that predicate (predicates_volume_zone: the PV's
topology.kubernetes.io / failure-domain.beta zone and region labels, `__`-separated value
lists, nodes without such labels fit any volume). Upstream's Filter answers
UnschedulableAndUnresolvable both for a conflict ("node(s) had no available volume zone") and
for a claim it cannot resolve; PreFilter answers Skip for a pod without claims. Delayed
(WaitForFirstConsumer) claims are VolumeBinding's, so their failures are left out here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_volume_binding import ERR_BIND_CONFLICT
from ...algorithm.predicates_volume_zone import no_volume_zone_conflict
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

NAME = "VolumeZone"


class VolumeZone:
    name = NAME

    def __init__(self, lister: VolumeLister) -> None:
        self._check = no_volume_zone_conflict(lister)

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        return (None, Status(Code.SKIP)) if not pod.claims else (None, None)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        return [(Status.unresolvable(reason), rows) for reason, rows in self._check(pod, nodes)
                if reason != ERR_BIND_CONFLICT and rows.any()]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(kind, ActionType.ADD | ActionType.UPDATE))
                for kind in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "Node")]


def new(args: Mapping[str, Any], handle: Handle) -> VolumeZone:
    return VolumeZone(volume_lister(handle))
