"""Predicates over the volumes already mounted on each node: Max*VolumeCount, NoDiskConflict.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.5)
MaxPDVolumeCountChecker (NewMaxPDVolumeCountPredicate with EBSVolumeFilter and
GCEPDVolumeFilter; AzureDiskVolumeFilter from v1.7), the limits of algorithmprovider/defaults
(aws.DefaultMaxEBSVolumes 39, DefaultMaxGCEPDVolumes 16, DefaultMaxAzureDiskVolumes 16, all
overridden by the KUBE_MAX_PD_VOLS environment variable: `max_volumes_default`), and
NoDiskConflict extended to volumes mounted through claims.

Max*VolumeCount: a cloud provider attaches at most N disks of a kind to one instance. The
pod's volumes of that kind (direct ones and those of its bound PVs) are counted by volume ID;
a node fits when its pods' distinct IDs plus the pod's new ones (IDs already attached there do
not count twice) stay within the limit. Claims that do not resolve are not counted (the
claim check reports them; v1.5 errored on an unbound one and counted a missing one as a new
volume).

Only nodes running a pod with such a volume or with any claim can hold one, so only those
are walked (a derived column of those pods, recounted where pods changed); the pending pod's
own volumes are resolved once per decision.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import structlog

from ..nodetable import NodeTable
from .predicates_errors import ERR_DISK_CONFLICT
from .predicates_meta import Failure, PodMeta, Predicate
from .predicates_volumes import Disk, any_disk_conflict, disks_conflict, pod_claims, pv_disk
from .volume_listers import VolumeLister, pod_volumes

log = structlog.get_logger(component="scheduler")
Obj = dict[str, Any]

#: upstream ErrMaxVolumeCountExceeded (v1.8+ wording)
ERR_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
#: (volume source field, its ID field) per disk kind (upstream EBSVolumeFilter & co.)
EBS = ("awsElasticBlockStore", "volumeID")
GCE_PD = ("gcePersistentDisk", "pdName")
AZURE_DISK = ("azureDisk", "diskName")
DEFAULT_MAX_EBS_VOLUMES = 39
DEFAULT_MAX_GCE_PD_VOLUMES = 16
DEFAULT_MAX_AZURE_DISK_VOLUMES = 16
MAX_PD_VOLS_ENV = "KUBE_MAX_PD_VOLS"


def max_volumes_default(default: int) -> int:
    """upstream getMaxVols: KUBE_MAX_PD_VOLS when it is a positive integer, else `default`."""
    raw = os.environ.get(MAX_PD_VOLS_ENV, "")
    if raw:
        try:
            parsed = int(raw)
        except ValueError:
            log.error("unable to parse maximum PD volumes value, using default",
                      value=raw, default=default)
            return default
        if parsed > 0:
            return parsed
        log.error("maximum PD volumes must be a positive value, using default", default=default)
    return default


def _source_id(source: Obj | None, kind: tuple[str, str]) -> str | None:
    found = (source or {}).get(kind[0])
    return None if not isinstance(found, dict) else str(found.get(kind[1]) or "")


def _claim_pods(info: Any) -> int:
    return sum(1 for pod in info.pods.values() if pod_claims(pod))


def _rows_with(nodes: NodeTable, kind: tuple[str, str] | None) -> np.ndarray:
    """Rows running a pod with a claim, or with a direct volume of `kind` (None: any disk
    NoDiskConflict knows)."""
    with_claims = nodes.derived(("claim-pods",), _claim_pods) > 0
    if kind is None:
        return np.flatnonzero(with_claims | (nodes.disk_pods > 0))
    direct = nodes.derived(("volume-pods", kind), lambda info: sum(
        1 for pod in info.pods.values()
        if any(_source_id(v, kind) is not None for v in _volumes(pod))))
    return np.flatnonzero(with_claims | (direct > 0))


def _volumes(pod: Obj) -> Iterable[Obj]:
    return (v for v in (pod.get("spec") or {}).get("volumes") or () if isinstance(v, dict))


def volume_ids(pod: Obj, namespace: str, claims: tuple, kind: tuple[str, str],
               lister: VolumeLister) -> set[str]:
    """The IDs of the pod's volumes of `kind`, direct and through bound claims."""
    ids = {i for i in (_source_id(v, kind) for v in _volumes(pod)) if i is not None}
    for pv, _read_only in pod_volumes(lister, namespace, claims):
        found = _source_id(pv.get("spec"), kind)
        if found is not None:
            ids.add(found)
    return ids


def max_pd_volume_count(kind: tuple[str, str], max_volumes: int,
                        lister: VolumeLister) -> Predicate:
    """MaxEBSVolumeCount / MaxGCEPDVolumeCount / MaxAzureDiskVolumeCount."""

    def max_volume_count(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        new = volume_ids(meta.pod, meta.namespace, meta.claims, kind, lister)
        if not new:
            return []
        over = nodes.everywhere(len(new) > max_volumes)
        for row in _rows_with(nodes, kind).tolist():
            existing: set[str] = set()
            for pod in nodes.infos[row].pods.values():
                md = pod.get("metadata") or {}
                existing |= volume_ids(pod, md.get("namespace") or "", pod_claims(pod), kind,
                                       lister)
            over[row] = len(existing) + len(new - existing) > max_volumes
        return [(ERR_MAX_VOLUME_COUNT_EXCEEDED, over)]

    return max_volume_count


def _claim_disks(lister: VolumeLister, namespace: str, claims: tuple) -> list[Disk]:
    disks = (pv_disk(pv, read_only) for pv, read_only in pod_volumes(lister, namespace, claims))
    return [d for d in disks if d is not None]


def no_disk_conflict_with_claims(lister: VolumeLister) -> Predicate:
    """NoDiskConflict, with the disks of bound PVs counted on both sides (the pending pod's
    claims and the claims of the pods on the node)."""
    def no_disk_conflict(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        disks = (*meta.disks, *_claim_disks(lister, meta.namespace, meta.claims))
        if not disks:
            return []
        conflict = nodes.everywhere(False)
        for row in _rows_with(nodes, None).tolist():
            pods = nodes.infos[row].pods.values()
            hit = any_disk_conflict(disks, pods)
            if not hit:
                for pod in pods:
                    claims = pod_claims(pod)
                    if claims:
                        ns = (pod.get("metadata") or {}).get("namespace") or ""
                        theirs = _claim_disks(lister, ns, claims)
                        if any(disks_conflict(d, o) for d in disks for o in theirs):
                            hit = True
                            break
            conflict[row] = hit
        return [(ERR_DISK_CONFLICT, conflict)]

    return no_disk_conflict
