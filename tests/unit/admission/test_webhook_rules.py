"""Which webhooks apply to a request (pure): rules, scope, subresources, matchPolicy
Equivalent, selectors, the exemption of admission configurations; then matchConditions and
the AdmissionReview response checks (table-driven, as upstream's rules_test.go)."""

from __future__ import annotations

import base64

import orjson
import pytest

from minikube_py import cel
from minikube_py.api.labels import selector_from_label_selector
from minikube_py.apiserver.admission.policy.matching import PolicyRequest
from minikube_py.apiserver.admission.webhook import conditions, review, rules
from minikube_py.apiserver.admission.webhook.source import (
    Condition,
    parse_configuration,
)

PODS = rules.GVR("", "v1", "pods")
DEPLOYMENTS = rules.GVR("apps", "v1", "deployments")
NAMESPACES = rules.GVR("", "v1", "namespaces")
NODES = rules.GVR("", "v1", "nodes")


def req(operation="CREATE", resource=PODS, subresource="", namespace="default"):
    return PolicyRequest(operation, resource.group, resource.version, resource.resource,
                         subresource, "", namespace, "x")


def rule(operations=("*",), groups=("*",), versions=("*",), resources=("*",), scope=None):
    out = {"operations": list(operations), "apiGroups": list(groups),
           "apiVersions": list(versions), "resources": list(resources)}
    if scope is not None:
        out["scope"] = scope
    return out


@pytest.mark.parametrize(("the_rule", "request_", "expected"), [
    (rule(), req(), True),
    (rule(operations=["CREATE"]), req("UPDATE"), False),
    (rule(operations=["UPDATE", "DELETE"]), req("DELETE"), True),
    (rule(groups=["apps"]), req(), False),
    (rule(groups=[""], versions=["v1"], resources=["pods"]), req(), True),
    (rule(versions=["v2"]), req(), False),
    # subresources: `pods` is the main resource only; `pods/status`, `*/status`, `pods/*`, `*/*`
    (rule(resources=["pods"]), req("UPDATE", subresource="status"), False),
    (rule(resources=["pods/status"]), req("UPDATE", subresource="status"), True),
    (rule(resources=["pods/status"]), req("UPDATE"), False),
    (rule(resources=["*/status"]), req("UPDATE", subresource="status"), True),
    (rule(resources=["pods/*"]), req("UPDATE", subresource="status"), True),
    (rule(resources=["pods/*"]), req("UPDATE"), True),
    (rule(resources=["*"]), req("UPDATE", subresource="status"), False),
    (rule(resources=["*/*"]), req("CREATE", subresource="binding"), True),
    # scope
    (rule(scope="Namespaced"), req(), True),
    (rule(scope="Cluster"), req(), False),
    (rule(scope="Cluster"), req(resource=NODES, namespace=""), True),
    (rule(scope="Namespaced"), req(resource=NODES, namespace=""), False),
    # a namespace carries its own name as namespace, yet is cluster-scoped
    (rule(scope="Cluster"), req(resource=NAMESPACES, namespace="team"), True),
    (rule(scope="Namespaced"), req(resource=NAMESPACES, namespace="team"), False),
    (rule(scope="*"), req(resource=NAMESPACES, namespace="team"), True),
])
def test_rule_matches(the_rule, request_, expected):
    hook = {"rules": [the_rule], "matchPolicy": "Exact"}
    assert (rules.matched_resource(hook, request_) is not None) is expected


def test_a_webhook_without_rules_matches_nothing():
    assert rules.matched_resource({"rules": []}, req()) is None
    assert rules.matched_resource({}, req()) is None


def test_match_policy_equivalent_matches_another_served_version():
    widgets_v2 = rules.GVR("example.com", "v2", "widgets")
    widgets_v1 = rules.GVR("example.com", "v1", "widgets")
    hook = {"rules": [rule(groups=["example.com"], versions=["v1"], resources=["widgets"])]}
    request_ = req(resource=widgets_v2)
    assert rules.matched_resource(hook, request_) is None  # no equivalents known
    assert rules.matched_resource(hook, request_, lambda: ["v1", "v2"]) == widgets_v1
    assert rules.matched_resource({**hook, "matchPolicy": "Exact"}, request_,
                                  lambda: ["v1", "v2"]) is None
    # an exact match wins over an equivalent one
    both = {"rules": [rule(versions=["v1", "v2"], resources=["widgets"])]}
    assert rules.matched_resource(both, request_, lambda: ["v1", "v2"]) == widgets_v2


def test_admission_configurations_are_exempt():
    for resource in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                     "validatingadmissionpolicies", "validatingadmissionpolicybindings"):
        assert rules.exempt(rules.GVR("admissionregistration.k8s.io", "v1", resource))
    assert not rules.exempt(PODS)
    assert not rules.exempt(rules.GVR("example.com", "v1", "mutatingwebhookconfigurations"))


def test_namespace_selector_needs_labels_only_when_it_can_exclude():
    some = selector_from_label_selector({"matchLabels": {"a": "b"}})
    everything = selector_from_label_selector({})
    assert rules.needs_namespace_labels(some, req())
    assert not rules.needs_namespace_labels(everything, req())
    assert not rules.needs_namespace_labels(some, req(resource=NODES, namespace=""))
    assert rules.needs_namespace_labels(some, req(resource=NAMESPACES, namespace="n"))
    # a namespace being created or updated is judged by the labels it is given
    ns = {"metadata": {"name": "n", "labels": {"a": "b"}}}
    assert rules.namespace_labels_from_request(req(resource=NAMESPACES, namespace="n"), ns) \
        == {"a": "b"}
    assert rules.namespace_labels_from_request(
        req("DELETE", resource=NAMESPACES, namespace="n"), None) is None
    assert rules.namespace_labels_from_request(req(), {"metadata": {}}) is None


