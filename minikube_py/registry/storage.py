"""The storage.k8s.io/v1 resources, each one a Strategy value.

Kubernetes piece: pkg/registry/storage (storageclass, csidriver, csinode, volumeattachment,
csistoragecapacity: each strategy.go and storage/storage.go) and the group's REST storage
provider, which serves them under /apis/storage.k8s.io/v1. All are cluster-scoped but the
capacities; only a VolumeAttachment has a status, written by the external attacher through
`volumeattachments/status` (a create starts with an empty status, a main-resource update keeps
the stored one). Keys follow upstream's etcd layout (`/registry/storageclasses/<name>`, ...).
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy, SubresourceSpec

STATUS = SubresourceSpec("status", ("get", "patch", "update"))


async def _empty_status(registry: Any, obj: dict[str, Any]) -> None:
    """VolumeAttachment PrepareForCreate: the status is the attacher's to write."""
    obj.pop("status", None)


STORAGE_CLASSES = Strategy(
    group="storage.k8s.io", version="v1", resource="storageclasses", kind="StorageClass",
    namespaced=False, key_root="storageclasses", short_names=("sc",), spec_fields=(),
)
CSI_DRIVERS = Strategy(
    group="storage.k8s.io", version="v1", resource="csidrivers", kind="CSIDriver",
    namespaced=False, key_root="csidrivers",
)
CSI_NODES = Strategy(
    group="storage.k8s.io", version="v1", resource="csinodes", kind="CSINode",
    namespaced=False, key_root="csinodes", spec_fields=(),
)
VOLUME_ATTACHMENTS = Strategy(
    group="storage.k8s.io", version="v1", resource="volumeattachments", kind="VolumeAttachment",
    namespaced=False, key_root="volumeattachments", subresources=(STATUS,), has_status=True,
    spec_fields=(), prepare_create=_empty_status,
)
CSI_STORAGE_CAPACITIES = Strategy(
    group="storage.k8s.io", version="v1", resource="csistoragecapacities",
    kind="CSIStorageCapacity", namespaced=True, key_root="csistoragecapacities", spec_fields=(),
)

#: in discovery order (upstream lists the group's resources alphabetically)
STRATEGIES = (CSI_DRIVERS, CSI_NODES, CSI_STORAGE_CAPACITIES, STORAGE_CLASSES,
              VOLUME_ATTACHMENTS)
