"""Table cells for `kubectl get` of the storage.k8s.io/v1 kinds.

Kubernetes piece: pkg/printers/internalversion/printers.go's printStorageClass (the default
class's name gets ` (default)`), printCSIDriver, printCSINode, printVolumeAttachment and
printCSIStorageCapacity, with the column sets AddHandlers registers for them. Columns are
(name, description, type) triples; tables.py turns them into its column definitions, adding
NAME first, so this module needs nothing of tables.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minikube_py.api.quantity import format_quantity, parse
from minikube_py.api.storage import binding_mode, is_default_class, reclaim_policy
from minikube_py.api.table_rows import Obj
from minikube_py.api.table_rows import as_dict as _d
from minikube_py.api.table_rows import as_list as _l
from minikube_py.api.table_rows import as_str as _s
from minikube_py.api.table_rows import object_age as _age
from minikube_py.api.table_rows import object_name as _name

Column = tuple[str, str, str]
AGE = ("Age", "", "string")  # tables.py fills in the shared creationTimestamp description


def _bool(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def storage_class_row(obj: Obj, now: float) -> list:
    name = _name(obj) + (" (default)" if is_default_class(obj) else "")
    return [name, _s(obj.get("provisioner")), reclaim_policy(obj), binding_mode(obj),
            _bool(obj.get("allowVolumeExpansion"), False), _age(obj, now)]


def csi_driver_row(obj: Obj, now: float) -> list:
    spec = _d(obj.get("spec"))
    audiences = [_s(_d(t).get("audience")) for t in _l(spec.get("tokenRequests"))]
    modes = ",".join(_s(m) for m in _l(spec.get("volumeLifecycleModes")))
    return [_name(obj), _bool(spec.get("attachRequired"), True),
            _bool(spec.get("podInfoOnMount"), False), _bool(spec.get("storageCapacity"), False),
            ",".join(audiences) if audiences else "<unset>",
            _bool(spec.get("requiresRepublish"), False), modes or "<none>", _age(obj, now)]


def csi_node_row(obj: Obj, now: float) -> list:
    return [_name(obj), len(_l(_d(obj.get("spec")).get("drivers"))), _age(obj, now)]


def volume_attachment_row(obj: Obj, now: float) -> list:
    spec = _d(obj.get("spec"))
    return [_name(obj), _s(spec.get("attacher")),
            _s(_d(spec.get("source")).get("persistentVolumeName")), _s(spec.get("nodeName")),
            _bool(_d(obj.get("status")).get("attached"), False), _age(obj, now)]


def _quantity_text(raw: Any) -> str:
    if raw is None:
        return "<unset>"
    try:
        q = parse(raw)
    except (TypeError, ValueError):
        return str(raw)
    return format_quantity(q.value, q.format)


def csi_storage_capacity_row(obj: Obj, _now: float) -> list:
    return [_name(obj), _s(obj.get("storageClassName")), _quantity_text(obj.get("capacity"))]


#: kind -> (columns after NAME, row function)
TABLES: dict[str, tuple[list[Column], Callable[[Obj, float], list]]] = {
    "StorageClass": ([
        ("Provisioner", "provisioner indicates the type of the provisioner.", "string"),
        ("ReclaimPolicy", ("reclaimPolicy controls the reclaimPolicy for dynamically "
         "provisioned PersistentVolumes of this storage class. Defaults to Delete."), "string"),
        ("VolumeBindingMode", ("volumeBindingMode indicates how PersistentVolumeClaims should "
         "be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field "
         "is only honored by servers that enable the VolumeScheduling feature."), "string"),
        ("AllowVolumeExpansion", ("allowVolumeExpansion shows whether the storage class allow "
         "volume expand."), "string"),
        AGE], storage_class_row),
    "CSIDriver": ([
        ("AttachRequired", ("attachRequired indicates this CSI volume driver requires an "
         "attach operation."), "boolean"),
        ("PodInfoOnMount", ("podInfoOnMount indicates this CSI volume driver requires "
         "additional pod information (like podName, podUID, etc.) during mount operations, "
         "if set to true."), "boolean"),
        ("StorageCapacity", ("storageCapacity indicates that the CSI volume driver wants pod "
         "scheduling to consider the storage capacity that the driver deployment will report "
         "by creating CSIStorageCapacity objects with capacity information, if set to true."),
         "boolean"),
        ("TokenRequests", ("tokenRequests indicates the CSI driver needs pods' service "
         "account tokens it is mounting volume for to do necessary authentication."), "string"),
        ("RequiresRepublish", ("requiresRepublish indicates the CSI driver wants "
         "`NodePublishVolume` being periodically called to reflect any possible change in "
         "the mounted volume."), "boolean"),
        ("Modes", ("volumeLifecycleModes defines what kind of volumes this CSI volume driver "
         "supports."), "string"),
        AGE], csi_driver_row),
    "CSINode": ([
        ("Drivers", "Drivers indicates the number of CSI drivers registered on the node",
         "integer"),
        AGE], csi_node_row),
    "VolumeAttachment": ([
        ("Attacher", ("attacher indicates the name of the volume driver that MUST handle "
         "this request. This is the name returned by GetPluginName()."), "string"),
        ("PV", ("persistentVolumeName represents the name of the persistent volume to "
         "attach."), "string"),
        ("Node", "nodeName represents the node that the volume should be attached to.",
         "string"),
        ("Attached", ("attached indicates the volume is successfully attached. This field "
         "must only be set by the entity completing the attach operation, i.e. the "
         "external-attacher."), "boolean"),
        AGE], volume_attachment_row),
    "CSIStorageCapacity": ([
        ("StorageClassName", ("storageClassName represents the name of the StorageClass that "
         "the reported capacity applies to."), "string"),
        ("Capacity", ("capacity is the value reported by the CSI driver in its "
         "GetCapacityResponse for a GetCapacityRequest with topology and parameters that "
         "match the previous fields."), "string"),
    ], csi_storage_capacity_row),
}
