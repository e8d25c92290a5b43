"""networking.k8s.io/v1 validation and defaults (api/validation/networking.py,
api/networking.py), table-driven against upstream's messages."""

from __future__ import annotations

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.networking import default_class
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)


def ingress(spec: dict, **meta: object) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "default", **meta}, "spec": spec}


def rule(host: str = "", path: str = "/", path_type: str | None = "Prefix",
         backend: dict | None = None) -> dict:
    item: dict = {"path": path,
                  "backend": backend or {"service": {"name": "web", "port": {"number": 80}}}}
    if path_type is not None:
        item["pathType"] = path_type
    out: dict = {"http": {"paths": [item]}}
    if host:
        out["host"] = host
    return out


def messages(kind: str, obj: dict) -> list[str]:
    return [e.message() for e in validate_create(kind, obj)]


def test_valid_ingress_with_tls_and_wildcard_host() -> None:
    spec = {"rules": [rule("foo.example.com"), rule("*.example.com", "/api", "Exact")],
            "tls": [{"hosts": ["*.example.com"], "secretName": "tls"}],
            "ingressClassName": "nginx"}
    assert messages("Ingress", ingress(spec)) == []


@pytest.mark.parametrize("spec,expected", [
    ({}, ("spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or "
         "`rules` must be specified")),
    ({"rules": [rule(path_type=None)]},
     "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"),
    ({"rules": [rule(path_type="Regex")]},
     ('spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: '
     '"Exact", "ImplementationSpecific", "Prefix"')),
    ({"rules": [rule(path="api")]},
     'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path'),
    ({"rules": [rule(path="/a//b")]},
     "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'"),
    ({"rules": [rule(path="/a/..")]},
     "spec.rules[0].http.paths[0].path: Invalid value: \"/a/..\": cannot end with '/..'"),
    ({"rules": [rule(host="10.0.0.1")]},
     'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address'),
    ({"rules": [rule(host="foo.*.com")]},
     ('spec.rules[0].host: Invalid value: "foo.*.com": a wildcard DNS-1123 subdomain must start '
     "with '*.', followed by a valid DNS subdomain, which must consist of lower case "
     "alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. "
     "'*.example.com', regex used for validation is "
     "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
    ({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}},
                         "resource": {"kind": "Bucket", "name": "b"}}},
     'spec.defaultBackend: Invalid value: "": cannot set both resource and service backends'),
    ({"defaultBackend": {}},
     'spec.defaultBackend: Invalid value: "": resource or service backend is required'),
    ({"defaultBackend": {"service": {"name": "web", "port": {}}}},
     "spec.defaultBackend: Required value: port name or number is required"),
    ({"defaultBackend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}},
     'spec.defaultBackend: Invalid value: "": cannot set both port name & port number'),
    ({"defaultBackend": {"service": {"name": "web", "port": {"number": 70000}}}},
     ("spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and "
     "65535, inclusive")),
    ({"defaultBackend": {"service": {"name": "1web", "port": {"number": 80}}}},
     ('spec.defaultBackend.service.name: Invalid value: "1web": a DNS-1035 label must consist '
     "of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
     "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
     "is '[a-z]([-a-z0-9]*[a-z0-9])?')")),
    ({"defaultBackend": {"resource": {"kind": "Bucket"}}},
     "spec.defaultBackend.resource.name: Required value"),
    ({"rules": [rule()], "tls": [{"secretName": "Bad_Name"}]},
     ('spec.tls[0].secretName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must '
     "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
])
def test_ingress_errors(spec: dict, expected: str) -> None:
    assert expected in messages("Ingress", ingress(spec))


def test_class_annotation_must_match_class_name() -> None:
    obj = ingress({"rules": [rule()], "ingressClassName": "a"},
                  annotations={"kubernetes.io/ingress.class": "b"})
    assert messages("Ingress", obj) == [
        ('annotations.kubernetes.io/ingress.class: Invalid value: "b": must match '
        "`ingressClassName` when both are specified")]


def test_update_keeps_a_stored_invalid_secret_name() -> None:
    old = ingress({"rules": [rule()], "tls": [{"secretName": "Bad_Name"}]},
                  resourceVersion="1", uid="u")
    assert validate_update("Ingress", old, old) == []
    fresh = ingress({"rules": [rule()], "tls": [{"secretName": "Bad_Name"}]})
    assert validate_create("Ingress", fresh)


def test_ingress_status_addresses() -> None:
    old = ingress({"rules": [rule()]}, resourceVersion="1", uid="u")
    new = dict(old, status={"loadBalancer": {"ingress": [{"ip": "nope"},
                                                         {"hostname": "10.1.1.1"}]}})
    got = [e.message() for e in validate_status_update("Ingress", new, old)]
    assert 'status.loadBalancer.ingress[0].ip: Invalid value: "nope": must be a valid IP ' \
           "address" in got
    assert 'status.loadBalancer.ingress[1].hostname: Invalid value: "10.1.1.1": must be a DNS ' \
           "name, not an IP address" in got


def ingress_class(spec: dict, **annotations: str) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "c", "annotations": annotations}, "spec": spec}


