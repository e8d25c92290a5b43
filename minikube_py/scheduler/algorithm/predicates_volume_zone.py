"""Volume predicates that need the claims resolved: CheckVolumeBinding and NoVolumeZoneConflict.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.5)
VolumeZoneChecker (NewVolumeZonePredicate, registered as NoVolumeZoneConflict) and, from
v1.9+, CheckVolumeBinding's refusal of pods whose claims are unbound (v1.11+ "pod has unbound
immediate PersistentVolumeClaims").

Behaviour:
- CheckVolumeBinding: every claim the pod mounts must exist, not be being deleted, and be
  bound (spec.volumeName) to a PersistentVolume that exists; otherwise no node fits, each
  charged with the reason (`pod has unbound immediate PersistentVolumeClaims`,
  `persistentvolumeclaim "data" not found`, ...).
- NoVolumeZoneConflict: a node carrying zone/region labels fits only if every bound PV's
  zone/region labels name the node's values (a PV label value may list several zones joined
  by `__`, as upstream's LabelZonesToSet from v1.6); a node without such labels fits any PV.
  v1.5 also errored on an unresolvable claim here; this predicate reports the same claim
  problems as CheckVolumeBinding, on every node, so DefaultProvider (v1.5's set, which has no
  CheckVolumeBinding) still keeps such pods Pending with a clear reason. v1.5 did that only on
  zoned nodes (elsewhere the pod was placed and waited in the kubelet); refusing everywhere is
  what later upstream does.
- Both also run the volume binding filter for claims whose class waits for the first consumer
  (predicates_volume_binding.py): such a claim is not a problem while unbound, but only nodes
  its class may provision on fit.
"""

from __future__ import annotations

import numpy as np

from ..nodetable import ABSENT, NodeTable
from .predicates_meta import REGION_LABELS, ZONE_LABELS, Failure, PodMeta, Predicate
from .predicates_volume_binding import delayed_claim_failures
from .volume_listers import VolumeLister, resolve_claim

#: upstream ErrVolumeZoneConflict (v1.8+ wording)
ERR_VOLUME_ZONE_CONFLICT = "node(s) had no available volume zone"
#: the labels whose values must agree between a PV and its node (v1.5: the failure-domain
#: pair; the topology.kubernetes.io names are their v1.17+ successors)
ZONE_CONSTRAINT_LABELS = (*ZONE_LABELS, *REGION_LABELS)
_ZONE_SEPARATOR = "__"


def claim_problems(meta: PodMeta, lister: VolumeLister) -> list[str]:
    """Why the pod's claims cannot be used yet, one reason per distinct problem."""
    reasons: dict[str, None] = {}
    for _volume, claim, _read_only in meta.claims:
        _pv, reason = resolve_claim(lister, meta.namespace, claim)
        if reason:
            reasons.setdefault(reason)
    return list(reasons)


def check_volume_binding(lister: VolumeLister) -> Predicate:
    """CheckVolumeBinding: the pod's claims are all bound to existing PersistentVolumes."""

    def volume_binding(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        if not meta.claims:
            return []
        return [(reason, nodes.everywhere()) for reason in claim_problems(meta, lister)] + \
            delayed_claim_failures(meta, lister, nodes)

    return volume_binding


def _zone_mask(nodes: NodeTable, key: str, value: str) -> np.ndarray:
    """Rows whose `key` label is one of the zones `value` names."""
    column = nodes.label(key)
    wanted = [nodes.strings.lookup(v) for v in value.split(_ZONE_SEPARATOR) if v]
    return np.isin(column, [w for w in wanted if w >= 0])


def no_volume_zone_conflict(lister: VolumeLister) -> Predicate:
    """NoVolumeZoneConflict: the node's zone/region labels agree with the pod's bound PVs'."""

    def volume_zone(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        if not meta.claims:
            return []
        problems = claim_problems(meta, lister)
        if problems:
            return [(reason, nodes.everywhere()) for reason in problems]
        zoned = nodes.everywhere(False)
        for key in ZONE_CONSTRAINT_LABELS:
            zoned |= nodes.label(key) != ABSENT
        conflict = nodes.everywhere(False)
        for _volume, claim, _read_only in meta.claims:
            pv, _ = resolve_claim(lister, meta.namespace, claim)
            pv_labels = ((pv or {}).get("metadata") or {}).get("labels") or {}
            for key in ZONE_CONSTRAINT_LABELS:
                if key in pv_labels:
                    conflict |= zoned & ~_zone_mask(nodes, key, pv_labels[key])
        return [(ERR_VOLUME_ZONE_CONFLICT, conflict),
                *delayed_claim_failures(meta, lister, nodes)]

    return volume_zone
