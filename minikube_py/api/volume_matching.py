"""Which PersistentVolume serves a claim: the matching rules the claim binder and the scheduler's
volume binding share.

Kubernetes pieces: k8s.io/component-helpers/storage/volume/pv_helpers.go (FindMatchingVolume,
IsVolumeBoundToClaim, CheckVolumeModeMismatches, CheckAccessModes, CheckNodeAffinity) — the one
copy upstream's PV controller (no node: immediate binding) and SchedulerVolumeBinder (a node:
the volume's nodeAffinity must admit it, access modes checked) both call — and
pkg/controller/volume/persistentvolume/index.go (findByClaim: volumes grouped by access-mode
set, the groups holding every mode the claim asks for tried fewest-modes-first, so a claim for
RWO gets an RWO volume before an RWO+ROX+RWX one). Pure and tolerant of any JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from minikube_py.api import errors
from minikube_py.api.labels import selector_from_label_selector
from minikube_py.api.nodeaffinity import node_selector_matches
from minikube_py.api.volume_helpers import (
    access_modes,
    access_modes_text,
    storage_class_of,
    storage_quantity,
)

Obj = dict[str, Any]

VOLUME_AVAILABLE = "Available"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _meta(obj: Obj) -> dict[str, Any]:
    return _d(obj.get("metadata"))


def _spec(obj: Obj) -> dict[str, Any]:
    return _d(obj.get("spec"))


def volume_mode(obj: Obj) -> str:
    """A nil volumeMode means Filesystem (CheckVolumeModeMismatches)."""
    mode = _spec(obj).get("volumeMode")
    return mode if isinstance(mode, str) and mode else "Filesystem"


def requested_storage(claim: Obj) -> Fraction:
    return storage_quantity(_d(_spec(claim).get("resources")).get("requests")) or Fraction(0)


def volume_storage(volume: Obj) -> Fraction:
    return storage_quantity(_spec(volume).get("capacity")) or Fraction(0)


def is_volume_bound_to_claim(volume: Obj, claim: Obj) -> bool:
    """The volume is pre-bound or bound to this claim: same name and namespace, and the same
    uid when the claimRef carries one (IsVolumeBoundToClaim)."""
    ref = _spec(volume).get("claimRef")
    if not isinstance(ref, dict):
        return False
    md = _meta(claim)
    if ref.get("name") != md.get("name") or ref.get("namespace") != md.get("namespace"):
        return False
    uid = ref.get("uid")
    return not uid or uid == md.get("uid")


def claim_reference(claim: Obj) -> Obj:
    """reference.GetReference(claim): what a bound volume's spec.claimRef holds."""
    md = _meta(claim)
    ref = {"kind": "PersistentVolumeClaim", "namespace": md.get("namespace", ""),
           "name": md.get("name", ""), "uid": md.get("uid", ""), "apiVersion": "v1",
           "resourceVersion": md.get("resourceVersion", "")}
    return {k: v for k, v in ref.items() if v}


def check_access_modes(claim: Obj, volume: Obj) -> bool:
    """The volume offers every mode the claim asks for (CheckAccessModes)."""
    return access_modes(_spec(claim).get("accessModes")) <= access_modes(
        _spec(volume).get("accessModes"))


def check_node_affinity(volume: Obj, node: Obj) -> bool:
    """CheckNodeAffinity: a volume without required nodeAffinity is reachable from any node."""
    required = _d(_spec(volume).get("nodeAffinity")).get("required")
    return required is None or node_selector_matches(required, node)


def _claim_selector(claim: Obj) -> Any:
    raw = _spec(claim).get("selector")
    if raw is None:
        return None
    try:
        return selector_from_label_selector(raw)
    except (errors.StatusError, TypeError, ValueError):
        return False  # validation keeps these out; a broken one matches nothing


def _phase(obj: Obj) -> str:
    value = _d(obj.get("status")).get("phase")
    return value if isinstance(value, str) else ""


def find_matching_volume(claim: Obj, volumes: Iterable[Obj], delay_binding: bool = False,
                         node: Obj | None = None) -> Obj | None:
    """FindMatchingVolume: the volume pre-bound to the claim, else the smallest Available fit.

    Without `node` (the claim binder) and with `delay_binding` (the claim's class is
    WaitForFirstConsumer) only a pre-bound volume matches: choosing one is the scheduler's job.
    With `node` (the scheduler) a volume must also admit the node (nodeAffinity) and offer the
    claim's access modes; a pre-bound volume that does not admit the node means no match."""
    requested = requested_storage(claim)
    requested_class = storage_class_of(claim)
    selector = _claim_selector(claim)
    wanted_mode = volume_mode(claim)
    smallest: Obj | None = None
    smallest_size = Fraction(0)
    for volume in volumes:
        if _spec(volume).get("claimRef") is not None and not is_volume_bound_to_claim(volume,
                                                                                       claim):
            continue
        size = volume_storage(volume)
        if size < requested or volume_mode(volume) != wanted_mode:
            continue
        if _meta(volume).get("deletionTimestamp"):
            continue
        affinity_ok = node is None or check_node_affinity(volume, node)
        if is_volume_bound_to_claim(volume, claim):
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue
        if _phase(volume) != VOLUME_AVAILABLE:
            continue
        if selector is False or (selector is not None and not selector.matches(
                _d(_meta(volume).get("labels")))):
            continue
        if storage_class_of(volume) != requested_class or not affinity_ok:
            continue
        if node is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or size < smallest_size:
            smallest, smallest_size = volume, size
    return smallest


def find_best_match(claim: Obj, volumes: Iterable[Obj], delay_binding: bool = False,
                    node: Obj | None = None) -> Obj | None:
    """persistentVolumeOrderedIndex.findByClaim: try the access-mode groups that contain all
    the claim's modes, fewest modes first (ties in the groups' printed order)."""
    groups: dict[str, list[Obj]] = {}
    for volume in volumes:
        groups.setdefault(access_modes_text(_spec(volume).get("accessModes")), []).append(volume)
    wanted = access_modes(_spec(claim).get("accessModes"))
    candidates = [(len(key.split(",")) if key else 0, key) for key, group in groups.items()
                  if wanted <= access_modes(_spec(group[0]).get("accessModes"))]
    for _, key in sorted(candidates):
        found = find_matching_volume(claim, groups[key], delay_binding, node)
        if found is not None:
            return found
    return None
