"""Endpoints subsets from a Service and its pods (upstream endpoints_controller_test and
pkg/api/endpoints util_test cases)."""

from __future__ import annotations

import pytest

from minikube_py.controllers.endpoints_util import (
    HEADLESS_LABEL,
    build_subsets,
    endpoints_labels,
    find_port,
    pod_endpoint_view,
    repack_subsets,
    should_pod_be_in_endpoints,
)


def pod(name: str, ip: str | None = "10.0.0.1", *, ready: bool = True, ports=None,
        phase: str = "Running", deleting: bool = False, node: str = "", **spec_extra) -> dict:
    md = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "7"}
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c", "ports": ports or []}], **spec_extra}
    if node:
        spec["nodeName"] = node
    status = {"phase": phase, "conditions": [{"type": "Ready",
                                              "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    return {"metadata": md, "spec": spec, "status": status}


def service(ports, **spec) -> dict:
    return {"metadata": {"name": "svc", "namespace": "ns", "labels": {"a": "b"}},
            "spec": {"selector": {"app": "x"}, "ports": ports, **spec}}


@pytest.mark.parametrize("target, container_ports, expected", [
    (8080, [], 8080),
    (None, [], 80),                                                   # defaults to port
    ("http", [{"name": "http", "containerPort": 9376}], 9376),
    ("http", [{"name": "http", "containerPort": 9376, "protocol": "UDP"}], None),  # protocol
    ("http", [{"name": "other", "containerPort": 1}], None),
    ("8080", [], None),                      # a string is a name, as upstream's IntOrString
])
def test_find_port(target, container_ports, expected):
    svc_port = {"port": 80, "protocol": "TCP"}
    if target is not None:
        svc_port["targetPort"] = target
    assert find_port(pod("p", ports=container_ports), svc_port) == expected


@pytest.mark.parametrize("p, expected", [
    (pod("p"), True),
    (pod("p", ip=None), False),
    (pod("p", deleting=True), False),
    (pod("p", phase="Succeeded"), False),
    (pod("p", phase="Failed"), False),
    (pod("p", ready=False), True),           # not ready still belongs (notReadyAddresses)
])
def test_should_pod_be_in_endpoints(p, expected):
    assert should_pod_be_in_endpoints(p) is expected


def test_ready_and_not_ready_pods_share_a_subset_per_port_set():
    svc = service([{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}])
    subsets = build_subsets(svc, [pod("b", "10.0.0.2", ready=False), pod("a", "10.0.0.1", node="n1"),
                                  pod("c", None)])
    assert subsets == [{
        "addresses": [{"ip": "10.0.0.1", "nodeName": "n1",
                       "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a",
                                     "uid": "uid-a", "resourceVersion": "7"}}],
        "notReadyAddresses": [{"ip": "10.0.0.2",
                               "targetRef": {"kind": "Pod", "namespace": "ns", "name": "b",
                                             "uid": "uid-b", "resourceVersion": "7"}}],
        "ports": [{"port": 8080, "protocol": "TCP", "name": "http"}]}]


def test_publish_not_ready_addresses_puts_everyone_in_addresses():
    svc = service([{"port": 80, "targetPort": 80}], publishNotReadyAddresses=True)
    subsets = build_subsets(svc, [pod("a", "10.0.0.1", ready=False)])
    assert [a["ip"] for a in subsets[0]["addresses"]] == ["10.0.0.1"]
    assert "notReadyAddresses" not in subsets[0]


def test_named_target_port_resolved_per_pod_and_unresolvable_pods_skipped():
    svc = service([{"name": "web", "port": 80, "targetPort": "web", "protocol": "TCP"}])
    pods = [pod("a", "10.0.0.1", ports=[{"name": "web", "containerPort": 8080}]),
            pod("b", "10.0.0.2", ports=[{"name": "web", "containerPort": 9090}]),
            pod("c", "10.0.0.3", ports=[{"name": "x", "containerPort": 1}]),
            pod("d", "10.0.0.4", ports=[{"name": "web", "containerPort": 8080}])]
    subsets = build_subsets(svc, pods)
    assert [([a["ip"] for a in s["addresses"]], [p["port"] for p in s["ports"]])
            for s in subsets] == [(["10.0.0.1", "10.0.0.4"], [8080]), (["10.0.0.2"], [9090])]


def test_headless_service_without_ports_lists_addresses_only():
    svc = service([], clusterIP="None")
    assert build_subsets(svc, [pod("a", "10.0.0.1", hostname="a", subdomain="svc")]) == [
        {"addresses": [{"ip": "10.0.0.1", "hostname": "a",
                        "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a",
                                      "uid": "uid-a", "resourceVersion": "7"}}]}]
    assert endpoints_labels(svc) == {"a": "b", HEADLESS_LABEL: ""}
    assert endpoints_labels(service([])) == {"a": "b"}


def addr(ip: str) -> dict:
    return {"ip": ip}


def test_repack_groups_addresses_by_identical_port_sets_sorted():
    p1 = {"name": "a", "port": 1, "protocol": "TCP"}
    p2 = {"name": "b", "port": 2, "protocol": "TCP"}
    subsets = [{"addresses": [addr("10.0.0.2")], "ports": [p2]},
               {"addresses": [addr("10.0.0.1")], "ports": [p1]},
               {"addresses": [addr("10.0.0.2")], "ports": [p1]},
               {"addresses": [addr("10.0.0.3")], "ports": [p2]}]
    assert repack_subsets(subsets) == [
        {"addresses": [addr("10.0.0.1"), addr("10.0.0.2")], "ports": [p1]},
        {"addresses": [addr("10.0.0.2"), addr("10.0.0.3")], "ports": [p2]}]
    # the same ports for the same addresses collapse into one subset
    assert repack_subsets([{"addresses": [addr("1.1.1.1")], "ports": [p1]},
                           {"addresses": [addr("1.1.1.1")], "ports": [p2]}]) == [
        {"addresses": [addr("1.1.1.1")], "ports": [p1, p2]}]


def test_repack_not_ready_trumps_ready_and_keeps_portless_addresses():
    p1 = {"port": 1, "protocol": "TCP"}
    out = repack_subsets([{"addresses": [addr("1.1.1.1")], "ports": [p1]},
                          {"notReadyAddresses": [addr("1.1.1.1")], "ports": [p1]}])
    assert out == [{"notReadyAddresses": [addr("1.1.1.1")], "ports": [p1]}]
    assert repack_subsets([{"addresses": [addr("2.2.2.2")]}]) == [{"addresses": [addr("2.2.2.2")]}]
    assert repack_subsets([]) == []


def test_repack_is_order_independent():
    p1 = {"port": 1, "protocol": "TCP"}
    subsets = [{"addresses": [addr(f"10.0.0.{i}")], "ports": [p1]} for i in range(5)]
    assert repack_subsets(subsets) == repack_subsets(list(reversed(subsets)))


def test_pod_endpoint_view_ignores_irrelevant_changes():
    a = pod("a", "10.0.0.1")
    annotated = {**a, "metadata": {**a["metadata"], "annotations": {"x": "y"},
                                   "resourceVersion": "8"}}
    assert pod_endpoint_view(a) == pod_endpoint_view(annotated)
    assert pod_endpoint_view(a) != pod_endpoint_view(pod("a", "10.0.0.1", ready=False))
    assert pod_endpoint_view(a) != pod_endpoint_view(pod("a", "10.0.0.9"))
