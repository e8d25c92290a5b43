"""The replication manager: ReplicationControllers (core/v1), v1.0's one workload controller.

Kubernetes piece: pkg/controller/replication (v1.0's ReplicationManager; since v1.6
replication_controller.go is a thin wrapper that runs the ReplicaSet controller's code over
RC adapters). Same here: everything is `ReplicaSetBase`; an RC differs only in its resource,
its event source ("replication-controller") and its selector, a plain label map
(`spec.selector: {app: web}`) rather than a metav1.LabelSelector.
"""

from __future__ import annotations

from typing import Any

from ..api.labels import NOTHING, LabelSelector
from ..client.resources import REPLICATION_CONTROLLERS
from .base import ControllerContext
from .controller_utils import label_selector
from .replicaset import ReplicaSetBase

Obj = dict[str, Any]


class ReplicationManager(ReplicaSetBase):
    name = "replicationcontroller"
    service_account = "replication-controller"
    resource = REPLICATION_CONTROLLERS
    component = "replication-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx, ctx.options.concurrent_rc_syncs)

    def selector_of(self, owner: Obj) -> LabelSelector:
        """`spec.selector` is a map; an empty one selects nothing (validation forbids it,
        and an RC must never claim every pod of its namespace)."""
        selector = (owner.get("spec") or {}).get("selector")
        if not selector:
            return NOTHING
        return label_selector({"matchLabels": selector})
