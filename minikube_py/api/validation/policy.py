"""policy/v1 PodDisruptionBudget.

Kubernetes piece: pkg/apis/policy/validation (ValidatePodDisruptionBudget,
ValidatePodDisruptionBudgetSpec, ValidatePodDisruptionBudgetStatusUpdate) as the policy/v1
strategy calls them. Since 1.15 the spec may change on update (no immutability rule); the
status subresource checks that the counts are not negative. Upstream accepts a budget with
neither minAvailable nor maxUnavailable (it protects nothing: desiredHealthy 0); setting both
is the error.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import GoValue, invalid, not_supported
from minikube_py.api.validation.common import (
    name_is_dns_subdomain,
    validate_label_selector,
    validate_nonnegative,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import Errs, get_dict, get_int
from minikube_py.api.validation.workload import _int_or_percent as int_or_percent

UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
_STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def _int_or_string_text(value: Any) -> str:
    if value is None:
        return "nil"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _spec_text(spec: dict[str, Any]) -> GoValue:
    """The value upstream prints for `spec` (Go's %#v of the struct, whose pointer fields print
    as addresses; we print what they point to)."""
    return GoValue("policy.PodDisruptionBudgetSpec{MinAvailable:"
                   + _int_or_string_text(spec.get("minAvailable")) + ", MaxUnavailable:"
                   + _int_or_string_text(spec.get("maxUnavailable")) + "}")


def _not_over_100_percent(value: Any, path: str, errs: Errs) -> None:
    """IsNotMoreThan100Percent: only a valid percent string is checked."""
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() \
            and int(value[:-1]) > 100:
        errs.append(invalid(path, value, "must not be greater than 100%"))


def _spec(pdb: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(pdb, "spec", "", errs) or {}
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        errs.append(invalid("spec", _spec_text(spec),
                            "minAvailable and maxUnavailable cannot be both set"))
    for name, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            int_or_percent(value, f"spec.{name}", errs)
            _not_over_100_percent(value, f"spec.{name}", errs)
    selector = get_dict(spec, "selector", "spec", errs)
    if selector is not None:
        validate_label_selector(selector, "spec.selector", errs)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy,
                                  UNHEALTHY_POD_EVICTION_POLICIES))


def validate_pod_disruption_budget(pdb: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(pdb, True, name_is_dns_subdomain, errs)
    _spec(pdb, errs)


def validate_pod_disruption_budget_update(new: dict[str, Any], old: dict[str, Any],
                                          errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _spec(new, errs)


def validate_pod_disruption_budget_status_update(new: dict[str, Any], old: dict[str, Any],
                                                 errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    status = get_dict(new, "status", "", errs) or {}
    for name in _STATUS_COUNTS:
        validate_nonnegative(get_int(status, name, "status", errs), f"status.{name}", errs)
