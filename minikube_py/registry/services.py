"""Service-specific registry rules: cluster IP and NodePort allocation.

Kubernetes v1.0 piece: pkg/registry/service/rest.go (Create allocates `spec.portalIP` — later
clusterIP — from the service range and node ports from the node-port range, releasing them if
the create fails; Delete releases them; Update keeps the old clusterIP and node ports), with
1.31's type changes (pkg/registry/core/service/storage/alloc.go): an update to ExternalName
releases the clusterIP(s), one from ExternalName allocates them, one leaving NodePort or
LoadBalancer releases the node ports, each only once the update is written. Which fields an
update keeps or drops is service_fields.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..api import errors
from . import service_fields as fields

if TYPE_CHECKING:
    from .allocators import NodePortAllocator, ServiceIPAllocator
    from .generic import Registry

Obj = dict[str, Any]


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
        if fields.needs_cluster_ip(spec):
            taken_ip = await _allocate_cluster_ip(ips, service, spec)
        if fields.needs_node_port(spec):
            await _allocate_node_ports(ports, service, spec, set(), taken_ports)
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
                               owned: set[int], taken: list[int]) -> None:
    """Give every port a nodePort: the requested one (already `owned` by the service or
    taken now) or a new one; what is taken now is added to `taken` as it is taken."""
    for i, port in enumerate(spec.get("ports") or []):
        if not isinstance(port, dict):
            continue
        wanted = port.get("nodePort")
        if wanted in (None, 0):
            port["nodePort"] = await ports.allocate_next()
            taken.append(port["nodePort"])
            continue
        if wanted in owned:
            continue
        if not isinstance(wanted, int) or not ports.contains(wanted):
            raise _invalid(service, f"spec.ports[{i}].nodePort", wanted,
                           f"provided port is not in the valid range. The range of valid ports "
                           f"is {ports.low}-{ports.high}")
        if not await ports.allocate(wanted):
            raise _invalid(service, f"spec.ports[{i}].nodePort", wanted,
                           "provided port is already allocated")
        taken.append(wanted)


def _node_ports(service: Obj) -> set[int]:
    """The node ports a service holds (only node-port types hold any)."""
    spec = fields.spec_of(service)
    return fields.node_port_values(spec) if fields.needs_node_port(spec) else set()


class _UpdateAllocation:
    """What one update took from and gives back to the pools (upstream alloc.go's
    transaction): what it took is returned if the update is not written (invalid, a
    conflict, a dry run); what it gave up is released only once the update is written."""

    def __init__(self, ips: ServiceIPAllocator, ports: NodePortAllocator) -> None:
        self.ips, self.ports = ips, ports
        self.taken_ips: list[str] = []
        self.taken_ports: list[int] = []
        self.freed_ips: list[str] = []
        self.freed_ports: list[int] = []

    async def finish(self, committed: bool) -> None:
        ips = self.freed_ips if committed else self.taken_ips
        ports = self.freed_ports if committed else self.taken_ports
        for ip in ips:
            await self.ips.release(ip)
        for port in ports:
            await self.ports.release(port)


async def prepare_update(registry: Registry, new: Obj, old: Obj
                         ) -> Callable[[bool], Awaitable[None]]:
    """Upstream PrepareForUpdate + beginUpdate: carry over or drop the type-dependent fields,
    then allocate what the new type needs (a clusterIP when leaving ExternalName, node ports)
    and schedule the release of what it no longer holds. Returns the finish callback the
    registry awaits with whether the update was written."""
    spec = new.setdefault("spec", {})
    old_spec = fields.spec_of(old)
    new["status"] = old.get("status", {"loadBalancer": {}})
    fields.normalize_cluster_ips(spec, old_spec)
    fields.drop_type_dependent_fields(new, old)
    fields.patch_allocated_values(spec, old_spec)
    ips, ports = _allocators(registry)
    change = _UpdateAllocation(ips, ports)
    try:
        had_ip, needs_ip = fields.needs_cluster_ip(old_spec), fields.needs_cluster_ip(spec)
        if needs_ip and not had_ip:
            taken = await _allocate_cluster_ip(ips, new, spec)
            change.taken_ips += [taken] if taken else []
        elif had_ip and not needs_ip:
            held = old_spec.get("clusterIPs") or [old_spec.get("clusterIP")]
            change.freed_ips = [ip for ip in held if isinstance(ip, str) and ip not in ("", "None")]
        previous = _node_ports(old)
        if fields.needs_node_port(spec):
            await _allocate_node_ports(ports, new, spec, previous, change.taken_ports)
        change.freed_ports = sorted(previous - _node_ports(new))
    except BaseException:
        await change.finish(False)
        raise
    return change.finish


async def release(registry: Registry, service: Obj) -> None:
    ips, ports = _allocators(registry)
    ip = (service.get("spec") or {}).get("clusterIP")
    if ip and ip != "None":
        await ips.release(ip)
    for port in _node_ports(service):
        await ports.release(port)
