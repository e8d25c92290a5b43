"""Topology Aware Routing hints: with `service.kubernetes.io/topology-mode: Auto`, each ready
endpoint is hinted for a zone so that every zone gets a share of endpoints in proportion to its
allocatable CPU.

Kubernetes piece: staging/src/k8s.io/endpointslice/topologycache (TopologyCache.SetNodes,
AddHints, getAllocations, getGivingAndReceivingZones, redistributeHints, RemoveHintsFromSlices,
the event messages of event.go). Zones come from ready nodes' `topology.kubernetes.io/zone`
labels (control-plane nodes excluded); hints need at least two zones, every node with a zone
and allocatable CPU, and at least as many ready endpoints as zones. Each zone gets between
`ceil(desired / 1.2)` (the 20 % overload threshold) and that plus the slack; endpoints start
hinted for their own zone and surplus ones are handed to zones under their minimum. When hints
cannot be given they are removed and a `TopologyAwareHintsDisabled` Warning event says why on
the Service. Not built: the `trafficDistribution` field (PreferClose), which 1.31 serves as beta.
"""

from __future__ import annotations

import math
from typing import Any

from ..api.quantity import parse_quantity
from .conditions import get_condition
from .endpointslice_reconciler import remove_hints
from .endpointslice_util import ZONE_LABEL

Obj = dict[str, Any]

#: v1.AnnotationTopologyMode and its deprecated predecessor
TOPOLOGY_ANNOTATIONS = ("service.kubernetes.io/topology-mode",
                        "service.kubernetes.io/topology-aware-hints")
OVERLOAD_THRESHOLD = 0.2
_EXCLUDED_NODE_LABELS = ("node-role.kubernetes.io/control-plane",
                         "node-role.kubernetes.io/master")

NO_ZONE_SPECIFIED = "One or more endpoints do not have a zone specified"
NO_ALLOCATED_HINTS = "No hints allocated for zones"
HINTS_ENABLED = "Topology Aware Hints has been enabled"
HINTS_DISABLED = "Topology Aware Hints has been disabled"
INSUFFICIENT_NODE_INFO = ("Insufficient Node information: allocatable CPU or zone not specified "
                          "on one or more nodes")
ONE_ZONE_ONLY = "Nodes only ready in one zone"
INSUFFICIENT_ENDPOINTS = "Insufficient number of endpoints"


def hints_enabled(service: Obj) -> bool:
    """hintsEnabled: the topology-mode annotation (else the deprecated one) is Auto or auto."""
    annotations = (service.get("metadata") or {}).get("annotations") or {}
    for name in TOPOLOGY_ANNOTATIONS:
        if name in annotations:
            return annotations[name] in ("Auto", "auto")
    return False


