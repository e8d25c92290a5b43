"""The mirroring reconciler: the EndpointSlices a custom Endpoints object (of a Service without
a selector) is mirrored into.

Kubernetes piece: pkg/controller/endpointslicemirroring (reconciler.go: reconcile,
reconcileByPortMapping; reconciler_helpers.go: desiredCalc, newEndpointSlice, addressToEndpoint,
epPortsToEpsPorts). The Endpoints' subsets are repacked (endpoints_util.repack_subsets, as
upstream RepackSubsets), then each subset's ports and address family give one slice:
addresses become endpoints with only the `ready` condition (true in `addresses`, false in
`notReadyAddresses`), at most `max_per_subset` (1000) per subset; addresses that are not IPs
are skipped. A slice is rewritten whole when its endpoints, labels or annotations differ —
it carries the Endpoints' labels and annotations (bar last-change-trigger-time and
kubectl's last-applied-configuration) and a controller reference to the Endpoints.

Pure: no I/O; the result is a Plan (endpointslice_util).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.validation.common import parse_ip
from .controller_utils import controller_ref
from .endpoints_util import repack_subsets
from .endpointslice_util import (
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    MIRRORING_CONTROLLER_NAME,
    Plan,
    endpoint_key,
    endpoints_equal_beyond_key,
    finalize,
    port_map_key,
    slice_prefix,
)

Obj = dict[str, Any]

DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000
#: annotations never copied to the slices (upstream cloneAndRemoveKeys)
_NOT_MIRRORED = ("endpoints.kubernetes.io/last-change-trigger-time",
                 "kubectl.kubernetes.io/last-applied-configuration")


@dataclass
class MirrorResult:
    """The plan plus what upstream reports as events and metrics."""

    plan: Plan
    invalid: int = 0          # addresses that are not IPs (InvalidIPAddress event)
    skipped: int = 0          # addresses not mirrored, invalid ones included
    updated: int = 0          # endpoints changed in place
    by_key: dict[tuple, int] = field(default_factory=dict)


def address_to_endpoint(address: Obj, ready: bool) -> Obj:
    """addressToEndpoint."""
    endpoint: Obj = {"addresses": [address.get("ip", "")], "conditions": {"ready": ready}}
    if address.get("hostname"):
        endpoint["hostname"] = address["hostname"]
    if address.get("targetRef") is not None:
        endpoint["targetRef"] = address["targetRef"]
    if address.get("nodeName") is not None:
        endpoint["nodeName"] = address["nodeName"]
    return endpoint


def endpoint_ports(ports: list[Obj]) -> list[Obj]:
    """epPortsToEpsPorts."""
    out = []
    for port in ports:
        converted: Obj = {"name": port.get("name") or "", "protocol": port.get("protocol") or
                          "TCP", "port": port.get("port")}
        if port.get("appProtocol") is not None:
            converted["appProtocol"] = port["appProtocol"]
        out.append(converted)
    return out


def _mirrored_annotations(endpoints: Obj) -> dict[str, str]:
    return {k: v for k, v in ((endpoints.get("metadata") or {}).get("annotations") or {}).items()
            if k not in _NOT_MIRRORED}


def new_slice(endpoints: Obj, ports: list[Obj], address_type: str, name: str = "") -> Obj:
    """newEndpointSlice: the Endpoints' labels with the two reserved ones set, its annotations,
    a controller reference to it; `generateName: <name>-` unless reusing a slice's name."""
    md = endpoints.get("metadata") or {}
    labels = {**(md.get("labels") or {}), LABEL_SERVICE_NAME: md.get("name", ""),
              LABEL_MANAGED_BY: MIRRORING_CONTROLLER_NAME}
    meta: Obj = {"namespace": md.get("namespace", ""), "labels": labels,
                 "annotations": _mirrored_annotations(endpoints),
                 "ownerReferences": [controller_ref(endpoints, "v1", "Endpoints")]}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = slice_prefix(md.get("name", ""))
    out: Obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
                "addressType": address_type, "endpoints": []}
    if ports:
        out["ports"] = ports
    return out


def _address_type(ip: str) -> str | None:
    parsed = parse_ip(ip)
    if parsed is None:
        return None
    return "IPv6" if parsed.version == 6 else "IPv4"


def slice_key(slice_: Obj) -> tuple:
    """endpointSlicesByKey: (address type, port set)."""
    return (slice_.get("addressType"), port_map_key(slice_.get("ports") or ()))


