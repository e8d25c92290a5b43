"""storage.k8s.io facts every part needs: which class is the default, how a class binds, the
annotations provisioning speaks through, and the defaults of the storage.k8s.io/v1 kinds.

Kubernetes pieces: k8s.io/component-helpers/storage/volume (IsDefaultAnnotation,
GetBindingMode, the `volume.kubernetes.io/storage-provisioner` and `selected-node`
annotations), pkg/volume/util/storageclass (GetDefaultClass: of several default classes the
newest wins since 1.28, ties broken by name) and pkg/apis/storage/v1/defaults.go
(SetDefaults_StorageClass, SetDefaults_CSIDriver). Pure functions of decoded JSON, tolerant of
any shape: the admission plugin, the claim binder, the provisioner, the scheduler and the
printers all read classes through here, so they agree on what "default" and "delayed" mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Obj = dict[str, Any]

GROUP = "storage.k8s.io"
#: a class is the default when either annotation is "true" (IsDefaultAnnotation)
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"

#: set on a claim by the claim binder when an external provisioner must act on it
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
#: set on a claim by the scheduler's volume binding: the node a delayed claim is provisioned for
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: set on a provisioned PersistentVolume: the provisioner that made it (and will delete it)
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"

BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (BINDING_IMMEDIATE, BINDING_WAIT_FOR_FIRST_CONSUMER)
RECLAIM_POLICIES = ("Delete", "Retain")  # a class may not ask for Recycle

#: the simulated CSI driver and the provisioner name of the default class (one name: a CSI
#: driver's external-provisioner provisions under the driver's name)
HOSTPATH_DRIVER = "hostpath.csi.minikube-py.io"
DEFAULT_CLASS_NAME = "standard"
#: the topology key the simulated driver reports in each node's CSINode and puts in the
#: nodeAffinity of the volumes it provisions for one node. Upstream's csi-driver-host-path has
#: its own key (`topology.hostpath.csi/node`) that the kubelet then adds to the Node's labels;
#: the hostname label every Node already carries costs no extra Node write at 5000 nodes.
HOSTPATH_TOPOLOGY_KEY = "kubernetes.io/hostname"


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def annotations(obj: Obj) -> Obj:
    return _d(_d(obj.get("metadata")).get("annotations"))


def is_default_class(storage_class: Obj) -> bool:
    """IsDefaultAnnotation: either is-default-class annotation says "true"."""
    notes = annotations(storage_class)
    return (notes.get(DEFAULT_CLASS_ANNOTATION) == "true"
            or notes.get(BETA_DEFAULT_CLASS_ANNOTATION) == "true")


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """GetDefaultClass: among the default classes, the newest (creationTimestamp), then the
    name that sorts first; None when no class is the default. RFC 3339 stamps in UTC sort as
    strings."""
    best: Obj | None = None
    best_key: tuple[str, str] | None = None
    for sc in classes:
        if not is_default_class(sc):
            continue
        md = _d(sc.get("metadata"))
        created = md.get("creationTimestamp")
        name = md.get("name")
        key = (created if isinstance(created, str) else "", name if isinstance(name, str) else "")
        # newest first; on equal timestamps the smaller name wins
        if best_key is None or key[0] > best_key[0] or (key[0] == best_key[0]
                                                       and key[1] < best_key[1]):
            best, best_key = sc, key
    return best


def binding_mode(storage_class: Obj | None) -> str:
    """The class's volumeBindingMode (Immediate when unset, as its default)."""
    mode = _d(storage_class).get("volumeBindingMode")
    return mode if isinstance(mode, str) and mode else BINDING_IMMEDIATE


def is_delayed(storage_class: Obj | None) -> bool:
    """IsDelayBindingMode: the class waits for the first consumer."""
    return storage_class is not None and binding_mode(storage_class) == \
        BINDING_WAIT_FOR_FIRST_CONSUMER


def reclaim_policy(storage_class: Obj | None) -> str:
    policy = _d(storage_class).get("reclaimPolicy")
    return policy if isinstance(policy, str) and policy else "Delete"


def provisioner_of(storage_class: Obj | None) -> str:
    value = _d(storage_class).get("provisioner")
    return value if isinstance(value, str) else ""


def unique_volume_name(driver: str, handle: str) -> str:
    """A CSI volume's name in node.status.volumesAttached / volumesInUse (the csi plugin's
    GetUniqueVolumeName: `kubernetes.io/csi/<driver>^<volumeHandle>`)."""
    return f"kubernetes.io/csi/{driver}^{handle}"


def selected_node(claim: Obj) -> str:
    value = annotations(claim).get(ANN_SELECTED_NODE)
    return value if isinstance(value, str) else ""


def claim_provisioner(claim: Obj) -> str:
    """The provisioner a claim waits for (the GA annotation, else the beta one)."""
    notes = annotations(claim)
    for name in (ANN_STORAGE_PROVISIONER, ANN_BETA_STORAGE_PROVISIONER):
        value = notes.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


# -- defaults (pkg/apis/storage/v1/defaults.go) --------------------------------------------


def set_defaults_storage_class(sc: Obj) -> None:
    """SetDefaults_StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate."""
    if sc.get("reclaimPolicy") is None:
        sc["reclaimPolicy"] = "Delete"
    if sc.get("volumeBindingMode") is None:
        sc["volumeBindingMode"] = BINDING_IMMEDIATE


def set_defaults_csi_driver(driver: Obj) -> None:
    """SetDefaults_CSIDriver: attach required, no pod info, no capacity tracking, the
    ReadWriteOnceWithFSType fsGroup policy, no republish, SELinux mount off, Persistent mode."""
    spec = driver.get("spec")
    if spec is None:
        spec = driver["spec"] = {}
    if not isinstance(spec, dict):
        return
    for name, value in (("attachRequired", True), ("podInfoOnMount", False),
                        ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
                        ("requiresRepublish", False), ("seLinuxMount", False)):
        if spec.get(name) is None:
            spec[name] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def hostpath_default_class() -> Obj:
    """The `standard` class minikube-py ships (minikube's and kind's clusters ship one too)."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": DEFAULT_CLASS_NAME,
                         "annotations": {DEFAULT_CLASS_ANNOTATION: "true"},
                         "labels": {"addonmanager.kubernetes.io/mode": "EnsureExists"}},
            "provisioner": HOSTPATH_DRIVER, "reclaimPolicy": "Delete",
            "volumeBindingMode": BINDING_IMMEDIATE}


def hostpath_csi_driver() -> Obj:
    """The CSIDriver object of the simulated driver: it attaches (so the attach/detach
    controller makes VolumeAttachments) and publishes capacity per node."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": HOSTPATH_DRIVER},
            "spec": {"attachRequired": True, "podInfoOnMount": True, "storageCapacity": False,
                     "volumeLifecycleModes": ["Persistent"], "fsGroupPolicy": "File"}}
