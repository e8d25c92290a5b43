"""DefaultStorageClass: a claim that names no class gets the cluster's default class.

Kubernetes piece: plugin/pkg/admission/storage/storageclass/setdefault (on by default). On a
PersistentVolumeClaim CREATE without `spec.storageClassName` (null or absent) and without the
beta `volume.beta.kubernetes.io/storage-class` annotation, the default class
(api/storage.default_class: the newest of the classes annotated is-default-class, as 1.31's
GetDefaultClass) is written into the claim; with no default class the claim is left alone. An
explicit `""` means "no class" and is kept, which is how a claim asks for a pre-made PV only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api.storage import default_class
from ...api.volume_helpers import STORAGE_CLASS_ANNOTATION
from .chain import Attributes

Obj = dict[str, Any]
ListClasses = Callable[[], Awaitable[list[Obj]]]


def has_class(claim: Obj) -> bool:
    """PersistentVolumeClaimHasClass: the beta annotation or a non-null storageClassName."""
    md = claim.get("metadata")
    notes = md.get("annotations") if isinstance(md, dict) else None
    if isinstance(notes, dict) and STORAGE_CLASS_ANNOTATION in notes:
        return True
    spec = claim.get("spec")
    return isinstance(spec, dict) and spec.get("storageClassName") is not None


class DefaultStorageClass:
    name = "DefaultStorageClass"

    def __init__(self, list_classes: ListClasses) -> None:
        self._list = list_classes

    async def admit(self, attrs: Attributes) -> None:
        if (attrs.operation != "CREATE" or attrs.subresource
                or (attrs.strategy.group, attrs.strategy.resource) != ("",
                                                                       "persistentvolumeclaims")
                or not isinstance(attrs.obj, dict) or has_class(attrs.obj)):
            return
        spec = attrs.obj.get("spec")
        if not isinstance(spec, dict):
            return  # validation reports it
        chosen = default_class(await self._list())
        if chosen is not None:
            spec["storageClassName"] = chosen["metadata"]["name"]