def reconcile(endpoints: Obj, existing: list[Obj], *,
              max_per_subset: int = DEFAULT_MAX_ENDPOINTS_PER_SUBSET) -> MirrorResult:
    """reconciler.reconcile: desired endpoints per (address type, ports), one slice each."""
    desired: dict[tuple, dict[tuple, Obj]] = {}
    desired_ports: dict[tuple, list[Obj]] = {}
    result = MirrorResult(Plan())
    for subset in repack_subsets(endpoints.get("subsets") or ()):
        ports = endpoint_ports(subset.get("ports") or [])
        pkey = port_map_key(ports)
        total = len(subset.get("addresses") or ()) + len(subset.get("notReadyAddresses") or ())
        added = 0
        for field_name, ready in (("addresses", True), ("notReadyAddresses", False)):
            for address in subset.get(field_name) or ():
                if added >= max_per_subset:
                    break
                address_type = _address_type(address.get("ip") or "")
                if address_type is None:
                    result.invalid += 1
                    continue
                key = (address_type, pkey)
                desired_ports.setdefault(key, ports)
                endpoint = address_to_endpoint(address, ready)
                desired.setdefault(key, {}).setdefault(endpoint_key(endpoint), endpoint)
                added += 1
        result.skipped += total - added
    by_key: dict[tuple, list[Obj]] = {}
    for slice_ in existing:
        by_key.setdefault(slice_key(slice_), []).append(slice_)
    plan = result.plan
    for key, wanted in desired.items():
        _by_port_mapping(endpoints, sorted(by_key.get(key, []), key=_name), wanted,
                         desired_ports[key], key[0], max_per_subset, result)
        result.by_key[key] = len(wanted)
    for key, slices in by_key.items():
        if key not in desired:
            plan.delete.extend(slices)
    result.plan = finalize(plan, endpoints, "Endpoints")
    return result


def _name(slice_: Obj) -> str:
    return (slice_.get("metadata") or {}).get("name", "")


def _by_port_mapping(endpoints: Obj, existing: list[Obj], wanted: dict[tuple, Obj],
                     ports: list[Obj], address_type: str, max_per_subset: int,
                     result: MirrorResult) -> None:
    """reconcileByPortMapping: keep the first slice (rewritten if anything differs), delete
    the others."""
    plan = result.plan
    if not wanted:
        plan.delete.extend(existing)
        plan.removed += sum(len(s.get("endpoints") or ()) for s in existing)
        return
    if not existing:
        plan.added += len(wanted)
    else:
        plan.delete.extend(existing[1:])
        first = existing[0]
        added, updated, removed = _total_changes(first, wanted)
        plan.added += added
        plan.removed += removed
        result.updated += updated
        md = first.get("metadata") or {}
        labels = {k: v for k, v in (md.get("labels") or {}).items()
                  if k not in (LABEL_MANAGED_BY, LABEL_SERVICE_NAME)}
        if not (added or updated or removed) and \
                labels == ((endpoints.get("metadata") or {}).get("labels") or {}) and \
                (md.get("annotations") or {}) == _mirrored_annotations(endpoints) and \
                not _owner_replaced(endpoints, first):
            return
    name = _name(existing[0]) if existing else ""
    fresh = new_slice(endpoints, ports, address_type, name)
    fresh["endpoints"] = list(wanted.values())[:max_per_subset]
    if name:
        fresh["metadata"]["resourceVersion"] = existing[0]["metadata"].get("resourceVersion")
        plan.update.append(fresh)
    else:
        plan.create.append(fresh)


def _owner_replaced(endpoints: Obj, slice_: Obj) -> bool:
    """needRebuildExistingSlices: the slice names an earlier Endpoints of the same name."""
    md = endpoints.get("metadata") or {}
    return any(ref.get("kind") == "Endpoints" and ref.get("name") == md.get("name") and
               ref.get("uid") != md.get("uid")
               for ref in (slice_.get("metadata") or {}).get("ownerReferences") or ())


def _total_changes(slice_: Obj, wanted: dict[tuple, Obj]) -> tuple[int, int, int]:
    """totalChanges: endpoints added, updated and removed between a slice and the desired set."""
    remaining = dict(wanted)
    updated = removed = 0
    for endpoint in slice_.get("endpoints") or ():
        want = remaining.pop(endpoint_key(endpoint), None)
        if want is None:
            removed += 1
        elif not endpoints_equal_beyond_key(want, endpoint):
            updated += 1
    return len(remaining), updated, removed
