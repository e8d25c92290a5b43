"""Secrets, ConfigMaps, ServiceAccounts, Events, LimitRanges, ResourceQuotas, Endpoints,
Bindings, Namespaces and Nodes."""

from __future__ import annotations

import base64
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
from minikube_py.api.validation.config import base64_error

KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
           "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
           "'[-._a-zA-Z0-9]+')")


def messages(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


def obj(kind: str, namespaced: bool = True, **body: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x", "resourceVersion": "2"}
    if namespaced:
        meta["namespace"] = "default"
    out = {"metadata": meta, **body}
    apply_defaults(kind, out)
    return out


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------------------------------
# Secret


def test_valid_secret() -> None:
    assert validate_create("Secret", obj("Secret", data={"user.name": b64("me")},
                                         stringData={"pass": "pw"})) == []


@pytest.mark.parametrize(("data", "expected"), [
    ({"bad/key": b64("x")}, [f'data[bad/key]: Invalid value: "bad/key": {KEY_MSG}']),
    ({"..": b64("x")}, ["data[..]: Invalid value: \"..\": must not be '..'"]),
    ({"k": "not base64!"},
     ['data[k]: Invalid value: "<secret contents redacted>": illegal base64 data at input '
      "byte 3"]),
    ({"k": 5}, ['data[k]: Invalid value: "number": must be a base64 string']),
])
def test_secret_data(data: dict[str, Any], expected: list[str]) -> None:
    assert messages(validate_create("Secret", obj("Secret", data=data))) == expected


def test_secret_size_limit() -> None:
    big = base64.b64encode(b"x" * (1024 * 1024 + 1)).decode()
    assert messages(validate_create("Secret", obj("Secret", data={"k": big}))) == [
        "data: Too long: may not be more than 1048576 bytes"]


@pytest.mark.parametrize(("kind", "data", "expected"), [
    ("kubernetes.io/tls", {"tls.crt": b64("c")}, ["data[tls.key]: Required value"]),
    ("kubernetes.io/tls", {"tls.crt": b64("c"), "tls.key": b64("k")}, []),
    ("kubernetes.io/basic-auth", {}, ["data[username]: Required value",
                                      "data[password]: Required value"]),
    ("kubernetes.io/basic-auth", {"password": b64("p")}, []),
    ("kubernetes.io/ssh-auth", {}, ["data[ssh-privatekey]: Required value"]),
    ("kubernetes.io/dockerconfigjson", {}, ["data[.dockerconfigjson]: Required value"]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": b64('{"auths":{}}')}, []),
    ("kubernetes.io/service-account-token", {},
     ["metadata.annotations[kubernetes.io/service-account.name]: Required value"]),
])
def test_secret_types(kind: str, data: dict[str, str], expected: list[str]) -> None:
    assert messages(validate_create("Secret", obj("Secret", type=kind, data=data))) == expected


def test_secret_updates() -> None:
    old = obj("Secret", data={"k": b64("v")})
    new = copy.deepcopy(old)
    new["type"] = "kubernetes.io/tls"
    new["data"].update({"tls.crt": b64("c"), "tls.key": b64("k")})
    assert messages(validate_update("Secret", new, old)) == [
        'type: Invalid value: "kubernetes.io/tls": field is immutable']
    frozen = obj("Secret", data={"k": b64("v")}, immutable=True)
    changed = copy.deepcopy(frozen)
    changed["data"]["k"] = b64("w")
    changed["immutable"] = False
    assert messages(validate_update("Secret", changed, frozen)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
    ]


@pytest.mark.parametrize(("text", "error"), [
    ("", None), ("eA==", None), ("eHk=", None), ("eHl6", None), ("eHl6\neHl6", None),
    ("eA", "illegal base64 data at input byte 0"),
    ("eHl6e", "illegal base64 data at input byte 4"),
    ("e===", "illegal base64 data at input byte 1"),
    ("eA==x", "illegal base64 data at input byte 4"),
    ("eA=x", "illegal base64 data at input byte 2"),
    ("e!==", "illegal base64 data at input byte 1"),
])
def test_base64_errors_follow_go(text: str, error: str | None) -> None:
    assert base64_error(text) == error


# ---------------------------------------------------------------------------------------------
# ConfigMap and ServiceAccount


def test_config_map() -> None:
    assert validate_create("ConfigMap", obj("ConfigMap", data={"a.conf": "x"},
                                            binaryData={"b": b64("y")})) == []
    errs = validate_create("ConfigMap", obj("ConfigMap", data={"a": "x", "bad key": "y"},
                                            binaryData={"a": b64("z")}))
    assert messages(errs) == [
        'data[a]: Invalid value: "a": duplicate of key present in binaryData',
        f'data[bad key]: Invalid value: "bad key": {KEY_MSG}',
    ]
    assert messages(validate_create("ConfigMap", obj("ConfigMap", data={"a": 1}))) == [
        'data[a]: Invalid value: "number": must be a string']
    big = validate_create("ConfigMap", obj("ConfigMap", data={"a": "x" * (1024 * 1024 + 1)}))
    assert messages(big) == [": Too long: may not be more than 1048576 bytes"]


def test_immutable_config_map() -> None:
    old = obj("ConfigMap", data={"a": "1"}, immutable=True)
    new = copy.deepcopy(old)
    new["data"]["a"] = "2"
    assert messages(validate_update("ConfigMap", new, old)) == [
        "data: Forbidden: field is immutable when `immutable` is set"]


def test_service_account() -> None:
    assert validate_create("ServiceAccount", obj("ServiceAccount")) == []
    sa = obj("ServiceAccount")
    sa["metadata"]["name"] = "Default"
    assert [e.field for e in validate_create("ServiceAccount", sa)] == ["metadata.name"]


# ---------------------------------------------------------------------------------------------
# Event


def event(**body: Any) -> dict[str, Any]:
    base = {"involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
            "reason": "Started", "message": "ok", "type": "Normal"}
    base.update(body)
    return obj("Event", **base)


def test_events() -> None:
    assert validate_create("Event", event()) == []
    assert messages(validate_create("Event", event(involvedObject={
        "kind": "Pod", "name": "web", "namespace": "other"}))) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace']
    assert validate_create("Event", event(involvedObject={"kind": "Node", "name": "n"})) == []


def test_event_names_only_need_to_fit_a_url() -> None:
    e = event()
    e["metadata"]["name"] = "web.17a2b3c4d5e6f7a8"
    assert validate_create("Event", e) == []
    e["metadata"]["name"] = "a/b"
    assert messages(validate_create("Event", e)) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_new_style_event_needs_reporting_fields() -> None:
    errs = validate_create("Event", event(eventTime="2024-01-01T00:00:00.000000Z", reason=""))
    assert [(e.type, e.field) for e in errs] == [
        # upstream names the internal field whatever the request's version (events.go)
        ("FieldValueRequired", "reportingController"),
        ("FieldValueInvalid", "reportingController"),
        ("FieldValueRequired", "reportingInstance"),
        ("FieldValueRequired", "action"),
        ("FieldValueRequired", "reason"),
    ]


def test_a_new_style_event_as_kopf_and_client_go_post_it_is_valid() -> None:
    """core/v1 names the reporting controller `reportingComponent` (issue 15: every event kopf
    posted was a 422 asking for `reportingController`)."""
    e = event(eventTime="2024-01-01T00:00:00.000000Z", reportingComponent="kopf",
              reportingInstance="dev", action="Logging", reason="Created")
    assert validate_create("Event", e) == []


# ---------------------------------------------------------------------------------------------
# LimitRange and ResourceQuota


def test_limit_range() -> None:
    good = obj("LimitRange", spec={"limits": [{"type": "Container", "max": {"cpu": "2"},
                                               "min": {"cpu": "100m"}}]})
    assert validate_create("LimitRange", good) == []
    bad = obj("LimitRange", spec={"limits": [
        {"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "2"}},
        {"type": "Container"},
        {"type": "Pod", "default": {"cpu": "1"}},
        {"type": "Volume"},
        {"type": "example.com/custom", "max": {"memory": "lots"}},
    ]})
    assert messages(validate_create("LimitRange", bad)) == [
        'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than '
        "default request value 1",
        'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default '
        "value 1",
        'spec.limits[1].type: Duplicate value: "Container"',
        "spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'",
        'spec.limits[3].type: Invalid value: "Volume": must be a standard limit type or fully '
        "qualified",
        "spec.limits[4].max[memory]: Invalid value: \"lots\": quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ]


def test_resource_quota() -> None:
    good = obj("ResourceQuota", spec={"hard": {"pods": "10", "requests.cpu": "4",
                                               "count/deployments.apps": "2"}})
    assert validate_create("ResourceQuota", good) == []
    bad = obj("ResourceQuota", spec={"hard": {"pods": "1.5", "widgets": "1", "cpu": "-1"},
                                     "scopes": ["BestEffort", "NotBestEffort"]})
    assert messages(validate_create("ResourceQuota", bad)) == [
        'spec.hard[pods]: Invalid value: "1500m": must be an integer',
        'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or '
        "fully qualified",
        'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
        'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: unsupported scope applied '
        "to resource",
        'spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes',
    ]


def test_resource_quota_scopes_are_immutable_and_status_needs_version() -> None:
    old = obj("ResourceQuota", spec={"hard": {"pods": "10"}, "scopes": ["NotTerminating"]})
    new = copy.deepcopy(old)
    new["spec"]["scopes"] = ["Terminating"]
    assert messages(validate_update("ResourceQuota", new, old)) == [
        'spec.scopes: Invalid value: ["Terminating"]: field is immutable']
    status = copy.deepcopy(old)
    status["status"] = {"hard": {"pods": "10"}, "used": {"pods": "-1"}}
    assert messages(validate_status_update("ResourceQuota", status, old)) == [
        'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0']


# ---------------------------------------------------------------------------------------------
# Endpoints and Binding


def test_endpoints() -> None:
    good = obj("Endpoints", subsets=[{"addresses": [{"ip": "10.1.0.4"}],
                                      "ports": [{"port": 80}]}])
    assert validate_create("Endpoints", good) == []
    bad = obj("Endpoints", subsets=[
        {"ports": [{"port": 80}]},
        {"addresses": [{"ip": "127.0.0.1"}, {"ip": "nope"}],
         "ports": [{"port": 0, "name": "a"}, {"port": 81}]},
    ])
    assert messages(validate_create("Endpoints", bad)) == [
        "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
        'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback '
        "range (127.0.0.0/8, ::1/128)",
        'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. '
        "10.9.8.7 or 2001:db8::ffff)",
        'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address',
        "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "subsets[1].ports[1].name: Required value",
    ]


@pytest.mark.parametrize(("target", "expected"), [
    ({"name": "node-1"}, []),
    ({"kind": "Node", "name": "node-1"}, []),
    ({"kind": "Pod", "name": "x"},
     ['target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"']),
    ({}, ["target.name: Required value"]),
])
def test_binding(target: dict[str, Any], expected: list[str]) -> None:
    binding = {"metadata": {"name": "web", "namespace": "default"}, "target": target}
    assert messages(validate_create("Binding", binding)) == expected


# ---------------------------------------------------------------------------------------------
# Namespace and Node


def test_namespace() -> None:
    ns = obj("Namespace", namespaced=False)
    assert validate_create("Namespace", ns) == []
    ns["spec"]["finalizers"] = ["custom"]
    assert messages(validate_create("Namespace", ns)) == [
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name '
        "nor is it fully qualified"]


def test_namespace_status_phase_follows_deletion() -> None:
    old = obj("Namespace", namespaced=False)
    new = copy.deepcopy(old)
    new["status"]["phase"] = "Terminating"
    assert messages(validate_status_update("Namespace", new, old)) == [
        "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if "
        "`deletionTimestamp` is empty"]


def test_node() -> None:
    node = obj("Node", namespaced=False, spec={"podCIDRs": ["10.1.0.0/24"]},
               status={"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}})
    assert validate_create("Node", node) == []
    node["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"},
                              {"key": "k", "effect": "NoSchedule"}, {"key": "x", "effect": "Soon"}]
    node["status"]["capacity"]["pods"] = "1.5"
    assert messages(validate_create("Node", node)) == [
        'metadata.taints[1]: Duplicate value: {"key":"k","effect":"NoSchedule"}: taints must be '
        "unique by key and effect pair",
        'metadata.taints[2].effect: Unsupported value: "Soon": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
        'status.capacity.pods: Invalid value: "1500m": must be an integer',
    ]


def test_node_update_keeps_pod_cidrs_and_provider() -> None:
    old = obj("Node", namespaced=False, spec={"podCIDRs": ["10.1.0.0/24"], "providerID": "p1"})
    new = copy.deepcopy(old)
    new["spec"]["unschedulable"] = True
    assert validate_update("Node", new, old) == []
    new["spec"]["podCIDRs"] = ["10.2.0.0/24"]
    new["spec"]["providerID"] = "p2"
    assert messages(validate_status_update("Node", new, old)) == [
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to '
        "valid",
    ]
