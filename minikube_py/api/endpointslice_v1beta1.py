"""discovery.k8s.io/v1beta1 EndpointSlices as views of the stored discovery.k8s.io/v1 objects.

Kubernetes piece: pkg/apis/discovery/v1beta1/conversion.go. v1beta1 endpoints carry one
`topology` map; v1 split it into `zone` (the `topology.kubernetes.io/zone` entry), `nodeName`
(the `kubernetes.io/hostname` entry when it names the same node) and `deprecatedTopology`
(the rest). As upstream, a v1beta1 hostname entry that differs from nodeName stays in
deprecatedTopology, and reading back puts nodeName into `topology` only when the map has no
hostname of its own. The registry validates the converted (stored) form, as upstream validates
the internal type, so error paths name `deprecatedTopology` in both versions, as upstream's.

Served only when --runtime-config enables discovery.k8s.io/v1beta1 (removed upstream in 1.25):
v1.20's EndpointSlice and EndpointSliceMirroring controllers list, watch and write it.
Pure functions that never mutate their input.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
V1, V1BETA1 = "discovery.k8s.io/v1", "discovery.k8s.io/v1beta1"
ZONE_LABEL = "topology.kubernetes.io/zone"  # corev1.LabelTopologyZone
HOSTNAME_LABEL = "kubernetes.io/hostname"  # corev1.LabelHostname


def _endpoints(obj: Obj) -> list[Obj]:
    endpoints = obj.get("endpoints")
    return [e for e in endpoints if isinstance(e, dict)] if isinstance(endpoints, list) else []


def _endpoint_to_v1(endpoint: Obj) -> None:
    """Convert_v1beta1_Endpoint_To_discovery_Endpoint, in place on a copy."""
    topology = endpoint.pop("topology", None)
    if not isinstance(topology, dict):
        return
    rest = dict(topology)
    if ZONE_LABEL in rest:
        endpoint["zone"] = rest.pop(ZONE_LABEL)
    if HOSTNAME_LABEL in rest and endpoint.get("nodeName") is not None \
            and rest[HOSTNAME_LABEL] == endpoint["nodeName"]:
        del rest[HOSTNAME_LABEL]
    if rest:
        endpoint["deprecatedTopology"] = rest


def _endpoint_to_v1beta1(endpoint: Obj) -> None:
    """Convert_discovery_Endpoint_To_v1beta1_Endpoint, in place on a copy."""
    deprecated = endpoint.pop("deprecatedTopology", None)
    zone = endpoint.pop("zone", None)
    node = endpoint.get("nodeName")
    if deprecated is None and zone is None and node is None:
        return
    topology = dict(deprecated) if isinstance(deprecated, dict) else {}
    if zone is not None:
        topology[ZONE_LABEL] = zone
    if node is not None and not topology.get(HOSTNAME_LABEL):
        topology[HOSTNAME_LABEL] = node
    endpoint["topology"] = topology


def to_v1(obj: Obj) -> Obj:
    """The stored (v1) form of a v1beta1 EndpointSlice."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1
    for endpoint in _endpoints(out):
        _endpoint_to_v1(endpoint)
    return out


def from_v1(obj: Obj) -> Obj:
    """The v1beta1 view of a stored (v1) EndpointSlice."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1BETA1
    for endpoint in _endpoints(out):
        _endpoint_to_v1beta1(endpoint)
    return out
