"""What a Service's Endpoints should contain, computed from the Service and its pods.

Kubernetes pieces: pkg/controller/endpoint's syncService body (which pods count, one address
and one port per pod and service port), pkg/api/pod FindPort (a named targetPort is looked up
in each pod, so pods may serve the same service on different container ports) and
pkg/api/endpoints RepackSubsets/SortSubsets (addresses grouped by identical port sets, in a
stable order, so an unchanged cluster gives byte-identical subsets and no write).

Pure functions: no I/O, table-tested without a server.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..api.labels import selector_from_set
from .conditions import is_pod_ready, is_pod_terminal

Obj = dict[str, Any]

#: label the controller puts on Endpoints of headless services (upstream v1.IsHeadlessService)
HEADLESS_LABEL = "service.kubernetes.io/headless"


def service_selects(service: Obj, labels: dict[str, str]) -> bool:
    """A pod with these labels backs the service: it has a selector and the labels match it
    (both endpoint controllers' `Services(ns).List` + selector test)."""
    selector = (service.get("spec") or {}).get("selector")
    return bool(selector) and selector_from_set(selector).matches(labels)


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """Upstream FindPort: a numeric targetPort is used as is; a named one is the containerPort
    of the pod's container port with that name and the service port's protocol. None when the
    pod has no such port (the pod is then left out for this service port)."""
    target = service_port.get("targetPort")
    if target is None or target == "":
        target = service_port.get("port")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or ():
        for port in container.get("ports") or ():
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return port.get("containerPort")
    return None


def should_pod_be_in_endpoints(pod: Obj) -> bool:
    """Upstream ShouldPodBeInEndpoints: it has an IP, is not terminating, has not finished."""
    status = pod.get("status") or {}
    if not status.get("podIP"):
        return False
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return not is_pod_terminal(pod)


def endpoint_address(pod: Obj, service: Obj) -> Obj:
    """One EndpointAddress for a pod: ip, nodeName, targetRef, and hostname when the pod
    names this service as its subdomain (upstream podToEndpointAddressForService)."""
    md = pod["metadata"]
    spec = pod.get("spec") or {}
    addr: Obj = {"ip": pod["status"]["podIP"]}
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        addr["hostname"] = spec["hostname"]
    if spec.get("nodeName"):
        addr["nodeName"] = spec["nodeName"]
    addr["targetRef"] = {"kind": "Pod", "namespace": md.get("namespace", ""),
                         "name": md["name"], "uid": md.get("uid", ""),
                         "resourceVersion": md.get("resourceVersion", "")}
    return addr


def endpoint_port(service_port: Obj, port: int) -> Obj:
    out: Obj = {"port": port, "protocol": service_port.get("protocol") or "TCP"}
    if service_port.get("name"):
        out["name"] = service_port["name"]
    if service_port.get("appProtocol"):
        out["appProtocol"] = service_port["appProtocol"]
    return out


def build_subsets(service: Obj, pods: Iterable[Obj]) -> list[Obj]:
    """The Endpoints subsets for `service` given the pods its selector matched (upstream
    syncService: one subset per pod and resolvable service port, then repacked). Ready pods
    go to `addresses`, the others to `notReadyAddresses` — unless the service publishes
    not-ready addresses."""
    spec = service.get("spec") or {}
    tolerate_unready = bool(spec.get("publishNotReadyAddresses"))
    ports = spec.get("ports") or []
    headless_without_ports = not ports and spec.get("clusterIP") == "None"
    subsets: list[Obj] = []
    for pod in pods:
        if not should_pod_be_in_endpoints(pod):
            continue
        addr = endpoint_address(pod, service)
        field = "addresses" if tolerate_unready or is_pod_ready(pod) else "notReadyAddresses"
        if headless_without_ports:
            subsets.append({field: [addr]})
            continue
        for service_port in ports:
            number = find_port(pod, service_port)
            if number is None:
                continue  # upstream logs "Failed to find port for service" and skips it
            subsets.append({field: [addr], "ports": [endpoint_port(service_port, number)]})
    return repack_subsets(subsets)


def _addr_key(addr: Obj) -> tuple[str, str]:
    return addr.get("ip", ""), (addr.get("targetRef") or {}).get("uid", "")


def _port_key(port: Obj) -> tuple:
    return (port.get("name", ""), port.get("port", 0), port.get("protocol", ""),
            port.get("appProtocol", ""))


def repack_subsets(subsets: Iterable[Obj]) -> list[Obj]:
    """Upstream RepackSubsets + SortSubsets: map each port to the addresses offering it
    (an address not ready anywhere for a port is not ready for it: not-ready trumps ready),
    then group ports by identical address sets, one subset per group, everything sorted.
    Subsets without ports keep their addresses under a sentinel port."""
    addresses: dict[tuple[str, str], Obj] = {}
    by_port: dict[tuple, tuple[Obj | None, dict[tuple[str, str], bool]]] = {}
    for subset in subsets:
        ports: list[Obj | None] = list(subset.get("ports") or []) or [None]
        for port in ports:
            pkey = _port_key(port) if port is not None else ("", -1, "", "")
            _, ready_map = by_port.setdefault(pkey, (port, {}))
            for field, ready in (("addresses", True), ("notReadyAddresses", False)):
                for addr in subset.get(field) or ():
                    akey = _addr_key(addr)
                    addresses.setdefault(akey, addr)
                    if ready_map.get(akey, True):  # not ready trumps ready
                        ready_map[akey] = ready
    groups: dict[tuple, tuple[dict[tuple[str, str], bool], list[Obj]]] = {}
    for port, ready_map in by_port.values():
        group_key = tuple(sorted(ready_map.items()))
        _, group_ports = groups.setdefault(group_key, (ready_map, []))
        if port is not None:
            group_ports.append(port)
    final = []
    for ready_map, ports in groups.values():
        subset: Obj = {}
        ready = [addresses[k] for k in sorted(ready_map) if ready_map[k]]
        not_ready = [addresses[k] for k in sorted(ready_map) if not ready_map[k]]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if ports:
            subset["ports"] = sorted(ports, key=_port_key)
        final.append(subset)
    final.sort(key=_subset_key)
    return final


def _subset_key(subset: Obj) -> tuple:
    addrs = [_addr_key(a) for a in subset.get("addresses") or ()]
    not_ready = [_addr_key(a) for a in subset.get("notReadyAddresses") or ()]
    return addrs, not_ready, [_port_key(p) for p in subset.get("ports") or ()]


def endpoints_labels(service: Obj) -> dict[str, str]:
    """The Endpoints carry the service's labels, plus the headless marker for clusterIP None
    (upstream syncService)."""
    labels = dict((service.get("metadata") or {}).get("labels") or {})
    if (service.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    return labels


def pod_endpoint_view(pod: Obj) -> tuple:
    """What about a pod can change its service's Endpoints (upstream podEndpointsChanged
    compares the address it would produce and its readiness): a pod update that leaves this
    and the labels unchanged need not requeue any service."""
    spec = pod.get("spec") or {}
    ports = tuple((c.get("name"), tuple((p.get("name"), p.get("containerPort"), p.get("protocol"))
                                        for p in c.get("ports") or ()))
                  for c in spec.get("containers") or ())
    return (should_pod_be_in_endpoints(pod), (pod.get("status") or {}).get("podIP"),
            is_pod_ready(pod), spec.get("nodeName"), spec.get("hostname"), spec.get("subdomain"),
            ports)
