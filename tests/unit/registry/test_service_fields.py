"""service_fields against upstream's strategy tests (pkg/registry/core/service/strategy_test.go
TestDropTypeDependentFields, TestPatchAllocatedValues, TestNormalizeClusterIPs), table-driven."""

from __future__ import annotations

import copy

import pytest

from minikube_py.registry import service_fields as f

CLUSTER_IP = {"type": "ClusterIP", "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"],
              "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
              "ports": [{"name": "http", "port": 80}]}
NODE_PORT = {**CLUSTER_IP, "type": "NodePort", "externalTrafficPolicy": "Cluster",
             "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}
LOCAL_LB = {**NODE_PORT, "type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30999, "allocateLoadBalancerNodePorts": True,
            "loadBalancerClass": "example.com/lb"}


def _svc(spec: dict) -> dict:
    return {"spec": copy.deepcopy(spec),
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}


@pytest.mark.parametrize("old,change,gone,kept", [
    # to ExternalName: the unchanged IP fields go, externalTrafficPolicy and node ports too
    (NODE_PORT, {"type": "ExternalName", "externalName": "x.example"},
     ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "externalTrafficPolicy"],
     ["externalName"]),
    # a clusterIP the client changed is kept for validation to refuse
    (CLUSTER_IP, {"type": "ExternalName", "clusterIP": "10.0.0.9"},
     ["ipFamilies", "ipFamilyPolicy"], ["clusterIP", "clusterIPs"]),
    # an ipFamilyPolicy the client changed is kept
    (CLUSTER_IP, {"type": "ExternalName", "ipFamilyPolicy": "PreferDualStack"},
     ["clusterIP", "ipFamilies"], ["ipFamilyPolicy"]),
    # LoadBalancer -> ClusterIP: the LB-only fields go, the IP stays
    (LOCAL_LB, {"type": "ClusterIP"},
     ["healthCheckNodePort", "allocateLoadBalancerNodePorts", "loadBalancerClass",
      "externalTrafficPolicy"], ["clusterIP", "ipFamilies"]),
    # NodePort -> NodePort: nothing is dropped
    (NODE_PORT, {}, [], ["clusterIP", "externalTrafficPolicy"]),
])
def test_drop_type_dependent_fields(old: dict, change: dict, gone: list, kept: list) -> None:
    new = _svc({**old, **change})
    f.drop_type_dependent_fields(new, _svc(old))
    for field in gone:
        assert field not in new["spec"], field
    for field in kept:
        assert field in new["spec"], field


def test_node_ports_are_dropped_only_when_none_was_added() -> None:
    new = _svc({**NODE_PORT, "type": "ClusterIP"})
    f.drop_type_dependent_fields(new, _svc(NODE_PORT))
    assert "nodePort" not in new["spec"]["ports"][0]
    added = _svc({**NODE_PORT, "type": "ClusterIP",
                  "ports": [{"name": "http", "port": 80, "nodePort": 30081}]})
    f.drop_type_dependent_fields(added, _svc(NODE_PORT))
    assert added["spec"]["ports"][0]["nodePort"] == 30081  # validation refuses it


def test_load_balancer_status_is_cleared_for_other_types() -> None:
    new = _svc({**LOCAL_LB, "type": "ClusterIP"})
    f.drop_type_dependent_fields(new, _svc(LOCAL_LB))
    assert new["status"]["loadBalancer"] == {}
    lb = _svc(LOCAL_LB)
    f.drop_type_dependent_fields(lb, _svc(LOCAL_LB))
    assert lb["status"]["loadBalancer"]["ingress"]


def test_patch_allocated_values_matches_node_ports_by_name() -> None:
    new = copy.deepcopy({**NODE_PORT, "clusterIP": "", "clusterIPs": [],
                         "ports": [{"name": "other", "port": 81}, {"name": "http", "port": 8080}]})
    f.patch_allocated_values(new, NODE_PORT)
    assert new["clusterIP"] == "10.0.0.5" and new["clusterIPs"] == ["10.0.0.5"]
    assert "nodePort" not in new["ports"][0] and new["ports"][1]["nodePort"] == 30080
    external = {"type": "ExternalName"}
    f.patch_allocated_values(external, CLUSTER_IP)
    assert "clusterIP" not in external


@pytest.mark.parametrize("old,new,want", [
    # an old client omitted clusterIPs: kept
    ({"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]}, {"clusterIP": "10.0.0.5"},
     ["10.0.0.5"]),
    # clusterIP cleared, clusterIPs sent back unchanged: cleared too
    ({"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]},
     {"clusterIP": "", "clusterIPs": ["10.0.0.5"]}, None),
    # clusterIP changed, clusterIPs unchanged: they follow it
    ({"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]},
     {"clusterIP": "10.0.0.6", "clusterIPs": ["10.0.0.5"]}, ["10.0.0.6"]),
])
def test_normalize_cluster_ips(old: dict, new: dict, want: list | None) -> None:
    f.normalize_cluster_ips(new, old)
    assert new.get("clusterIPs") == want
