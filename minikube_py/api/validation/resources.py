"""Resource names and quantities: container requests/limits, quota, limit ranges, node capacity.

Kubernetes pieces: pkg/apis/core/validation (validateResourceName,
validateContainerResourceName, ValidateResourceQuotaResourceName, ValidateResourceQuantityValue,
validateResourceRequirements) and pkg/apis/core/helper (IsStandardResourceName,
IsExtendedResourceName, IsOvercommitAllowed, IsIntegerResourceName). A quantity that does not
parse is reported at its own path with the parser's message; upstream rejects it while decoding.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming, quantity
from minikube_py.api.errors import forbidden, invalid, required
from minikube_py.api.validation.common import NEGATIVE, validate_qualified_name
from minikube_py.api.validation.typed import Errs, child, get_dict, key, type_error

HUGEPAGES_PREFIX = "hugepages-"
STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers",
})
STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
    "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers",
})
INTEGER_RESOURCES = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    """Unprefixed names and `*kubernetes.io/` names belong to Kubernetes itself."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    if is_native(name) or name.startswith("requests."):
        return False
    return not naming.is_qualified_name("requests." + name)


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not is_hugepages(name)


def _is_standard(name: str) -> bool:
    return name in STANDARD_RESOURCES or is_hugepages(name) or name.startswith(
        "requests." + HUGEPAGES_PREFIX)


def validate_resource_name(name: str, path: str, errs: Errs) -> bool:
    before = len(errs)
    validate_qualified_name(name, path, errs)
    if len(errs) == before and "/" not in name and not _is_standard(name):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return len(errs) == before


def validate_container_resource_name(name: str, path: str, errs: Errs) -> None:
    validate_resource_name(name, path, errs)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))


def validate_quota_resource_name(name: str, path: str, errs: Errs) -> None:
    validate_resource_name(name, path, errs)
    if "/" not in name and name not in STANDARD_QUOTA_RESOURCES and not (
            is_hugepages(name) or name.startswith("requests." + HUGEPAGES_PREFIX)):
        errs.append(invalid(path, name, "must be a standard resource for quota"))


def parse_at(raw: Any, path: str, errs: Errs) -> quantity.Quantity | None:
    """Parse a quantity, reporting a failure at `path` with the parser's message."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        errs.append(type_error(path, raw, "a quantity string"))
        return None
    try:
        return quantity.parse(raw)
    except ValueError as err:
        errs.append(invalid(path, raw, str(err)))
        return None


def show(q: quantity.Quantity) -> str:
    return quantity.format_quantity(q.value, q.format)


def validate_quantity_value(name: str, q: quantity.Quantity, path: str, errs: Errs) -> None:
    """ValidateResourceQuantityValue: never negative; whole numbers for countable resources."""
    if q.value < 0:
        errs.append(invalid(path, show(q), NEGATIVE))
    if (name in INTEGER_RESOURCES or is_extended(name)) and (q.value * 1000) % 1000 != 0:
        errs.append(invalid(path, show(q), "must be an integer"))


def resource_list(obj: Any, name: str, path: str, errs: Errs) -> dict[str, quantity.Quantity]:
    """obj[name] as a ResourceList: {resource: parsed quantity}; unparseable ones reported."""
    values = get_dict(obj, name, path, errs)
    out: dict[str, quantity.Quantity] = {}
    if not values:
        return out
    list_path = child(path, name)
    for resource, raw in values.items():
        if raw is None:
            continue
        q = parse_at(raw, key(list_path, resource), errs)
        if q is not None:
            out[resource] = q
    return out


def validate_requirements(resources: dict[str, Any], path: str, errs: Errs) -> None:
    """Container `resources`: valid names and quantities, requests <= limits (== for hugepages
    and extended resources, which cannot be overcommitted)."""
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    limits = resource_list(resources, "limits", path, errs)
    requests = resource_list(resources, "requests", path, errs)
    cpu_or_memory = hugepages = False
    for name, q in limits.items():
        item_path = key(lim_path, name)
        validate_container_resource_name(name, item_path, errs)
        validate_quantity_value(name, q, item_path, errs)
        hugepages = hugepages or is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name, q in requests.items():
        item_path = key(req_path, name)
        validate_container_resource_name(name, item_path, errs)
        validate_quantity_value(name, q, item_path, errs)
        limit = limits.get(name)
        if limit is not None:
            if q.value != limit.value and not overcommit_allowed(name):
                errs.append(invalid(req_path, show(q),
                                    f"must be equal to {name} limit of {show(limit)}"))
            elif q.value > limit.value:
                errs.append(invalid(req_path, show(q),
                                    f"must be less than or equal to {name} limit of "
                                    f"{show(limit)}"))
        elif not overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages = hugepages or is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(forbidden(path, "HugePages require cpu or memory"))