def node_topology_view(node: Obj) -> tuple:
    """What of a node the topology cache reads: Ready, zone, allocatable CPU, exclusion."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    ready = get_condition(node, "Ready") or {}
    return (ready.get("status"), labels.get(ZONE_LABEL),
            ((node.get("status") or {}).get("allocatable") or {}).get("cpu"),
            any(label in labels for label in _EXCLUDED_NODE_LABELS))


def cpu_ratios_by_zone(nodes: list[Obj]) -> dict[str, float] | None:
    """SetNodes: each zone's share of the ready nodes' allocatable CPU; None when a ready node
    lacks a zone or CPU, or fewer than two zones have any."""
    cpu: dict[str, float] = {}
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        if any(label in labels for label in _EXCLUDED_NODE_LABELS):
            continue
        ready = get_condition(node, "Ready")
        if ready is None or ready.get("status") != "True":
            continue
        zone = labels.get(ZONE_LABEL)
        allocatable = ((node.get("status") or {}).get("allocatable") or {}).get("cpu")
        try:
            amount = float(parse_quantity(allocatable)) if allocatable is not None else 0.0
        except ValueError:
            amount = 0.0
        if not zone or amount <= 0:
            return None
        cpu[zone] = cpu.get(zone, 0.0) + amount
    total = sum(cpu.values())
    if total <= 0 or len(cpu) < 2:
        return None
    return {zone: amount / total for zone, amount in cpu.items()}


def allocations(ratios: dict[str, float] | None,
                endpoints: int) -> tuple[dict[str, tuple[int, float, int]] | None, str]:
    """getAllocations: zone -> (minimum, desired, maximum) endpoints, or None and why not."""
    if ratios is None:
        return None, INSUFFICIENT_NODE_INFO
    if len(ratios) < 2:
        return None, ONE_ZONE_ONLY
    too_few = f"{INSUFFICIENT_ENDPOINTS} ({endpoints} endpoints, {len(ratios)} zones)"
    if len(ratios) > endpoints:
        return None, too_few
    minimums: dict[str, tuple[int, float]] = {}
    remaining = endpoints
    for zone, ratio in ratios.items():
        desired = ratio * endpoints
        minimum = math.ceil(desired * (1 / (1 + OVERLOAD_THRESHOLD)))
        minimums[zone] = (minimum, max(desired, float(minimum)))
        remaining -= minimum
        if remaining < 0:
            return None, too_few
    slack = remaining
    return {z: (m, d, m + slack) for z, (m, d) in minimums.items()}, ""


def _ready(endpoint: Obj) -> bool:
    return (endpoint.get("conditions") or {}).get("ready") is not False


def _one_zone_hint(endpoint: Obj) -> str | None:
    zones = ((endpoint.get("hints") or {}).get("forZones") or [])
    return zones[0].get("name") if len(zones) == 1 else None


#: an event to record on the Service: (service, type, reason, message)
Event = tuple[Obj, str, str, str]


class TopologyHints:
    """The topology cache: zone CPU ratios (recomputed on node events) and which services'
    slices carry hints (so turning them off is announced once). `apply` may run on a worker
    thread (the reconciler is offloaded for big services), so it returns its events in the
    caller's list instead of recording them: the controller records them on the loop."""

    def __init__(self) -> None:
        self.ratios: dict[str, float] | None = None
        self.populated: dict[str, set[str]] = {}  # service key -> address types with hints

    def nodes_changed(self, nodes: list[Obj]) -> bool:
        ratios = cpu_ratios_by_zone(nodes)
        changed = ratios != self.ratios
        self.ratios = ratios
        return changed

    def forget(self, key: str) -> None:
        self.populated.pop(key, None)

    def apply(self, service: Obj, address_type: str, create: list[Obj], update: list[Obj],
              unchanged: list[Obj], *, events: list[Event]) -> tuple[list[Obj], list[Obj]]:
        """The reconciler's hints hook (bind `events` with functools.partial): add hints when
        the service asks for them, else make sure none are left."""
        md = service.get("metadata") or {}
        key = f"{md.get('namespace', '')}/{md.get('name', '')}"
        if not hints_enabled(service):
            if address_type in self.populated.get(key, set()):
                events.append(_event(service, "Warning", "TopologyAwareHintsDisabled",
                                     HINTS_DISABLED, address_type))
                self._drop(key, address_type)
            return remove_hints(service, address_type, create, update, unchanged)
        return self._add(service, key, address_type, create, update, unchanged, events)

    def _drop(self, key: str, address_type: str) -> None:
        types = self.populated.get(key, set())
        types.discard(address_type)
        if not types:
            self.populated.pop(key, None)

    def _disable(self, service: Obj, key: str, address_type: str, message: str,
                 create: list[Obj], update: list[Obj], unchanged: list[Obj],
                 events: list[Event]) -> tuple[list[Obj], list[Obj]]:
        events.append(_event(service, "Warning", "TopologyAwareHintsDisabled", message,
                             address_type))
        self._drop(key, address_type)
        return remove_hints(service, address_type, create, update, unchanged)

    def _add(self, service: Obj, key: str, address_type: str, create: list[Obj],
             update: list[Obj], unchanged: list[Obj],
             events: list[Event]) -> tuple[list[Obj], list[Obj]]:
        total = sum(1 for s in create + update + unchanged for e in s.get("endpoints") or ()
                    if _ready(e))
        allocs, why = allocations(self.ratios, total)
        if allocs is None:
            return self._disable(service, key, address_type, why, create, update, unchanged,
                                 events)
        # unchanged slices whose hints still fit are kept as they are (getAllocatedHintsByZone)
        allocated: dict[str, int] = {}
        update = list(update)
        for slice_ in unchanged:
            counts = _hints_by_zone(slice_, allocated, allocs)
            if counts is None:
                update.append(slice_)
            else:
                for zone, n in counts.items():
                    allocated[zone] = allocated.get(zone, 0) + n
        # step 1: every ready endpoint hinted for its own zone
        slices = [{**s, "endpoints": [dict(e) for e in s.get("endpoints") or ()]}
                  for s in create + update]
        for slice_ in slices:
            for endpoint in slice_["endpoints"]:
                endpoint.pop("hints", None)
                if not _ready(endpoint):
                    continue
                zone = endpoint.get("zone")
                if not zone:
                    return self._disable(service, key, address_type, NO_ZONE_SPECIFIED, create,
                                         update, unchanged, events)
                allocated[zone] = allocated.get(zone, 0) + 1
                endpoint["hints"] = {"forZones": [{"name": zone}]}
        # steps 2 and 3: zones over their maximum give hints to zones under their minimum
        giving = {z: allocated.get(z, 0) - a[2] for z, a in allocs.items()
                  if allocated.get(z, 0) > a[2]}
        receiving = {z: a[0] - allocated.get(z, 0) for z, a in allocs.items()
                     if allocated.get(z, 0) < a[0]}
        for slice_ in slices:
            for endpoint in slice_["endpoints"]:
                if not giving or not receiving:
                    break
                zone = endpoint.get("zone")
                if not _ready(endpoint) or giving.get(zone, 0) <= 0:
                    continue
                target = next(iter(receiving))
                endpoint["hints"] = {"forZones": [{"name": target}]}
                for table, name in ((giving, zone), (receiving, target)):
                    table[name] -= 1
                    if table[name] == 0:
                        del table[name]
                allocated[target] = allocated.get(target, 0) + 1
                allocated[zone] -= 1
        if not allocated:
            return self._disable(service, key, address_type, NO_ALLOCATED_HINTS, create, update,
                                 unchanged, events)
        if key not in self.populated:
            events.append(_event(service, "Normal", "TopologyAwareHintsEnabled", HINTS_ENABLED,
                                 address_type))
        self.populated.setdefault(key, set()).add(address_type)
        return slices[:len(create)], slices[len(create):]


def _event(service: Obj, kind: str, reason: str, message: str, address_type: str) -> Event:
    """FormatWithAddressType."""
    return service, kind, reason, f"{message}, addressType: {address_type}"


def _hints_by_zone(slice_: Obj, allocated: dict[str, int],
                   allocs: dict[str, tuple[int, float, int]]) -> dict[str, int] | None:
    """getHintsByZone: the slice's hints per zone, None when any ready endpoint lacks exactly
    one hint for a known zone or keeping them would exceed a zone's maximum."""
    counts: dict[str, int] = {}
    for endpoint in slice_.get("endpoints") or ():
        if not _ready(endpoint):
            continue
        zone = _one_zone_hint(endpoint)
        if zone is None or zone not in allocs:
            return None
        counts[zone] = counts.get(zone, 0) + 1
    for zone, n in counts.items():
        if allocated.get(zone, 0) + n > allocs[zone][2]:
            return None
    return counts
