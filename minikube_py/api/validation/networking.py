"""networking.k8s.io/v1: Ingress, IngressClass, NetworkPolicy.

Kubernetes piece: pkg/apis/networking/validation (ValidateIngressCreate/Update/StatusUpdate,
ValidateIngressClass/Update, ValidateNetworkPolicy/Update) as the networking/v1 strategies call
them in 1.31. The messages are upstream's, so `kubectl apply` of a bad manifest prints what a
real cluster prints. Two of upstream's backwards-compatibility escapes are kept because they
decide what an *update* may keep: a stored TLS secretName that is not a valid Secret name, and
a wildcard-host rule whose paths were never validated, stay accepted on update.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import (
    GoValue,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from minikube_py.api.validation.common import (
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    path_segment_name,
    regex_error,
    sub,
    validate_immutable,
    validate_label_selector,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_int,
    get_list,
    get_str,
    get_str_list,
    index,
    is_int,
    iter_dicts,
)

INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
MAX_INGRESS_CLASS_CONTROLLER = 250
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
PARAMETER_SCOPES = ("Cluster", "Namespace")
POLICY_TYPES = ("Ingress", "Egress")
NETWORK_POLICY_PROTOCOLS = ("TCP", "UDP", "SCTP")

_WILDCARD_FMT = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD = re.compile(_WILDCARD_FMT + r"\Z")
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
                 "subdomain, which must consist of lower case alphanumeric characters, '-' or "
                 "'.' and end with an alphanumeric character")
_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(_HTTP_PATH_FMT + r"\Z")


# ---------------------------------------------------------------------------------------------
# Small upstream helpers (k8s.io/apimachinery/pkg/util/validation)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """IsWildcardDNS1123Subdomain: `*.example.com`."""
    errs = []
    if len(value) > naming.DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {naming.DNS1123_SUBDOMAIN_MAX} characters")
    if not _WILDCARD.match(value):
        errs.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def validate_domain_prefixed_path(value: str, path: str, errs: Errs) -> None:
    """IsDomainPrefixedPath: `acme.io/foo` (an IngressClass controller)."""
    if not value:
        errs.append(required(path))
        return
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        errs.append(invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")'))
        return
    for msg in naming.is_dns1123_subdomain(host):
        errs.append(invalid(path, host, msg))
    if not _HTTP_PATH.match(rest):
        errs.append(invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _host(host: str, path: str, errs: Errs) -> bool:
    """A rule or TLS host: a DNS subdomain or `*.` wildcard; returns whether it is a wildcard."""
    if "*" in host:
        for msg in is_wildcard_dns1123_subdomain(host):
            errs.append(invalid(path, host, msg))
        return True
    for msg in naming.is_dns1123_subdomain(host):
        errs.append(invalid(path, host, msg))
    return False


# ---------------------------------------------------------------------------------------------
# Ingress


def _typed_local_ref(ref: dict[str, Any], path: str, errs: Errs) -> None:
    """validateIngressTypedLocalObjectReference (a resource backend)."""
    group = ref.get("apiGroup")
    if isinstance(group, str):
        for msg in naming.is_dns1123_subdomain(group):
            errs.append(invalid(child(path, "apiGroup"), group, msg))
    for name in ("kind", "name"):
        value = get_str(ref, name, path, errs)
        if not value:
            errs.append(required(child(path, name)))
        else:
            for msg in path_segment_name(value, False):
                errs.append(invalid(child(path, name), value, msg))


def _backend(backend: dict[str, Any], path: str, errs: Errs) -> None:
    """validateIngressBackend: exactly one of service and resource."""
    resource = get_dict(backend, "resource", path, errs)
    service = get_dict(backend, "service", path, errs)
    if resource is not None and service is not None:
        errs.append(invalid(path, "", "cannot set both resource and service backends"))
        return
    if resource is not None:
        _typed_local_ref(resource, child(path, "resource"), errs)
        return
    if service is None:
        errs.append(invalid(path, "", "resource or service backend is required"))
        return
    svc_path = child(path, "service")
    name = get_str(service, "name", svc_path, errs)
    if not name:
        errs.append(required(child(svc_path, "name")))
    else:
        for msg in name_is_dns1035_label(name, False):
            errs.append(invalid(child(svc_path, "name"), name, msg))
    port = get_dict(service, "port", svc_path, errs) or {}
    port_path = child(svc_path, "port")
    port_name = get_str(port, "name", port_path, errs)
    number = get_int(port, "number", port_path, errs) or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        for msg in is_valid_port_name(port_name):
            errs.append(invalid(child(port_path, "name"), port_name, msg))
    elif number:
        for msg in is_valid_port_num(number):
            errs.append(invalid(child(port_path, "number"), number, msg))
    else:
        errs.append(required(path, "port name or number is required"))


def _http_path(item: dict[str, Any], path: str, errs: Errs) -> None:
    """validateHTTPIngressPath: pathType required; Exact/Prefix paths absolute and clean."""
    path_type = item.get("pathType")
    if path_type is None:
        errs.append(required(child(path, "pathType"), "pathType must be specified"))
        return
    value = get_str(item, "path", path, errs)
    value_path = child(path, "path")
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
        if value:
            for seq in _INVALID_PATH_SEQUENCES:
                if seq in value:
                    errs.append(invalid(value_path, value, f"must not contain '{seq}'"))
            for suffix in _INVALID_PATH_SUFFIXES:
                if value.endswith(suffix):
                    errs.append(invalid(value_path, value, f"cannot end with '{suffix}'"))
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
    else:
        errs.append(not_supported(child(path, "pathType"), path_type, PATH_TYPES))
    backend = get_dict(item, "backend", path, errs) or {}
    _backend(backend, child(path, "backend"), errs)


def _rule_value(rule: dict[str, Any], path: str, errs: Errs) -> None:
    http = get_dict(rule, "http", path, errs)
    if http is None:
        return
    http_path = child(path, "http")
    if not get_list(http, "paths", http_path, errs):
        errs.append(required(child(http_path, "paths")))
    for _, item, item_path in iter_dicts(http, "paths", http_path, errs):
        _http_path(item, item_path, errs)


def _rules(spec: dict[str, Any], path: str, errs: Errs, allow_wildcard_rules: bool) -> None:
    for _, rule, rule_path in iter_dicts(spec, "rules", path, errs):
        host = get_str(rule, "host", rule_path, errs)
        wildcard = False
        if host:
            if _is_ip(host):
                errs.append(invalid(child(rule_path, "host"), host,
                                    "must be a DNS name, not an IP address"))
            wildcard = _host(host, child(rule_path, "host"), errs)
        if not wildcard or not allow_wildcard_rules:
            _rule_value(rule, rule_path, errs)


def _tls(spec: dict[str, Any], path: str, errs: Errs, allow_bad_secret: bool) -> None:
    for _, tls, tls_path in iter_dicts(spec, "tls", path, errs):
        hosts_path = child(tls_path, "hosts")
        for i, host in enumerate(get_str_list(tls, "hosts", tls_path, errs)):
            _host(host, index(hosts_path, i), errs)
        secret = get_str(tls, "secretName", tls_path, errs)
        if secret and not allow_bad_secret:
            for msg in name_is_dns_subdomain(secret, False):
                errs.append(invalid(child(tls_path, "secretName"), secret, msg))


def _ingress_spec(ingress: dict[str, Any], errs: Errs, *, allow_bad_secret: bool = False,
                  allow_wildcard_rules: bool = False) -> None:
    """ValidateIngressSpec."""
    spec = get_dict(ingress, "spec", "", errs) or {}
    rules = get_list(spec, "rules", "spec", errs)
    default = get_dict(spec, "defaultBackend", "spec", errs)
    if not rules and default is None:
        shown = GoValue("[]networking.IngressRule(nil)" if rules is None
                        else "[]networking.IngressRule{}")
        errs.append(invalid("spec", shown, "either `defaultBackend` or `rules` must be "
                                           "specified"))
    if default is not None:
        _backend(default, "spec.defaultBackend", errs)
    _rules(spec, "spec", errs, allow_wildcard_rules)
    _tls(spec, "spec", errs, allow_bad_secret)
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        for msg in name_is_dns_subdomain(class_name, False):
            errs.append(invalid("spec.ingressClassName", class_name, msg))


def validate_ingress(ingress: dict[str, Any], errs: Errs) -> None:
    """ValidateIngressCreate, with the class annotation agreeing with ingressClassName."""
    validate_object_meta(ingress, True, name_is_dns_subdomain, errs)
    _ingress_spec(ingress, errs)
    annotations = sub(ingress, "metadata", "annotations") or {}
    annotation = annotations.get(INGRESS_CLASS_ANNOTATION) if isinstance(annotations, dict) \
        else None
    class_name = sub(ingress, "spec", "ingressClassName")
    if annotation is not None and isinstance(class_name, str) and annotation != class_name:
        errs.append(invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                            "must match `ingressClassName` when both are specified"))


def validate_ingress_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    old_tls = sub(old, "spec", "tls") or []
    bad_secret = any(isinstance(t, dict) and isinstance(t.get("secretName"), str)
                     and t["secretName"] and name_is_dns_subdomain(t["secretName"], False)
                     for t in old_tls)
    wildcard_rules = False
    for rule in sub(old, "spec", "rules") or []:
        if isinstance(rule, dict) and "*" in str(rule.get("host") or ""):
            probe: Errs = []
            _rule_value(rule, "", probe)
            wildcard_rules = wildcard_rules or bool(probe)
    validate_object_meta(new, True, name_is_dns_subdomain, errs)
    _ingress_spec(new, errs, allow_bad_secret=bad_secret, allow_wildcard_rules=wildcard_rules)


def validate_ingress_status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateIngressStatusUpdate: status.loadBalancer.ingress[*] ip / hostname."""
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    balancer = get_dict(status, "loadBalancer", "status", errs) or {}
    for _, entry, entry_path in iter_dicts(balancer, "ingress", "status.loadBalancer", errs):
        ip = get_str(entry, "ip", entry_path, errs)
        if ip and not _is_ip(ip):
            errs.append(invalid(child(entry_path, "ip"), ip, "must be a valid IP address"))
        hostname = get_str(entry, "hostname", entry_path, errs)
        if hostname:
            for msg in naming.is_dns1123_subdomain(hostname):
                errs.append(invalid(child(entry_path, "hostname"), hostname, msg))
            if _is_ip(hostname):
                errs.append(invalid(child(entry_path, "hostname"), hostname,
                                    "must be a DNS name, not an IP address"))


