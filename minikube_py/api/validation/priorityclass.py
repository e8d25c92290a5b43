"""scheduling.k8s.io/v1 PriorityClass.

Kubernetes piece: pkg/apis/scheduling/validation (ValidatePriorityClass,
ValidatePriorityClassUpdate). Names are DNS subdomains; a `system-` name must be one of the
built-in system classes with their value; a user class is at most 1,000,000,000; value and
preemptionPolicy never change.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api.errors import forbidden, not_supported
from minikube_py.api.priority import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    PREEMPTION_POLICIES,
    SYSTEM_PREFIX,
    known_system_class_error,
)
from minikube_py.api.validation.common import name_is_dns_subdomain, validate_immutable
from minikube_py.api.validation.meta import (
    metadata,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import Errs, get_bool, get_int, get_str


def validate_priority_class(pc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(pc, False, name_is_dns_subdomain, errs)
    name = get_str(metadata(pc, []), "name", "metadata", [])
    value = get_int(pc, "value", "", errs)
    global_default = get_bool(pc, "globalDefault", "", errs)
    if name.startswith(SYSTEM_PREFIX):
        error = known_system_class_error(name, value or 0, global_default)
        if error is not None:
            errs.append(forbidden("metadata.name", f"priority class names with "
                                  f"'{SYSTEM_PREFIX}' prefix are reserved for system use only. "
                                  f"error: {error}"))
    elif value is not None and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value", "maximum allowed value of a user defined priority is "
                              f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    get_str(pc, "description", "", errs)
    if pc.get("preemptionPolicy") is not None:
        policy = get_str(pc, "preemptionPolicy", "", errs)
        if policy not in PREEMPTION_POLICIES:
            errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))


def validate_priority_class_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    if new.get("value") != old.get("value"):
        errs.append(forbidden("value", "may not be changed in an update."))
    validate_immutable(new.get("preemptionPolicy"), old.get("preemptionPolicy"),
                      "preemptionPolicy", errs)
