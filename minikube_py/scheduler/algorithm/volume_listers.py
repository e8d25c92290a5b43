"""PersistentVolume / PersistentVolumeClaim lookups for the volume predicates.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.5)
PersistentVolumeInfo / PersistentVolumeClaimInfo (the listers factory.go's ConfigFactory
fills from its PV and PVC informers, PluginFactoryArgs.PVInfo / PVCInfo) and the claim walk
every volume predicate repeats (GetPersistentVolumeClaimInfo -> spec.volumeName ->
GetPersistentVolumeInfo).

Why: NoVolumeZoneConflict, the Max*VolumeCount predicates, NoDiskConflict and
CheckVolumeBinding all turn a pod's claims into PersistentVolumes; `resolve_claim` is that one
walk, answering the PV or the reason it cannot. The reasons are later upstream's words (the
v1.11+ VolumeBinding checks, whose "0/3 nodes are available: 3 pod has unbound immediate
PersistentVolumeClaims." is what users see): v1.5 raised errors instead (`PersistentVolumeClaim
is not bound: "data"`, `PersistentVolumeClaim was not found: "data"`), which aborted the
whole attempt with that text.

`VolumeListers` is filled in late: factory.py builds the predicates before the scheduler has
informers, so the predicates hold this object and the scheduler plugs its PV and PVC
informers in when it starts them (only when a configured predicate reads volumes, and only
once a pod with a claim shows up: see scheduler.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ...api.storage import is_delayed
from ...api.volume_helpers import storage_class_of

Obj = dict[str, Any]

#: upstream VolumeBinding ErrReasonUnboundImmediatePVC (v1.11+; v1.5: `PersistentVolumeClaim
#: is not bound: "<name>"`)
ERR_UNBOUND_CLAIMS = "pod has unbound immediate PersistentVolumeClaims"


def err_claim_not_found(name: str) -> str:
    """The lister's NotFound, as upstream's podPassesBasicChecks / VolumeBinding report it."""
    return f'persistentvolumeclaim "{name}" not found'


def err_claim_deleting(name: str) -> str:
    return f'persistentvolumeclaim "{name}" is being deleted'


def err_volume_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


class VolumeLister(Protocol):
    def claim(self, namespace: str, name: str) -> Obj | None:
        """The PersistentVolumeClaim `namespace/name`, or None."""
        ...

    def volume(self, name: str) -> Obj | None:
        """The PersistentVolume `name`, or None."""
        ...

    def storage_class(self, name: str) -> Obj | None:
        """The StorageClass `name`, or None (also for "", no class)."""
        ...

    def volumes(self) -> list[Obj]:
        """Every PersistentVolume (the volume binding step matches delayed claims to them)."""
        ...


def _nothing(*_key: str) -> Obj | None:
    return None


class VolumeListers:
    """A VolumeLister whose sources are plugged in later (`bind`); until then it knows no
    claims. `needed` records that some configured predicate reads it, so the scheduler
    knows whether PV/PVC informers are worth starting at all."""

    def __init__(self) -> None:
        self.needed = False
        self._claim: Callable[[str, str], Obj | None] = _nothing
        self._volume: Callable[[str], Obj | None] = _nothing
        self._class: Callable[[str], Obj | None] = _nothing
        self._volumes: Callable[[], list[Obj]] = list

    def bind(self, claim: Callable[[str, str], Obj | None],
             volume: Callable[[str], Obj | None],
             storage_class: Callable[[str], Obj | None] = _nothing,
             volumes: Callable[[], list[Obj]] = list) -> None:
        self._claim, self._volume, self._class = claim, volume, storage_class
        self._volumes = volumes

    def claim(self, namespace: str, name: str) -> Obj | None:
        return self._claim(namespace, name)

    def volume(self, name: str) -> Obj | None:
        return self._volume(name)

    def storage_class(self, name: str) -> Obj | None:
        return self._class(name) if name else None

    def volumes(self) -> list[Obj]:
        return self._volumes()


def resolve_claim(lister: VolumeLister, namespace: str, claim: str) -> tuple[Obj | None, str]:
    """(the bound PersistentVolume, "") or (None, why not) for claim `namespace/claim`; an
    unbound claim whose class waits for the first consumer is (None, ""): it is not a problem
    but the volume binding step's to place (predicates_volume_binding.py)."""
    pvc = lister.claim(namespace, claim)
    if pvc is None:
        return None, err_claim_not_found(claim)
    if (pvc.get("metadata") or {}).get("deletionTimestamp"):
        return None, err_claim_deleting(claim)
    volume_name = (pvc.get("spec") or {}).get("volumeName") or ""
    if not volume_name:
        if is_delayed(lister.storage_class(storage_class_of(pvc))):
            return None, ""
        return None, ERR_UNBOUND_CLAIMS
    pv = lister.volume(volume_name)
    if pv is None:
        return None, err_volume_not_found(volume_name)
    return pv, ""


def pod_volumes(lister: VolumeLister, namespace: str,
                claims: tuple[tuple[str, str, bool], ...]) -> list[tuple[Obj, bool]]:
    """(PersistentVolume, claim read-only) for each claim of a pod that resolves; the others
    are CheckVolumeBinding's / NoVolumeZoneConflict's to report."""
    found = []
    for _volume, claim, read_only in claims:
        pv, _reason = resolve_claim(lister, namespace, claim)
        if pv is not None:
            found.append((pv, read_only))
    return found
