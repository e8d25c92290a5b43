"""VolumeRestrictions: disks that cannot be shared, and ReadWriteOncePod claims already in use.

Kubernetes piece: pkg/scheduler/framework/plugins/volumerestrictions (1.31), the successor of
NoDiskConflict. Filter reuses the NoDiskConflict predicate extended to claims
(predicates_volume_count.no_disk_conflict_with_claims: GCE PD, EBS, RBD and iSCSI volumes,
direct or through bound PersistentVolumes, on both sides) — Unschedulable "node(s) had no
available disk". PreFilter rejects the pod outright (UnschedulableAndUnresolvable) when a
ReadWriteOncePod claim it mounts is already used by a pod on some node, and answers Skip for
pods without such volumes or claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...algorithm.predicates_errors import ERR_DISK_CONFLICT
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_volume_count import no_disk_conflict_with_claims
from ...algorithm.predicates_volumes import pod_claims
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

NAME = "VolumeRestrictions"
#: upstream ErrReasonReadWriteOncePodConflict
ERR_REASON_RWOP_CONFLICT = ("node has pod using PersistentVolumeClaim with the same name and "
                            "ReadWriteOncePod access mode")


def _rwop_claims(pod: PodMeta, lister: VolumeLister) -> set[str]:
    out = set()
    for _volume, name, _read_only in pod.claims:
        claim = lister.claim(pod.namespace, name)
        modes = ((claim or {}).get("spec") or {}).get("accessModes") or ()
        if "ReadWriteOncePod" in modes:
            out.add(name)
    return out


class VolumeRestrictions:
    name = NAME

    def __init__(self, lister: VolumeLister) -> None:
        self.lister = lister
        self._conflict = no_disk_conflict_with_claims(lister)

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.disks and not pod.claims:
            return None, Status(Code.SKIP)
        wanted = _rwop_claims(pod, self.lister)
        if wanted:
            for info in nodes.infos:
                for other in info.pods.values():
                    md = other.get("metadata") or {}
                    if (md.get("namespace") or "") != pod.namespace or md.get("uid") == \
                            (pod.pod.get("metadata") or {}).get("uid"):
                        continue
                    if any(name in wanted for _v, name, _r in pod_claims(other)):
                        return None, Status.unresolvable(ERR_REASON_RWOP_CONFLICT)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        conflict = nodes.everywhere(False)
        for _reason, rows in self._conflict(pod, nodes):
            conflict |= rows
        return [(Status.unschedulable(ERR_DISK_CONFLICT), conflict)] if conflict.any() else []

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD)),
                ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE))]


def new(args: Mapping[str, Any], handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(volume_lister(handle))
