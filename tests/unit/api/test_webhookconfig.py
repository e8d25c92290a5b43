"""Webhook configurations: upstream's defaults and validation messages (pure)."""

from __future__ import annotations

import pytest

from minikube_py.api import webhookconfig as wc
from minikube_py.registry.webhookconfigurations import compile_error


def hook(**fields):
    base = {"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://hooks.example.com/a"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods"]}]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def messages(config, mutating=False):
    return [e.message() for e in wc.validate_configuration(config, mutating, compile_error)]


def test_defaults_as_upstream():
    config = {"webhooks": [hook(clientConfig={"service": {"namespace": "n", "name": "s"}})]}
    wc.default_configuration(config, mutating=True)
    [h] = config["webhooks"]
    assert (h["failurePolicy"], h["matchPolicy"], h["timeoutSeconds"],
            h["reinvocationPolicy"]) == ("Fail", "Equivalent", 10, "Never")
    assert h["namespaceSelector"] == {} and h["objectSelector"] == {}
    assert h["rules"][0]["scope"] == "*"
    assert h["clientConfig"]["service"]["port"] == 443
    validating = {"webhooks": [hook()]}
    wc.default_configuration(validating, mutating=False)
    assert "reinvocationPolicy" not in validating["webhooks"][0]
    assert "sideEffects" in validating["webhooks"][0]  # never defaulted in v1


def test_a_valid_configuration_has_no_errors():
    assert messages({"webhooks": [hook(), hook(name="b.example.com")]}) == []


@pytest.mark.parametrize(("fields", "expected"), [
    ({"name": "short.name"}, ('webhooks[0].name: Invalid value: "short.name": should be a domain '
                             "with at least three segments separated by dots")),
    ({"name": None}, "webhooks[0].name: Required value"),
    ({"sideEffects": None}, ("webhooks[0].sideEffects: Required value: must specify one of None, "
                            "NoneOnDryRun")),
    ({"sideEffects": "Unknown"}, ('webhooks[0].sideEffects: Unsupported value: "Unknown": '
                                 'supported values: "None", "NoneOnDryRun"')),
    ({"timeoutSeconds": 31}, ("webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value "
                             "must be between 1 and 30 seconds")),
    ({"admissionReviewVersions": None}, ("webhooks[0].admissionReviewVersions: Required value: "
                                        "must specify one of v1, v1beta1")),
    ({"admissionReviewVersions": ["v2"]}, ('webhooks[0].admissionReviewVersions: Invalid value: '
                                          '["v2"]: must include at least one of v1, v1beta1')),
    ({"failurePolicy": "Maybe"}, ('webhooks[0].failurePolicy: Unsupported value: "Maybe": '
                                 'supported values: "Fail", "Ignore"')),
    ({"matchPolicy": "Loose"}, ('webhooks[0].matchPolicy: Unsupported value: "Loose": '
                               'supported values: "Equivalent", "Exact"')),
    ({"clientConfig": {}}, ("webhooks[0].clientConfig: Required value: exactly one of url or "
                           "service is required")),
    ({"clientConfig": {"url": "https://a.example.com", "service": {"name": "s",
                                                                    "namespace": "n"}}},
     "webhooks[0].clientConfig: Required value: exactly one of url or service is required"),
    ({"clientConfig": {"url": "http://a.example.com/x?y=1"}},
     ("webhooks[0].clientConfig.url: Invalid value: \"http://a.example.com/x?y=1\": 'https' is "
     "the only allowed URL scheme")),
    ({"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "x"}}},
     'webhooks[0].clientConfig.service.path: Invalid value: "x": must start with a \'/\''),
    ({"rules": [{"operations": ["CREATE", "*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["pods"]}]},
     ('webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if \'*\' is present, '
     "must not specify other operations")),
    ({"rules": [{"operations": ["PATCH"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["pods"]}]},
     ('webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", '
     '"CONNECT", "CREATE", "DELETE", "UPDATE"')),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["*", "pods"]}]},
     ('webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: if \'*\' is present, must '
     "not specify other resources without subresources")),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["pods/*", "pods/status"]}]},
     ('webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if \'pods/*\' is '
     "present, must not specify pods/status")),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["*/status", "pods/status"]}]},
     ('webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if \'*/status\' is '
      "present, must not specify pods/status")),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["*/*", "pods/status"]}]},
     ('webhooks[0].rules[0].resources: Invalid value: ["*/*","pods/status"]: if \'*/*\' is '
      "present, must not specify other resources")),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["pods"], "scope": "Everywhere"}]},
     ('webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", '
     '"Cluster", "Namespaced"')),
    ({"matchConditions": [{"name": "c", "expression": "authorizer.allowed()"}]},
     ("webhooks[0].matchConditions[0].expression: Invalid value: \"authorizer.allowed()\": "
     "compilation failed: ")),
])
def test_validation_messages(fields, expected):
    found = messages({"webhooks": [hook(**fields)]})
    assert any(m.startswith(expected) for m in found), found


def test_names_unique_and_reinvocation_checked_for_mutating_only():
    found = messages({"webhooks": [hook(), hook()]})
    assert found == ['webhooks[1].name: Duplicate value: "a.example.com"']
    bad = {"webhooks": [hook(reinvocationPolicy="Always")]}
    assert messages(bad) == []
    assert messages(bad, mutating=True) == [
        ('webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: '
        '"IfNeeded", "Never"')]
