"""The pod garbage collector: bound the number of terminated pods, and delete pods whose
node is gone or that were deleted before they were ever scheduled.

Kubernetes piece: pkg/controller/podgc/gc_controller.go (gc every gcCheckPeriod = 20 s:
gcTerminated — the oldest terminated pods above --terminated-pod-gc-threshold, 12500;
gcOrphaned — pods bound to a node that no longer exists, confirmed by a GET after a 40 s
quarantine, first marked Failed with a DisruptionTarget condition (reason DeletionByPodGC),
then force-deleted; gcUnscheduledTerminating — terminating pods with no node). Runs as
`system:serviceaccount:kube-system:pod-garbage-collector` (pods: list, watch, delete;
pods/status: patch; nodes: get, list, watch). The choices are pure functions below.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..api import meta
from ..api.errors import StatusError
from ..client.errors import is_not_found
from ..client.resources import NODES, PODS
from .base import Controller, ControllerContext
from .conditions import is_pod_terminal

Obj = dict[str, Any]

GC_CHECK_PERIOD = 20.0
QUARANTINE = 40.0
NODE_GONE_MESSAGE = "PodGC: node no longer exists"


def terminated_to_delete(pods: list[Obj], threshold: int) -> list[Obj]:
    """The oldest terminated pods beyond `threshold` (0: none), oldest first."""
    if threshold <= 0:
        return []
    terminated = [p for p in pods if is_pod_terminal(p)]
    excess = len(terminated) - threshold
    if excess <= 0:
        return []
    terminated.sort(key=lambda p: ((p.get("metadata") or {}).get("creationTimestamp") or "",
                                   (p.get("metadata") or {}).get("name", "")))
    return terminated[:excess]


def unscheduled_terminating(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if (p.get("metadata") or {}).get("deletionTimestamp")
            and not (p.get("spec") or {}).get("nodeName")]


def bound_to_missing_nodes(pods: list[Obj], nodes: set[str]) -> dict[str, list[Obj]]:
    """node name -> its pods, for nodes the informer does not know."""
    out: dict[str, list[Obj]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and node not in nodes:
            out.setdefault(node, []).append(pod)
    return out


class PodGCController(Controller):
    name = "podgc"
    service_account = "pod-garbage-collector"
    gc_check_period = GC_CHECK_PERIOD
    quarantine = QUARANTINE

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.threshold = ctx.options.terminated_pod_gc_threshold
        self.clock = ctx.clock
        self.pods = ctx.informers.informer(PODS)
        self.nodes = ctx.informers.informer(NODES)
        #: node name -> when it was first seen missing (upstream nodeQueue's delay)
        self.missing_since: dict[str, float] = {}

    async def sync(self, key: str) -> None:  # no queue: the work is periodic
        return None

    async def background(self) -> None:
        while True:
            await self.resumed()
            try:
                await self.gc()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - try again next period
                self.log.warning("pod gc failed", error=str(exc))
            await asyncio.sleep(self.gc_check_period)

    async def gc(self) -> None:
        """One pass (upstream gc): terminated, orphaned, unscheduled terminating."""
        pods = self.pods.indexer.list()
        for pod in terminated_to_delete(pods, self.threshold):
            await self._force_delete(pod)
        await self._gc_orphaned(pods)
        for pod in unscheduled_terminating(pods):
            await self._force_delete(pod)

    async def _gc_orphaned(self, pods: list[Obj]) -> None:
        known = {(n.get("metadata") or {}).get("name", "") for n in self.nodes.indexer.list()}
        orphans = bound_to_missing_nodes(pods, known)
        now = self.clock()
        for node in list(self.missing_since):
            if node not in orphans:
                del self.missing_since[node]
        for node, node_pods in orphans.items():
            since = self.missing_since.setdefault(node, now)
            if now - since < self.quarantine:
                continue
            try:
                await self.client.get(NODES, node)
                continue  # it exists after all (the informer lags)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
            for pod in node_pods:
                await self._mark_failed(pod)
                await self._force_delete(pod)

    async def _mark_failed(self, pod: Obj) -> None:
        """Upstream patchPodStatus before the delete: phase Failed (unless terminal) and a
        DisruptionTarget condition saying why."""
        if is_pod_terminal(pod):
            return
        md = pod["metadata"]
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                     "message": NODE_GONE_MESSAGE, "lastTransitionTime": meta.rfc3339(self.clock())}
        try:
            await self.client.patch(PODS, md["name"], {"status": {
                "phase": "Failed", "conditions": [condition]}}, md.get("namespace"),
                patch_type="strategic", subresource="status")
        except StatusError as exc:
            if not is_not_found(exc):
                raise

    async def _force_delete(self, pod: Obj) -> None:
        md = pod["metadata"]
        self.log.info("deleting pod", pod=f"{md.get('namespace')}/{md.get('name')}")
        try:
            await self.client.delete(PODS, md["name"], md.get("namespace"),
                                     grace_period_seconds=0)
        except StatusError as exc:
            if not is_not_found(exc):
                raise
