"""VolumeRestrictions: disks that cannot be shared, and ReadWriteOncePod claims already in use.

Kubernetes piece: pkg/scheduler/framework/plugins/volumerestrictions (1.31), the successor of
NoDiskConflict.
- PreFilter counts how many scheduled pods reference the pod's ReadWriteOncePod claims
  (upstream conflictingPVCRefCount) and answers Skip when the pod has neither such a claim in
  use nor a volume NoDiskConflict looks at. AddPod/RemovePod (PreFilterExtensions) adjust the
  count, so preemption can find that evicting the claim's user frees it.
- Filter: while the count is positive every node is Unschedulable "node has pod using
  PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"; otherwise the
  NoDiskConflict predicate extended to claims (predicates_volume_count: GCE PD, EBS, RBD and
  iSCSI volumes, direct or through bound PersistentVolumes, on both sides) —
  Unschedulable "node(s) had no available disk".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...algorithm.predicates_errors import ERR_DISK_CONFLICT
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_volume_count import no_disk_conflict_with_claims
from ...algorithm.predicates_volumes import pod_claims
from ...algorithm.volume_listers import VolumeLister
from ...nodeinfo import NodeInfo
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
_STATE_KEY = "PreFilter" + NAME
#: upstream ErrReasonReadWriteOncePodConflict
ERR_REASON_RWOP_CONFLICT = ("node has pod using PersistentVolumeClaim with the same name and "
                            "ReadWriteOncePod access mode")


def _rwop_claims(pod: PodMeta, lister: VolumeLister) -> frozenset[str]:
    out = set()
    for _volume, name, _read_only in pod.claims:
        claim = lister.claim(pod.namespace, name)
        modes = ((claim or {}).get("spec") or {}).get("accessModes") or ()
        if "ReadWriteOncePod" in modes:
            out.add(name)
    return frozenset(out)


@dataclass
class PreFilterState:
    """upstream preFilterState: the pod's ReadWriteOncePod claims and how many references
    scheduled pods hold to them."""

    namespace: str
    claims: frozenset[str]
    conflicts: int = 0

    def clone(self) -> PreFilterState:
        return PreFilterState(self.namespace, self.claims, self.conflicts)

    def references(self, other: dict) -> int:
        if ((other.get("metadata") or {}).get("namespace") or "") != self.namespace:
            return 0
        return sum(1 for _v, name, _r in pod_claims(other) if name in self.claims)


class VolumeRestrictions:
    name = NAME

    def __init__(self, lister: VolumeLister) -> None:
        self.lister = lister
        self._conflict = no_disk_conflict_with_claims(lister)

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.disks and not pod.claims:
            return None, Status(Code.SKIP)
        s = PreFilterState(pod.namespace, _rwop_claims(pod, self.lister))
        if s.claims:
            uid = (pod.pod.get("metadata") or {}).get("uid")
            for info in nodes.infos:
                for other in info.pods.values():
                    if (other.get("metadata") or {}).get("uid") != uid:
                        s.conflicts += s.references(other)
        state.write(_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: dict,
                node: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(_STATE_KEY)
        if s is not None:
            s.conflicts += s.references(pod_to_add)
        return None

    def remove_pod(self, state: CycleState, pod: PodMeta, pod_to_remove: dict,
                   node: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(_STATE_KEY)
        if s is not None:
            s.conflicts -= s.references(pod_to_remove)
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        s: PreFilterState | None = state.get(_STATE_KEY)
        if s is not None and s.conflicts > 0:
            return [(Status.unschedulable(ERR_REASON_RWOP_CONFLICT), nodes.everywhere())]
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
