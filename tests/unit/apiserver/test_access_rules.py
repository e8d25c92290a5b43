"""authz/rules.py (RulesFor per authorizer) and api/validation/reviews.py, without a server."""

from __future__ import annotations

from minikube_py.api.validation import reviews as validation
from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authz import (
    AlwaysAllow,
    AlwaysDeny,
    Attributes,
    UnionAuthorizer,
)
from minikube_py.apiserver.authz.abac import ABACAuthorizer, parse_policy_lines
from minikube_py.apiserver.authz.rules import Rules, rules_for

BOB = UserInfo("bob", groups=("dev", "system:authenticated"))


def abac(text: str) -> ABACAuthorizer:
    return ABACAuthorizer(parse_policy_lines(text, "policy"))


def test_always_allow_and_deny() -> None:
    allow = rules_for(AlwaysAllow(), BOB, "default").status()
    assert allow == {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                     "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                     "incomplete": False}
    assert rules_for(AlwaysDeny(), BOB, "default").status() == {
        "resourceRules": [], "nonResourceRules": [], "incomplete": False}


def test_abac_lists_matching_lines_in_the_namespace() -> None:
    authorizer = abac('{"user":"bob","readonly":true,"resource":"pods"}\n'
                      '{"user":"bob","namespace":"team-a"}\n'
                      '{"group":"dev","resource":"configmaps","namespace":"team-b"}\n'
                      '{"user":"alice"}\n')
    rules = rules_for(authorizer, BOB, "team-a")
    assert rules.resource_rules == [
        {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["pods"]},
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert rules.non_resource_rules == []  # a v0 line naming a namespace grants no path
    assert [r["resources"] for r in rules_for(authorizer, BOB, "team-b").resource_rules] == [
        ["pods"], ["configmaps"]]


def test_union_and_an_authorizer_that_cannot_list() -> None:
    class Opaque:
        def authorize(self, attrs: Attributes) -> tuple[bool, str]:
            return False, ""

    rules = rules_for(UnionAuthorizer([abac('{"user":"bob"}\n'), Opaque()]), BOB, "x")
    status = rules.status()
    assert status["incomplete"] is True
    assert status["evaluationError"] == "Opaque authorizer does not support user rule resolution"
    assert status["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def test_an_authorizer_with_its_own_rules_for_plugs_in() -> None:
    class Listing:
        def authorize(self, attrs: Attributes) -> tuple[bool, str]:
            return False, ""

        def rules_for(self, user: UserInfo, namespace: str) -> Rules:
            return Rules([{"verbs": ["get"], "apiGroups": [""], "resources": [namespace]}])

    assert rules_for(Listing(), BOB, "ns").resource_rules[0]["resources"] == ["ns"]


def test_validation_messages() -> None:
    errs = validation.validate_subject_access_review({"spec": {}})
    assert [e.message() for e in errs] == [
        ('spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes '
         'or resourceAttributes must be specified'),
        'spec.user: Invalid value: "": at least one of user or group must be specified']
    ok = {"spec": {"groups": ["g"], "resourceAttributes": {"verb": "get"}},
          "metadata": {"creationTimestamp": None}}
    assert validation.validate_subject_access_review(ok) == []
    assert validation.validate_self_subject_access_review(
        {"spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}) == []
    local = {"metadata": {"namespace": "a"},
             "spec": {"user": "u", "resourceAttributes": {"namespace": "a", "verb": "get"}}}
    assert validation.validate_local_subject_access_review(local) == []
    assert validation.type_errors({"groups": "g"}, self_review=False) == \
        "spec.groups: expected a list of strings"
    assert validation.type_errors({"resourceAttributes": {"verb": 1}}, self_review=True) == \
        "spec.resourceAttributes.verb: expected a string"
