"""The EndpointSlice reconciler: given a Service, its pods and its current slices, which
slices to create, update and delete.

Kubernetes piece: staging/src/k8s.io/endpointslice/reconciler.go (Reconcile,
reconcileByAddressType, reconcileByPortMapping, getSliceToFill, newEndpointSlice,
setEndpointSliceLabels, podToEndpoint, getEndpointPorts, getEndpointAddresses) as the
endpointslice controller of kube-controller-manager 1.31 runs it. Its aims, in upstream's
order: keep each slice's endpoints that are still wanted where they are (minimal churn: an
unchanged endpoint never moves), refill slices being updated anyway, then put what is left in
the existing slice it fits best, and only then create new slices of at most
`max_endpoints_per_slice`; a Service with no endpoints keeps one empty "placeholder" slice.

Pure: no I/O, objects in, a Plan out (endpointslice_util.finalize turns creates into updates of
slices that would be deleted). Informer objects are never mutated: changed slices are copies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .conditions import is_pod_ready, is_pod_terminal
from .controller_utils import controller_ref
from .endpoints_util import find_port
from .endpointslice_util import (
    CONTROLLER_NAME,
    HEADLESS_LABEL,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    RESERVED_LABELS,
    ZONE_LABEL,
    Plan,
    endpoint_key,
    endpoints_equal_beyond_key,
    finalize,
    owned_by,
    port_map_key,
    slice_prefix,
    strip_hints,
)

Obj = dict[str, Any]
#: hints hook: (service, address type, slices to create, to update, unchanged) ->
#: (to create, to update) with hints set or removed (endpointslice_hints.py)
HintsFn = Callable[[Obj, str, list[Obj], list[Obj], list[Obj]], tuple[list[Obj], list[Obj]]]

DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100


class NodeLister(Protocol):
    """What the reconciler reads nodes through: a dict or an informer's indexer."""

    def get(self, name: str) -> Obj | None: ...


def address_types(service: Obj) -> list[str]:
    """getAddressTypesForService: the service's ipFamilies; without them the family of its
    cluster IP, or both for a headless service."""
    spec = service.get("spec") or {}
    families = [f for f in ("IPv4", "IPv6") if f in (spec.get("ipFamilies") or ())]
    if families:
        return families
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip and cluster_ip != "None":
        return ["IPv6" if ":" in cluster_ip else "IPv4"]
    return ["IPv4", "IPv6"]


def should_pod_be_in_slices(pod: Obj) -> bool:
    """ShouldPodBeInEndpoints(pod, includeTerminating=true): not finished, has an IP."""
    status = pod.get("status") or {}
    if is_pod_terminal(pod):
        return False
    return bool(status.get("podIP") or status.get("podIPs"))


def pod_addresses(pod: Obj, address_type: str) -> list[str]:
    """getEndpointAddresses: the pod's IPs of this family (podIPs; podIP when absent)."""
    status = pod.get("status") or {}
    ips = [p.get("ip") for p in status.get("podIPs") or () if isinstance(p, dict)] or \
        [status.get("podIP")]
    want_v6 = address_type == "IPv6"
    return [ip for ip in ips if isinstance(ip, str) and ip and (":" in ip) == want_v6]


def endpoint_ports(service: Obj, pod: Obj) -> list[Obj]:
    """getEndpointPorts: one port per service port the pod resolves (named targetPorts looked
    up in the pod); none for a headless service without ports. Name is always set (maybe "")."""
    spec = service.get("spec") or {}
    ports = spec.get("ports") or []
    out = []
    for service_port in ports:
        number = find_port(pod, service_port)
        if number is None:
            continue
        port: Obj = {"name": service_port.get("name") or "",
                     "protocol": service_port.get("protocol") or "TCP", "port": number}
        if service_port.get("appProtocol") is not None:
            port["appProtocol"] = service_port["appProtocol"]
        out.append(port)
    return out


def pod_to_endpoint(pod: Obj, node: Obj | None, service: Obj, address_type: str) -> Obj:
    """podToEndpoint: serving = the pod is Ready; terminating = it is being deleted; ready =
    serving and not terminating (always true with publishNotReadyAddresses)."""
    md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    serving = is_pod_ready(pod)
    terminating = md.get("deletionTimestamp") is not None
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or \
        (serving and not terminating)
    endpoint: Obj = {"addresses": pod_addresses(pod, address_type),
                     "conditions": {"ready": ready, "serving": serving,
                                    "terminating": terminating}}
    smd = service.get("metadata") or {}
    if spec.get("hostname") and spec.get("subdomain") == smd.get("name") and \
            md.get("namespace") == smd.get("namespace"):
        endpoint["hostname"] = spec["hostname"]
    endpoint["targetRef"] = {"kind": "Pod", "namespace": md.get("namespace", ""),
                             "name": md.get("name", ""), "uid": md.get("uid", "")}
    if spec.get("nodeName"):
        endpoint["nodeName"] = spec["nodeName"]
    zone = ((node or {}).get("metadata") or {}).get("labels", {}).get(ZONE_LABEL)
    if zone:
        endpoint["zone"] = zone
    return endpoint


