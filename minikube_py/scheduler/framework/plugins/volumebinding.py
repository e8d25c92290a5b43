"""VolumeBinding: the pod's claims must be bound, or bindable on the node (WaitForFirstConsumer).

Kubernetes piece: pkg/scheduler/framework/plugins/volumebinding (1.31) over the
SchedulerVolumeBinder, the successor of CheckVolumeBinding. Wraps what the v1.x scheduler
already does (algorithm/predicates_volume_zone.claim_problems and
algorithm/predicates_volume_binding):

- PreFilter: Skip for a pod without claims; a claim that is missing, being deleted, or
  unbound while its class binds immediately rejects the pod (UnschedulableAndUnresolvable,
  upstream's "pod has unbound immediate PersistentVolumeClaims" / `persistentvolumeclaim "x"
  not found`).
- Filter: for delayed (WaitForFirstConsumer) claims, only nodes where a volume matches or the
  class may provision — "node(s) didn't find available persistent volumes to bind",
  UnschedulableAndUnresolvable.
- Reserve: works out the writes for the chosen node (pre-bind a matching volume, or select the
  node on the claim: upstream AssumePodVolumes); Unreserve forgets them.
- PreBind: performs them through the handle's client (upstream BindPodVolumes).
Not done (as the v1.x path): CSIStorageCapacity checks, and waiting in PreBind for the claims
to become bound (the kubelet waits for them); VolumeBinding's Score is alpha upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import structlog

from ....client.resources import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_volume_binding import (
    ERR_BIND_CONFLICT,
    Write,
    bind_plan,
    delayed_claim_failures,
)
from ...algorithm.predicates_volume_zone import claim_problems
from ...algorithm.predicates_volumes import pod_claims
from ...algorithm.volume_listers import VolumeLister
from ...nodetable import Mask, NodeTable
from ..interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterFailures,
    Handle,
    PreFilterResult,
    Rows,
    Status,
)
from .cluster_lookups import volume_lister

log = structlog.get_logger(component="scheduler")
NAME = "VolumeBinding"
_STATE_KEY = "Reserve" + NAME


class VolumeBinding:
    name = NAME

    def __init__(self, lister: VolumeLister, handle: Handle | None) -> None:
        self.lister = lister
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.claims:
            return None, Status(Code.SKIP)
        problems = claim_problems(pod, self.lister)
        if problems:
            return None, Status.unresolvable(*problems)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        conflict = nodes.everywhere(False)
        for _reason, rows in delayed_claim_failures(pod, self.lister, nodes):
            conflict |= rows
        return [(Status.unresolvable(ERR_BIND_CONFLICT), conflict)] if conflict.any() else []

    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        """Skip: upstream scores only with the VolumeCapacityPriority / StorageCapacityScoring
        gate (alpha, off in 1.31), by how full the matched local volumes would be."""
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64)

    def score_extensions(self) -> None:
        return None

    def reserve(self, state: CycleState, pod: dict, node_name: str) -> Status | None:
        claims = [claim for _volume, claim, _read_only in pod_claims(pod)]
        info = self.handle.node_info(node_name) if self.handle is not None else None
        if not claims or info is None or info.node is None:
            state.write(_STATE_KEY, [])
            return None
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        state.write(_STATE_KEY, bind_plan(self.lister, namespace, claims, info.node))
        return None

    def unreserve(self, state: CycleState, pod: dict, node_name: str) -> None:
        state.delete(_STATE_KEY)

    async def pre_bind(self, state: CycleState, pod: dict, node_name: str) -> Status | None:
        writes: list[Write] = state.get(_STATE_KEY) or []
        if not writes:
            return None
        client = getattr(self.handle, "client", None)
        if client is None:
            return Status.error("binding volumes: the scheduler has no API client")
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        for write in writes:
            if write.kind == "volume":
                await client.update(PERSISTENT_VOLUMES, write.body)
                log.info("volume pre-bound", volume=write.name, node=node_name)
            else:
                await client.patch(PERSISTENT_VOLUME_CLAIMS, write.name, write.body, namespace)
                log.info("claim node selected", claim=f"{namespace}/{write.name}", node=node_name)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(kind, ActionType.ADD | ActionType.UPDATE))
                for kind in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "Node")]


def new(args: Mapping[str, Any], handle: Handle) -> VolumeBinding:
    return VolumeBinding(volume_lister(handle), handle)
