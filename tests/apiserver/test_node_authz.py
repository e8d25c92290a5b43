"""--authorization-mode Node,RBAC end to end on the secure port (TLS, a token-file kubelet
identity `system:node:node-1` in group system:nodes): the kubelet reads the secret a pod bound
to its node mounts, not another node's or an unreferenced one (upstream's 403 text), reaches
its Node's status and events through NodeRules, cannot write RBAC, and loses the secret when
the pod is gone. Also: the namespaced bootstrap roles are reconciled at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apiserver.test_rbac import RBAC, eventually
from tests.apiserver.test_secure import Secure, serve

TOKENS = ('admin-token,admin,1,"system:masters"\n'
          'node1-token,system:node:node-1,10,"system:nodes"\n')
SECRETS = "/api/v1/namespaces/default/secrets"
PODS = "/api/v1/namespaces/default/pods"
JSON_MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
async def secure(tmp_path: Path):
    api, close = await serve(tmp_path, TOKENS, authorization_mode="Node,RBAC",
                             authorization_policy_file=None)
    try:
        yield api
    finally:
        await close()


def secret(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
            "stringData": {"k": "v"}}


def bound_pod(name: str, node: str, secret_name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node,
                     "containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "s", "secret": {"secretName": secret_name}}]}}


def forbidden(name: str) -> str:
    return (f'secrets "{name}" is forbidden: User "system:node:node-1" cannot get resource '
            f'"secrets" in API group "" in the namespace "default": no relationship found '
            f"between node 'node-1' and this object")


async def test_a_node_reads_only_what_its_pods_reference(secure: Secure) -> None:
    for name in ("mine", "theirs", "nobodys"):
        assert (await secure.call("POST", SECRETS, "admin-token", secret(name)))[0] == 201
    assert (await secure.call("POST", PODS, "admin-token",
                              bound_pod("p1", "node-1", "mine")))[0] == 201
    assert (await secure.call("POST", PODS, "admin-token",
                              bound_pod("p2", "node-2", "theirs")))[0] == 201

    async def readable() -> bool:
        return (await secure.call("GET", f"{SECRETS}/mine", "node1-token"))[0] == 200
    assert await eventually(readable)  # the graph follows the pods informer
    for name in ("theirs", "nobodys"):
        status, body = await secure.call("GET", f"{SECRETS}/{name}", "node1-token")
        assert (status, body["reason"], body["message"]) == (403, "Forbidden", forbidden(name))
    status, body = await secure.call("GET", SECRETS, "node1-token")
    assert status == 403 and body["message"].endswith(": No Object name found")

    # gone with the pod (deleted at once: no kubelet here to confirm a graceful deletion)
    assert (await secure.call("DELETE", f"{PODS}/p1?gracePeriodSeconds=0",
                              "admin-token"))[0] == 200

    async def gone() -> bool:
        return (await secure.call("GET", f"{SECRETS}/mine", "node1-token"))[0] == 403
    assert await eventually(gone)
    assert (await secure.call("GET", f"{SECRETS}/mine", "node1-token"))[1]["message"] \
        == forbidden("mine")


async def test_a_node_reads_its_pods_claims_and_their_volumes(secure: Secure) -> None:
    """pvc -> pod -> node from the pods informer, pv -> pvc from the persistentvolumes one."""
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "1Gi"}}}}
    pvcs = "/api/v1/namespaces/default/persistentvolumeclaims"
    assert (await secure.call("POST", pvcs, "admin-token", claim))[0] == 201
    for name, claim_name in (("pv-1", "data"), ("pv-2", "other")):
        volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                  "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                           "hostPath": {"path": f"/tmp/{name}"},
                           "claimRef": {"namespace": "default", "name": claim_name}}}
        status, body = await secure.call("POST", "/api/v1/persistentvolumes", "admin-token",
                                         volume)
        assert status == 201, body
    mounting = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db"},
                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "x"}],
                         "volumes": [{"name": "d", "persistentVolumeClaim":
                                      {"claimName": "data"}}]}}
    assert (await secure.call("POST", PODS, "admin-token", mounting))[0] == 201

    async def readable() -> bool:
        return (await secure.call("GET", "/api/v1/persistentvolumes/pv-1",
                                  "node1-token"))[0] == 200
    assert await eventually(readable)
    assert (await secure.call("GET", f"{pvcs}/data", "node1-token"))[0] == 200
    status, body = await secure.call("GET", "/api/v1/persistentvolumes/pv-2", "node1-token")
    assert status == 403 and body["message"].endswith(
        "no relationship found between node 'node-1' and this object")
    status, body = await secure.call("GET", "/api/v1/persistentvolumes", "node1-token")
    assert status == 403 and body["message"].endswith(
        ": can only get individual resources of this type")


async def test_a_node_gets_the_volume_attachments_of_its_node(secure: Secure) -> None:
    """attachment -> node from the volumeattachments informer (graph.go's
    AddVolumeAttachment): the kubelet reads its own attachments, no one else's."""
    attachments = "/apis/storage.k8s.io/v1/volumeattachments"
    for name, node in (("csi-mine", "node-1"), ("csi-theirs", "node-2")):
        body = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                "metadata": {"name": name},
                "spec": {"attacher": "hostpath.csi.minikube-py.io", "nodeName": node,
                         "source": {"persistentVolumeName": f"pv-{name}"}}}
        status, created = await secure.call("POST", attachments, "admin-token", body)
        assert status == 201, created

    async def readable() -> bool:
        return (await secure.call("GET", f"{attachments}/csi-mine", "node1-token"))[0] == 200
    assert await eventually(readable)
    status, body = await secure.call("GET", f"{attachments}/csi-theirs", "node1-token")
    assert status == 403 and body["message"].endswith(
        "no relationship found between node 'node-1' and this object")