def slice_labels(slice_: Obj | None, service: Obj,
                 controller: str = CONTROLLER_NAME) -> tuple[dict[str, str], bool]:
    """setEndpointSliceLabels: the service's labels (reserved keys skipped) plus the reserved
    ones; `changed` says whether the non-reserved labels differ from the slice's."""
    current = {k: v for k, v in (((slice_ or {}).get("metadata") or {}).get("labels") or {}
                                 ).items() if k not in RESERVED_LABELS}
    svc_md = service.get("metadata") or {}
    labels = {k: v for k, v in (svc_md.get("labels") or {}).items() if k not in RESERVED_LABELS}
    changed = labels != current
    cluster_ip = (service.get("spec") or {}).get("clusterIP") or ""
    if not cluster_ip or cluster_ip == "None":
        labels[HEADLESS_LABEL] = ""
    labels[LABEL_SERVICE_NAME] = svc_md.get("name", "")
    labels[LABEL_MANAGED_BY] = controller
    return labels, changed


def new_slice(service: Obj, ports: list[Obj], address_type: str) -> Obj:
    """newEndpointSlice: generateName `<service>-`, a controller reference to the Service."""
    md = service.get("metadata") or {}
    labels, _ = slice_labels(None, service)
    meta: Obj = {"generateName": slice_prefix(md.get("name", "")),
                 "namespace": md.get("namespace", ""), "labels": labels,
                 "ownerReferences": [controller_ref(service, "v1", "Service")]}
    out: Obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
                "addressType": address_type, "endpoints": []}
    if ports:
        out["ports"] = ports
    return out


def _with(slice_: Obj, **fields: Any) -> Obj:
    """A copy of `slice_` with top-level fields replaced (labels go into metadata)."""
    labels = fields.pop("labels", None)
    out = {**slice_, **fields}
    if labels is not None:
        out["metadata"] = {**slice_["metadata"], "labels": labels}
    return out


def reconcile(service: Obj, pods: Iterable[Obj], nodes: NodeLister,
              existing: list[Obj], *, max_endpoints_per_slice: int =
              DEFAULT_MAX_ENDPOINTS_PER_SLICE, hints: HintsFn | None = None) -> tuple[Plan, bool]:
    """Reconcile: a plan over every address type the service supports; slices of an address
    type it no longer supports are deleted. Returns (plan, skipped): `skipped` is true when a
    pod was left out because its node is unknown (upstream returns an error, so the service is
    synced again with backoff after this plan is written)."""
    supported = address_types(service)
    plan, skipped = Plan(), False
    by_type: dict[str, list[Obj]] = {}
    for slice_ in existing:
        if slice_.get("addressType") in supported:
            by_type.setdefault(slice_["addressType"], []).append(slice_)
        else:
            plan.delete.append(slice_)
    pod_list = sorted(pods, key=lambda p: (p.get("metadata") or {}).get("name", ""))
    for address_type in supported:
        typed, missing = _reconcile_address_type(service, pod_list, nodes,
                                                 by_type.get(address_type, []), address_type,
                                                 max_endpoints_per_slice, hints)
        plan.extend(typed)
        skipped = skipped or missing
    return plan, skipped


def _reconcile_address_type(service: Obj, pods: list[Obj], nodes: NodeLister,
                            existing: list[Obj], address_type: str, max_per_slice: int,
                            hints: HintsFn | None) -> tuple[Plan, bool]:
    plan = Plan()
    existing_by_ports: dict[tuple, list[Obj]] = {}
    for slice_ in existing:
        if owned_by(slice_, service, "Service"):
            existing_by_ports.setdefault(port_map_key(slice_.get("ports") or ()), []).append(
                slice_)
        else:
            plan.delete.append(slice_)
    desired: dict[tuple, dict[tuple, Obj]] = {}
    desired_ports: dict[tuple, list[Obj]] = {}
    publish_not_ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    skipped = False
    for pod in pods:
        if not should_pod_be_in_slices(pod):
            continue
        ports = endpoint_ports(service, pod)
        key = port_map_key(ports)
        endpoints = desired.setdefault(key, {})
        desired_ports.setdefault(key, ports)
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        node = nodes.get(node_name)
        if node is None and not publish_not_ready:
            skipped = True  # "skipping Pod for Service, Node not found"
            continue
        endpoint = pod_to_endpoint(pod, node, service, address_type)
        if endpoint["addresses"]:
            endpoints.setdefault(endpoint_key(endpoint), endpoint)
    plan.desired = [len(endpoints) for endpoints in desired.values()]
    for key, endpoints in desired.items():
        plan.extend(_reconcile_port_mapping(service, existing_by_ports.get(key, []), endpoints,
                                            desired_ports[key], address_type, max_per_slice))
    for key, slices in existing_by_ports.items():
        if key not in desired:
            plan.delete.extend(slices)
    if len(existing) == len(plan.delete) and not plan.create:
        placeholder = new_slice(service, [], address_type)
        if len(plan.delete) == 1 and _same_placeholder(plan.delete[0], placeholder):
            plan.delete = []
        else:
            plan.create.append(placeholder)
    unchanged = _unchanged(existing, plan)
    if hints is not None:
        plan.create, plan.update = hints(service, address_type, plan.create, plan.update,
                                         unchanged)
    return finalize(plan, service, "Service"), skipped


