"""storage.k8s.io/v1 as pure functions: defaults, validation (upstream's messages, from
pkg/apis/storage/validation's tests), the default-class choice, the Table rows (`(default)`
after the default class), and the DefaultStorageClass admission plugin."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.storage import default_class, is_default_class
from minikube_py.api.tables import column_definitions, row_cells
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)
from minikube_py.apiserver.admission.chain import Attributes
from minikube_py.apiserver.admission.default_storage_class import DefaultStorageClass
from minikube_py.registry.resources import PERSISTENT_VOLUME_CLAIMS, PODS

Obj = dict[str, Any]
DEFAULT = {"storageclass.kubernetes.io/is-default-class": "true"}


def sc(name: str = "fast", annotations: Obj | None = None, created: str = "", **body: Any) -> Obj:
    md: Obj = {"name": name, "resourceVersion": "1"}
    if annotations:
        md["annotations"] = annotations
    if created:
        md["creationTimestamp"] = created
    out = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": md,
           "provisioner": "kubernetes.io/foo-provisioner", **body}
    apply_defaults("StorageClass", out, "storage.k8s.io")
    return out


def messages(kind: str, obj: Obj) -> list[str]:
    return [e.message() for e in validate_create(kind, obj)]


def test_storage_class_defaults() -> None:
    assert (sc()["reclaimPolicy"], sc()["volumeBindingMode"]) == ("Delete", "Immediate")
    # a custom resource named StorageClass in its own group gets none of them
    other = {"metadata": {"name": "x"}}
    apply_defaults("StorageClass", other, "example.com")
    assert other == {"metadata": {"name": "x"}}


@pytest.mark.parametrize("body, expected", [
    ({}, []),
    ({"provisioner": ""}, ["provisioner: Required value"]),
    ({"provisioner": "invalid/invalid/provisioner"},
     [('provisioner: Invalid value: "invalid/invalid/provisioner": a qualified name must consist '
      "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
      "'/' (e.g. 'example.com/MyName')")]),
    ({"reclaimPolicy": "Recycle"},
     ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"']),
    ({"volumeBindingMode": "Later"},
     [('volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
      '"WaitForFirstConsumer"')]),
    ({"parameters": {"": "value"}}, ['parameters: Invalid value: "": field can not be empty.']),
    ({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": []}]}]},
     [("allowedTopologies[0].matchLabelExpressions[0].values: Required value: must specify as "
      "least one value")]),
    ({"allowedTopologies": [{"matchLabelExpressions": [
        {"key": "zone", "values": ["a", "a"]}, {"key": "zone", "values": ["b"]}]}]},
     ['allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
      'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"']),
    ({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]},
                            {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]},
     ["allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\""]),
])
def test_storage_class_validation(body: Obj, expected: list[str]) -> None:
    assert messages("StorageClass", sc(**body)) == expected


def test_storage_class_update_keeps_parameters_provisioner_policy_and_mode() -> None:
    old = sc(parameters={"kind": "ssd"})
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"tier": "gold"}
    new["allowVolumeExpansion"] = True
    assert validate_update("StorageClass", new, old) == []
    new.update(parameters={"kind": "hdd"}, provisioner="example.com/other",
               reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer")
    assert [e.message() for e in validate_update("StorageClass", new, old)] == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']


def test_csi_driver_defaults_and_validation() -> None:
    driver = {"metadata": {"name": "hostpath.csi.k8s.io", "resourceVersion": "1"}}
    apply_defaults("CSIDriver", driver, "storage.k8s.io")
    assert driver["spec"] == {"attachRequired": True, "podInfoOnMount": False,
                              "storageCapacity": False, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                              "requiresRepublish": False, "seLinuxMount": False,
                              "volumeLifecycleModes": ["Persistent"]}
    assert messages("CSIDriver", driver) == []
    bad = copy.deepcopy(driver)
    bad["metadata"]["name"] = "Not_A_Driver"
    bad["spec"].update(volumeLifecycleModes=["Sometimes"], fsGroupPolicy="Maybe",
                       tokenRequests=[{"audience": "a", "expirationSeconds": 10}])
    got = messages("CSIDriver", bad)
    assert 'spec.fsGroupPolicy: Unsupported value: "Maybe": supported values: "File", "None", ' \
        '"ReadWriteOnceWithFSType"' in got
    assert 'spec.volumeLifecycleModes[0]: Unsupported value: "Sometimes": supported values: ' \
        '"Ephemeral", "Persistent"' in got
    assert "spec.tokenRequests[0].expirationSeconds: Invalid value: 10: may not specify a " \
        "duration less than 10 minutes" in got
    assert any(m.startswith('metadata.name: Invalid value: "Not_A_Driver"') for m in got)
    changed = copy.deepcopy(driver)
    changed["spec"]["attachRequired"] = False
    assert [e.message() for e in validate_update("CSIDriver", changed, driver)] == [
        "spec.attachRequired: Invalid value: false: field is immutable"]


def csinode(*drivers: Obj) -> Obj:
    return {"metadata": {"name": "node-0", "resourceVersion": "1"},
            "spec": {"drivers": list(drivers)}}


def test_csi_node_validation() -> None:
    good = {"name": "io.kubernetes.storage.csi.driver", "nodeID": "node-0",
            "topologyKeys": ["kubernetes.io/hostname"], "allocatable": {"count": 3}}
    assert messages("CSINode", csinode(good)) == []
    assert messages("CSINode", csinode(good, dict(good, nodeID=""))) == [
        ('spec.drivers[1].nodeID: Required value: nodeID of driver: '
        'io.kubernetes.storage.csi.driver must be set'),
        'spec.drivers[1].name: Duplicate value: "io.kubernetes.storage.csi.driver"']
    assert messages("CSINode", csinode(dict(good, allocatable={"count": -1}))) == [
        ("spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal "
        "to 0")]
    moved = csinode(dict(good, nodeID="elsewhere"))
    assert [e.message() for e in validate_update("CSINode", moved, csinode(good))] == [
        'spec.drivers[0].nodeID: Invalid value: "elsewhere": field is immutable']


def attachment(**source: Any) -> Obj:
    return {"metadata": {"name": "va", "resourceVersion": "1"},
            "spec": {"attacher": "hostpath.csi.k8s.io", "nodeName": "node-0",
                     "source": source}}


def test_volume_attachment_validation() -> None:
    good = attachment(persistentVolumeName="pv-1")
    assert messages("VolumeAttachment", good) == []
    assert messages("VolumeAttachment", attachment()) == [
        ("spec.source: Invalid value: \"storage.VolumeAttachmentSource{PersistentVolumeName:nil, "
        "InlineVolumeSpec:nil}\": must specify exactly one of inlineVolumeSpec and "
        "persistentVolumeName")]
    moved = copy.deepcopy(good)
    moved["spec"]["nodeName"] = "node-1"
    assert [e.message() for e in validate_update("VolumeAttachment", moved, good)] == [
        'spec: Invalid value: "(spec)": field is immutable']
    attached = dict(good, status={"attached": True, "attachError": {"message": "x" * 1025}})
    assert [e.message() for e in validate_status_update("VolumeAttachment", attached, good)] \
        == ["status.attachError.message: Too long: may not be more than 1024 bytes"]


def test_csi_storage_capacity_validation() -> None:
    capacity = {"metadata": {"name": "cap", "namespace": "default", "resourceVersion": "1"},
                "storageClassName": "standard", "capacity": "10Gi",
                "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "node-0"}}}
    assert messages("CSIStorageCapacity", capacity) == []
    assert messages("CSIStorageCapacity", dict(capacity, storageClassName="",
                                               capacity="-1Gi")) == [
        "storageClassName: Required value",
        'capacity: Invalid value: "-1Gi": must be greater than or equal to 0']
    renamed = dict(capacity, storageClassName="other")
    assert [e.message() for e in validate_update("CSIStorageCapacity", renamed, capacity)] == [
        'storageClassName: Invalid value: "other": field is immutable']


def test_newest_default_class_wins_ties_by_name() -> None:
    old = sc("old", DEFAULT, "2024-01-01T00:00:00Z")
    new = sc("new", DEFAULT, "2024-06-01T00:00:00Z")
    beta = sc("beta", {"storageclass.beta.kubernetes.io/is-default-class": "true"},
              "2024-06-01T00:00:00Z")
    plain = sc("plain", created="2025-01-01T00:00:00Z")
    assert default_class([old, plain]) is old
    assert default_class([old, new, plain]) is new
    assert default_class([new, beta, old]) is beta  # same second: the name that sorts first
    assert default_class([plain]) is None
    assert not is_default_class(sc("off", {"storageclass.kubernetes.io/is-default-class":
                                           "false"}))


def test_storage_class_table_marks_the_default() -> None:
    names = [c["name"] for c in column_definitions("StorageClass")]
    assert names == ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode",
                     "AllowVolumeExpansion", "Age"]
    cells = row_cells("StorageClass", sc("standard", DEFAULT), 0.0)
    assert cells[:5] == ["standard (default)", "kubernetes.io/foo-provisioner", "Delete",
                         "Immediate", False]
    assert row_cells("StorageClass", sc("slow"), 0.0)[0] == "slow"
    assert row_cells("CSIStorageCapacity", {"metadata": {"name": "c"},
                                            "storageClassName": "s"}, 0.0) == ["c", "s",
                                                                              "<unset>"]
    assert row_cells("VolumeAttachment", attachment(persistentVolumeName="pv"), 0.0)[:5] == [
        "va", "hostpath.csi.k8s.io", "pv", "node-0", False]
    assert row_cells("CSINode", {"spec": "junk"}, 0.0)[:2] == ["", 0]  # never raises


def pvc_attrs(spec: Any, annotations: Obj | None = None, operation: str = "CREATE",
              strategy: Any = PERSISTENT_VOLUME_CLAIMS) -> Attributes:
    md: Obj = {"name": "data", "namespace": "default"}
    if annotations:
        md["annotations"] = annotations
    return Attributes(operation, strategy, "default", "data", "",
                      {"metadata": md, "spec": spec})


async def test_default_storage_class_plugin() -> None:
    classes = [sc("old", DEFAULT, "2024-01-01T00:00:00Z"),
               sc("new", DEFAULT, "2024-06-01T00:00:00Z"), sc("plain")]

    async def listing() -> list[Obj]:
        return classes

    plugin = DefaultStorageClass(listing)
    for spec, expected in (({}, "new"), ({"storageClassName": None}, "new"),
                           ({"storageClassName": ""}, ""), ({"storageClassName": "x"}, "x")):
        attrs = pvc_attrs(dict(spec))
        await plugin.admit(attrs)
        assert attrs.obj["spec"].get("storageClassName") == expected, spec
    beta = pvc_attrs({}, {"volume.beta.kubernetes.io/storage-class": "old"})
    await plugin.admit(beta)
    assert "storageClassName" not in beta.obj["spec"]
    for attrs in (pvc_attrs({}, operation="UPDATE"), pvc_attrs({}, strategy=PODS)):
        await plugin.admit(attrs)
        assert "storageClassName" not in attrs.obj["spec"]
    classes[:] = [sc("plain")]
    none = pvc_attrs({})
    await plugin.admit(none)
    assert "storageClassName" not in none.obj["spec"]
