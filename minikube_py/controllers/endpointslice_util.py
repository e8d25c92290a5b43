"""What both EndpointSlice controllers share: labels, endpoint identity, port-set keys, slice
skeletons and the last step of a reconcile (turning creates into updates of doomed slices).

Kubernetes pieces: staging/src/k8s.io/endpointslice/util (EndpointSet and hashEndpoint,
EndpointsEqualBeyondHash, NewPortMapKey, ShouldPodBeInEndpoints, ShouldSetHostname,
getEndpointSlicePrefix) and the `finalize` step both reconcilers (endpointslice and
endpointslicemirroring) run before writing. Pure functions over JSON-shaped dicts: the
controllers' informer caches are shared, so nothing here mutates an object it is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..api.validation.common import name_is_dns_subdomain

Obj = dict[str, Any]

#: discovery.LabelServiceName / LabelManagedBy (k8s.io/api/discovery/v1 well_known_labels.go)
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
#: the two controllers' names, as they put them in LABEL_MANAGED_BY
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
MIRRORING_CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
#: corev1.IsHeadlessService
HEADLESS_LABEL = "service.kubernetes.io/headless"
#: corev1.LabelTopologyZone: the node label an endpoint's `zone` comes from
ZONE_LABEL = "topology.kubernetes.io/zone"
RESERVED_LABELS = frozenset({LABEL_SERVICE_NAME, LABEL_MANAGED_BY, HEADLESS_LABEL})


def endpoint_key(endpoint: Obj) -> tuple:
    """Upstream hashEndpoint: an endpoint's identity is its sorted addresses, hostname and the
    namespace/name of its target; two endpoints with the same key are one endpoint whose
    other fields (conditions, zone, node) may have changed."""
    ref = endpoint.get("targetRef") or {}
    return (tuple(sorted(endpoint.get("addresses") or ())), endpoint.get("hostname") or "",
            ref.get("namespace") or "", ref.get("name") or "")


def endpoints_equal_beyond_key(a: Obj, b: Obj) -> bool:
    """Upstream EndpointsEqualBeyondHash: node, zone, the three conditions and the target."""
    if a == b:  # the common case, compared in C: the endpoint is as it was
        return True
    ca, cb = a.get("conditions") or {}, b.get("conditions") or {}
    return (a.get("nodeName") == b.get("nodeName") and a.get("zone") == b.get("zone")
            and all(ca.get(c) == cb.get(c) for c in ("ready", "serving", "terminating"))
            and _ref(a) == _ref(b))


def _ref(endpoint: Obj) -> tuple | None:
    ref = endpoint.get("targetRef")
    if ref is None:
        return None
    return tuple(ref.get(k) or "" for k in ("kind", "namespace", "name", "uid"))


def port_map_key(ports: Iterable[Obj]) -> tuple:
    """Upstream NewPortMapKey: a set of endpoint ports, order-independent (upstream sorts by
    each port's hash; we sort by the values, which groups the same sets)."""
    return tuple(sorted((p.get("name") or "", p.get("protocol") or "", _num(p.get("port")),
                         p.get("appProtocol") or "") for p in ports))


def _num(value: Any) -> int:
    return value if isinstance(value, int) else -1


def slice_prefix(name: str) -> str:
    """getEndpointSlicePrefix: `<name>-` as generateName, or the bare name when the dash would
    make an invalid prefix."""
    prefix = f"{name}-"
    return name if name_is_dns_subdomain(prefix, True) else prefix


def owned_by(slice_: Obj, owner: Obj, kind: str) -> bool:
    """ownedBy: an owner reference to this very object (a core/v1 `kind` with its uid), not
    just one of the same name (a Service deleted and re-created is another owner)."""
    uid = (owner.get("metadata") or {}).get("uid")
    return any(ref.get("uid") == uid and ref.get("kind") == kind and
               ref.get("apiVersion") == "v1"
               for ref in (slice_.get("metadata") or {}).get("ownerReferences") or ())


def strip_hints(endpoints: Iterable[Obj]) -> list[Obj]:
    return [{k: v for k, v in ep.items() if k != "hints"} for ep in endpoints]


@dataclass
class Plan:
    """What a reconcile decided: slices to create (generateName set, no name), to update
    (complete objects, resourceVersion kept for the compare-and-swap) and to delete, plus the
    endpoint counts upstream's per-sync histograms observe and the desired endpoints per port
    set (its metrics cache)."""

    create: list[Obj] = field(default_factory=list)
    update: list[Obj] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    desired: list[int] = field(default_factory=list)

    def extend(self, other: Plan) -> None:
        self.create += other.create
        self.update += other.update
        self.delete += other.delete
        self.added += other.added
        self.removed += other.removed
        self.desired += other.desired

    @property
    def changes(self) -> int:
        return len(self.create) + len(self.update) + len(self.delete)


def finalize(plan: Plan, owner: Obj, kind: str) -> Plan:
    """Upstream finalize: while there are both slices to create and to delete, reuse a doomed
    slice (same addressType, owned by this owner) for a new one — one update instead of a
    delete and a create."""
    creates, updates, deletes = list(plan.create), list(plan.update), []
    for doomed in plan.delete:
        if creates and doomed.get("addressType") == creates[-1].get("addressType") and \
                owned_by(doomed, owner, kind):
            fresh = creates.pop()
            md = dict(fresh["metadata"])  # generateName kept, as upstream only sets Name
            dmd = doomed["metadata"]
            md.update(name=dmd["name"], resourceVersion=dmd.get("resourceVersion"),
                      uid=dmd.get("uid"))
            updates.append({**fresh, "metadata": md})
        else:
            deletes.append(doomed)
    return Plan(creates, updates, deletes, plan.added, plan.removed, plan.desired)


def drop_pending_deletion(slices: Iterable[Obj]) -> list[Obj]:
    """dropEndpointSlicesPendingDeletion: a slice being deleted is no longer counted."""
    return [s for s in slices if not (s.get("metadata") or {}).get("deletionTimestamp")]