def _same_placeholder(current: Obj, placeholder: Obj) -> bool:
    """placeholderSliceCompare: namespace, labels and the non-metadata fields."""
    cmd, pmd = current.get("metadata") or {}, placeholder["metadata"]
    return (cmd.get("namespace") == pmd["namespace"] and
            (cmd.get("labels") or {}) == pmd["labels"] and
            current.get("addressType") == placeholder["addressType"] and
            not current.get("endpoints") and not current.get("ports"))


def _unchanged(existing: list[Obj], plan: Plan) -> list[Obj]:
    touched = {(s.get("metadata") or {}).get("name") for s in plan.update + plan.delete}
    return [s for s in existing if (s.get("metadata") or {}).get("name") not in touched]


def _reconcile_port_mapping(service: Obj, existing: list[Obj], desired: dict[tuple, Obj],
                            ports: list[Obj], address_type: str, max_per_slice: int) -> Plan:
    """reconcileByPortMapping, for the slices of one port set."""
    desired = dict(desired)  # popped from below
    by_name: dict[str, Obj] = {}
    unchanged: list[str] = []
    to_update: list[str] = []
    to_delete: list[str] = []
    removed = 0
    # 1. keep wanted endpoints where they are, in their desired version; drop the rest
    for slice_ in existing:
        name = slice_["metadata"]["name"]
        by_name[name] = slice_
        kept, updated = [], False
        for endpoint in slice_.get("endpoints") or ():
            want = desired.pop(endpoint_key(endpoint), None)
            if want is not None:
                kept.append(want)
                updated = updated or not endpoints_equal_beyond_key(want, endpoint)
        labels, labels_changed = slice_labels(slice_, service)
        old_count = len(slice_.get("endpoints") or ())
        if updated or old_count != len(kept):
            removed += max(0, old_count - len(kept))
            if not kept:
                to_delete.append(name)
            else:
                by_name[name] = _with(slice_, endpoints=kept, labels=labels)
                to_update.append(name)
        elif labels_changed:
            by_name[name] = _with(slice_, labels=labels)
            to_update.append(name)
        else:
            unchanged.append(name)
    added = len(desired)
    remaining = list(desired.values())
    # 2. fill the slices being updated anyway, fullest first
    if remaining and to_update:
        for name in sorted(to_update, key=lambda n: -len(by_name[n].get("endpoints") or ())):
            slice_ = by_name[name]
            room = max_per_slice - len(slice_["endpoints"])
            if room > 0 and remaining:
                by_name[name] = _with(slice_, endpoints=slice_["endpoints"] + remaining[:room])
                remaining = remaining[room:]
    # 3. the rest: into the unchanged slice it fits best, else into new slices
    creates: list[Obj] = []
    while remaining:
        target = None
        if len(remaining) < max_per_slice and unchanged:
            target = _slice_to_fill([by_name[n] for n in unchanged], len(remaining),
                                    max_per_slice)
        if target is None:
            target = new_slice(service, ports, address_type)
        room = max_per_slice - len(target.get("endpoints") or ())
        filled = _with(target, endpoints=list(target.get("endpoints") or ()) + remaining[:room])
        remaining = remaining[room:]
        name = (filled.get("metadata") or {}).get("name")
        if name:
            by_name[name] = filled
            to_update.append(name)
            unchanged.remove(name)
        else:
            creates.append(filled)
    return Plan(create=creates, update=[by_name[n] for n in sorted(to_update)],
                delete=[by_name[n] for n in sorted(to_delete)], added=added, removed=removed)


def _slice_to_fill(slices: list[Obj], count: int, max_per_slice: int) -> Obj | None:
    """getSliceToFill: the slice that `count` more endpoints fill most closely."""
    best, best_diff = None, max_per_slice
    for slice_ in slices:
        diff = max_per_slice - (count + len(slice_.get("endpoints") or ()))
        if 0 <= diff < best_diff:
            best, best_diff = slice_, diff
            if diff == 0:
                break
    return best


def remove_hints(service: Obj, address_type: str, create: list[Obj], update: list[Obj],
                 unchanged: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """RemoveHintsFromSlices: no slice keeps hints when topology hints are off; an unchanged
    slice that carries some is updated to drop them."""
    def clean(slices: list[Obj]) -> list[Obj]:
        return [_with(s, endpoints=strip_hints(s.get("endpoints") or ())) for s in slices]

    stale = [s for s in unchanged if any("hints" in e for e in s.get("endpoints") or ())]
    return clean(create), clean(update) + clean(stale)
