"""NoDiskConflict: a pod may not mount a network disk that a pod on the node already mounts.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/predicates.go NoDiskConflict and
isVolumeConflict (v1.0 GCE PD; EBS, RBD and iSCSI added by v1.2). The rules, per volume type:
- GCE PD: the same pdName conflicts unless *both* mounts are read-only;
- AWS EBS: the same volumeID always conflicts (an EBS volume attaches to one instance);
- Ceph RBD: same pool and image and at least one shared monitor, unless both read-only;
- iSCSI: same IQN, LUN and target portal (":3260" assumed when no port), unless both
  read-only.

Volumes a pod mounts through a PersistentVolumeClaim conflict the same way: `pv_disk` reads the
bound PersistentVolume's source (the same field names as a pod volume's) with the claim's
readOnly flag ORed in (NoDiskConflict over PV-backed volumes is an addition: upstream only
compared pod volumes). `pod_claims` lists the claims a pod mounts, for every volume predicate.

Why a normalised `Disk`: the pending pod's disks are extracted once (PodMeta) and compared
against each existing pod's, so the per-node loop is tuple comparisons, and only runs at all
when the pending pod mounts one of these volume types.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

Obj = dict[str, Any]

GCE, AWS, RBD, ISCSI = "gce", "aws", "rbd", "iscsi"
_DEFAULT_ISCSI_PORT = ":3260"
_DEFAULT_RBD_POOL = "rbd"  # upstream API default for rbd.pool


class Disk(NamedTuple):
    """One conflict-relevant volume: its kind, identity within the kind, the Ceph monitors
    (RBD only; an RBD image is the same when any monitor is shared) and its read-only flag."""

    kind: str
    ident: tuple[Any, ...]
    monitors: frozenset[str]
    read_only: bool


_NO_MONITORS: frozenset[str] = frozenset()


def _iscsi_target(portal: str) -> str:
    return portal if ":" in portal else portal + _DEFAULT_ISCSI_PORT


def volume_disk(volume: Obj) -> Disk | None:
    """The Disk a volume mounts, or None for volume types that cannot conflict."""
    if (gce := volume.get("gcePersistentDisk")) is not None:
        return Disk(GCE, (gce.get("pdName", ""),), _NO_MONITORS, bool(gce.get("readOnly")))
    if (ebs := volume.get("awsElasticBlockStore")) is not None:
        return Disk(AWS, (ebs.get("volumeID", ""),), _NO_MONITORS, bool(ebs.get("readOnly")))
    if (rbd := volume.get("rbd")) is not None:
        ident = (rbd.get("pool") or _DEFAULT_RBD_POOL, rbd.get("image", ""))
        return Disk(RBD, ident, frozenset(rbd.get("monitors") or ()), bool(rbd.get("readOnly")))
    if (iscsi := volume.get("iscsi")) is not None:
        ident = (iscsi.get("iqn", ""), str(iscsi.get("lun") or 0),
                 _iscsi_target(iscsi.get("targetPortal", "")))
        return Disk(ISCSI, ident, _NO_MONITORS, bool(iscsi.get("readOnly")))
    return None


def pv_disk(pv: Obj, read_only: bool = False) -> Disk | None:
    """The Disk a PersistentVolume provides (its spec carries the volume source), read-only
    when the PV's source or the pod's claim reference says so."""
    disk = volume_disk((pv.get("spec") or {}))
    return disk._replace(read_only=True) if disk is not None and read_only else disk


def pod_claims(pod: Obj) -> tuple[tuple[str, str, bool], ...]:
    """(volume name, claim name, read-only) of each persistentVolumeClaim volume of `pod`."""
    return tuple(
        (v.get("name") or "", claim.get("claimName") or "", bool(claim.get("readOnly")))
        for v in (pod.get("spec") or {}).get("volumes") or ()
        if isinstance(v, dict) and isinstance(claim := v.get("persistentVolumeClaim"), dict))


def pod_disks(pod: Obj) -> tuple[Disk, ...]:
    """The conflict-relevant volumes of `pod`, in spec order."""
    disks = (volume_disk(v) for v in (pod.get("spec") or {}).get("volumes") or ()
             if isinstance(v, dict))
    return tuple(d for d in disks if d is not None)


def disks_conflict(a: Disk, b: Disk) -> bool:
    """True when `a` and `b` may not be mounted by two pods on one node (isVolumeConflict)."""
    if a.kind != b.kind or a.ident != b.ident:
        return False
    if a.kind == RBD and not (a.monitors & b.monitors):
        return False
    if a.kind == AWS:
        return True
    return not (a.read_only and b.read_only)


def any_disk_conflict(disks: tuple[Disk, ...], existing_pods: Iterable[Obj]) -> bool:
    """True when one of `disks` conflicts with a volume of one of `existing_pods`."""
    for pod in existing_pods:
        for volume in (pod.get("spec") or {}).get("volumes") or ():
            other = volume_disk(volume) if isinstance(volume, dict) else None
            if other is not None and any(disks_conflict(d, other) for d in disks):
                return True
    return False
