"""The bootstrap RBAC policy as upstream's data files (bootstrappolicy/testdata): what loads,
that it is decoded as Go would (no nulls), and that an authorizer over it grants what upstream's
bootstrap roles grant. Pure: no server."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authz import Attributes
from minikube_py.apiserver.authz.rbac import RBACAuthorizer
from minikube_py.apiserver.authz.rbac.bootstrap import (
    cluster_role_bindings,
    cluster_role_rules,
    cluster_roles,
    policy,
)
from minikube_py.apiserver.authz.rbac.index import PolicyIndex


def _has_null(value: object) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def test_policy_loads_every_file_without_nulls() -> None:
    data = policy()
    assert set(data) == {"clusterroles", "clusterrolebindings", "roles", "rolebindings"}
    names = {r["metadata"]["name"] for r in data["clusterroles"]}
    # policy.go's roles, the aggregated trio, and controller_policy.go's roles
    assert {"cluster-admin", "admin", "edit", "view", "system:node", "system:kube-scheduler",
            "system:monitoring", "system:controller:namespace-controller",
            "system:controller:clusterrole-aggregation-controller"} <= names
    assert len(data["clusterroles"]) > 60 and len(data["clusterrolebindings"]) > 40
    assert not any(_has_null(obj) for objs in data.values() for obj in objs)
    admin = next(r for r in data["clusterroles"] if r["metadata"]["name"] == "admin")
    assert "rules" not in admin and "creationTimestamp" not in admin["metadata"]
    assert admin["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]}
    for obj in (*data["clusterroles"], *data["clusterrolebindings"], *data["roles"]):
        assert obj["metadata"]["annotations"] == {
            "rbac.authorization.kubernetes.io/autoupdate": "true"}
        assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"


def test_namespaced_objects_live_in_the_system_namespaces() -> None:
    data = policy()
    spots = {(o["metadata"]["namespace"], o["metadata"]["name"])
             for o in (*data["roles"], *data["rolebindings"])}
    assert ("kube-system", "system::leader-locking-kube-scheduler") in spots
    assert ("kube-system", "extension-apiserver-authentication-reader") in spots
    assert ("kube-public", "system:controller:bootstrap-signer") in spots
    assert {ns for ns, _ in spots} == {"kube-system", "kube-public"}


def test_controller_bindings_bind_kube_system_service_accounts() -> None:
    binding = next(b for b in cluster_role_bindings()
                   if b["metadata"]["name"] == "system:controller:namespace-controller")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "namespace-controller",
                                    "namespace": "kube-system"}]
    assert binding["roleRef"]["name"] == "system:controller:namespace-controller"


def test_callers_get_copies() -> None:
    cluster_roles()[0]["metadata"]["name"] = "changed"
    cluster_role_rules("system:node").clear()
    assert cluster_roles()[0]["metadata"]["name"] != "changed"
    assert cluster_role_rules("system:node")
    with pytest.raises(KeyError):
        cluster_role_rules("no-such-role")


def test_node_rules_are_the_system_node_role() -> None:
    rules = cluster_role_rules("system:node")
    assert {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch", "update"]} \
        in rules
    assert {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]} \
        in rules


def _attrs(user: UserInfo, verb: str, resource: str, ns: str = "", group: str = "",
           sub: str = "", name: str = "") -> Attributes:
    return Attributes(user, verb, True, namespace=ns, resource=resource, subresource=sub,
                      name=name, api_group=group)


def test_an_authorizer_over_the_policy_grants_what_upstream_grants() -> None:
    data = policy()
    authorizer = RBACAuthorizer.from_index(PolicyIndex(
        roles=data["roles"], cluster_roles=data["clusterroles"],
        bindings=data["rolebindings"], cluster_bindings=data["clusterrolebindings"]))
    scheduler = UserInfo("system:kube-scheduler", groups=("system:authenticated",))
    assert authorizer.authorize(_attrs(scheduler, "create", "pods", "default",
                                       sub="binding"))[0]
    # the leader-election Role in kube-system, through its RoleBinding
    assert authorizer.authorize(_attrs(scheduler, "list", "leases", "kube-system",
                                       "coordination.k8s.io"))[0]
    assert not authorizer.authorize(_attrs(scheduler, "list", "leases", "default",
                                           "coordination.k8s.io"))[0]
    controller = UserInfo("system:serviceaccount:kube-system:namespace-controller",
                          groups=("system:serviceaccounts",))
    assert authorizer.authorize(_attrs(controller, "deletecollection", "configmaps", "x"))[0]
    assert not authorizer.authorize(_attrs(controller, "create", "configmaps", "x"))[0]
    # system:node's binding has no subjects upstream (the Node authorizer grants nodes)
    node = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))
    assert not authorizer.authorize(_attrs(node, "patch", "nodes", sub="status",
                                           name="n1"))[0]
