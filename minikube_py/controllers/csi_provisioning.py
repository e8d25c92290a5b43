"""The external provisioner's pure half: which claims it provisions, the volume it makes, and
which volumes it deletes.

Kubernetes pieces: sig-storage-lib-external-provisioner's controller.go (shouldProvision: an
unbound claim annotated with this provisioner's name, and for a WaitForFirstConsumer class only
once the scheduler selected a node; shouldDelete: a Released volume with reclaim policy Delete
that this provisioner made) and kubernetes-csi external-provisioner's Provision (the PV: named
`pvc-<claim uid>`, the claim's size and access modes, the class's reclaim policy, mount options
and name, a CSI source of the driver, node affinity from the volume's accessible topology,
pre-bound to the claim, annotated `pv.kubernetes.io/provisioned-by`).

Pure: plain dicts in, plain dicts out; csi_provisioner.py does the I/O.
"""

from __future__ import annotations

from typing import Any

from ..api.storage import (
    ANN_PROVISIONED_BY,
    HOSTPATH_TOPOLOGY_KEY,
    claim_provisioner,
    is_delayed,
    reclaim_policy,
    selected_node,
)
from ..api.volume_helpers import storage_class_of
from .persistentvolume_util import annotations, claim_reference, meta, phase, spec

Obj = dict[str, Any]


def volume_name(claim: Obj) -> str:
    """getProvisionedVolumeNameForClaim: `pvc-<claim uid>`."""
    return f"pvc-{meta(claim).get('uid', '')}"


def should_provision(claim: Obj, provisioner: str, storage_class: Obj | None) -> bool:
    """shouldProvision for `provisioner`."""
    if spec(claim).get("volumeName") or meta(claim).get("deletionTimestamp"):
        return False
    if claim_provisioner(claim) != provisioner or storage_class is None:
        return False
    if is_delayed(storage_class):
        return bool(selected_node(claim))
    return True


def provisioned_volume(claim: Obj, storage_class: Obj, provisioner: str) -> Obj:
    """The PersistentVolume provisioned for `claim` of `storage_class`. A volume for a delayed
    claim is reachable only from the selected node (the simulated driver's volumes are local);
    an Immediate one from every node."""
    claim_spec = spec(claim)
    requested = (claim_spec.get("resources") or {}).get("requests") or {}
    name = volume_name(claim)
    pv_spec: Obj = {
        "accessModes": list(claim_spec.get("accessModes") or []),
        "capacity": {"storage": requested.get("storage", "0")},
        "claimRef": claim_reference(claim),
        "persistentVolumeReclaimPolicy": reclaim_policy(storage_class),
        "storageClassName": storage_class_of(claim),
        "volumeMode": claim_spec.get("volumeMode") or "Filesystem",
        "csi": {"driver": provisioner, "volumeHandle": name, "fsType": "ext4",
                "volumeAttributes": {
                    "storage.kubernetes.io/csiProvisionerIdentity": provisioner}},
    }
    if storage_class.get("mountOptions"):
        pv_spec["mountOptions"] = list(storage_class["mountOptions"])
    node = selected_node(claim)
    if node and is_delayed(storage_class):
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOSTPATH_TOPOLOGY_KEY, "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: provisioner}},
            "spec": pv_spec}


def should_delete(volume: Obj, provisioner: str) -> bool:
    """shouldDelete: Released, reclaim policy Delete, made by `provisioner`."""
    return (phase(volume) == "Released"
            and spec(volume).get("persistentVolumeReclaimPolicy") == "Delete"
            and annotations(volume).get(ANN_PROVISIONED_BY) == provisioner
            and not meta(volume).get("deletionTimestamp"))
