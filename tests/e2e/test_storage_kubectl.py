"""storage.k8s.io with the real kubectl and the official Python client against `minikube-py
start` (2 nodes): the default class prints as `standard (default)`, the documentation's `web`
StatefulSet (tutorials/stateful-application/basic-stateful-set) reaches Running with claims
the simulated CSI driver provisioned through the default class (no hand-made volumes), every
node has its CSINode, the pods' volumes are attached (VolumeAttachments), bad classes get
upstream's 422 messages, and StorageV1Api lists every storage kind."""

from __future__ import annotations

import os

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running
from tests.e2e.test_apps_kubectl import WEB, get_json, rows, wait

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found "
                                 "(the machine image provides it)"), pytest.mark.slow]

DRIVER = "hostpath.csi.minikube-py.io"
BAD_CLASS = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bad}
provisioner: ""
reclaimPolicy: Recycle
volumeBindingMode: Later
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ClusterProcesses(tmp_path_factory.mktemp("storage"), nodes=2)
    c.start()
    yield c
    c.stop()


def test_get_sc_shows_the_default_class(cluster: ClusterProcesses) -> None:
    table = rows(cluster.kubectl("get", "sc").stdout)
    assert table[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                        "ALLOWVOLUMEEXPANSION", "AGE"]
    assert table[1][:6] == ["standard", "(default)", DRIVER, "Delete", "Immediate", "false"]
    drivers = rows(cluster.kubectl("get", "csidrivers").stdout)
    assert drivers[0][:7] == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY",
                              "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES"]
    assert drivers[1][:7] == [DRIVER, "true", "true", "false", "<unset>", "false", "Persistent"]
    nodes = rows(cluster.kubectl("get", "csinodes").stdout)
    assert nodes[0] == ["NAME", "DRIVERS", "AGE"]
    assert sorted(r[:2] for r in nodes[1:]) == [["node-0", "1"], ["node-1", "1"]]
    assert "storageclasses" in cluster.kubectl("api-resources", "--api-group",
                                               "storage.k8s.io").stdout
    explained = cluster.kubectl("explain", "storageclass.volumeBindingMode").stdout
    assert "storage.k8s.io" in explained and "volumeBindingMode" in explained


def test_bad_class_is_refused_with_upstreams_messages(cluster: ClusterProcesses) -> None:
    done = cluster.kubectl("apply", "-f", "-", input=BAD_CLASS, check=False)
    assert done.returncode != 0
    assert 'The StorageClass "bad" is invalid' in done.stderr
    assert "provisioner: Required value" in done.stderr
    assert 'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", ' \
        '"Retain"' in done.stderr
    assert 'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", ' \
        '"WaitForFirstConsumer"' in done.stderr
    cluster.kubectl("create", "-f", "-", input=BAD_CLASS.replace('""', "example.com/x")
                    .replace("Recycle", "Retain").replace("Later", "Immediate"))
    patched = cluster.kubectl("patch", "sc", "bad", "-p", '{"parameters":{"a":"b"}}',
                              check=False)
    assert patched.returncode != 0 and "parameters: Forbidden: updates to parameters are " \
        "forbidden." in patched.stderr


def test_web_statefulset_runs_on_provisioned_volumes(cluster: ClusterProcesses) -> None:
    cluster.kubectl("apply", "-f", "-", input=WEB)

    def both_running() -> list[dict] | None:
        pods = [p for p in cluster.pods("default", "app=nginx") if running(p)]
        return pods if len(pods) == 2 else None

    pods = wait(both_running, 60, "web-0 and web-1 Running")
    claims = {c["metadata"]["name"]: c for c in get_json(cluster, "pvc")["items"]}
    assert sorted(claims) == ["www-web-0", "www-web-1"]
    for claim in claims.values():
        assert claim["status"]["phase"] == "Bound"
        assert claim["spec"]["storageClassName"] == "standard"
        assert claim["spec"]["volumeName"] == f"pvc-{claim['metadata']['uid']}"
    volumes = rows(cluster.kubectl("get", "pv").stdout.replace("ACCESS MODES", "ACCESS_MODES")
                   .replace("RECLAIM POLICY", "RECLAIM_POLICY"))
    by_claim = {r[5]: r for r in volumes[1:]}
    assert sorted(by_claim) == ["default/www-web-0", "default/www-web-1"]
    for row in by_claim.values():
        assert row[1:7] == ["1Gi", "RWO", "Delete", "Bound", row[5], "standard"]
    # each pod's volume is attached to its node
    attachments = wait(lambda: [a for a in get_json(cluster, "volumeattachments")["items"]
                                if (a.get("status") or {}).get("attached")]
                       if len(get_json(cluster, "volumeattachments")["items"]) == 2 else None,
                       30, "two attached VolumeAttachments")
    assert sorted((a["spec"]["nodeName"], a["spec"]["source"]["persistentVolumeName"])
                  for a in attachments) == sorted(
        (p["spec"]["nodeName"], claims[f"www-{p['metadata']['name']}"]["spec"]["volumeName"])
        for p in pods)
    table = rows(cluster.kubectl("get", "volumeattachments").stdout)
    assert table[0] == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert {r[4] for r in table[1:]} == {"true"}


def test_python_client_lists_the_storage_kinds(cluster: ClusterProcesses) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    config = kubernetes.client.Configuration()
    config.host = cluster.url
    with kubernetes.client.ApiClient(config) as api_client:
        storage = kubernetes.client.StorageV1Api(api_client)
        classes = storage.list_storage_class()
        assert "standard" in [c.metadata.name for c in classes.items]
        standard = storage.read_storage_class("standard")
        assert standard.provisioner == DRIVER and standard.volume_binding_mode == "Immediate"
        assert [d.metadata.name for d in storage.list_csi_driver().items] == [DRIVER]
        assert sorted(n.metadata.name for n in storage.list_csi_node().items) == [
            "node-0", "node-1"]
        storage.list_volume_attachment()
        capacity = kubernetes.client.V1CSIStorageCapacity(
            metadata=kubernetes.client.V1ObjectMeta(name="cap-a"), storage_class_name="standard",
            capacity="100Gi", node_topology=kubernetes.client.V1LabelSelector(
                match_labels={"kubernetes.io/hostname": "node-0"}))
        storage.create_namespaced_csi_storage_capacity("default", capacity)
        listed = storage.list_csi_storage_capacity_for_all_namespaces().items
        assert [(c.metadata.name, c.capacity) for c in listed] == [("cap-a", "100Gi")]
