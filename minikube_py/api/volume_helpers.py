"""Small facts about PersistentVolumes and claims that the printers, the claim binder and the
kubelet all need: which storage class an object asks for, its access modes, its storage size.

Kubernetes pieces: k8s.io/component-helpers/storage/volume (GetPersistentVolumeClass,
GetPersistentVolumeClaimClass: the beta annotation `volume.beta.kubernetes.io/storage-class`
wins over spec.storageClassName) and pkg/apis/core/helper (GetAccessModesAsString, which prints
`RWO,ROX,RWX,RWOP` in that fixed order without repeats). Pure and tolerant of any JSON: a field
of the wrong type reads as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from minikube_py.api import quantity

__all__ = [
    "ACCESS_MODE_SHORT", "STORAGE_CLASS_ANNOTATION", "access_modes", "access_modes_text",
    "storage_class_of", "storage_quantity",
]

STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
ACCESS_MODE_SHORT = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"),
                     ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def _d(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def access_modes(modes: Any) -> frozenset[str]:
    """The set of access-mode strings in `modes` (a JSON list; anything else is empty)."""
    if not isinstance(modes, list):
        return frozenset()
    return frozenset(m for m in modes if isinstance(m, str))


def access_modes_text(modes: Any) -> str:
    """GetAccessModesAsString: `RWO,ROX`, in upstream's fixed order, without repeats."""
    present = access_modes(modes)
    return ",".join(short for mode, short in ACCESS_MODE_SHORT if mode in present)


def storage_class_of(obj: Mapping[str, Any]) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation wins over spec.storageClassName;
    "" means no class."""
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    if STORAGE_CLASS_ANNOTATION in annotations:
        value = annotations[STORAGE_CLASS_ANNOTATION]
        return value if isinstance(value, str) else ""
    value = _d(obj.get("spec")).get("storageClassName")
    return value if isinstance(value, str) else ""


def storage_quantity(resources: Any) -> Fraction | None:
    """The `storage` entry of a ResourceList (a PV's capacity, a claim's requests) as an exact
    number; None when absent or unparseable."""
    raw = _d(resources).get("storage")
    if raw is None:
        return None
    try:
        return quantity.parse_quantity(raw)
    except (TypeError, ValueError):
        return None
