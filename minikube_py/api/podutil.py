"""Which container of a pod a request means.

Kubernetes piece: pkg/api/v1/pod (VisitContainers) and pkg/registry/core/pod/strategy.go's
validateContainer, which LogLocation, ExecLocation, AttachLocation share: no container named
means the pod's only container; a pod with several gets a 400 listing every container it has —
init, regular and ephemeral, in that order; a named container may be any of those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import errors

_KINDS = ("initContainers", "containers", "ephemeralContainers")


def container_names(pod: Mapping[str, Any]) -> list[str]:
    """Every container's name, in VisitContainers' order."""
    spec = pod.get("spec") or {}
    return [c.get("name", "") for kind in _KINDS for c in spec.get(kind) or []]


def validate_container(pod: Mapping[str, Any], name: str, requested: str) -> str:
    """The container a logs/exec/attach request targets, or upstream's 400."""
    if requested:
        if requested not in container_names(pod):
            raise errors.bad_request(f"container {requested} is not valid for pod {name}")
        return requested
    regular = (pod.get("spec") or {}).get("containers") or []
    if len(regular) == 1:
        return regular[0].get("name", "")
    if not regular:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                             f"[{' '.join(container_names(pod))}]")
