"""Resource policy objects: LimitRanges and ResourceQuotas.

Kubernetes pieces: pkg/apis/core/validation (ValidateLimitRange, validateLimitRangeTypeName,
validateLimitRangeResourceName, ValidateResourceQuota, ValidateResourceQuotaSpec,
validateResourceQuotaScopes, validateScopeSelector, ValidateResourceQuotaUpdate,
ValidateResourceQuotaStatusUpdate). Quantities are compared exactly and printed canonically
in messages (`min value 2 is greater than max value 1`), as upstream does.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from minikube_py.api import quantity
from minikube_py.api.errors import duplicate, forbidden, invalid, required
from minikube_py.api.validation.common import (
    IMMUTABLE,
    name_is_dns_subdomain,
    sub,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import (
    STANDARD_QUOTA_RESOURCES,
    is_hugepages,
    resource_list,
    show,
    validate_container_resource_name,
    validate_quantity_value,
    validate_quota_resource_name,
    validate_resource_name,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_str,
    get_str_list,
    iter_dicts,
    key,
)

LIMIT_TYPES = frozenset({"Pod", "Container", "PersistentVolumeClaim"})
SCOPES = frozenset({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                    "PriorityClass", "CrossNamespacePodAffinity", "VolumeAttributesClass"})
_POD_COUNT = frozenset({"pods"})
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                          "requests.memory"})
_CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
_EXISTS_ONLY_SCOPES = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating",
                       "CrossNamespacePodAffinity")


def validate_limit_range(limit_range: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(limit_range, True, name_is_dns_subdomain, errs)
    spec = get_dict(limit_range, "spec", "", errs) or {}
    types: set[str] = set()
    for _, item, item_path in iter_dicts(spec, "limits", "spec", errs):
        kind = get_str(item, "type", item_path, errs)
        _limit_type(kind, child(item_path, "type"), errs)
        if kind in types:
            errs.append(duplicate(child(item_path, "type"), kind))
        types.add(kind)
        lists = {}
        for name in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            lists[name] = resource_list(item, name, item_path, errs)
            if kind == "Pod" and name in ("default", "defaultRequest"):
                if lists[name]:
                    errs.append(forbidden(child(item_path, name),
                                          "may not be specified when `type` is 'Pod'"))
                lists[name] = {}
                continue
            for resource in lists[name]:
                _limit_resource_name(kind, resource, key(child(item_path, name), resource), errs)
        if kind == "PersistentVolumeClaim" and "storage" not in lists["min"] and (
                "storage" not in lists["max"]):
            errs.append(required(child(item_path, "limits"), "either minimum or maximum storage "
                                                             "value is required, but neither was "
                                                             "provided"))
        _limit_comparisons(lists, item_path, errs)


def _limit_type(kind: str, path: str, errs: Errs) -> None:
    before = len(errs)
    validate_qualified_name(kind, path, errs)
    if len(errs) == before and "/" not in kind and kind not in LIMIT_TYPES:
        errs.append(invalid(path, kind, "must be a standard limit type or fully qualified"))


def _limit_resource_name(kind: str, resource: str, path: str, errs: Errs) -> None:
    if kind in ("Pod", "Container"):
        validate_container_resource_name(resource, path, errs)
    else:
        validate_resource_name(resource, path, errs)


def _limit_comparisons(lists: dict[str, dict[str, quantity.Quantity]], path: str,
                       errs: Errs) -> None:
    lo_, hi_, default_, request_ = lists["min"], lists["max"], lists["default"], lists[
        "defaultRequest"]
    ratio_ = lists["maxLimitRequestRatio"]
    names = sorted(set().union(*lists.values()))
    for name in names:
        lo, hi, default, request, ratio = (lo_.get(name), hi_.get(name), default_.get(name),
                                           request_.get(name), ratio_.get(name))
        if lo and hi and lo.value > hi.value:
            errs.append(invalid(key(child(path, "min"), name), show(lo),
                                f"min value {show(lo)} is greater than max value {show(hi)}"))
        request_path = key(child(path, "defaultRequest"), name)
        if request and lo and lo.value > request.value:
            errs.append(invalid(request_path, show(request), f"min value {show(lo)} is greater "
                                                             f"than default request value "
                                                             f"{show(request)}"))
        if request and hi and request.value > hi.value:
            errs.append(invalid(request_path, show(request), f"default request value "
                                                             f"{show(request)} is greater than "
                                                             f"max value {show(hi)}"))
        if request and default and request.value > default.value:
            errs.append(invalid(request_path, show(request), f"default request value "
                                                             f"{show(request)} is greater than "
                                                             f"default limit value "
                                                             f"{show(default)}"))
        default_path = key(child(path, "default"), name)
        if default and lo and lo.value > default.value:
            errs.append(invalid(default_path, show(lo), f"min value {show(lo)} is greater than "
                                                        f"default value {show(default)}"))
        if default and hi and default.value > hi.value:
            errs.append(invalid(default_path, show(hi), f"default value {show(default)} is "
                                                        f"greater than max value {show(hi)}"))
        if ratio:
            _ratio(name, ratio, lo, hi, key(child(path, "maxLimitRequestRatio"), name), errs)


def _ratio(name: str, ratio: quantity.Quantity, lo: quantity.Quantity | None,
           hi: quantity.Quantity | None, path: str, errs: Errs) -> None:
    if ratio.value < 1:
        errs.append(invalid(path, show(ratio), f"ratio {show(ratio)} is less than 1"))
    if lo and hi and lo.value:
        limit = hi.value / lo.value
        if ratio.value > limit:
            errs.append(invalid(path, show(ratio), f"ratio {show(ratio)} is greater than max/min "
                                                   f"= {_go_float(limit)}"))


def _go_float(value: Fraction) -> str:
    """Go's `%f` of a float64 (huge ratios overflow to +Inf there too)."""
    try:
        return f"{float(value):f}"
    except OverflowError:
        return "+Inf"


