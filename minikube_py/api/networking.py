"""networking.k8s.io/v1 helpers that are pure data work: defaults, the default IngressClass,
and what an Ingress's Table row prints.

Kubernetes pieces: pkg/apis/networking/v1/defaults.go (SetDefaults_NetworkPolicyPort,
SetDefaults_NetworkPolicy, SetDefaults_IngressClass), the DefaultIngressClass admission plugin's
choice of class (plugin/pkg/admission/network/defaultingressclass: the annotated classes, the
newest winning when several are annotated, as 1.31 does) and pkg/printers' formatHosts /
formatPorts / loadBalancerStatusStringer for Ingress rows. Kept apart from admission and the
registry so the admission plugin, the ingress controller and tests share one definition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]

#: the annotation that marks an IngressClass as the cluster default
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def default_network_policy(policy: Obj) -> None:
    """Ports default to TCP; a policy without policyTypes is an Ingress policy, plus Egress
    when it has egress rules."""
    spec = policy.get("spec")
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        for rule in _list(spec.get(direction)):
            for port in _list(_dict(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if _list(spec.get("egress")):
            types.append("Egress")
        spec["policyTypes"] = types


def default_ingress_class(ingress_class: Obj) -> None:
    """parameters without a scope refer to a cluster-scoped object."""
    params = _dict(ingress_class.get("spec")).get("parameters")
    if isinstance(params, dict) and params.get("scope") is None:
        params["scope"] = "Cluster"


DEFAULTERS: dict[str, tuple[str, Callable[[Obj], None]]] = {
    "NetworkPolicy": ("networking.k8s.io", default_network_policy),
    "IngressClass": ("networking.k8s.io", default_ingress_class),
}


def is_default_class(ingress_class: Obj) -> bool:
    """The annotation's value is "true" (upstream compares the string exactly)."""
    annotations = _dict(_dict(ingress_class.get("metadata")).get("annotations"))
    return annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """The default IngressClass: among the annotated ones, the newest by creationTimestamp
    (ties: the name that sorts first, as upstream's sort by timestamp then name)."""
    defaults = [c for c in classes if is_default_class(c)]
    if not defaults:
        return None

    def newest_first(c: Obj) -> tuple:
        meta = _dict(c.get("metadata"))
        return (str(meta.get("creationTimestamp") or ""), _neg(str(meta.get("name") or "")))

    return max(defaults, key=newest_first)


def _neg(text: str) -> tuple:
    """A key that sorts strings in reverse (max picks the alphabetically first name)."""
    return tuple(-ord(ch) for ch in text) + (1,)


# ---------------------------------------------------------------------------------------------
# Table cells (upstream printIngress)


def ingress_hosts(ingress: Obj) -> str:
    """formatHosts: the rule hosts, `*` when none, at most 3 then `+ N more...`."""
    hosts = [str(_dict(rule).get("host")) for rule in _list(_dict(ingress.get("spec"))
             .get("rules")) if _dict(rule).get("host")]
    if not hosts:
        return "*"
    if len(hosts) > 3:
        return ",".join(hosts[:3]) + f" + {len(hosts) - 3} more..."
    return ",".join(hosts)


def ingress_ports(ingress: Obj) -> str:
    """formatPorts: `80`, or `80, 443` when the ingress has TLS."""
    return "80, 443" if _list(_dict(ingress.get("spec")).get("tls")) else "80"


def ingress_address(ingress: Obj) -> str:
    """ingressLoadBalancerStatusStringer: the IPs and hostnames of status.loadBalancer."""
    entries = _list(_dict(_dict(ingress.get("status")).get("loadBalancer")).get("ingress"))
    out = []
    for entry in entries:
        entry = _dict(entry)
        if entry.get("ip"):
            out.append(str(entry["ip"]))
        elif entry.get("hostname"):
            out.append(str(entry["hostname"]))
    return ",".join(out)
