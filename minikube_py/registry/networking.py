"""networking.k8s.io/v1: Ingresses, IngressClasses, NetworkPolicies.

Kubernetes pieces: pkg/registry/networking/ingress (namespaced, short name `ing`, a `status`
subresource an ingress controller writes `status.loadBalancer` through; PrepareForCreate clears
the status), pkg/registry/networking/ingressclass (cluster-scoped) and
pkg/registry/networking/networkpolicy (namespaced, short name `netpol`; 1.28 removed its status).
Keys follow upstream's etcd layout: `/registry/ingress/<ns>/<name>`, `/registry/ingressclasses/`,
`/registry/networkpolicies/`. ServiceCIDR and IPAddress are not served: 1.31 has them only at
v1beta1 behind a feature gate that is off by default.
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy, SubresourceSpec

GROUP = "networking.k8s.io"


async def _clear_status(registry: Any, obj: dict[str, Any]) -> None:
    obj["status"] = {"loadBalancer": {}}


INGRESSES = Strategy(
    group=GROUP, version="v1", resource="ingresses", kind="Ingress", namespaced=True,
    key_root="ingress", short_names=("ing",),
    subresources=(SubresourceSpec("status", ("get", "patch", "update")),), has_status=True,
    prepare_create=_clear_status,
)

INGRESS_CLASSES = Strategy(
    group=GROUP, version="v1", resource="ingressclasses", kind="IngressClass", namespaced=False,
    key_root="ingressclasses",
)

NETWORK_POLICIES = Strategy(
    group=GROUP, version="v1", resource="networkpolicies", kind="NetworkPolicy",
    namespaced=True, key_root="networkpolicies", short_names=("netpol",),
)

#: in discovery order (upstream lists ingressclasses, ingresses, networkpolicies)
STRATEGIES = (INGRESS_CLASSES, INGRESSES, NETWORK_POLICIES)
