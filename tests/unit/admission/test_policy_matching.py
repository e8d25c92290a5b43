"""ValidatingAdmissionPolicy matching (upstream predicates/rules, namespace, object, matching)."""

from __future__ import annotations

import dataclasses

import pytest

from minikube_py.apiserver.admission.policy.matching import (
    PolicyRequest,
    namespace_selector_matches,
    object_selector_matches,
    resources_match,
    rule_matches,
)

DEPLOY = PolicyRequest("CREATE", "apps", "v1", "deployments", "", "Deployment", "default", "web",
                       obj={"metadata": {"name": "web", "labels": {"app": "web"}}})


def _rule(**over):
    rule = {"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
            "resources": ["deployments"], "scope": "*"}
    rule.update(over)
    return rule


@pytest.mark.parametrize(("over", "expected"), [
    ({}, True),
    ({"operations": ["UPDATE"]}, False),
    ({"operations": ["*"]}, True),
    ({"apiGroups": [""]}, False),
    ({"apiGroups": ["*"]}, True),
    ({"apiVersions": ["v1beta1"]}, False),
    ({"resources": ["*"]}, True),
    ({"resources": ["deployments/status"]}, False),
    ({"resources": ["*/*"]}, True),
    ({"scope": "Namespaced"}, True),
    ({"scope": "Cluster"}, False),
    ({"resourceNames": ["other"]}, False),
    ({"resourceNames": ["web"]}, True),
])
def test_rule_fields(over, expected):
    assert rule_matches(_rule(**over), DEPLOY) is expected


@pytest.mark.parametrize(("resources", "expected"), [
    (["pods"], False),          # the main resource only
    (["pods/status"], True),
    (["pods/*"], True),
    (["*/status"], True),
    (["*"], False),             # `*` is every resource but no subresource
    (["*/*"], True),
    (["pods/log"], False),
])
def test_subresources(resources, expected):
    req = PolicyRequest("UPDATE", "", "v1", "pods", "status", "Pod", "default", "p")
    rule = {"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": resources}
    assert rule_matches(rule, req) is expected


def test_namespace_objects_are_cluster_scoped():
    ns = PolicyRequest("CREATE", "", "v1", "namespaces", "", "Namespace", "", "team-a",
                       obj={"metadata": {"name": "team-a", "labels": {"env": "test"}}})
    rule = {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["namespaces"]}
    assert rule_matches(dict(rule, scope="Cluster"), ns)
    assert not rule_matches(dict(rule, scope="Namespaced"), ns)
    # a Namespace is selected by its own labels
    assert namespace_selector_matches({"matchLabels": {"env": "test"}}, ns, None)
    assert not namespace_selector_matches({"matchLabels": {"env": "prod"}}, ns, None)


def test_excluded_rules_win():
    match = {"resourceRules": [_rule()], "excludeResourceRules": [_rule(resourceNames=["web"])]}
    assert resources_match(match, DEPLOY, {}) is None
    other = dataclasses.replace(DEPLOY, name="api")
    assert resources_match(match, other, {}) == "v1"


def test_binding_without_rules_matches_what_the_policy_does():
    assert resources_match({"namespaceSelector": {}, "objectSelector": {}}, DEPLOY, {}) == "v1"


def test_namespace_selector():
    selector = {"matchLabels": {"environment": "test"}}
    assert namespace_selector_matches(selector, DEPLOY, {"environment": "test"})
    assert not namespace_selector_matches(selector, DEPLOY, {"environment": "prod"})
    assert not namespace_selector_matches(selector, DEPLOY, None)
    expr = {"matchExpressions": [{"key": "environment", "operator": "NotIn",
                                  "values": ["prod"]}]}
    assert namespace_selector_matches(expr, DEPLOY, {})
    # cluster-scoped objects (other than namespaces) are never excluded by namespaceSelector
    node = PolicyRequest("CREATE", "", "v1", "nodes", "", "Node", "", "n1")
    assert namespace_selector_matches(selector, node, None)


def test_object_selector_new_or_old():
    selector = {"matchLabels": {"app": "web"}}
    assert object_selector_matches(selector, DEPLOY)
    relabelled = dataclasses.replace(DEPLOY, operation="UPDATE",
                                     obj={"metadata": {"labels": {"app": "x"}}},
                                     old_obj={"metadata": {"labels": {"app": "web"}}})
    assert object_selector_matches(selector, relabelled)
    deleted = dataclasses.replace(DEPLOY, operation="DELETE", obj=None,
                                  old_obj={"metadata": {"labels": {}}})
    assert not object_selector_matches(selector, deleted)
    assert object_selector_matches({}, deleted)


def test_match_policy_equivalent_tries_other_served_versions():
    req = PolicyRequest("CREATE", "example.com", "v2", "widgets", "", "Widget", "default", "w",
                        served_versions=("v1", "v2"))
    rule = {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"],
            "resources": ["widgets"]}
    assert resources_match({"resourceRules": [rule], "matchPolicy": "Equivalent"}, req, {}) == "v1"
    assert resources_match({"resourceRules": [rule], "matchPolicy": "Exact"}, req, {}) is None