async def test_node_rules_cover_the_rest(secure: Secure) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
    assert (await secure.call("POST", "/api/v1/nodes", "admin-token", node))[0] == 201
    status, body = await secure.call(
        "PATCH", "/api/v1/nodes/node-1/status", "node1-token",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, headers=JSON_MERGE)
    assert status == 200, body
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
             "involvedObject": {"kind": "Node", "name": "node-1"}, "reason": "Starting",
             "message": "kubelet started", "type": "Normal"}
    status, body = await secure.call("POST", "/api/v1/namespaces/default/events",
                                     "node1-token", event)
    assert status == 201, body
    # Leases are not served here, but authorization comes first (the lease rule's 403)
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    status, body = await secure.call("GET", f"{leases}/node-2", "node1-token")
    assert status == 403 and body["message"].endswith(
        ": can only access node lease with the same name as the requesting node")
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "sneaky"}, "rules": []}
    status, body = await secure.call("POST", f"{RBAC}/clusterroles", "node1-token", role)
    assert status == 403
    assert body["message"] == (
        'clusterroles.rbac.authorization.k8s.io is forbidden: User "system:node:node-1" '
        'cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at '
        "the cluster scope")


async def test_namespaced_bootstrap_policy_is_reconciled(secure: Secure) -> None:
    path = f"{RBAC}/namespaces/kube-system/roles/system::leader-locking-kube-scheduler"
    status, body = await secure.call("GET", path, "admin-token")
    assert status == 200, body
    assert body["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    status, body = await secure.call(
        "GET", f"{RBAC}/namespaces/kube-public/rolebindings/system:controller:bootstrap-signer",
        "admin-token")
    assert status == 200 and body["subjects"] == [
        {"kind": "ServiceAccount", "name": "bootstrap-signer", "namespace": "kube-system"}]
    status, body = await secure.call(
        "GET", f"{RBAC}/clusterrolebindings/system:controller:namespace-controller",
        "admin-token")
    assert status == 200, body
