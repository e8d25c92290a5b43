"""DefaultTolerationSeconds: every pod tolerates a not-ready or unreachable node for 5 minutes.

Kubernetes piece: plugin/pkg/admission/defaulttolerationseconds (on by default since 1.13,
flags --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds, 300).
When a node stops reporting, the node lifecycle controller taints it
`node.kubernetes.io/not-ready` or `node.kubernetes.io/unreachable` with effect NoExecute, and
the taint eviction controller evicts every pod that does not tolerate the taint at once. These
two tolerations (`operator: Exists`, `tolerationSeconds: 300`) are what turn that into "evicted
after five minutes" for ordinary pods. A pod that already tolerates the taint (the same key or
an empty key, with effect NoExecute or any effect) keeps its own toleration.
"""

from __future__ import annotations

from typing import Any

from .chain import Attributes

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300


def tolerates(tolerations: list[Any], key: str) -> bool:
    """Upstream's check: a toleration of `key` (or of every key) for NoExecute (or every
    effect) already exists."""
    return any(isinstance(t, dict) and t.get("key") in (key, "", None)
               and t.get("effect") in ("NoExecute", "", None) for t in tolerations)


def add_default_tolerations(pod: dict[str, Any], not_ready_seconds: int,
                            unreachable_seconds: int) -> None:
    """Append the two NoExecute tolerations the pod lacks, in upstream's order."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = []
    if not isinstance(tolerations, list):
        return  # validation reports the wrong type
    added = [{"key": key, "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": seconds}
             for key, seconds in ((NOT_READY_TAINT, not_ready_seconds),
                                  (UNREACHABLE_TAINT, unreachable_seconds))
             if not tolerates(tolerations, key)]
    if added:
        spec["tolerations"] = tolerations + added


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"

    def __init__(self, not_ready_seconds: int = DEFAULT_SECONDS,
                 unreachable_seconds: int = DEFAULT_SECONDS) -> None:
        self.not_ready_seconds = not_ready_seconds
        self.unreachable_seconds = unreachable_seconds

    async def admit(self, attrs: Attributes) -> None:
        """Pods on create and update (upstream handles both), never their subresources."""
        if (attrs.operation not in ("CREATE", "UPDATE") or attrs.strategy.resource != "pods"
                or attrs.strategy.group or attrs.subresource or not isinstance(attrs.obj, dict)):
            return
        add_default_tolerations(attrs.obj, self.not_ready_seconds, self.unreachable_seconds)