@pytest.mark.parametrize("spec,expected", [
    ({}, "spec.controller: Required value"),
    ({"controller": "nginx"},
     ('spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as '
     '"acme.io/foo")')),
    ({"controller": "a.io/x", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}},
     "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"),
    ({"controller": "a.io/x", "parameters": {"kind": "K", "name": "n", "namespace": "x"}},
     "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"),
])
def test_ingress_class_errors(spec: dict, expected: str) -> None:
    obj = ingress_class(spec)
    apply_defaults("IngressClass", obj, "networking.k8s.io")
    assert expected in messages("IngressClass", obj)


def test_ingress_class_controller_is_immutable() -> None:
    old = ingress_class({"controller": "a.io/x"})
    old["metadata"].update(resourceVersion="1", uid="u")
    new = ingress_class({"controller": "b.io/x"})
    new["metadata"].update(resourceVersion="1", uid="u")
    got = [e.message() for e in validate_update("IngressClass", new, old)]
    assert got == ['spec.controller: Invalid value: "b.io/x": field is immutable']


def test_newest_default_class_wins() -> None:
    def cls(name: str, created: str, default: bool = True) -> dict:
        annotations = {"ingressclass.kubernetes.io/is-default-class": "true"} if default else {}
        return {"metadata": {"name": name, "creationTimestamp": created,
                             "annotations": annotations}}
    assert default_class([cls("old", "2024-01-01T00:00:00Z"),
                          cls("new", "2024-06-01T00:00:00Z"),
                          cls("newest-not-default", "2025-01-01T00:00:00Z", False)])[
        "metadata"]["name"] == "new"
    assert default_class([cls("b", "2024-01-01T00:00:00Z"),
                          cls("a", "2024-01-01T00:00:00Z")])["metadata"]["name"] == "a"
    assert default_class([cls("x", "2024-01-01T00:00:00Z", False)]) is None


def policy(spec: dict) -> dict:
    obj = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    apply_defaults("NetworkPolicy", obj, "networking.k8s.io")
    return obj


def test_network_policy_defaults() -> None:
    obj = policy({"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]})
    assert obj["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert obj["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    assert policy({"podSelector": {}})["spec"]["policyTypes"] == ["Ingress"]


@pytest.mark.parametrize("spec,expected", [
    ({"ingress": [{"ports": [{"port": 80, "endPort": 70}]}]},
     ("spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to "
     "`port`")),
    ({"ingress": [{"ports": [{"port": "http", "endPort": 90}]}]},
     ("spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is "
     "non-numeric")),
    ({"ingress": [{"ports": [{"endPort": 90}]}]},
     ("spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is "
     "not specified")),
    ({"ingress": [{"ports": [{"port": 80, "protocol": "ICMP"}]}]},
     ('spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", '
     '"UDP", "SCTP"')),
    ({"ingress": [{"from": [{}]}]}, ("spec.ingress[0].from[0]: Required value: must specify a "
                                    "peer")),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/16"}, "podSelector": {}}]}]},
     "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}]}]},
     ('spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict '
     "subset of `cidr`")),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "nope"}}]}]},
     'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "nope": not a valid CIDR'),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.1"}}]}]},
     'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.1": not a valid CIDR'),
    ({"egress": [{"to": [{"ipBlock": {}}]}]},
     "spec.egress[0].to[0].ipBlock.cidr: Required value"),
    ({"policyTypes": ["Ingress", "Sideways"]},
     ('spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", '
     '"Egress"')),
])
def test_network_policy_errors(spec: dict, expected: str) -> None:
    assert expected in messages("NetworkPolicy", policy({"podSelector": {}, **spec}))


def test_network_policy_strict_subset_ok() -> None:
    spec = {"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16",
                                               "except": ["172.17.1.0/24"]}},
                                  {"namespaceSelector": {"matchLabels": {"project": "x"}}}],
                         "ports": [{"protocol": "TCP", "port": 6379}]}],
            "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                        "ports": [{"protocol": "TCP", "port": 5978, "endPort": 6000}]}]}
    assert messages("NetworkPolicy", policy(spec)) == []
