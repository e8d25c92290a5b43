"""The built-in PriorityClasses, created when the API server starts.

Kubernetes piece: pkg/registry/scheduling/rest/storage_scheduling.go, the post-start hook
`scheduling/bootstrap-system-priority-classes`: `system-node-critical` (2000001000) and
`system-cluster-critical` (2000000000) are created if missing, so `priorityClassName:
system-cluster-critical` works in every cluster. They cannot be deleted (the strategy's
`undeletable`), and a user cannot create another `system-` class (validation).
"""

from __future__ import annotations

from ..api import errors
from ..api.priority import SYSTEM_PRIORITY_CLASSES, system_priority_class
from .generic import Registry


async def ensure_system_priority_classes(registry: Registry) -> list[str]:
    """Create the missing system classes; returns the names created (an existing class, or
    one another API server created in the meantime, is left as it is)."""
    created = []
    for name in SYSTEM_PRIORITY_CLASSES:
        try:
            await registry.get("", name)
            continue
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        try:
            await registry.create("", system_priority_class(name))
        except errors.StatusError as exc:
            if exc.code != 409:
                raise
            continue
        created.append(name)
    return created
