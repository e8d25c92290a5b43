"""Pod priority vocabulary: the built-in system classes, the limits on user classes.

Kubernetes piece: pkg/apis/scheduling (types.go constants, helpers.go SystemPriorityClasses and
IsKnownSystemPriorityClass). The two system classes exist in every cluster (the API server
creates them at startup); a class named `system-...` must be one of them, with their value and
globalDefault false; a user class may not be above 1,000,000,000.
"""

from __future__ import annotations

from typing import Any

SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
#: the priority of a pod without a class when no class is globalDefault
DEFAULT_PRIORITY = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, "Never")

#: name -> (value, description), upstream's systemPriorityClasses
SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (SYSTEM_CRITICAL_PRIORITY + 1000, (
        "Used for system critical pods that must not be moved from their current node.")),
    "system-cluster-critical": (SYSTEM_CRITICAL_PRIORITY, (
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.")),
}


def system_priority_class(name: str) -> dict[str, Any]:
    """The PriorityClass object the API server bootstraps for system class `name`."""
    value, description = SYSTEM_PRIORITY_CLASSES[name]
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "description": description,
            "preemptionPolicy": PREEMPT_LOWER_PRIORITY}


def known_system_class_error(name: str, value: Any, global_default: Any) -> str | None:
    """IsKnownSystemPriorityClass's error text, or None when the class is a known one."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if bool(global_default) is not False:
        return f"globalDefault of {name} PriorityClass must be false"
    return None
