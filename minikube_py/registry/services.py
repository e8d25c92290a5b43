"""Service-specific registry rules: cluster IP and NodePort allocation.

Kubernetes v1.0 piece: pkg/registry/service/rest.go (Create allocates `spec.portalIP` — later
clusterIP — from the service range and node ports from the node-port range, releasing them if
the create fails; Delete releases them; Update keeps the old clusterIP and node ports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api import errors

if TYPE_CHECKING:
    from .allocators import NodePortAllocator, ServiceIPAllocator
    from .generic import Registry

Obj = dict[str, Any]
_NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def _allocators(registry: Registry) -> tuple[ServiceIPAllocator, NodePortAllocator]:
    return registry.extras["service_ips"], registry.extras["node_ports"]


def _invalid(service: Obj, field: str, value: Any, detail: str) -> errors.StatusError:
    name = (service.get("metadata") or {}).get("name", "")
    return errors.invalid_object("Service", name, [errors.invalid(field, value, detail)])


async def prepare_create(registry: Registry, service: Obj) -> None:
    """Allocate what the service needs; on any failure release what was taken."""
    service["status"] = {"loadBalancer": {}}
    spec = service.setdefault("spec", {})
    ips, ports = _allocators(registry)
    taken_ip: str | None = None
    taken_ports: list[int] = []
    try:
        if spec.get("type") != "ExternalName":
            taken_ip = await _allocate_cluster_ip(ips, service, spec)
        if spec.get("type") in _NODE_PORT_TYPES:
            taken_ports = await _allocate_node_ports(ports, service, spec, keep={})
    except BaseException:
        if taken_ip:
            await ips.release(taken_ip)
        for port in taken_ports:
            await ports.release(port)
        raise


async def _allocate_cluster_ip(ips: ServiceIPAllocator, service: Obj, spec: Obj) -> str | None:
    requested = spec.get("clusterIP") or ""
    if requested == "None":
        spec["clusterIPs"] = ["None"]
        return None
    if not requested:
        ip = await ips.allocate_next()
    else:
        if not ips.contains(requested):
            raise _invalid(service, "spec.clusterIPs", [requested],
                           f"failed to allocate IP {requested}: provided IP is not in the valid "
                           f"range. The range of valid IPs is {ips.network}")
        if not await ips.allocate(requested):
            raise _invalid(service, "spec.clusterIPs", [requested],
                           f"failed to allocate IP {requested}: provided IP is already allocated")
        ip = requested
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]
    return ip


async def _allocate_node_ports(ports: NodePortAllocator, service: Obj, spec: Obj,
                               keep: dict[int, int]) -> list[int]:
    """Give every port a nodePort: the requested one, the one it had (`keep`), or a new one."""
    taken: list[int] = []
    for i, port in enumerate(spec.get("ports") or []):
        if not isinstance(port, dict):
            continue
        wanted = port.get("nodePort")
        if wanted in (None, 0):
            previous = keep.get(port.get("port"))
            if previous:
                port["nodePort"] = previous
                continue
            port["nodePort"] = await ports.allocate_next()
            taken.append(port["nodePort"])
            continue
        if wanted in keep.values():
            continue
        if not isinstance(wanted, int) or not ports.contains(wanted):
            raise _invalid(service, f"spec.ports[{i}].nodePort", wanted,
                           f"provided port is not in the valid range. The range of valid ports "
                           f"is {ports.low}-{ports.high}")
        if not await ports.allocate(wanted):
            raise _invalid(service, f"spec.ports[{i}].nodePort", wanted,
                           "provided port is already allocated")
        taken.append(wanted)
    return taken


def _node_ports(service: Obj) -> dict[int, int]:
    spec = service.get("spec") or {}
    if spec.get("type") not in _NODE_PORT_TYPES:
        return {}
    return {
        p.get("port"): p["nodePort"]
        for p in spec.get("ports") or []
        if isinstance(p, dict) and p.get("nodePort")
    }


async def prepare_update(registry: Registry, new: Obj, old: Obj) -> None:
    """Keep the clusterIP and node ports a client omitted; allocate/release on type change."""
    spec = new.setdefault("spec", {})
    old_spec = old.get("spec") or {}
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = old_spec["clusterIPs"]
    new["status"] = old.get("status", {"loadBalancer": {}})
    ips, ports = _allocators(registry)
    previous = _node_ports(old)
    if spec.get("type") in _NODE_PORT_TYPES:
        await _allocate_node_ports(ports, new, spec, keep=previous)
    else:
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.pop("nodePort", None)
    still_used = set(_node_ports(new).values())
    for port in previous.values():
        if port not in still_used:
            await ports.release(port)


async def release(registry: Registry, service: Obj) -> None:
    ips, ports = _allocators(registry)
    ip = (service.get("spec") or {}).get("clusterIP")
    if ip and ip != "None":
        await ips.release(ip)
    for port in _node_ports(service).values():
        await ports.release(port)
