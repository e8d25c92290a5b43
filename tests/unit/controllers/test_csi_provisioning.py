"""The simulated CSI driver's pure halves: which claims the external provisioner takes and the
volume it makes (upstream external-provisioner / sig-storage-lib shouldProvision, Provision,
shouldDelete), and the attach/detach controller's desired attachments with upstream's names."""

from __future__ import annotations

import hashlib
from typing import Any

from minikube_py.api.storage import unique_volume_name
from minikube_py.controllers.attachdetach_util import (
    attachment_name,
    desired_attachments,
)
from minikube_py.controllers.csi_provisioning import (
    provisioned_volume,
    should_delete,
    should_provision,
)

Obj = dict[str, Any]
P = "hostpath.csi.minikube-py.io"


def sc(mode: str = "Immediate", **body: Any) -> Obj:
    return {"metadata": {"name": "fast"}, "provisioner": P, "reclaimPolicy": "Retain",
            "volumeBindingMode": mode, **body}


def claim(annotations: Obj | None = None, **spec: Any) -> Obj:
    return {"metadata": {"name": "data", "namespace": "ns", "uid": "u-1",
                         "resourceVersion": "7", "annotations": annotations or {}},
            "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "5Gi"}}, **spec}}


MINE = {"volume.kubernetes.io/storage-provisioner": P}


def test_should_provision() -> None:
    assert should_provision(claim(MINE), P, sc())
    assert should_provision(claim({"volume.beta.kubernetes.io/storage-provisioner": P}), P, sc())
    assert not should_provision(claim(), P, sc())  # the binder has not handed it over
    assert not should_provision(claim({"volume.kubernetes.io/storage-provisioner": "other"}),
                                P, sc())
    assert not should_provision(claim(MINE, volumeName="pv"), P, sc())
    assert not should_provision(claim(MINE), P, None)  # class gone
    assert not should_provision(claim(MINE), P, sc("WaitForFirstConsumer"))
    selected = {**MINE, "volume.kubernetes.io/selected-node": "node-1"}
    assert should_provision(claim(selected), P, sc("WaitForFirstConsumer"))


def test_provisioned_volume() -> None:
    pv = provisioned_volume(claim(MINE), sc(mountOptions=["ro"]), P)
    assert pv["metadata"] == {"name": "pvc-u-1",
                              "annotations": {"pv.kubernetes.io/provisioned-by": P}}
    assert pv["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "ns",
                                      "name": "data", "uid": "u-1", "apiVersion": "v1",
                                      "resourceVersion": "7"}
    assert (pv["spec"]["capacity"], pv["spec"]["persistentVolumeReclaimPolicy"],
            pv["spec"]["storageClassName"], pv["spec"]["mountOptions"],
            pv["spec"]["volumeMode"]) == ({"storage": "5Gi"}, "Retain", "fast", ["ro"],
                                          "Filesystem")
    assert pv["spec"]["csi"]["driver"] == P and "nodeAffinity" not in pv["spec"]
    pinned = provisioned_volume(claim({**MINE, "volume.kubernetes.io/selected-node": "n-2"}),
                                sc("WaitForFirstConsumer"), P)
    assert pinned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                               "values": ["n-2"]}]}]


def test_should_delete() -> None:
    pv = {"metadata": {"name": "pvc-1", "annotations": {"pv.kubernetes.io/provisioned-by": P}},
          "spec": {"persistentVolumeReclaimPolicy": "Delete"}, "status": {"phase": "Released"}}
    assert should_delete(pv, P)
    assert not should_delete(pv, "other")
    assert not should_delete({**pv, "status": {"phase": "Bound"}}, P)
    assert not should_delete({**pv, "spec": {"persistentVolumeReclaimPolicy": "Retain"}}, P)
    assert not should_delete({**pv, "metadata": {"name": "hand-made"}}, P)


def test_attachment_names_are_upstreams() -> None:
    expected = "csi-" + hashlib.sha256(b"handle" + P.encode() + b"node-0").hexdigest()
    assert attachment_name("handle", P, "node-0") == expected
    assert unique_volume_name(P, "h") == f"kubernetes.io/csi/{P}^h"


def test_desired_attachments() -> None:
    claims = {("ns", "a"): {"spec": {"volumeName": "pv-a"}},
              ("ns", "b"): {"spec": {"volumeName": "pv-b"}},
              ("ns", "unbound"): {"spec": {}}}
    volumes = {"pv-a": {"spec": {"csi": {"driver": P, "volumeHandle": "ha"}}},
               "pv-b": {"spec": {"csi": {"driver": "no-attach", "volumeHandle": "hb"}}}}

    def pod(name: str, *claim_names: str, phase: str = "Running") -> Obj:
        return {"metadata": {"name": name, "namespace": "ns"},
                "spec": {"nodeName": "node-0", "volumes": [
                    {"name": c, "persistentVolumeClaim": {"claimName": c}}
                    for c in claim_names]}, "status": {"phase": phase}}

    def wanted(*pods: Obj) -> list[str]:
        return sorted(a.volume for a in desired_attachments(
            "node-0", pods, lambda ns, name: claims.get((ns, name)), volumes.get,
            lambda driver: driver != "no-attach").values())

    assert wanted(pod("p", "a", "b", "unbound", "missing")) == ["pv-a"]
    assert wanted(pod("p", "a"), pod("q", "a")) == ["pv-a"]  # one attachment per volume
    assert wanted(pod("done", "a", phase="Succeeded")) == []