# ---------------------------------------------------------------------------------------------
# IngressClass


def _parameters(spec: dict[str, Any], errs: Errs) -> None:
    """validateIngressClassParametersReference."""
    params = get_dict(spec, "parameters", "spec", errs)
    if params is None:
        return
    path = "spec.parameters"
    group = params.get("apiGroup")
    if isinstance(group, str):
        for msg in naming.is_dns1123_subdomain(group):
            errs.append(invalid(child(path, "apiGroup"), group, msg))
    for name in ("kind", "name"):
        value = get_str(params, name, path, errs)
        if not value:
            errs.append(required(child(path, name)))
        else:
            for msg in path_segment_name(value, False):
                errs.append(invalid(child(path, name), value, msg))
    scope = params.get("scope")
    if scope is None:
        errs.append(required(child(path, "scope")))
        return
    if scope not in PARAMETER_SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, PARAMETER_SCOPES))
        return
    namespace = params.get("namespace")
    if scope == "Namespace":
        if namespace is None:
            errs.append(required(child(path, "namespace"), "`parameters.scope` is set to "
                                                           "'Namespace'"))
        elif isinstance(namespace, str):
            for msg in name_is_dns_label(namespace, False):
                errs.append(invalid(child(path, "namespace"), namespace, msg))
    elif namespace is not None:
        errs.append(forbidden(child(path, "namespace"), "`parameters.scope` is set to 'Cluster'"))