def validate_limit_range_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_limit_range(new, errs)


# ---------------------------------------------------------------------------------------------
# ResourceQuota


def validate_resource_quota(quota: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(quota, True, name_is_dns_subdomain, errs)
    _quota_spec(quota, errs)
    status = get_dict(quota, "status", "", errs) or {}
    _hard_and_used(status, "status", errs)


def _quota_list(obj: dict[str, Any], name: str, path: str, errs: Errs) -> dict[str, Any]:
    values = resource_list(obj, name, path, errs)
    for resource, q in values.items():
        item_path = key(child(path, name), resource)
        validate_quota_resource_name(resource, item_path, errs)
        validate_quantity_value(resource, q, item_path, errs)
    return values


def _hard_and_used(status: dict[str, Any], path: str, errs: Errs) -> None:
    _quota_list(status, "hard", path, errs)
    _quota_list(status, "used", path, errs)


def _quota_spec(quota: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(quota, "spec", "", errs) or {}
    hard = sorted(_quota_list(spec, "hard", "spec", errs))
    scopes = get_str_list(spec, "scopes", "spec", errs)
    for scope in scopes:
        if scope not in SCOPES:
            errs.append(invalid("spec.scopes", scopes, "unsupported scope"))
        for resource in hard:
            if not _scope_allows(scope, resource):
                errs.append(invalid("spec.scopes", scopes, "unsupported scope applied to resource"))
    _conflicts(set(scopes), "spec.scopes", scopes, errs)
    selector = get_dict(spec, "scopeSelector", "spec", errs)
    if selector is None:
        return
    path = "spec.scopeSelector.matchExpressions"
    seen: set[str] = set()
    for _, expr, expr_path in iter_dicts(selector, "matchExpressions", "spec.scopeSelector", errs):
        scope = get_str(expr, "scopeName", expr_path, errs)
        operator = get_str(expr, "operator", expr_path, errs)
        values = get_str_list(expr, "values", expr_path, errs)
        if scope not in SCOPES:
            errs.append(invalid(f"{path}.scopeName", scope, "unsupported scope"))
        for resource in hard:
            if not _scope_allows(scope, resource):
                errs.append(invalid(path, selector, "unsupported scope applied to resource"))
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            errs.append(invalid(f"{path}.operator", operator,
                                "must be 'Exists' when scope is any of "
                                "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                                "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort "
                                "or ResourceQuotaScopeCrossNamespacePodAffinity"))
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{path}.values", "must be at least one value when "
                                                       "`operator` is 'In' or 'NotIn' for scope "
                                                       "selector"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(invalid(f"{path}.values", values, "must be no value when `operator` "
                                                              "is 'Exist' or 'DoesNotExist' for "
                                                              "scope selector"))
        else:
            errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
        seen.add(scope)
    _conflicts(seen, path, scopes, errs)


def _scope_allows(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource, applied (as upstream) to standard quota resources."""
    if resource not in STANDARD_QUOTA_RESOURCES and not is_hugepages(
            resource.removeprefix("requests.")):
        return True
    if scope in ("Terminating", "NotTerminating", "NotBestEffort"):
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    if scope == "BestEffort":
        return resource in _POD_COUNT
    return True


def _conflicts(scopes: set[str], path: str, shown: Any, errs: Errs) -> None:
    for pair in _CONFLICTING_SCOPES:
        if scopes.issuperset(pair):
            errs.append(invalid(path, shown, "conflicting scopes"))


def validate_resource_quota_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_resource_quota(new, errs)
    validate_object_meta_update(new, old, errs)
    new_scopes = sub(new, "spec", "scopes") or []
    old_scopes = sub(old, "spec", "scopes") or []
    if isinstance(new_scopes, list) and isinstance(old_scopes, list) and set(
            map(str, new_scopes)) != set(map(str, old_scopes)):
        errs.append(invalid("spec.scopes", new_scopes, IMMUTABLE))


def validate_resource_quota_status_update(new: dict[str, Any], old: dict[str, Any],
                                          errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    if not sub(new, "metadata", "resourceVersion"):
        errs.append(required("resourceVersion"))
    status = get_dict(new, "status", "", errs) or {}
    _hard_and_used(status, "status", errs)
