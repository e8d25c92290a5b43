"""Services: ports, types, cluster IPs, traffic policies; what an update may change; status.

Kubernetes pieces: pkg/apis/core/validation (ValidateService, validateServicePort,
ValidateServiceClusterIPsRelatedFields, validateServiceExternalTrafficPolicy,
validateServiceInternalTrafficFieldsValue, ValidateServiceUpdate and its upgrade/downgrade
rules, ValidateServiceStatusUpdate / ValidateLoadBalancerStatus). An allocated `spec.clusterIP`
may not change: `spec.clusterIP: Invalid value: "...": field is immutable`, the message
Kubernetes has always given for it (later releases phrase the same rule on `clusterIPs`).
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    IMMUTABLE,
    name_is_dns1035_label,
    parse_ip,
    sub,
    validate_cidr,
    validate_dns_label,
    validate_dns_subdomain,
    validate_ip,
    validate_label_map,
    validate_non_special_ip,
    validate_port_and_protocol,
    validate_port_num_or_name,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_bool,
    get_dict,
    get_int,
    get_str,
    get_str_list,
    iter_dicts,
)

TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
AFFINITIES = ("ClientIP", "None")
TRAFFIC_POLICIES = ("Cluster", "Local")
IP_FAMILIES = ("IPv4", "IPv6")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
LB_IP_MODES = ("Proxy", "VIP")
MAX_AFFINITY_TIMEOUT = 86400
ONLY_LOAD_BALANCER = "may only be used when `type` is 'LoadBalancer'"


def _headless(spec: dict[str, Any]) -> bool:
    ips = spec.get("clusterIPs")
    return isinstance(ips, list) and len(ips) == 1 and ips[0] == "None"


def externally_accessible(spec: dict[str, Any]) -> bool:
    """Upstream service.ExternallyAccessible: node ports, load balancers, external IPs."""
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP"
                                                    and bool(spec.get("externalIPs")))


def validate_service(svc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(svc, True, name_is_dns1035_label, errs)
    spec = get_dict(svc, "spec", "", errs) or {}
    kind = get_str(spec, "type", "spec", errs)
    headless = _headless(spec)
    ports = list(iter_dicts(spec, "ports", "spec", errs))
    if spec.get("ports") in (None, []) and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        errs.append(invalid("spec.clusterIPs[0]", "None",
                            f"may not be set to 'None' for {kind} services"))
    elif kind == "ExternalName":
        _external_name(spec, errs)
    names: set[str] = set()
    for _, port, port_path in ports:
        _service_port(port, len(ports) > 1, names, port_path, errs)
    if spec.get("selector") is not None:
        validate_label_map(spec, "selector", "spec", errs)
    _session_affinity(spec, errs)
    _cluster_ips(spec, errs)
    for i, ip in enumerate(get_str_list(spec, "externalIPs", "spec", errs)):
        if validate_ip(ip, f"spec.externalIPs[{i}]", errs):
            validate_non_special_ip(ip, f"spec.externalIPs[{i}]", errs)
    if not kind:
        if spec.get("type") is None:
            errs.append(required("spec.type"))
    elif kind not in TYPES:
        errs.append(not_supported("spec.type", kind, TYPES))
    _node_ports(spec, kind, ports, errs)
    _load_balancer_fields(spec, kind, errs)
    _traffic_policies(spec, kind, errs)


def _external_name(spec: dict[str, Any], errs: Errs) -> None:
    if spec.get("clusterIPs"):
        errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    if spec.get("ipFamilies"):
        errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    cname = get_str(spec, "externalName", "spec", errs).removesuffix(".")
    if cname:
        validate_dns_subdomain(cname, "spec.externalName", errs)
    else:
        errs.append(required("spec.externalName"))


def _service_port(port: dict[str, Any], require_name: bool, names: set[str], path: str,
                  errs: Errs) -> None:
    name = get_str(port, "name", path, errs)
    if require_name and not name:
        errs.append(required(child(path, "name")))
    elif name:
        validate_dns_label(name, child(path, "name"), errs)
        if name in names:
            errs.append(duplicate(child(path, "name"), name))
        names.add(name)
    validate_port_and_protocol(port, path, errs)
    target = port.get("targetPort")
    validate_port_num_or_name(0 if target is None else target, child(path, "targetPort"), errs)
    app_protocol = port.get("appProtocol")
    if app_protocol is not None:
        validate_qualified_name(get_str(port, "appProtocol", path, errs),
                                child(path, "appProtocol"), errs)
    get_int(port, "nodePort", path, errs)


def _session_affinity(spec: dict[str, Any], errs: Errs) -> None:
    affinity = get_str(spec, "sessionAffinity", "spec", errs, required_=True)
    if affinity and affinity not in AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, AFFINITIES))
    config = get_dict(spec, "sessionAffinityConfig", "spec", errs)
    if affinity == "None" and config is not None:
        errs.append(forbidden("spec.sessionAffinityConfig",
                              "must not be set when session affinity is None"))
    if affinity != "ClientIP":
        return
    when = "when session affinity type is ClientIP"
    client_ip = get_dict(config, "clientIP", "spec.sessionAffinityConfig", errs)
    if config is None:
        errs.append(required("spec.sessionAffinityConfig", when))
    elif client_ip is None:
        errs.append(required("spec.sessionAffinityConfig.clientIP", when))
    else:
        path = "spec.sessionAffinityConfig.clientIP.timeoutSeconds"
        timeout = get_int(client_ip, "timeoutSeconds", "spec.sessionAffinityConfig.clientIP", errs)
        if timeout is None:
            errs.append(required(path, when))
        elif not 0 < timeout <= MAX_AFFINITY_TIMEOUT:
            errs.append(invalid(path, timeout, f"must be greater than 0 and less than "
                                               f"{MAX_AFFINITY_TIMEOUT}"))


def _cluster_ips(spec: dict[str, Any], errs: Errs) -> None:
    """ValidateServiceClusterIPsRelatedFields (skipped for ExternalName)."""
    if spec.get("type") == "ExternalName":
        return
    cluster_ip = get_str(spec, "clusterIP", "spec", errs)
    ips = get_str_list(spec, "clusterIPs", "spec", errs)
    if cluster_ip and ips and ips[0] != cluster_ip:
        errs.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    elif not cluster_ip and ips:
        errs.append(invalid("spec.clusterIPs", ips,
                            "must be empty when `clusterIP` is not specified"))
    elif cluster_ip and not ips and cluster_ip != "None":
        validate_ip(cluster_ip, "spec.clusterIP", errs)
    families = get_str_list(spec, "ipFamilies", "spec", errs)
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            errs.append(not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if family in families[:i]:
            errs.append(duplicate(f"spec.ipFamilies[{i}]", family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad = True
                errs.append(invalid("spec.clusterIPs", ips,
                                    "'None' must be the first and only value"))
            continue
        bad = not validate_ip(ip, f"spec.clusterIPs[{i}]", errs) or bad
    if len(ips) > 2:
        errs.append(invalid("spec.clusterIPs", ips, "may only hold up to 2 values"))
    if bad:
        return
    parsed = [parse_ip(ip) for ip in ips]
    if len(ips) > 1 and len({p.version for p in parsed if p is not None}) != len(ips):
        errs.append(invalid("spec.clusterIPs", ips,
                            "may specify no more than one IP for each IP family"))
    if not _headless(spec):
        for i, (ip, parsed_ip) in enumerate(zip(ips, parsed, strict=True)):
            if i >= len(families) or parsed_ip is None:
                break
            want = 6 if families[i] == "IPv6" else 4
            if families[i] in IP_FAMILIES and parsed_ip.version != want:
                errs.append(invalid(f"spec.clusterIPs[{i}]", ip, f"expected an {families[i]} "
                                                                f"value as indicated by "
                                                                f"`ipFamilies[{i}]`"))


def _node_ports(spec: dict[str, Any], kind: str, ports: list[tuple[int, dict[str, Any], str]],
                errs: Errs) -> None:
    node_ports: set[tuple[Any, Any]] = set()
    port_keys: set[tuple[Any, Any]] = set()
    for _, port, path in ports:
        node_port = port.get("nodePort")
        if kind == "ClusterIP" and node_port:
            errs.append(forbidden(child(path, "nodePort"), "may not be used when `type` is "
                                                           "'ClusterIP'"))
        if node_port and isinstance(node_port, int):
            if (port.get("protocol"), node_port) in node_ports:
                errs.append(duplicate(child(path, "nodePort"), node_port))
            node_ports.add((port.get("protocol"), node_port))
        port_key = (port.get("protocol"), port.get("port"))
        if all(isinstance(k, (str, int, type(None))) for k in port_key):
            if port_key in port_keys:
                errs.append(duplicate(path, {"port": port_key[1], "protocol": port_key[0]}))
            port_keys.add(port_key)


def _load_balancer_fields(spec: dict[str, Any], kind: str, errs: Errs) -> None:
    ranges = get_str_list(spec, "loadBalancerSourceRanges", "spec", errs)
    if ranges:
        if kind != "LoadBalancer":
            errs.append(forbidden("spec.LoadBalancerSourceRanges", ONLY_LOAD_BALANCER))
        for i, value in enumerate(ranges):
            validate_cidr(value.strip(), f"spec.LoadBalancerSourceRanges[{i}]", errs)
    allocate = get_bool(spec, "allocateLoadBalancerNodePorts", "spec", errs)
    if allocate is not None and kind != "LoadBalancer":
        errs.append(forbidden("spec.allocateLoadBalancerNodePorts", ONLY_LOAD_BALANCER))
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        errs.append(required("allocateLoadBalancerNodePorts"))
    lb_class = spec.get("loadBalancerClass")
    if lb_class is not None:
        if kind == "LoadBalancer":
            validate_qualified_name(get_str(spec, "loadBalancerClass", "spec", errs),
                                    "spec.loadBalancerClass", errs)
        else:
            errs.append(forbidden("spec.loadBalancerClass", ONLY_LOAD_BALANCER))


def _traffic_policies(spec: dict[str, Any], kind: str, errs: Errs) -> None:
    external = get_str(spec, "externalTrafficPolicy", "spec", errs)
    if not externally_accessible(spec):
        if external:
            errs.append(invalid("spec.externalTrafficPolicy", external,
                                "may only be set for externally-accessible services"))
    elif not external:
        errs.append(required("spec.externalTrafficPolicy"))
    elif external not in TRAFFIC_POLICIES:
        errs.append(not_supported("spec.externalTrafficPolicy", external, TRAFFIC_POLICIES))
    health = get_int(spec, "healthCheckNodePort", "spec", errs) or 0
    if not (kind == "LoadBalancer" and external == "Local"):
        if health:
            errs.append(invalid("spec.healthCheckNodePort", health,
                                "may only be set when `type` is 'LoadBalancer' and "
                                "`externalTrafficPolicy` is 'Local'"))
    elif not health:
        errs.append(required("spec.healthCheckNodePort"))
    elif not 1 <= health <= 65535:
        errs.append(invalid("spec.healthCheckNodePort", health,
                            "must be between 1 and 65535, inclusive"))
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
            errs.append(required("spec.internalTrafficPolicy"))
    elif internal not in TRAFFIC_POLICIES:
        errs.append(not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        errs.append(not_supported("spec.trafficDistribution", distribution, ["PreferClose"]))


# ---------------------------------------------------------------------------------------------
# Updates


def validate_service_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    external_name = "ExternalName" in (spec.get("type"), old_spec.get("type"))
    old_ip, new_ip = old_spec.get("clusterIP") or "", spec.get("clusterIP") or ""
    if not external_name and old_ip and new_ip != old_ip:
        errs.append(invalid("spec.clusterIP", new_ip, IMMUTABLE))
    elif not external_name:
        _cluster_ips_update(spec, old_spec, errs)
    if not external_name and not (_headless(spec) or _headless(old_spec)):
        _families_update(spec, old_spec, errs)
    if spec.get("type") == "LoadBalancer" == old_spec.get("type") and spec.get(
            "loadBalancerClass") != old_spec.get("loadBalancerClass"):
        errs.append(invalid("spec.loadBalancerClass", spec.get("loadBalancerClass"),
                            "may not change once set"))
    if needs_health_check(spec) and needs_health_check(old_spec) and spec.get(
            "healthCheckNodePort") != old_spec.get("healthCheckNodePort"):
        errs.append(forbidden("spec.healthCheckNodePort", IMMUTABLE))
    validate_service(new, errs)


def needs_health_check(spec: dict[str, Any]) -> bool:
    """Upstream needsHCNodePort: a LoadBalancer with the Local external policy."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _cluster_ips_update(spec: dict[str, Any], old_spec: dict[str, Any], errs: Errs) -> None:
    """Secondary IPs may be added or released; the primary never changes once set."""
    if _headless(spec) and _headless(old_spec):
        return
    new_ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    if not isinstance(new_ips, list) or not isinstance(old_ips, list):
        return
    if len(new_ips) == len(old_ips):
        for i, ip in enumerate(old_ips):
            if ip != new_ips[i]:
                errs.append(invalid(f"spec.clusterIPs[{i}]", new_ips, "may not change once set"))
    elif len(old_ips) > len(new_ips):
        if not new_ips:
            errs.append(invalid("spec.clusterIPs[0]", new_ips,
                                "primary clusterIP can not be unset"))
        elif new_ips[0] != old_ips[0]:
            errs.append(invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))
        if len(new_ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(invalid("spec.ipFamilyPolicy", spec.get("ipFamilyPolicy"),
                                "must be set to 'SingleStack' when releasing the secondary "
                                "clusterIP"))
    elif old_ips and new_ips[0] != old_ips[0]:
        errs.append(invalid("spec.clusterIPs[0]", new_ips, "may not change once set"))


def _families_update(spec: dict[str, Any], old_spec: dict[str, Any], errs: Errs) -> None:
    new, old = spec.get("ipFamilies") or [], old_spec.get("ipFamilies") or []
    if not isinstance(new, list) or not isinstance(old, list):
        return
    if len(new) == len(old):
        if new != old:
            errs.append(invalid("spec.ipFamilies[0]", new, "may not change once set"))
    elif len(old) > len(new):
        if new and new[0] != old[0]:
            errs.append(invalid("spec.ipFamilies[0]", spec.get("clusterIPs"),
                                "may not change once set"))
        if len(new) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            errs.append(invalid("spec.ipFamilyPolicy", spec.get("ipFamilyPolicy"),
                                "must be set to 'SingleStack' when releasing the secondary "
                                "ipFamily"))
    elif old and new[0] != old[0]:
        errs.append(invalid("spec.ipFamilies[0]", spec.get("clusterIPs"),
                            "may not change once set"))


def validate_service_status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    path = "status.loadBalancer"
    balancer = get_dict(get_dict(new, "status", "", errs), "loadBalancer", "status", errs) or {}
    ingress = list(iter_dicts(balancer, "ingress", path, errs))
    if ingress and sub(new, "spec", "type") != "LoadBalancer":
        errs.append(forbidden(child(path, "ingress"),
                              "may only be used when `spec.type` is 'LoadBalancer'"))
        return
    for _, entry, entry_path in ingress:
        ip = get_str(entry, "ip", entry_path, errs)
        if ip:
            validate_ip(ip, child(entry_path, "ip"), errs)
        mode = entry.get("ipMode")
        if mode is None:
            if ip:
                errs.append(required(child(entry_path, "ipMode"), "must be specified when `ip` "
                                                                   "is set"))
        elif not ip:
            errs.append(forbidden(child(entry_path, "ipMode"),
                                  "may not be specified when `ip` is not set"))
        elif mode not in LB_IP_MODES:
            errs.append(not_supported(child(entry_path, "ipMode"), mode, LB_IP_MODES))
        hostname = get_str(entry, "hostname", entry_path, errs)
        if hostname:
            validate_dns_subdomain(hostname, child(entry_path, "hostname"), errs)
            if parse_ip(hostname) is not None:
                errs.append(invalid(child(entry_path, "hostname"), hostname,
                                    "must be a DNS name, not an IP address"))