def test_object_selector_new_or_old_labels():
    sel = selector_from_label_selector({"matchLabels": {"app": "web"}})
    web = {"metadata": {"labels": {"app": "web"}}}
    db = {"metadata": {"labels": {"app": "db"}}}
    assert rules.object_selector_matches(sel, web, None)
    assert rules.object_selector_matches(sel, db, web)
    assert not rules.object_selector_matches(sel, db, None)
    assert not rules.object_selector_matches(sel, None, None)
    assert rules.object_selector_matches(selector_from_label_selector({}), None, None)


def _conds(*pairs):
    return [Condition(name, expr, cel.compile(expr, {"object", "oldObject", "request"}))
            for name, expr in pairs]


def test_match_conditions_false_wins_over_errors():
    activation = {"object": {"metadata": {"name": "x"}}, "oldObject": None, "request": {}}
    assert conditions.evaluate(_conds(("a", "object.metadata.name == 'x'")), activation) \
        == (True, "")
    assert conditions.evaluate(_conds(("a", "object.metadata.name == 'y'")), activation) \
        == (False, "")
    failing = ("b", "object.spec.missing == 1")
    matches, error = conditions.evaluate(_conds(failing), activation)
    assert not matches
    assert error.startswith("expression 'object.spec.missing == 1' resulted in error: ")
    assert conditions.evaluate(_conds(failing, ("a", "false")), activation) == (False, "")
    matches, error = conditions.evaluate(_conds(("n", "1")), activation)
    assert not matches and error == "expression '1' resulted in error: expected a bool, got int"
    matches, error = conditions.evaluate(_conds(failing, ("n", "1")), activation)
    assert error.startswith("[expression 'object.spec.missing == 1' resulted in error: ")


def _review(uid="u1", **response):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, **response}}


def test_verify_response_checks_uid_kind_and_patch_pairs():
    ok = review.verify_response("w.example.com", "v1", "u1",
                                _review(allowed=True, warnings=["w"]), mutating=False)
    assert ok.allowed and ok.warnings == ("w",)
    with pytest.raises(review.CallingWebhookError) as info:
        review.verify_response("w.example.com", "v1", "u1", _review("u2", allowed=True), False)
    assert str(info.value) == ('failed calling webhook "w.example.com": received invalid webhook '
                               'response: expected response.uid="u1", got "u2"')
    with pytest.raises(review.CallingWebhookError, match="webhook response was absent"):
        review.verify_response("w", "v1", "u1", {"kind": "AdmissionReview"}, False)
    wrong_kind = {**_review(allowed=True), "kind": "Other"}
    with pytest.raises(review.CallingWebhookError, match="expected webhook response of "
                                                         "admission.k8s.io/v1, Kind=Admission"):
        review.verify_response("w", "v1", "u1", wrong_kind, False)
    patch = base64.b64encode(orjson.dumps([{"op": "add", "path": "/a", "value": 1}])).decode()
    with pytest.raises(review.CallingWebhookError, match="response.patch but not "
                                                         "response.patchType"):
        review.verify_response("w", "v1", "u1", _review(allowed=True, patch=patch), True)
    with pytest.raises(review.CallingWebhookError, match="validating webhook may not return "
                                                         "response.patch"):
        review.verify_response("w", "v1", "u1", _review(allowed=True, patch=patch), False)
    good = review.verify_response("w", "v1", "u1", _review(allowed=True, patch=patch,
                                                           patchType="JSONPatch"), True)
    assert review.decode_patch("w", good.patch) == [{"op": "add", "path": "/a", "value": 1}]
    # the patch type is judged only once the answer allows (upstream's dispatcher)
    merge = review.verify_response("w", "v1", "u1", _review(allowed=False, patch=patch,
                                                            patchType="Merge"), True)
    assert merge.patch_type == "Merge" and not merge.allowed
    # v1beta1 did not check uid or kind, and a patch is a JSON patch
    old = review.verify_response("w", "v1beta1", "u1",
                                 {"response": {"allowed": True, "patch": patch}}, True)
    assert old.patch_type == "JSONPatch" and old.allowed
    with pytest.raises(review.CallingWebhookError, match="received undecodable patch"):
        review.decode_patch("w", "not base64!")


def test_denied_is_upstreams_to_status_err():
    assert review.denied("w.example.com", {"code": 403, "message": "no"}).status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'admission webhook "w.example.com" denied the request: no',
        "code": 403}
    assert review.denied("w", {"reason": "NotAllowed"}).message == \
        'admission webhook "w" denied the request: NotAllowed'
    assert review.denied("w", None).message == \
        'admission webhook "w" denied the request without explanation'
    assert review.denied("w", {"code": 200}).code == 400


def test_parse_configuration_keeps_order_and_compiles_once():
    hooks = parse_configuration({"metadata": {"name": "c"}, "webhooks": [
        {"name": "a.example.com", "clientConfig": {"url": "https://a.example.com"},
         "matchConditions": [{"name": "x", "expression": "true"}]},
        {"name": "b.example.com", "clientConfig": {"url": "https://b.example.com"},
         "objectSelector": {"matchLabels": {"k": "v"}}}]})
    assert [h.name for h in hooks] == ["a.example.com", "b.example.com"]
    assert [h.uid for h in hooks] == [("c", 0), ("c", 1)]
    assert hooks[0].conditions[0].program is not None
    assert hooks[1].object_selector.matches({"k": "v"})
    assert hooks[0].client.url == "https://a.example.com"
