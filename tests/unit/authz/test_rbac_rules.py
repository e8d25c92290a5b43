"""RBAC rule matching, subject resolution, the subject index and escalation coverage: pure
functions, no server (plugin/pkg/auth/authorizer/rbac and evaluation_helpers.go)."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authz import (
    AlwaysDeny,
    Attributes,
    UnionAuthorizer,
    build_authorizer,
)
from minikube_py.apiserver.authz.rbac import RBACAuthorizer
from minikube_py.apiserver.authz.rbac.index import PolicyIndex
from minikube_py.apiserver.authz.rbac.rules import (
    Rule,
    compact_string,
    rule_allows,
    subject_username,
    uncovered,
)

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))


def res(verb: str, resource: str, *, group: str = "", ns: str = "default", sub: str = "",
        name: str = "", user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, verb, True, namespace=ns, resource=resource, subresource=sub,
                      name=name, api_group=group)


def url(verb: str, path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user, verb, False, path=path)


def rule(**fields) -> Rule:
    return Rule.compile(fields)


@pytest.mark.parametrize(("r", "attrs", "allowed"), [
    (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), res("get", "pods"), True),
    (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), res("list", "pods"), False),
    (rule(verbs=["*"], apiGroups=[""], resources=["pods"]), res("delete", "pods"), True),
    (rule(verbs=["get"], apiGroups=["apps"], resources=["pods"]), res("get", "pods"), False),
    (rule(verbs=["get"], apiGroups=["*"], resources=["deployments"]),
     res("get", "deployments", group="apps"), True),
    (rule(verbs=["get"], apiGroups=[""], resources=["*"]), res("get", "secrets"), True),
    # a subresource needs its own grant ...
    (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), res("get", "pods", sub="log"),
     False),
    (rule(verbs=["get"], apiGroups=[""], resources=["pods/log"]), res("get", "pods", sub="log"),
     True),
    # ... or `*/sub`, which does not match the parent
    (rule(verbs=["get"], apiGroups=[""], resources=["*/status"]),
     res("get", "pods", sub="status"), True),
    (rule(verbs=["get"], apiGroups=[""], resources=["*/status"]), res("get", "pods"), False),
    (rule(verbs=["get"], apiGroups=[""], resources=["*/status"]),
     res("get", "pods", sub="log"), False),
    (rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
     res("get", "pods", name="a"), True),
    (rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
     res("get", "pods", name="b"), False),
    (rule(verbs=["list"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
     res("list", "pods"), False),
    (rule(verbs=["get"], nonResourceURLs=["/healthz"]), url("get", "/healthz"), True),
    (rule(verbs=["get"], nonResourceURLs=["/healthz"]), url("get", "/healthz/etcd"), False),
    (rule(verbs=["get"], nonResourceURLs=["/apis/*"]), url("get", "/apis/apps/v1"), True),
    (rule(verbs=["get"], nonResourceURLs=["/apis/*"]), url("get", "/apis"), False),
    (rule(verbs=["get"], nonResourceURLs=["*"]), url("get", "/anything"), True),
    (rule(verbs=["post"], nonResourceURLs=["*"]), url("get", "/anything"), False),
    # a URL rule never grants resources, a resource rule never grants URLs
    (rule(verbs=["*"], nonResourceURLs=["*"]), res("get", "pods"), False),
    (rule(verbs=["*"], apiGroups=["*"], resources=["*"]), url("get", "/healthz"), False),
])
def test_rule_allows(r: Rule, attrs: Attributes, allowed: bool) -> None:
    assert rule_allows(attrs, r) is allowed


def test_subject_usernames() -> None:
    assert subject_username({"kind": "User", "name": "bob"}, "ns") == "bob"
    assert subject_username({"kind": "ServiceAccount", "name": "sa", "namespace": "a"}, "b") \
        == "system:serviceaccount:a:sa"
    # a RoleBinding's namespace-less service account is its own namespace's
    assert subject_username({"kind": "ServiceAccount", "name": "sa"}, "b") \
        == "system:serviceaccount:b:sa"
    assert subject_username({"kind": "ServiceAccount", "name": "sa"}, "") is None
    assert subject_username({"kind": "Group", "name": "g"}, "ns") is None


def _role(name: str, rules: list[dict], ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"metadata": meta, "rules": rules}


def _binding(name: str, kind: str, role: str, subjects: list[dict], ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"metadata": meta, "roleRef": {"kind": kind, "name": role,
                                          "apiGroup": "rbac.authorization.k8s.io"},
            "subjects": subjects}


PODS_READER = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]


def authorizer() -> RBACAuthorizer:
    return RBACAuthorizer.from_index(PolicyIndex(
        roles=[_role("reader", PODS_READER, "default")],
        cluster_roles=[_role("nodes", [{"verbs": ["get"], "apiGroups": [""],
                                        "resources": ["nodes"]}]),
                       _role("secrets", [{"verbs": ["get"], "apiGroups": [""],
                                          "resources": ["secrets"]}])],
        bindings=[_binding("r", "Role", "reader", [{"kind": "User", "name": "alice"}],
                           "default"),
                  _binding("s", "ClusterRole", "secrets",
                           [{"kind": "ServiceAccount", "name": "robot"}], "team"),
                  _binding("gone", "Role", "missing", [{"kind": "User", "name": "carol"}],
                           "default")],
        cluster_bindings=[_binding("n", "ClusterRole", "nodes",
                                   [{"kind": "Group", "name": "devs"}])]))


def test_authorizer_resolves_bindings_by_subject() -> None:
    rbac = authorizer()
    assert rbac.authorize(res("list", "pods")) == (True, "")
    # the Role binds in its namespace only
    assert rbac.authorize(res("list", "pods", ns="other"))[0] is False
    # a cluster binding through a group, valid in every namespace and cluster-wide
    assert rbac.authorize(res("get", "nodes", ns=""))[0] is True
    bob = UserInfo("bob", groups=("system:authenticated",))
    assert rbac.authorize(res("list", "pods", user=bob)) == (False, "")
    robot = UserInfo("system:serviceaccount:team:robot")
    assert rbac.authorize(res("get", "secrets", ns="team", user=robot))[0] is True
    # a ClusterRole bound by a RoleBinding grants only in that namespace
    assert rbac.authorize(res("get", "secrets", ns="default", user=robot))[0] is False
    carol = UserInfo("carol")
    assert rbac.authorize(res("get", "pods", user=carol)) == (
        False, 'RBAC: role.rbac.authorization.k8s.io "missing" not found')


def test_union_with_rbac() -> None:
    rbac = authorizer()
    union = UnionAuthorizer([AlwaysDeny(), rbac])
    assert union.authorize(res("list", "pods"))[0] is True
    assert union.authorize(res("delete", "pods")) == (False, "Everything is forbidden.")
    built = build_authorizer("AlwaysDeny,RBAC")
    assert isinstance(built, UnionAuthorizer)
    assert isinstance(built.authorizers[1], RBACAuthorizer)
    with pytest.raises(ValueError, match="unknown authorization mode"):
        build_authorizer("Rbac")


def test_escalation_coverage() -> None:
    owner = [rule(verbs=["get", "list"], apiGroups=[""], resources=["pods"]),
             rule(verbs=["get"], apiGroups=[""], resources=["*/status"]),
             rule(verbs=["get"], apiGroups=[""], resources=["secrets"], resourceNames=["s1"]),
             rule(verbs=["get"], nonResourceURLs=["/apis/*"])]
    assert uncovered(owner, [rule(verbs=["get"], apiGroups=[""], resources=["pods"])]) == []
    assert uncovered(owner, [rule(verbs=["get"], apiGroups=[""],
                                  resources=["pods/status"])]) == []
    assert uncovered(owner, [rule(verbs=["get"], apiGroups=[""], resources=["secrets"],
                                  resourceNames=["s1"])]) == []
    assert uncovered(owner, [rule(verbs=["get"], nonResourceURLs=["/apis/apps"])]) == []
    missing = uncovered(owner, [rule(verbs=["get", "delete"], apiGroups=[""],
                                     resources=["pods", "secrets"])])
    assert [compact_string(m) for m in missing] == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    ]
    # `*` is only covered by `*`
    assert len(uncovered(owner, [rule(verbs=["*"], apiGroups=[""], resources=["pods"])])) == 1


def test_aggregated_rules() -> None:
    from minikube_py.apiserver.authz.rbac.aggregation import aggregated_rules

    def cr(name: str, labels: dict, rules: list, selectors: list | None = None) -> dict:
        obj = {"metadata": {"name": name, "labels": labels}, "rules": rules}
        if selectors is not None:
            obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
        return obj

    a = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    b = {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}
    agg = cr("agg", {"x": "1"}, [a], [{"matchLabels": {"x": "1"}},
                                      {"matchExpressions": [{"key": "y", "operator": "Exists"}]}])
    roles = [agg, cr("z-second", {"x": "1"}, [b, a]), cr("a-first", {"x": "1"}, [a]),
             cr("other", {"y": "any"}, [b]), cr("unlabelled", {}, [{"verbs": ["*"]}])]
    # selectors in order, matches sorted by name, itself skipped, each rule once
    assert aggregated_rules(agg, roles) == [a, b]
    assert aggregated_rules(roles[1], roles) is None  # not aggregated
    assert aggregated_rules(cr("none", {}, [a], [{"matchLabels": {"q": "r"}}]), roles) == []


def test_index_sync_is_incremental() -> None:
    """sync() diffs by identity: a role deleted after its binding leaves the binding
    dangling (not found), re-created it is seen again; an unchanged object is not re-filed;
    a removed binding takes its grant away."""
    reader = _role("reader", PODS_READER, "default")
    bound = _binding("r", "Role", "reader", [{"kind": "User", "name": "alice"}], "default")
    index = PolicyIndex(bindings=[bound])
    rbac = RBACAuthorizer.from_index(index)
    assert rbac.authorize(res("list", "pods")) == (
        False, 'RBAC: role.rbac.authorization.k8s.io "reader" not found')
    index.sync("roles", {"k": reader})
    assert rbac.authorize(res("list", "pods"))[0] is True
    grants = list(index.by_user[("default", "alice")])
    index.sync("rolebindings", {("default", "r"): bound})  # same object: nothing moves
    assert index.by_user[("default", "alice")] == grants
    index.sync("roles", {"k": {**reader, "rules": []}})  # changed: recompiled
    assert rbac.authorize(res("list", "pods"))[0] is False
    index.sync("roles", {"k": reader})
    index.sync("rolebindings", {})
    assert rbac.authorize(res("list", "pods")) == (False, "")
    assert ("default", "alice") not in index.by_user
