"""How a Service update's type-dependent fields are carried over or dropped: pure functions.

Kubernetes pieces: pkg/registry/core/service/strategy.go (NormalizeClusterIPs,
dropTypeDependentFields, patchAllocatedValues). A Service is a union discriminated by
`spec.type`: switching to ExternalName leaves no use for clusterIP(s), ipFamilies and
ipFamilyPolicy, switching away from NodePort/LoadBalancer none for node ports. Upstream wipes
such a field only when the client sent it back unchanged (it was allocated or defaulted for
them, as in `kubectl patch -p '{"spec":{"type":"ExternalName",...}}'`); a field the client
changed is left for validation to judge. The converse, patchAllocatedValues, fills in what a
client omitted but the server had allocated, so re-applying the same manifest succeeds.

The allocation and release of what these functions add or drop is services.py's job (upstream
alloc.go); nothing here does I/O.
"""

from __future__ import annotations

from typing import Any

from ..api.validation.service import externally_accessible, needs_health_check

Obj = dict[str, Any]

NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def spec_of(service: Obj) -> Obj:
    spec = service.get("spec")
    return spec if isinstance(spec, dict) else {}


def needs_cluster_ip(spec: Obj) -> bool:
    """Every type but ExternalName holds a clusterIP (even "None" counts as one)."""
    return spec.get("type") != "ExternalName"


def needs_node_port(spec: Obj) -> bool:
    return spec.get("type") in NODE_PORT_TYPES


def _ports(spec: Obj) -> list[Obj]:
    ports = spec.get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def node_port_values(spec: Obj) -> set[Any]:
    return {p["nodePort"] for p in _ports(spec) if p.get("nodePort")}


def normalize_cluster_ips(new_spec: Obj, old_spec: Obj) -> None:
    """Upstream NormalizeClusterIPs (update): keep clusterIPs an old client left out, clear
    them with a cleared clusterIP, follow a changed clusterIP when clusterIPs were not
    touched."""
    old_ip, new_ip = old_spec.get("clusterIP") or "", new_spec.get("clusterIP") or ""
    old_ips = old_spec.get("clusterIPs") or []
    if old_ips and not new_spec.get("clusterIPs") and old_ip == new_ip:
        new_spec["clusterIPs"] = old_ips
    if old_ip == new_ip:
        return
    same_plural = (new_spec.get("clusterIPs") or []) == old_ips
    if old_ip and not new_ip:
        if same_plural:
            new_spec.pop("clusterIPs", None)
    elif same_plural:
        new_spec["clusterIPs"] = [new_ip]


def drop_type_dependent_fields(new: Obj, old: Obj) -> None:
    """Upstream dropTypeDependentFields: wipe what the new type has no use for, when the
    client sent it back unchanged (what is wiped from a pool is released by the caller)."""
    spec, old_spec = spec_of(new), spec_of(old)
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
        if (spec.get("clusterIP") or "") == (old_spec.get("clusterIP") or "") and (
                spec.get("clusterIPs") or []) == (old_spec.get("clusterIPs") or []):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for field in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(field) == old_spec.get(field):
                spec.pop(field, None)
    if needs_node_port(old_spec) and not needs_node_port(spec) and (
            node_port_values(old_spec) >= node_port_values(spec)):
        for port in _ports(spec):
            port.pop("nodePort", None)
    if needs_health_check(old_spec) and not needs_health_check(spec) and (
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" != spec.get("type"):
        for field in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if spec.get(field) == old_spec.get(field):
                spec.pop(field, None)
    if externally_accessible(old_spec) and not externally_accessible(spec) and (
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy")):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer":
        status = new.get("status")
        if isinstance(status, dict):
            new["status"] = {**status, "loadBalancer": {}}


def patch_allocated_values(new_spec: Obj, old_spec: Obj) -> None:
    """Upstream patchAllocatedValues: what the server allocated and the client omitted stays
    (node ports matched by port name, as upstream)."""
    if needs_cluster_ip(old_spec) and needs_cluster_ip(new_spec):
        for field in ("clusterIP", "clusterIPs"):
            if not new_spec.get(field) and old_spec.get(field):
                new_spec[field] = old_spec[field]
    if needs_node_port(old_spec) and needs_node_port(new_spec):
        by_name = {p.get("name", ""): p.get("nodePort") for p in _ports(old_spec)}
        for port in _ports(new_spec):
            if not port.get("nodePort") and by_name.get(port.get("name", "")):
                port["nodePort"] = by_name[port.get("name", "")]
    if needs_health_check(old_spec) and needs_health_check(new_spec):
        if not new_spec.get("healthCheckNodePort") and old_spec.get("healthCheckNodePort"):
            new_spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