def validate_ingress_class(ingress_class: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(ingress_class, False, name_is_dns_subdomain, errs)
    spec = get_dict(ingress_class, "spec", "", errs) or {}
    controller = get_str(spec, "controller", "spec", errs)
    if not controller:
        errs.append(required("spec.controller"))
    else:
        if len(controller) > MAX_INGRESS_CLASS_CONTROLLER:
            errs.append(too_long("spec.controller", MAX_INGRESS_CLASS_CONTROLLER))
        validate_domain_prefixed_path(controller, "spec.controller", errs)
    _parameters(spec, errs)


def validate_ingress_class_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_immutable(sub(new, "spec", "controller"), sub(old, "spec", "controller"),
                       "spec.controller", errs)
    validate_ingress_class(new, errs)


# ---------------------------------------------------------------------------------------------
# NetworkPolicy


def _policy_port(port: dict[str, Any], path: str, errs: Errs) -> None:
    """ValidateNetworkPolicyPort: protocol, port (int or name) and endPort."""
    protocol = port.get("protocol")
    if protocol is not None and protocol not in NETWORK_POLICY_PROTOCOLS:
        errs.append(not_supported(child(path, "protocol"), protocol, NETWORK_POLICY_PROTOCOLS))
    value = port.get("port")
    end = get_int(port, "endPort", path, errs)
    end_path = child(path, "endPort")
    if value is None:
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is not "
                                               "specified"))
    elif is_int(value):
        for msg in is_valid_port_num(value):
            errs.append(invalid(child(path, "port"), value, msg))
        if end is not None:
            if end < value:
                errs.append(invalid(end_path, end, "must be greater than or equal to `port`"))
            for msg in is_valid_port_num(end):
                errs.append(invalid(end_path, end, msg))
    elif isinstance(value, str):
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is non-numeric"))
        for msg in is_valid_port_name(value):
            errs.append(invalid(child(path, "port"), value, msg))
    else:
        errs.append(invalid(child(path, "port"), value, "must be an integer or a string"))


