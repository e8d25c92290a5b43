"""The taint eviction controller: pods leave a node whose NoExecute taints they stop tolerating.

Kubernetes piece: pkg/controller/tainteviction (the NoExecuteTaintManager of 1.6-1.28, its own
controller `taint-eviction-controller` since 1.29). For every pod bound to a node with NoExecute
taints: a taint the pod does not tolerate at all evicts it at once; otherwise it is evicted when
the smallest tolerationSeconds of the matching tolerations has passed since the controller first
saw it tainted (no tolerationSeconds: it stays for ever). A taint that goes away (the node is
Ready again) cancels the pending eviction. This is what makes a dead node's pods leave after
the 300 s DefaultTolerationSeconds gives every pod, not at once.

An eviction records `TaintManagerEviction` on the pod, adds the DisruptionTarget condition
(reason DeletionByTaintManager) and deletes the pod gracefully, as upstream. The schedule lives
in memory, as upstream's timed queue: a restarted controller starts the clocks again.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..api import meta
from ..api.errors import StatusError
from ..api.taints import NO_EXECUTE, taint_of, toleration_time
from ..client.resources import NODES, PODS
from .base import Controller, ControllerContext
from .node_lifecycle import NODE_NAME_INDEX, pod_node_name

Obj = dict[str, Any]

#: how often the tainted nodes' pods are looked at (upstream's timed workers fire at the
#: exact moment; a short period is the same to within this)
PERIOD = 0.1
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True",
                     "reason": "DeletionByTaintManager",
                     "message": "Taint manager: deleting due to NoExecute taint"}


def no_execute_taints(node: Obj) -> list[tuple[str, str, str]]:
    return [taint_of(t) for t in (node.get("spec") or {}).get("taints") or ()
            if isinstance(t, dict) and t.get("effect") == NO_EXECUTE]


def pod_key(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


class TaintEvictionController(Controller):
    name = "taint-eviction-controller"
    #: upstream: "taint-manager uses existing cluster role from node-controller"
    service_account = "node-controller"
    workers = 0  # periodic: the schedule below is the work queue

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.nodes = ctx.informers.informer(NODES)
        self.pods = ctx.informers.informer(PODS, indexers={NODE_NAME_INDEX: pod_node_name})
        self.recorder = ctx.recorder("taint-eviction-controller")
        self.clock = time.monotonic
        #: pod key -> when the controller first saw it on a NoExecute-tainted node
        self.since: dict[str, float] = {}
        #: pods deleted whose deletion the cache has not shown yet (evict once, not per tick)
        self.evicted: set[str] = set()
        #: node name -> its NoExecute taints, for tainted nodes only (kept by the node
        #: informer's events, as upstream's handleNodeUpdate does): a tick looks at the few
        #: tainted nodes, not at all 5000
        self.tainted: dict[str, list[tuple[str, str, str]]] = {}
        self.nodes.add_event_handler(on_add=self._node_changed,
                                     on_update=lambda _old, new: self._node_changed(new),
                                     on_delete=self._node_deleted)

    def _node_changed(self, node: Obj) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        taints = no_execute_taints(node)
        if taints:
            self.tainted[name] = taints
        else:
            self.tainted.pop(name, None)

    def _node_deleted(self, node: Obj) -> None:
        self.tainted.pop((node.get("metadata") or {}).get("name", ""), None)

    async def background(self) -> None:
        while True:
            await self.resumed()
            try:
                await self.reconcile()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - keep evicting on the next tick
                self.log.exception("taint eviction pass failed")
            await asyncio.sleep(PERIOD)

    def due(self, now: float) -> list[tuple[Obj, str]]:
        """The pods to evict now, with their node; updates the schedule (pure over the
        caches and the clock)."""
        due: list[tuple[Obj, str]] = []
        waiting: dict[str, float] = {}
        for node_name, taints in list(self.tainted.items()):
            for pod in self.pods.indexer.by_index(NODE_NAME_INDEX, node_name):
                if (pod.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                seconds = toleration_time(pod.get("spec") or {}, taints)
                if seconds == float("inf"):
                    continue  # tolerated for ever
                key = pod_key(pod)
                since = waiting[key] = self.since.get(key, now)
                if (seconds is None or now >= since + seconds) and key not in self.evicted:
                    due.append((pod, node_name))
        self.since = waiting  # pods no longer tainted (or gone) are forgotten: cancelled
        self.evicted &= waiting.keys()
        return due

    async def reconcile(self) -> None:
        for pod, node_name in self.due(self.clock()):
            await self.evict(pod, node_name)

    async def evict(self, pod: Obj, node_name: str) -> None:
        md = pod["metadata"]
        self.log.info("evicting pod", pod=pod_key(pod), node=node_name)
        self.recorder.event(pod, "Normal", "TaintManagerEviction",
                            f"Marking for deletion Pod {pod_key(pod)}")
        status = dict(pod.get("status") or {})
        conditions = [c for c in status.get("conditions") or ()
                      if c.get("type") != DISRUPTION_TARGET["type"]]
        status["conditions"] = conditions + [
            dict(DISRUPTION_TARGET, lastTransitionTime=meta.now_rfc3339())]
        try:
            await self.client.update_status(PODS, {**pod, "status": status})
        except StatusError as exc:
            if exc.code == 404:
                return
            # a conflict: the condition is a courtesy; the deletion below is what matters
        try:
            await self.client.delete(PODS, md["name"], md["namespace"])
        except StatusError as exc:
            if exc.code != 404:
                self.log.warning("could not evict pod", pod=pod_key(pod), error=str(exc))
                return
        self.evicted.add(pod_key(pod))
