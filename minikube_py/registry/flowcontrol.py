"""flowcontrol.apiserver.k8s.io/v1: FlowSchemas and PriorityLevelConfigurations.

Kubernetes piece: pkg/registry/flowcontrol/{flowschema,prioritylevelconfiguration}: both
cluster-scoped with a `status` subresource (the config controller writes FlowSchema conditions);
PrepareForCreate clears the status. The bootstrap objects are created and kept by
apiserver/flowcontrol_bootstrap.py, as upstream's post-start hook does.
"""

from __future__ import annotations

from typing import Any

from .strategy import Strategy, SubresourceSpec

GROUP = "flowcontrol.apiserver.k8s.io"
_STATUS = SubresourceSpec("status", ("get", "patch", "update"))


async def _clear_status(registry: Any, obj: dict[str, Any]) -> None:
    obj["status"] = {}


FLOW_SCHEMAS = Strategy(
    group=GROUP, version="v1", resource="flowschemas", kind="FlowSchema", namespaced=False,
    key_root="flowschemas", subresources=(_STATUS,), has_status=True,
    prepare_create=_clear_status,
)

PRIORITY_LEVEL_CONFIGURATIONS = Strategy(
    group=GROUP, version="v1", resource="prioritylevelconfigurations",
    kind="PriorityLevelConfiguration", namespaced=False, key_root="prioritylevelconfigurations",
    subresources=(_STATUS,), has_status=True, prepare_create=_clear_status,
)

STRATEGIES = (FLOW_SCHEMAS, PRIORITY_LEVEL_CONFIGURATIONS)
