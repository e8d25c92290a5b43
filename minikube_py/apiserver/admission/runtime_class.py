"""RuntimeClass: a pod's runtimeClassName brings its class's overhead and scheduling.

Kubernetes piece: plugin/pkg/admission/runtimeclass (on by default). On pod create (not a
subresource): a named class that does not exist is a 403 (`pod rejected: RuntimeClass "x" not
found`); the class's `overhead.podFixed` becomes `spec.overhead` (a different overhead the
client wrote: 403); `scheduling.nodeSelector` is merged into the pod's (a conflicting value:
403) and `scheduling.tolerations` merged with the pod's; finally, as upstream's validating
half, an overhead without a class that defines one is a 403. The decisions are
api/runtimeclass.py's; this module looks the class up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api import errors
from ...api import runtimeclass as rc
from .chain import Attributes
from .denial import forbidden

GetClass = Callable[[str], Awaitable[dict[str, Any]]]


class RuntimeClass:
    name = "RuntimeClass"

    def __init__(self, get_class: GetClass) -> None:
        self._get = get_class

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not isinstance(attrs.obj, dict):
            return
        if (attrs.strategy.group, attrs.strategy.resource) != ("", "pods"):
            return
        spec = attrs.obj.get("spec")
        if not isinstance(spec, dict):
            return
        name = spec.get("runtimeClassName")
        runtime_class = None
        if isinstance(name, str):
            try:
                runtime_class = await self._get(name)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
                raise forbidden(attrs, f'pod rejected: RuntimeClass "{name}" not found') from None
        for step in (rc.set_overhead, rc.set_scheduling, rc.validate_overhead):
            reason = step(spec, runtime_class)
            if reason is not None:
                raise forbidden(attrs, reason)
