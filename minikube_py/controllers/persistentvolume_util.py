"""The claim binder's pure half: which volume fits a claim, and what a binding writes.

Kubernetes pieces: the matching itself (index.go's findByClaim and component-helpers'
FindMatchingVolume: a volume pre-bound to the claim wins at once; otherwise the smallest
Available volume with enough capacity, the same volumeMode, the claim's storage class and
labels matching the claim's selector) is api/volume_matching.py, shared with the scheduler's
volume binding and re-exported here; this module keeps util/util.go's GetBindVolumeToClaim and
pv_controller.go's object edits
(bindClaimToVolume, updateClaimStatus, updateVolumePhase, unbindVolume, isVolumeReleased,
checkVolumeSatisfyClaim). v1.0's pkg/volumeclaimbinder made the same choice (smallest fitting
volume, by access modes) with fewer criteria.

Everything here takes and returns plain dicts and never mutates its arguments: edits return a
new object (or None when nothing would change, so the caller skips the write), which the
controller (persistentvolume.py) then PUTs.
"""

from __future__ import annotations

import copy
from typing import Any

from ..api.storage import ANN_PROVISIONED_BY
from ..api.volume_helpers import storage_class_of, storage_quantity
from ..api.volume_matching import (  # noqa: F401 - the matching rules, shared with the scheduler
    check_access_modes,
    claim_reference,
    find_best_match,
    find_matching_volume,
    is_volume_bound_to_claim,
    requested_storage,
    volume_mode,
    volume_storage,
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