def _network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """Go's ParseCIDR: an address with a prefix length (a bare address is not a CIDR)."""
    if "/" not in value:
        return None
    try:
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None


def _ip_block(block: dict[str, Any], path: str, errs: Errs) -> None:
    """ValidateIPBlock (1.31): cidr required and valid; each except a strict subset of it."""
    cidr = get_str(block, "cidr", path, errs)
    if not cidr:
        errs.append(required(child(path, "cidr")))
        return
    network = _network(cidr)
    if network is None:
        errs.append(invalid(child(path, "cidr"), cidr, "not a valid CIDR"))
        return
    except_path = child(path, "except")
    for i, text in enumerate(get_str_list(block, "except", path, errs)):
        excepted = _network(text)
        if excepted is None:
            errs.append(invalid(index(except_path, i), text, "not a valid CIDR"))
            return
        if excepted.version != network.version \
                or excepted.network_address not in network \
                or network.prefixlen >= excepted.prefixlen:
            errs.append(invalid(index(except_path, i), text, "must be a strict subset of `cidr`"))


def _peer(peer: dict[str, Any], path: str, errs: Errs) -> None:
    """ValidateNetworkPolicyPeer: at least one of podSelector/namespaceSelector/ipBlock, and an
    ipBlock alone."""
    count = 0
    for name in ("podSelector", "namespaceSelector"):
        selector = get_dict(peer, name, path, errs)
        if selector is not None:
            count += 1
            validate_label_selector(selector, child(path, name), errs)
    block = get_dict(peer, "ipBlock", path, errs)
    if block is not None:
        count += 1
        _ip_block(block, child(path, "ipBlock"), errs)
    if count == 0:
        errs.append(required(path, "must specify a peer"))
    elif count > 1 and block is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))


def _network_policy_spec(policy: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(policy, "spec", "", errs) or {}
    selector = get_dict(spec, "podSelector", "spec", errs) or {}
    validate_label_selector(selector, "spec.podSelector", errs)
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for _, rule, rule_path in iter_dicts(spec, direction, "spec", errs):
            for _, port, port_path in iter_dicts(rule, "ports", rule_path, errs):
                _policy_port(port, port_path, errs)
            for _, peer, peer_path in iter_dicts(rule, peers, rule_path, errs):
                _peer(peer, peer_path, errs)
    types = get_str_list(spec, "policyTypes", "spec", errs)
    if len(types) > len(POLICY_TYPES):
        shown = GoValue("[]networking.PolicyType{" + ", ".join(f'"{t}"' for t in types) + "}")
        errs.append(invalid("spec.policyTypes", shown, "may not specify more than two "
                                                       "policyTypes"))
        return
    for i, policy_type in enumerate(types):
        if policy_type not in POLICY_TYPES:
            errs.append(not_supported(index("spec.policyTypes", i), policy_type, POLICY_TYPES))


def validate_network_policy(policy: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(policy, True, name_is_dns_subdomain, errs)
    _network_policy_spec(policy, errs)


def validate_network_policy_update(new: dict[str, Any], old: dict[str, Any],
                                   errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _network_policy_spec(new, errs)


CREATE = {
    "Ingress": validate_ingress,
    "IngressClass": validate_ingress_class,
    "NetworkPolicy": validate_network_policy,
}
UPDATE = {
    "Ingress": validate_ingress_update,
    "IngressClass": validate_ingress_class_update,
    "NetworkPolicy": validate_network_policy_update,
}
STATUS_UPDATE = {
    "Ingress": validate_ingress_status_update,
}
