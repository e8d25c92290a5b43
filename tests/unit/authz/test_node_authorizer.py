"""The Node authorizer's graph rules and decisions, pure (no server): upstream's
node_authorizer_test.go cases that apply here — what a pod bound to a node makes readable,
mirror pods, PVs through their claim, leases/CSINodes named after the node, NodeRules for the
rest, no opinion for non-nodes — with upstream's reasons."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authz import Attributes, UnionAuthorizer, build_authorizer
from minikube_py.apiserver.authz.node import NodeAuthorizer, node_identity
from minikube_py.apiserver.authz.node_graph import (
    CONFIGMAP,
    PV,
    PVC,
    RESOURCECLAIM,
    SECRET,
    SERVICEACCOUNT,
    NodeGraph,
    pod_references,
)
from minikube_py.apiserver.authz.rbac.bootstrap import cluster_role_rules
from minikube_py.apiserver.authz.rules import rules_for

NODE1 = UserInfo("system:node:node-1", groups=("system:nodes", "system:authenticated"))


def pod(name: str, node: str = "node-1", ns: str = "ns", **spec) -> dict:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": node, "containers": [{"name": "c"}], **spec}}


FULL = pod("full", serviceAccountName="sa", imagePullSecrets=[{"name": "pull"}],
           initContainers=[{"name": "i", "envFrom": [{"secretRef": {"name": "init-env"}}]}],
           containers=[{"name": "c", "env": [
               {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}},
               {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}}],
               "envFrom": [{"configMapRef": {"name": "from-cm"}}]}],
           volumes=[{"name": "s", "secret": {"secretName": "vol-secret"}},
                    {"name": "m", "configMap": {"name": "vol-cm"}},
                    {"name": "p", "projected": {"sources": [
                        {"secret": {"name": "proj-secret"}},
                        {"configMap": {"name": "proj-cm"}},
                        {"serviceAccountToken": {"path": "t"}}]}},
                    {"name": "c", "csi": {"driver": "d",
                                          "nodePublishSecretRef": {"name": "csi-secret"}}},
                    {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
           resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"},
                           {"name": "tpl", "resourceClaimTemplateName": "t"}])
FULL["status"] = {"resourceClaimStatuses": [{"name": "tpl", "resourceClaimName": "full-tpl-x"}]}


def test_pod_references_follow_visit_pod_secret_and_configmap_names() -> None:
    assert pod_references(FULL) == {
        (SERVICEACCOUNT, "sa"), (SECRET, "pull"), (SECRET, "init-env"),
        (SECRET, "env-secret"), (CONFIGMAP, "env-cm"), (CONFIGMAP, "from-cm"),
        (SECRET, "vol-secret"), (CONFIGMAP, "vol-cm"), (SECRET, "proj-secret"),
        (CONFIGMAP, "proj-cm"), (SECRET, "csi-secret"), (PVC, "data"),
        (PVC, "full-scratch"), (RESOURCECLAIM, "gpu-claim"), (RESOURCECLAIM, "full-tpl-x")}
    assert pod_references({"spec": "not a spec"}) == set()


def test_graph_counts_bound_pods_and_forgets_deleted_ones() -> None:
    graph = NodeGraph()
    graph.set_pod("k1", FULL)
    graph.set_pod("k2", pod("other", volumes=[{"name": "s", "secret": {"secretName": "vol-secret"}}]))
    graph.set_pod("k3", pod("elsewhere", node="node-2",
                            volumes=[{"name": "s", "secret": {"secretName": "two"}}]))
    graph.set_pod("k4", {**pod("unbound"), "spec": {"volumes": [
        {"name": "s", "secret": {"secretName": "unbound"}}]}})
    assert graph.reachable("node-1", SECRET, "ns", "vol-secret")
    assert not graph.reachable("node-1", SECRET, "other-ns", "vol-secret")
    assert not graph.reachable("node-1", SECRET, "ns", "two")
    assert graph.reachable("node-2", SECRET, "ns", "two")
    assert not graph.reachable("node-1", SECRET, "ns", "unbound")
    assert graph.pods_on("node-1") == 2
    graph.set_pod("k1", None)  # one of the two pods mounting vol-secret is gone
    assert graph.reachable("node-1", SECRET, "ns", "vol-secret")
    assert not graph.reachable("node-1", CONFIGMAP, "ns", "vol-cm")
    graph.set_pod("k2", None)
    assert not graph.reachable("node-1", SECRET, "ns", "vol-secret")
    # a pod moving its references: the old ones are released
    graph.set_pod("k3", pod("elsewhere", node="node-2",
                            volumes=[{"name": "s", "secret": {"secretName": "three"}}]))
    assert (graph.reachable("node-2", SECRET, "ns", "two"),
            graph.reachable("node-2", SECRET, "ns", "three")) == (False, True)
    assert graph._reach.keys() == {(SECRET, "ns", "three")}  # nothing left behind


def test_mirror_pods_grant_nothing() -> None:
    graph = NodeGraph()
    mirror = pod("static", volumes=[{"name": "s", "secret": {"secretName": "s"}}])
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    graph.set_pod("k", mirror)
    assert not graph.reachable("node-1", SECRET, "ns", "s")


def test_pv_is_reachable_through_its_claim() -> None:
    graph = NodeGraph()
    graph.set_pod("k", pod("p", volumes=[{"name": "d", "persistentVolumeClaim":
                                          {"claimName": "data"}}]))
    pv = {"metadata": {"name": "pv-1"}, "spec": {"claimRef": {"namespace": "ns", "name": "data"}}}
    graph.set_pv("pvk", pv)
    assert graph.reachable("node-1", PV, "", "pv-1")
    assert not graph.reachable("node-2", PV, "", "pv-1")
    graph.set_pv("pvk", None)
    assert not graph.reachable("node-1", PV, "", "pv-1")


def test_a_volume_attachment_is_reachable_from_its_node_only() -> None:
    graph = NodeGraph()
    attachment = {"metadata": {"name": "csi-1"}, "spec": {"nodeName": "node-1"}}
    graph.set_volume_attachment("k", attachment)
    assert graph.reachable("node-1", "volumeattachment", "", "csi-1")
    assert not graph.reachable("node-2", "volumeattachment", "", "csi-1")
    graph.set_volume_attachment("k", None)
    assert not graph.reachable("node-1", "volumeattachment", "", "csi-1")


def attrs(verb: str, resource: str, name: str = "", ns: str = "ns", *, group: str = "",
          sub: str = "", user: UserInfo = NODE1) -> Attributes:
    return Attributes(user, verb, True, namespace=ns, resource=resource, subresource=sub,
                      name=name, api_group=group)


@pytest.fixture
def authorizer() -> NodeAuthorizer:
    node = NodeAuthorizer(rules=cluster_role_rules("system:node"))
    node.graph.set_pod("k", FULL)
    node.graph.set_pv("pv", {"metadata": {"name": "pv-1"},
                             "spec": {"claimRef": {"namespace": "ns", "name": "data"}}})
    node.graph.set_volume_attachment("va", {"metadata": {"name": "csi-1"},
                                            "spec": {"nodeName": "node-1"}})
    node.graph.set_volume_attachment("va2", {"metadata": {"name": "csi-2"},
                                             "spec": {"nodeName": "node-2"}})
    return node


NO_RELATION = "no relationship found between node 'node-1' and this object"


@pytest.mark.parametrize(("request_attrs", "decision"), [
    (attrs("get", "secrets", "vol-secret"), (True, "")),
    (attrs("watch", "secrets", "proj-secret"), (True, "")),
    (attrs("get", "secrets", "unrelated"), (False, NO_RELATION)),
    (attrs("list", "secrets"), (False, "No Object name found")),
    (attrs("update", "secrets", "vol-secret"), (False, "can only read resources of this type")),
    (attrs("get", "secrets", "x", ns=""),
     (False, "can only read namespaced object of this type")),
    (attrs("get", "configmaps", "env-cm"), (True, "")),
    (attrs("get", "configmaps", "vol-cm", sub="x"), (False, "cannot read subresource")),
    (attrs("get", "persistentvolumeclaims", "data"), (True, "")),
    (attrs("get", "persistentvolumeclaims", "full-scratch"), (True, "")),
    (attrs("list", "persistentvolumeclaims", "data"),
     (False, "can only get individual resources of this type")),
    (attrs("patch", "persistentvolumeclaims", "data", sub="status"), (True, "")),
    (attrs("get", "persistentvolumeclaims", "data", sub="status"),
     (False, "can only get/update/patch this type")),
    (attrs("get", "persistentvolumes", "pv-1", ns=""), (True, "")),
    (attrs("get", "persistentvolumes", "pv-2", ns=""), (False, NO_RELATION)),
    (attrs("get", "resourceclaims", "full-tpl-x", group="resource.k8s.io"), (True, "")),
    (attrs("create", "serviceaccounts", "sa", sub="token"), (True, "")),
    (attrs("create", "serviceaccounts", "other", sub="token"), (False, NO_RELATION)),
    (attrs("get", "serviceaccounts", "sa"),
     (False, "can only create tokens for individual service accounts")),
    (attrs("create", "serviceaccounts", "sa"),
     (False, "can only create token subresource of serviceaccount")),
    (attrs("update", "leases", "node-1", ns="kube-node-lease", group="coordination.k8s.io"),
     (True, "")),
    (attrs("create", "leases", ns="kube-node-lease", group="coordination.k8s.io"), (True, "")),
    (attrs("update", "leases", "node-2", ns="kube-node-lease", group="coordination.k8s.io"),
     (False, "can only access node lease with the same name as the requesting node")),
    (attrs("get", "leases", "node-1", ns="default", group="coordination.k8s.io"),
     (False, 'can only access leases in the "kube-node-lease" system namespace')),
    (attrs("list", "leases", ns="kube-node-lease", group="coordination.k8s.io"),
     (False, "can only get, create, update, patch, or delete a node lease")),
    (attrs("get", "volumeattachments", "csi-1", ns="", group="storage.k8s.io"), (True, "")),
    (attrs("get", "volumeattachments", "csi-2", ns="", group="storage.k8s.io"),
     (False, NO_RELATION)),
    (attrs("list", "volumeattachments", ns="", group="storage.k8s.io"),
     (False, "can only get individual resources of this type")),
    (attrs("get", "csinodes", "node-1", ns="", group="storage.k8s.io"), (True, "")),
    (attrs("delete", "csinodes", "node-2", ns="", group="storage.k8s.io"),
     (False, "can only access CSINode with the same name as the requesting node")),
    # NodeRules (the system:node ClusterRole)
    (attrs("patch", "nodes", "node-1", ns="", sub="status"), (True, "")),
    (attrs("create", "events"), (True, "")),
    (attrs("list", "pods", ns=""), (True, "")),
    (attrs("create", "clusterroles", "x", ns="", group="rbac.authorization.k8s.io"),
     (False, "")),
])
def test_decisions(authorizer: NodeAuthorizer, request_attrs: Attributes,
                   decision: tuple[bool, str]) -> None:
    assert authorizer.authorize(request_attrs) == decision


def test_who_is_a_node(authorizer: NodeAuthorizer) -> None:
    assert node_identity(NODE1) == ("node-1", True)
    outsider = UserInfo("system:node:node-1", groups=("system:authenticated",))
    assert node_identity(outsider) == ("", False)
    assert authorizer.authorize(attrs("get", "secrets", "vol-secret", user=outsider)) \
        == (False, "")
    nameless = UserInfo("system:node:", groups=("system:nodes",))
    assert authorizer.authorize(attrs("create", "events", user=nameless)) == (
        False, 'unknown node for user "system:node:"')
    alice = UserInfo("alice", groups=("system:authenticated",))
    assert authorizer.authorize(attrs("create", "events", user=alice)) == (False, "")


def test_rules_for_a_node_are_incomplete(authorizer: NodeAuthorizer) -> None:
    status = rules_for(authorizer, NODE1, "ns").status()
    assert status["incomplete"] is True
    assert status["evaluationError"] == "node authorizer does not support user rule resolution"
    assert rules_for(authorizer, UserInfo("alice"), "ns").status()["incomplete"] is False


def test_mode_node_builds_a_node_authorizer() -> None:
    sources = {"pods": (None, "/registry/pods/"), "roles": (None, "/registry/roles/")}
    union = build_authorizer("Node,RBAC", None, sources)
    assert isinstance(union, UnionAuthorizer)
    node, rbac = union.authorizers
    assert isinstance(node, NodeAuthorizer)
    # each takes the informers it needs
    assert set(node.informers) == {"pods"} and set(rbac.informers) == {"roles"}


def test_a_status_update_keeps_references_and_a_generated_claim_adds_one() -> None:
    graph = NodeGraph()
    templated = pod("t", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "tpl"}],
                    volumes=[{"name": "s", "secret": {"secretName": "s"}}])
    graph.set_pod("k", templated)
    assert not graph.reachable("node-1", RESOURCECLAIM, "ns", "t-gpu-abc")
    running = {**templated, "status": {"phase": "Running"}}
    graph.set_pod("k", running)
    assert graph.reachable("node-1", SECRET, "ns", "s")
    claimed = {**templated, "status": {"resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": "t-gpu-abc"}]}}
    graph.set_pod("k", claimed)
    assert graph.reachable("node-1", RESOURCECLAIM, "ns", "t-gpu-abc")
    unbound = {**claimed, "spec": {**claimed["spec"], "nodeName": ""}}
    graph.set_pod("k", unbound)
    assert not graph.reachable("node-1", SECRET, "ns", "s")
    assert graph._reach == {}


def test_secrets_a_bound_pv_hands_the_kubelet() -> None:
    graph = NodeGraph()
    graph.set_pod("k", pod("p", volumes=[{"name": "d", "persistentVolumeClaim":
                                          {"claimName": "data"}}]))
    claim = {"namespace": "ns", "name": "data"}
    graph.set_pv("pv1", {"metadata": {"name": "pv-1"}, "spec": {
        "claimRef": claim, "csi": {"driver": "d", "volumeHandle": "h",
                                   "nodePublishSecretRef": {"namespace": "creds", "name": "pub"},
                                   "controllerPublishSecretRef": {"namespace": "creds",
                                                                  "name": "ctl"}}}})
    graph.set_pv("pv2", {"metadata": {"name": "pv-2"}, "spec": {
        "claimRef": claim, "rbd": {"image": "i", "monitors": ["m"],
                                   "secretRef": {"name": "ceph"}}}})
    assert graph.reachable("node-1", SECRET, "creds", "pub")
    assert not graph.reachable("node-1", SECRET, "creds", "ctl")  # the controller's, not ours
    assert graph.reachable("node-1", SECRET, "ns", "ceph")  # defaults to the claim's namespace
    assert not graph.reachable("node-2", SECRET, "creds", "pub")
    graph.set_pv("pv1", None)
    assert not graph.reachable("node-1", SECRET, "creds", "pub")
    unbound = {"metadata": {"name": "pv-2"}, "spec": {"rbd": {"secretRef": {"name": "ceph"}}}}
    graph.set_pv("pv2", unbound)
    assert not graph.reachable("node-1", SECRET, "ns", "ceph")
    assert graph._secret_pvs == {} and graph._pv_secrets == {}
