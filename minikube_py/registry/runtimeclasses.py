"""node.k8s.io/v1 RuntimeClasses: which container runtime handler a pod runs with.

Kubernetes piece: pkg/registry/node/runtimeclass (cluster-scoped, no status, stored at
`/registry/runtimeclasses/<name>`). The fields sit at the top level (`handler`, `overhead`,
`scheduling`), not under a spec; what they do to pods is the RuntimeClass admission plugin's
(apiserver/admission/runtime_class.py).
"""

from __future__ import annotations

from .strategy import Strategy

RUNTIME_CLASSES = Strategy(
    group="node.k8s.io", version="v1", resource="runtimeclasses", kind="RuntimeClass",
    namespaced=False, key_root="runtimeclasses", spec_fields=(),
)
