"""Service validation: ports, types, cluster IPs, traffic policies, updates and status."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.errors import FieldError
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)


def service(**spec: Any) -> dict[str, Any]:
    svc = {"metadata": {"name": "web", "namespace": "default", "resourceVersion": "3"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], **spec}}
    apply_defaults("Service", svc)
    return svc


def triples(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.type, e.field, e.detail) for e in errs]


@pytest.mark.parametrize("spec", [
    {},
    {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]},
    {"type": "LoadBalancer"},
    {"clusterIP": "None"},
    {"clusterIP": "10.96.0.10"},
    {"type": "ExternalName", "externalName": "example.com.", "ports": []},
    {"ports": [{"name": "http", "port": 80, "targetPort": "http"},
               {"name": "dns", "port": 53, "protocol": "UDP"}]},
    {"sessionAffinity": "ClientIP"},
    {"externalIPs": ["192.0.2.10"]},
])
def test_valid_services(spec: dict[str, Any]) -> None:
    assert validate_create("Service", service(**spec)) == []


def test_headless_service_needs_no_ports() -> None:
    svc = service(clusterIP="None")
    svc["spec"]["ports"] = []
    assert validate_create("Service", svc) == []


Case = tuple[str, dict[str, Any], list[tuple[str, str, str]]]
PORT_RANGE = "must be between 1 and 65535, inclusive"

CASES: list[Case] = [
    ("no ports", {"ports": []}, [("FieldValueRequired", "spec.ports", "")]),
    ("port zero", {"ports": [{"port": 0, "targetPort": 80}]},
     [("FieldValueInvalid", "spec.ports[0].port", PORT_RANGE)]),
    ("port too big", {"ports": [{"port": 70000, "targetPort": 80}]},
     [("FieldValueInvalid", "spec.ports[0].port", PORT_RANGE)]),
    ("names required with two ports", {"ports": [{"port": 80}, {"name": "b", "port": 81}]},
     [("FieldValueRequired", "spec.ports[0].name", "")]),
    ("duplicate names", {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]},
     [("FieldValueDuplicate", "spec.ports[1].name", "")]),
    ("duplicate port", {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
     [("FieldValueDuplicate", "spec.ports[1]", "")]),
    ("bad protocol", {"ports": [{"port": 80, "protocol": "ICMP"}]},
     [("FieldValueNotSupported", "spec.ports[0].protocol",
       'supported values: "SCTP", "TCP", "UDP"')]),
    ("numeric target port name", {"ports": [{"port": 80, "targetPort": "8080"}]},
     [("FieldValueInvalid", "spec.ports[0].targetPort", "must contain at least one letter (a-z)")]),
    ("bad type", {"type": "Internal"},
     [("FieldValueNotSupported", "spec.type",
       'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"')]),
    ("bad cluster IP", {"clusterIP": "10.96.0.300"},
     [("FieldValueInvalid", "spec.clusterIPs[0]",
       "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]),
    ("node port on ClusterIP", {"ports": [{"port": 80, "nodePort": 30080}]},
     [("FieldValueForbidden", "spec.ports[0].nodePort",
       "may not be used when `type` is 'ClusterIP'")]),
    ("headless NodePort", {"type": "NodePort", "clusterIP": "None"},
     [("FieldValueInvalid", "spec.clusterIPs[0]",
       "may not be set to 'None' for NodePort services")]),
    ("external name missing", {"type": "ExternalName"},
     [("FieldValueRequired", "spec.externalName", "")]),
    ("bad affinity", {"sessionAffinity": "Sticky"},
     [("FieldValueNotSupported", "spec.sessionAffinity", 'supported values: "ClientIP", "None"')]),
    ("loopback external IP", {"externalIPs": ["127.0.0.1"]},
     [("FieldValueInvalid", "spec.externalIPs[0]",
       "may not be in the loopback range (127.0.0.0/8, ::1/128)")]),
    ("bad selector", {"selector": {"app": "a b"}},
     [("FieldValueInvalid", "spec.selector",
       "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
       "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
       "'my_value',  or '12345', regex used for validation is "
       "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
    ("external policy on ClusterIP", {"externalTrafficPolicy": "Local"},
     [("FieldValueInvalid", "spec.externalTrafficPolicy",
       "may only be set for externally-accessible services")]),
    ("source ranges on ClusterIP", {"loadBalancerSourceRanges": ["10.0.0.0/8"]},
     [("FieldValueForbidden", "spec.LoadBalancerSourceRanges",
       "may only be used when `type` is 'LoadBalancer'")]),
]


@pytest.mark.parametrize(("spec", "expected"), [(s, e) for _, s, e in CASES],
                         ids=[name for name, _, _ in CASES])
def test_invalid_services(spec: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert triples(validate_create("Service", service(**spec))) == expected


def test_service_name_is_a_dns1035_label() -> None:
    svc = service()
    svc["metadata"]["name"] = "1web"
    assert [e.field for e in validate_create("Service", svc)] == ["metadata.name"]


def test_undefaulted_service_reports_required_fields() -> None:
    errs = validate_create("Service", {"metadata": {"name": "a", "namespace": "default"},
                                       "spec": {"ports": [{"port": 80}]}})
    assert [e.message() for e in errs] == [
        "spec.ports[0].protocol: Required value",
        "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.sessionAffinity: Required value",
        "spec.type: Required value",
    ]


# ---------------------------------------------------------------------------------------------
# Updates


def test_cluster_ip_is_immutable() -> None:
    old = service(clusterIP="10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"] = "10.96.0.11"
    new["spec"]["clusterIPs"] = ["10.96.0.11"]
    assert [e.message() for e in validate_update("Service", new, old)] == [
        'spec.clusterIP: Invalid value: "10.96.0.11": field is immutable']


def test_other_fields_may_change() -> None:
    old = service(clusterIP="10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"]["ports"] = [{"port": 8080, "protocol": "TCP", "targetPort": 8080}]
    new["spec"]["selector"] = {"app": "other"}
    new["metadata"]["labels"] = {"a": "b"}
    assert validate_update("Service", new, old) == []


def test_cluster_ip_may_change_to_and_from_external_name() -> None:
    old = service(clusterIP="10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"] = {"type": "ExternalName", "externalName": "example.com", "ports": [],
                   "sessionAffinity": "None"}
    assert validate_update("Service", new, old) == []


def test_update_revalidates_the_service() -> None:
    old = service()
    new = copy.deepcopy(old)
    new["spec"]["type"] = "Internal"
    assert [e.field for e in validate_update("Service", new, old)] == ["spec.type"]


def test_status_update() -> None:
    old = service(type="LoadBalancer")
    new = copy.deepcopy(old)
    new["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "VIP"}]}}
    assert validate_status_update("Service", new, old) == []
    new["status"]["loadBalancer"]["ingress"][0] = {"ip": "bad", "ipMode": "VIP"}
    assert [e.field for e in validate_status_update("Service", new, old)] == [
        "status.loadBalancer.ingress[0].ip"]
    cluster_ip = service()
    cluster_ip_new = copy.deepcopy(cluster_ip)
    cluster_ip_new["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
    assert [e.message() for e in validate_status_update("Service", cluster_ip_new, cluster_ip)] \
        == ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is "
            "'LoadBalancer'"]
