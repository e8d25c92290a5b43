"""discovery.k8s.io/v1 EndpointSlice.

Kubernetes piece: pkg/apis/discovery/validation (ValidateEndpointSlice, validateEndpoints,
validatePorts, validateAddressType, validateHints) as the endpointslice strategy calls them
(1.31): addressType is IPv4, IPv6 or FQDN and immutable; at most 1000 endpoints, each with 1 to
100 addresses valid for the type (IPs neither unspecified, loopback nor link-local, as
ValidateEndpointIP); at most 20000 ports (upstream raised the limit from 100 in 1.21), with
unique names, a protocol and a qualified appProtocol; zone hints at most 8, unique, label values.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import (
    FieldError,
    duplicate,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.common import (
    PROTOCOLS,
    name_is_dns_subdomain,
    parse_ip,
    validate_dns_label,
    validate_immutable,
    validate_labels,
    validate_non_special_ip,
    validate_qualified_name,
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
    get_str_map,
    index,
    iter_dicts,
)

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_TOPOLOGY_LABELS = 16
MAX_ADDRESSES = 100
MAX_PORTS = 20000
MAX_ENDPOINTS = 1000
MAX_ZONE_HINTS = 8
ZONE_LABEL = "topology.kubernetes.io/zone"


def too_many(path: str, actual: int, limit: int) -> FieldError:
    """field.TooMany: `Too many: 1001: must have at most 1000 items`."""
    return FieldError("FieldValueTooMany", path, f"{actual}: must have at most {limit} items")


def validate_endpoint_slice(obj: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(obj, True, name_is_dns_subdomain, errs)
    address_type = get_str(obj, "addressType", "", errs)
    if not address_type:
        errs.append(required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", address_type, ADDRESS_TYPES))
    _endpoints(obj, address_type, errs)
    _ports(obj, errs)


def validate_endpoint_slice_update(new: dict[str, Any], old: dict[str, Any],
                                   errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_endpoint_slice(new, errs)
    validate_immutable(new.get("addressType"), old.get("addressType"), "addressType", errs)


def _endpoints(obj: dict[str, Any], address_type: str, errs: Errs) -> None:
    items = get_list(obj, "endpoints", "", errs) or []
    if len(items) > MAX_ENDPOINTS:
        errs.append(too_many("endpoints", len(items), MAX_ENDPOINTS))
        return
    for _, endpoint, path in iter_dicts(obj, "endpoints", "", errs):
        addresses = get_str_list(endpoint, "addresses", path, errs)
        address_path = child(path, "addresses")
        if not addresses:
            errs.append(required(address_path, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(too_many(address_path, len(addresses), MAX_ADDRESSES))
        for i, address in enumerate(addresses):
            _address(address, address_type, index(address_path, i), errs)
        if endpoint.get("nodeName") is not None:
            node_name = get_str(endpoint, "nodeName", path, errs)
            for msg in name_is_dns_subdomain(node_name, False):
                errs.append(invalid(child(path, "nodeName"), node_name, msg))
        topology_path = child(path, "deprecatedTopology")
        topology = get_str_map(endpoint, "deprecatedTopology", path, errs)
        if len(topology) > MAX_TOPOLOGY_LABELS:
            errs.append(too_many(topology_path, len(topology), MAX_TOPOLOGY_LABELS))
        validate_labels(topology, topology_path, errs)
        if endpoint.get("hostname") is not None:
            validate_dns_label(get_str(endpoint, "hostname", path, errs), child(path, "hostname"),
                               errs)
        get_dict(endpoint, "conditions", path, errs)
        get_dict(endpoint, "targetRef", path, errs)
        hints = get_dict(endpoint, "hints", path, errs)
        if hints is not None:
            _hints(hints, child(path, "hints"), errs)


def _address(address: str, address_type: str, path: str, errs: Errs) -> None:
    """Known types only; validateEndpoints lets an unknown type's addresses through."""
    if address_type in ("IPv4", "IPv6"):
        ip = parse_ip(address)
        if ip is None or ip.version != (4 if address_type == "IPv4" else 6):
            errs.append(invalid(path, address, f"must be a valid {address_type} address"))
        validate_non_special_ip(address, path, errs)
    elif address_type == "FQDN":
        _fully_qualified_domain_name(address, path, errs)


def _fully_qualified_domain_name(name: str, path: str, errs: Errs) -> None:
    """utilvalidation.IsFullyQualifiedDomainName: a trailing dot allowed, two labels at least."""
    if not name:
        errs.append(required(path))
        return
    name = name.removesuffix(".")
    msgs = naming.is_dns1123_subdomain(name)
    if msgs:
        errs.append(invalid(path, name, ",".join(msgs)))
        return
    labels = name.split(".")
    if len(labels) < 2:
        errs.append(invalid(path, name, "should be a domain with at least two segments "
                                        "separated by dots"))
        return
    for label in labels:
        msgs = naming.is_dns1123_label(label)
        if msgs:
            errs.append(invalid(path, label, ",".join(msgs)))
            return


def _hints(hints: dict[str, Any], path: str, errs: Errs) -> None:
    zones = list(iter_dicts(hints, "forZones", path, errs))
    zones_path = child(path, "forZones")
    if len(zones) > MAX_ZONE_HINTS:
        errs.append(too_many(zones_path, len(zones), MAX_ZONE_HINTS))
        return
    seen: set[str] = set()
    for _, zone, zone_path in zones:
        name = get_str(zone, "name", zone_path, errs)
        name_path = child(zone_path, "name")
        if name in seen:
            errs.append(duplicate(name_path, name))
        seen.add(name)
        for msg in naming.is_label_value(name):
            errs.append(invalid(name_path, name, msg))


def _ports(obj: dict[str, Any], errs: Errs) -> None:
    items = get_list(obj, "ports", "", errs) or []
    if len(items) > MAX_PORTS:
        errs.append(too_many("ports", len(items), MAX_PORTS))
        return
    names: set[str] = set()
    for _, port, path in iter_dicts(obj, "ports", "", errs):
        name = get_str(port, "name", path, errs)
        if name:
            validate_dns_label(name, child(path, "name"), errs)
        if name in names:
            errs.append(duplicate(child(path, "name"), name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            errs.append(required(child(path, "protocol")))
        elif protocol not in PROTOCOLS:
            errs.append(not_supported(child(path, "protocol"), protocol, PROTOCOLS))
        if port.get("appProtocol") is not None:
            validate_qualified_name(get_str(port, "appProtocol", path, errs),
                                    child(path, "appProtocol"), errs)
        get_int(port, "port", path, errs)  # null means "all ports"; no range check upstream
