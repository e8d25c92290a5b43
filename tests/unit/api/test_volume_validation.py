"""PersistentVolume and PersistentVolumeClaim defaults and validation (upstream's messages at
upstream's paths), plus their `kubectl get` rows."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.errors import FieldError
from minikube_py.api.tables import column_definitions, row_cells
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)

Obj = dict[str, Any]


def messages(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


def pv(**spec: Any) -> Obj:
    body: Obj = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data"}}
    body.update(spec)
    out = {"metadata": {"name": "pv1", "resourceVersion": "2"},
           "spec": {k: v for k, v in body.items() if v is not None}}
    apply_defaults("PersistentVolume", out)
    return out


def pvc(**spec: Any) -> Obj:
    body: Obj = {"resources": {"requests": {"storage": "1Gi"}}, "accessModes": ["ReadWriteOnce"]}
    body.update(spec)
    out = {"metadata": {"name": "data", "namespace": "default", "resourceVersion": "2"},
           "spec": {k: v for k, v in body.items() if v is not None}}
    apply_defaults("PersistentVolumeClaim", out)
    return out


def test_defaults() -> None:
    volume = pv()
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert volume["spec"]["volumeMode"] == "Filesystem"
    assert volume["spec"]["hostPath"]["type"] == ""
    assert volume["status"] == {"phase": "Pending"}
    claim = pvc(resources={"requests": {"storage": "1024Mi"}})
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert claim["status"] == {"phase": "Pending"}
    assert validate_create("PersistentVolume", volume) == []
    assert validate_create("PersistentVolumeClaim", claim) == []


@pytest.mark.parametrize("spec, expected", [
    ({"accessModes": None}, ["spec.accessModes: Required value"]),
    ({"accessModes": ["RWO"]}, ['spec.accessModes: Unsupported value: "RWO": supported values: '
                                '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
                                '"ReadWriteOncePod"']),
    ({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
     ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]),
    ({"capacity": {"storage": "0"}},
     ['spec.capacity[storage]: Invalid value: "0": must be greater than zero']),
    ({"capacity": {"storage": "1Gi", "cpu": "1"}},
     ['spec.capacity: Unsupported value: {"storage":"1Gi","cpu":"1"}: supported values: '
      '"storage"']),
    ({"capacity": {"storage": "lots"}},
     ['spec.capacity[storage]: Invalid value: "lots": quantities must match the regular '
      "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"]),
    ({"persistentVolumeReclaimPolicy": "Keep"},
     ['spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: '
      '"Delete", "Recycle", "Retain"']),
    ({"hostPath": None}, ["spec: Required value: must specify a volume type"]),
    ({"nfs": {"server": "s", "path": "/x"}},
     ["spec.nfs: Forbidden: may not specify more than 1 volume type"]),
    ({"hostPath": {"path": "/a/../b"}},
     ['spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\'']),
    ({"hostPath": {"path": "/"}, "persistentVolumeReclaimPolicy": "Recycle"},
     ["spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath "
      "mount of '/'"]),
    ({"hostPath": None, "local": {"path": "/mnt/disk"}},
     ["spec.nodeAffinity: Required value: Local volume requires node affinity"]),
    ({"hostPath": None, "csi": {"driver": "d"}}, ["spec.csi.volumeHandle: Required value"]),
    ({"nodeAffinity": {}},
     ["spec.nodeAffinity.required: Required value: must specify required node constraints"]),
    ({"storageClassName": "Fast_SSD"},
     ['spec.storageClassName: Invalid value: "Fast_SSD": a lowercase RFC 1123 subdomain must '
      "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
      "an alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ({"volumeMode": "Raw"},
     ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"']),
])
def test_persistent_volume_errors(spec: Obj, expected: list[str]) -> None:
    assert messages(validate_create("PersistentVolume", pv(**spec))) == expected


def test_persistent_volume_is_cluster_scoped() -> None:
    volume = pv()
    volume["metadata"]["namespace"] = "default"
    assert messages(validate_create("PersistentVolume", volume)) == [
        "metadata.namespace: Forbidden: not allowed on this type"]


def test_persistent_volume_update_rules() -> None:
    old = pv()
    new = copy.deepcopy(old)
    new["spec"]["claimRef"] = {"name": "data", "namespace": "default"}
    new["spec"]["capacity"] = {"storage": "2Gi"}
    assert validate_update("PersistentVolume", new, old) == []
    new["spec"]["hostPath"]["path"] = "/elsewhere"
    new["spec"]["volumeMode"] = "Block"
    assert messages(validate_update("PersistentVolume", new, old)) == [
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable "
        "after creation",
        'volumeMode: Invalid value: "Block": field is immutable']
    status = copy.deepcopy(old)
    status["status"] = {"phase": "Bound"}
    assert validate_status_update("PersistentVolume", status, old) == []


@pytest.mark.parametrize("spec, expected", [
    ({"accessModes": []},
     ["spec.accessModes: Required value: at least 1 access mode is required"]),
    ({"resources": {}}, ["spec.resources[storage]: Required value"]),
    ({"resources": {"requests": {"storage": "-1"}}},
     ['spec.resources[storage]: Invalid value: "-1": must be greater than zero']),
    ({"selector": {"matchExpressions": [{"key": "zone", "operator": "In"}]}},
     ["spec.selector.matchExpressions[0].values: Required value: must be specified when "
      "`operator` is 'In' or 'NotIn'"]),
    ({"volumeMode": "Raw"},
     ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"']),
    ({"dataSource": {"kind": "Pod", "name": "x"}},
     ['spec.dataSource: Invalid value: "Pod": must be \'PersistentVolumeClaim\' when '
      "referencing the default apiGroup"]),
])
def test_claim_errors(spec: Obj, expected: list[str]) -> None:
    assert messages(validate_create("PersistentVolumeClaim", pvc(**spec))) == expected


def test_claim_update_rules() -> None:
    old = pvc()
    # the binder sets volumeName once; annotations may change
    bound = copy.deepcopy(old)
    bound["spec"]["volumeName"] = "pv1"
    bound["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    assert validate_update("PersistentVolumeClaim", bound, old) == []
    # ... but not twice
    again = copy.deepcopy(bound)
    again["spec"]["volumeName"] = "pv2"
    assert [e.field for e in validate_update("PersistentVolumeClaim", again, bound)] == ["spec"]
    # a storageClassName may be set when there was none
    classed = copy.deepcopy(old)
    classed["spec"]["storageClassName"] = "fast"
    assert validate_update("PersistentVolumeClaim", classed, old) == []
    # anything else is immutable; a bound claim may only grow its request
    grown = copy.deepcopy(bound)
    grown["status"] = {"phase": "Bound"}
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert validate_update("PersistentVolumeClaim", grown, bound) == []
    shrunk = copy.deepcopy(grown)
    shrunk["spec"]["resources"]["requests"]["storage"] = "500Mi"
    assert messages(validate_update("PersistentVolumeClaim", shrunk, bound)) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]
    pending_grow = copy.deepcopy(old)
    pending_grow["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert messages(validate_update("PersistentVolumeClaim", pending_grow, old)) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims"]
    annotated = copy.deepcopy(old)
    annotated["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "gold"}
    assert messages(validate_update("PersistentVolumeClaim", annotated, old)) == [
        'metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: "gold": '
        "field is immutable"]


def test_claim_status_update() -> None:
    old = pvc()
    new = copy.deepcopy(old)
    new["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"},
                     "accessModes": ["ReadWriteOnce"]}
    assert validate_status_update("PersistentVolumeClaim", new, old) == []
    new["status"]["capacity"] = {"storage": "-1Gi"}
    assert messages(validate_status_update("PersistentVolumeClaim", new, old)) == [
        'status.capacity[storage]: Invalid value: "-1Gi": must be a valid resource quantity']


def test_table_rows() -> None:
    assert [c["name"] for c in column_definitions("PersistentVolume")] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    assert [c["name"] for c in column_definitions("PersistentVolumeClaim")] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
        "VolumeAttributesClass", "Age", "VolumeMode"]
    volume = pv(accessModes=["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
                claimRef={"namespace": "default", "name": "data"}, storageClassName="gold")
    volume["status"] = {"phase": "Bound"}
    volume["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    now = 1704067200 + 90
    assert row_cells("PersistentVolume", volume, now) == [
        "pv1", "1Gi", "RWO,RWX", "Retain", "Bound", "default/data", "gold", "<unset>", "",
        "90s", "Filesystem"]
    claim = pvc()
    claim["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    assert row_cells("PersistentVolumeClaim", claim, now) == [
        "data", "Pending", "", "", "", "", "<unset>", "90s", "Filesystem"]
    claim["spec"]["volumeName"] = "pv1"
    claim["status"] = {"phase": "Bound", "capacity": {"storage": "2Gi"},
                       "accessModes": ["ReadWriteOnce"]}
    claim["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "old"}
    claim["metadata"]["deletionTimestamp"] = "2024-01-01T00:01:00Z"
    assert row_cells("PersistentVolumeClaim", claim, now)[:6] == [
        "data", "Terminating", "pv1", "2Gi", "RWO", "old"]
