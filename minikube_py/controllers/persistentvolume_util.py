"""The claim binder's pure half: which volume fits a claim, and what a binding writes.

Kubernetes pieces: pkg/controller/volume/persistentvolume/index.go (findByClaim: volumes are
grouped by their access-mode set; the groups that contain every mode the claim asks for are
tried fewest-modes-first, so a claim for RWO gets an RWO volume before an RWO+ROX+RWX one) and
util/util.go (FindMatchingVolume: a volume pre-bound to the claim wins at once; otherwise the
smallest Available volume with enough capacity, the same volumeMode, the claim's storage class
and labels matching the claim's selector; IsVolumeBoundToClaim, GetBindVolumeToClaim,
CheckAccessModes, CheckVolumeModeMismatches), plus pv_controller.go's object edits
(bindClaimToVolume, updateClaimStatus, updateVolumePhase, unbindVolume, isVolumeReleased,
checkVolumeSatisfyClaim). v1.0's pkg/volumeclaimbinder made the same choice (smallest fitting
volume, by access modes) with fewer criteria.

Everything here takes and returns plain dicts and never mutates its arguments: edits return a
new object (or None when nothing would change, so the caller skips the write), which the
controller (persistentvolume.py) then PUTs.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..api import errors
from ..api.labels import selector_from_label_selector
from ..api.storage import ANN_PROVISIONED_BY
from ..api.volume_helpers import (
    access_modes,
    access_modes_text,
    storage_class_of,
    storage_quantity,
)

Obj = dict[str, Any]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED = ANN_PROVISIONED_BY

# phases (core/v1 PersistentVolumePhase, PersistentVolumeClaimPhase)
VOLUME_PENDING, VOLUME_AVAILABLE, VOLUME_BOUND = "Pending", "Available", "Bound"
VOLUME_RELEASED, VOLUME_FAILED = "Released", "Failed"
CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST = "Pending", "Bound", "Lost"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def meta(obj: Obj) -> dict[str, Any]:
    return _d(obj.get("metadata"))


def spec(obj: Obj) -> dict[str, Any]:
    return _d(obj.get("spec"))


def annotations(obj: Obj) -> dict[str, Any]:
    return _d(meta(obj).get("annotations"))


def phase(obj: Obj) -> str:
    value = _d(obj.get("status")).get("phase")
    return value if isinstance(value, str) else ""


def claim_key(claim: Obj) -> str:
    """`namespace/name` (upstream claimToClaimKey)."""
    md = meta(claim)
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def claim_ref_key(volume: Obj) -> str | None:
    """`namespace/name` of the claim a volume points at, or None (claimrefToClaimKey)."""
    ref = spec(volume).get("claimRef")
    if not isinstance(ref, dict):
        return None
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}"


def volume_mode(obj: Obj) -> str:
    """A nil volumeMode means Filesystem (CheckVolumeModeMismatches)."""
    mode = spec(obj).get("volumeMode")
    return mode if isinstance(mode, str) and mode else "Filesystem"


def requested_storage(claim: Obj) -> Fraction:
    return storage_quantity(_d(spec(claim).get("resources")).get("requests")) or Fraction(0)


def volume_storage(volume: Obj) -> Fraction:
    return storage_quantity(spec(volume).get("capacity")) or Fraction(0)


def is_volume_bound_to_claim(volume: Obj, claim: Obj) -> bool:
    """The volume is pre-bound or bound to this claim: same name and namespace, and the same
    uid when the claimRef carries one (IsVolumeBoundToClaim)."""
    ref = spec(volume).get("claimRef")
    if not isinstance(ref, dict):
        return False
    md = meta(claim)
    if ref.get("name") != md.get("name") or ref.get("namespace") != md.get("namespace"):
        return False
    uid = ref.get("uid")
    return not uid or uid == md.get("uid")


def check_access_modes(claim: Obj, volume: Obj) -> bool:
    """The volume offers every mode the claim asks for (CheckAccessModes)."""
    return access_modes(spec(claim).get("accessModes")) <= access_modes(
        spec(volume).get("accessModes"))


def _claim_selector(claim: Obj) -> Any:
    raw = spec(claim).get("selector")
    if raw is None:
        return None
    try:
        return selector_from_label_selector(raw)
    except (errors.StatusError, TypeError, ValueError):
        return False  # validation keeps these out; a broken one matches nothing


def find_matching_volume(claim: Obj, volumes: Iterable[Obj],
                         delay_binding: bool = False) -> Obj | None:
    """FindMatchingVolume for the PV controller (no node, nothing excluded): the volume
    pre-bound to the claim, else the smallest Available fit. With `delay_binding` (the
    claim's class is WaitForFirstConsumer) only a pre-bound volume matches: choosing one is
    the scheduler's job, which knows the node."""
    requested = requested_storage(claim)
    requested_class = storage_class_of(claim)
    selector = _claim_selector(claim)
    wanted_mode = volume_mode(claim)
    smallest: Obj | None = None
    smallest_size = Fraction(0)
    for volume in volumes:
        if spec(volume).get("claimRef") is not None and not is_volume_bound_to_claim(volume,
                                                                                      claim):
            continue
        size = volume_storage(volume)
        if size < requested or volume_mode(volume) != wanted_mode:
            continue
        if meta(volume).get("deletionTimestamp"):
            continue
        if is_volume_bound_to_claim(volume, claim):
            return volume
        if delay_binding:
            continue
        if phase(volume) != VOLUME_AVAILABLE:
            continue
        if selector is False or (selector is not None and not selector.matches(
                _d(meta(volume).get("labels")))):
            continue
        if storage_class_of(volume) != requested_class:
            continue
        if smallest is None or size < smallest_size:
            smallest, smallest_size = volume, size
    return smallest


def find_best_match(claim: Obj, volumes: Iterable[Obj],
                    delay_binding: bool = False) -> Obj | None:
    """persistentVolumeOrderedIndex.findByClaim: try the access-mode groups that contain all
    the claim's modes, fewest modes first (ties in the groups' printed order)."""
    groups: dict[str, list[Obj]] = {}
    for volume in volumes:
        groups.setdefault(access_modes_text(spec(volume).get("accessModes")), []).append(volume)
    wanted = access_modes(spec(claim).get("accessModes"))
    candidates = [(len(key.split(",")) if key else 0, key) for key, group in groups.items()
                  if wanted <= access_modes(spec(group[0]).get("accessModes"))]
    for _, key in sorted(candidates):
        found = find_matching_volume(claim, groups[key], delay_binding)
        if found is not None:
            return found
    return None


def check_volume_satisfy_claim(volume: Obj, claim: Obj) -> str | None:
    """Why a volume the claim names cannot serve it, in upstream's words; None when it can
    (checkVolumeSatisfyClaim, used when spec.volumeName is pre-set)."""
    if meta(volume).get("deletionTimestamp"):
        return f'the volume is marked for deletion "{meta(volume).get("name", "")}"'
    if volume_storage(volume) < requested_storage(claim):
        return "requested PV is too small"
    if storage_class_of(volume) != storage_class_of(claim):
        return "storageClassName does not match"
    if volume_mode(volume) != volume_mode(claim):
        return "incompatible volumeMode"
    if not check_access_modes(claim, volume):
        return "incompatible accessMode"
    return None


def claim_reference(claim: Obj) -> Obj:
    """reference.GetReference(claim): what a bound volume's spec.claimRef holds."""
    md = meta(claim)
    ref = {"kind": "PersistentVolumeClaim", "namespace": md.get("namespace", ""),
           "name": md.get("name", ""), "uid": md.get("uid", ""), "apiVersion": "v1",
           "resourceVersion": md.get("resourceVersion", "")}
    return {k: v for k, v in ref.items() if v}


def _with_annotation(obj: Obj, name: str) -> None:
    md = obj.setdefault("metadata", {})
    if not isinstance(md.get("annotations"), dict):
        md["annotations"] = {}
    md["annotations"][name] = "yes"


def bind_volume_to_claim(volume: Obj, claim: Obj) -> Obj | None:
    """GetBindVolumeToClaim: the volume with claimRef -> claim (and bound-by-controller when
    the binding is the controller's idea); None when it already is."""
    by_controller = not is_volume_bound_to_claim(volume, claim)
    ref = spec(volume).get("claimRef")
    md = meta(claim)
    new = copy.deepcopy(volume)
    dirty = False
    if not isinstance(ref, dict) or ref.get("name") != md.get("name") or \
            ref.get("namespace") != md.get("namespace") or ref.get("uid") != md.get("uid"):
        new.setdefault("spec", {})["claimRef"] = claim_reference(claim)
        dirty = True
    if by_controller and ANN_BOUND_BY_CONTROLLER not in annotations(volume):
        _with_annotation(new, ANN_BOUND_BY_CONTROLLER)
        dirty = True
    return new if dirty else None


def bind_claim_to_volume(claim: Obj, volume: Obj) -> Obj | None:
    """bindClaimToVolume: spec.volumeName, bound-by-controller (unless the user named the
    volume) and bind-completed; None when nothing changes."""
    name = meta(volume).get("name", "")
    by_controller = spec(claim).get("volumeName") != name
    new = copy.deepcopy(claim)
    dirty = False
    if spec(claim).get("volumeName") != name:
        new.setdefault("spec", {})["volumeName"] = name
        dirty = True
    if by_controller and ANN_BOUND_BY_CONTROLLER not in annotations(claim):
        _with_annotation(new, ANN_BOUND_BY_CONTROLLER)
        dirty = True
    if ANN_BIND_COMPLETED not in annotations(claim):
        _with_annotation(new, ANN_BIND_COMPLETED)
        dirty = True
    return new if dirty else None


def claim_with_status(claim: Obj, new_phase: str, volume: Obj | None) -> Obj | None:
    """updateClaimStatus: the phase, and the bound volume's access modes and capacity (or
    neither without a volume); None when the status already says so."""
    status = dict(_d(claim.get("status")))
    before = dict(status)
    status["phase"] = new_phase
    if volume is None:
        status.pop("accessModes", None)
        status.pop("capacity", None)
    else:
        if status.get("accessModes") != spec(volume).get("accessModes"):
            status["accessModes"] = spec(volume).get("accessModes")
        capacity = spec(volume).get("capacity")
        if storage_quantity(status.get("capacity")) != storage_quantity(capacity):
            status["capacity"] = capacity
    if status == before:
        return None
    return {**claim, "status": status}


def volume_with_phase(volume: Obj, new_phase: str, message: str = "") -> Obj | None:
    """updateVolumePhase: None when the phase is already set."""
    if phase(volume) == new_phase:
        return None
    status = dict(_d(volume.get("status")), phase=new_phase)
    if message:
        status["message"] = message
    else:
        status.pop("message", None)
    return {**volume, "status": status}


def unbind_volume(volume: Obj) -> Obj:
    """unbindVolume's spec edit: a controller-made binding is dropped entirely; a user's
    pre-binding keeps its name and loses only the uid."""
    new = copy.deepcopy(volume)
    if ANN_BOUND_BY_CONTROLLER in annotations(volume):
        new["spec"].pop("claimRef", None)
        notes = new["metadata"]["annotations"]
        notes.pop(ANN_BOUND_BY_CONTROLLER, None)
        if not notes:
            new["metadata"].pop("annotations")
    else:
        new["spec"]["claimRef"].pop("uid", None)
    return new


def is_volume_released(volume: Obj, claim: Obj | None) -> bool:
    """isVolumeReleased: bound (claimRef with a uid) to a claim that is gone, was re-created
    (other uid), or is bound to another volume."""
    ref = spec(volume).get("claimRef")
    if not isinstance(ref, dict) or not ref.get("uid"):
        return False
    if claim is not None and meta(claim).get("uid") == ref.get("uid"):
        bound_to = spec(claim).get("volumeName")
        return bool(bound_to) and bound_to != meta(volume).get("name")
    return True
