"""Nodes: name, taints, capacity and allocatable, pod CIDRs; what an update may change.

Kubernetes pieces: pkg/apis/core/validation (ValidateNode, ValidateNodeResources,
validateNodeTaints, ValidateNodeUpdate). The node strategy validates the whole node and then the
update rules for both the main resource and /status, so the two share one function here.
Upstream reports spec.taints problems at `metadata.taints[i]`; kept for fidelity.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import duplicate, forbidden, invalid
from minikube_py.api.validation.common import (
    ValidMemo,
    items_key,
    name_is_dns_subdomain,
    parse_ip,
    semantic,
    sub,
    validate_cidr,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import parse_at, validate_quantity_value
from minikube_py.api.validation.scheduling import validate_taints
from minikube_py.api.validation.typed import (
    Errs,
    get_bool,
    get_dict,
    get_str,
    get_str_list,
    iter_dicts,
)

CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'
PROVIDER_CHANGE = 'node updates may not change providerID except from "" to valid'


def validate_node(node: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(node, False, name_is_dns_subdomain, errs)
    spec = get_dict(node, "spec", "", errs) or {}
    validate_taints(spec, "metadata.taints", errs)
    _resources(node, errs)
    cidrs = get_str_list(spec, "podCIDRs", "spec", errs)
    for i, cidr in enumerate(cidrs):
        validate_cidr(cidr, f"spec.podCIDRs[{i}]", errs)
    if len(cidrs) > 1:
        families = {_family(c) for c in cidrs}
        if len(cidrs) > 2 or len(families) != 2 or None in families:
            errs.append(invalid("spec.podCIDRs", cidrs,
                                "may specify no more than one CIDR for each IP family"))
        for i, cidr in enumerate(cidrs):
            if cidr in cidrs[:i]:
                errs.append(duplicate(f"spec.podCIDRs[{i}]", cidr))
    get_str(spec, "podCIDR", "spec", errs)
    get_str(spec, "providerID", "spec", errs)
    get_bool(spec, "unschedulable", "spec", errs)


def _family(cidr: str) -> int | None:
    ip = parse_ip(cidr.split("/", 1)[0])
    return ip.version if ip is not None else None


def _resources(node: dict[str, Any], errs: Errs) -> None:
    """Capacity and allocatable quantities; upstream's paths are `status.capacity.cpu`."""
    status = get_dict(node, "status", "", errs) or {}
    key = (items_key(status.get("capacity") or {}), items_key(status.get("allocatable") or {}))
    if None in key:
        key = None
    if key in _VALID_RESOURCES:
        return
    before = len(errs)
    for name in ("capacity", "allocatable"):
        values = get_dict(status, name, "status", errs) or {}
        for resource, raw in values.items():
            path = f"status.{name}.{resource}"
            q = parse_at(raw, path, errs) if raw is not None else None
            if q is not None:
                validate_quantity_value(resource, q, path, errs)
    if len(errs) == before:
        _VALID_RESOURCES.add(key)


#: capacity/allocatable pairs already found valid (nodes of a pool share one)
_VALID_RESOURCES = ValidMemo(limit=1024)


def validate_node_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateNode plus ValidateNodeUpdate (used for both update and status update)."""
    validate_object_meta_update(new, old, errs)
    validate_node(new, errs)
    seen: list[Any] = []
    status = new.get("status") if isinstance(new.get("status"), dict) else {}
    for i, address, _ in iter_dicts(status, "addresses", "status", errs):
        key = semantic(address)
        if key in seen:
            errs.append(duplicate(f"status.addresses[{i}]", address))
        seen.append(key)
    old_cidrs = sub(old, "spec", "podCIDRs")
    if isinstance(old_cidrs, list) and old_cidrs:
        new_cidrs = sub(new, "spec", "podCIDRs")
        if not isinstance(new_cidrs, list) or len(new_cidrs) != len(old_cidrs):
            errs.append(forbidden("spec.podCIDRs", CIDR_CHANGE))
        else:
            for old_cidr, new_cidr in zip(old_cidrs, new_cidrs, strict=True):
                if old_cidr != new_cidr:
                    errs.append(forbidden("spec.podCIDRs", CIDR_CHANGE))
    old_provider = sub(old, "spec", "providerID")
    if old_provider and old_provider != sub(new, "spec", "providerID"):
        errs.append(forbidden("spec.providerID", PROVIDER_CHANGE))
    if (sub(new, "spec", "externalID") or "") != (sub(old, "spec", "externalID") or ""):
        errs.append(forbidden("spec.externalID", "may not be updated"))
