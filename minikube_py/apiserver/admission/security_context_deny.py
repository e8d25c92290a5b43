"""SecurityContextDeny: refuse pods that ask for security-context settings.

Kubernetes piece: plugin/pkg/admission/securitycontext/scdeny (v1.0 onward). On pod create and
update, upstream forbids pod-level supplementalGroups, seLinuxOptions, runAsUser and fsGroup and
container-level (and init container) seLinuxOptions and runAsUser, each with its own message.
Upstream does NOT judge `privileged` here (that is --allow-privileged), and neither do we.
"""

from __future__ import annotations

from typing import Any

from .chain import Attributes
from .denial import forbidden

_POD_FIELDS = (("supplementalGroups", "SupplementalGroups"), ("seLinuxOptions", "SELinuxOptions"),
               ("runAsUser", "RunAsUser"), ("fsGroup", "FSGroup"))
_CONTAINER_FIELDS = (("seLinuxOptions", "SELinuxOptions"), ("runAsUser", "RunAsUser"))


def violation(pod: dict[str, Any]) -> str | None:
    """Upstream's message for the first forbidden setting in `pod`, or None."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    context = spec.get("securityContext")
    if isinstance(context, dict):
        for field, go_name in _POD_FIELDS:
            if context.get(field) is not None:
                return f"pod.Spec.SecurityContext.{go_name} is forbidden"
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        for container in containers if isinstance(containers, list) else ():
            context = container.get("securityContext") if isinstance(container, dict) else None
            if not isinstance(context, dict):
                continue
            for field, go_name in _CONTAINER_FIELDS:
                if context.get(field) is not None:
                    return f"SecurityContext.{go_name} is forbidden"
    return None


class SecurityContextDeny:
    name = "SecurityContextDeny"

    async def admit(self, attrs: Attributes) -> None:
        if (attrs.operation not in ("CREATE", "UPDATE") or attrs.strategy.resource != "pods"
                or attrs.subresource or not isinstance(attrs.obj, dict)):
            return
        message = violation(attrs.obj)
        if message:
            raise forbidden(attrs, message)
