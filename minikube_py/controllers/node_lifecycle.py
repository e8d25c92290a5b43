"""The node lifecycle controller: notices nodes whose kubelet went quiet, marks them and their
pods not ready, and evicts their pods if they stay away.

Kubernetes v1.0 piece: pkg/cloudprovider/nodecontroller (NodeController.monitorNodeStatus,
markAllPodsNotReady, deletePods behind the RateLimitedTimedQueue), later
pkg/controller/nodelifecycle; plus the orphan half of pkg/controller/podgc (pods bound to a
node that no longer exists are deleted for good, as no kubelet will ever finish them).

Every --node-monitor-period it looks at every node in the shared informer's cache. The
judgement (node_health) uses the controller's own clock: a node whose Ready heartbeat has not
changed, and whose Lease in kube-node-lease (a second shared informer) has not been renewed,
for --node-monitor-grace-period (--node-startup-grace-period if it never posted Ready)
gets its conditions set to Unknown through nodes/{name}/status, a NodeNotReady event, and its
pods' Ready condition set False. A node NotReady or Unknown for longer than
--pod-eviction-timeout has its pods deleted, one node per token of a bucket refilled at
--deleting-pods-qps (burst --deleting-pods-burst); Ready again cancels a pending eviction.

That is v1.0's eviction (--enable-taint-manager=false). By default, as in 1.31 (taint-based
eviction, pkg/controller/nodelifecycle doNoExecuteTaintingPass), a node whose Ready is False
gets the taint `node.kubernetes.io/not-ready:NoExecute`, Unknown gets `unreachable`, Ready
removes them; the taint-eviction-controller then evicts each pod when its tolerations of that
taint run out (300 s for pods DefaultTolerationSeconds admitted; at once for pods without).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..api import meta
from ..api.errors import StatusError
from ..client.resources import LEASES, NODES, PODS
from .base import Controller, ControllerContext
from .conditions import get_condition
from .node_health import (
    Eviction,
    NodeHealth,
    after_marked_unknown,
    conditions_unknown,
    eviction_decision,
    grace_period,
    no_execute_taint_key,
    no_schedule_taint_keys,
    observe,
    observe_lease,
    stale,
    with_condition_taints,
)
from .rate_limited_queue import RateLimitedTimedQueue, TokenBucket

Obj = dict[str, Any]

NODE_NAME_INDEX = "spec.nodeName"
#: where kubelets keep their node leases (upstream v1.NamespaceNodeLease)
NODE_LEASE_NAMESPACE = "kube-node-lease"
#: upstream nodeStatusUpdateRetry
STATUS_UPDATE_RETRY = 5
#: upstream nodeEvictionPeriod: how often the eviction queue is looked at
EVICTION_PERIOD = 0.1


def pod_node_name(pod: Obj) -> list[str]:
    """Index pods by the node they are bound to."""
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node else []


def node_ref(name: str) -> Obj:
    """The object events about a node are recorded against (upstream uses the name as uid)."""
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "uid": name}}


class NodeLifecycleController(Controller):
    name = "nodelifecycle"
    service_account = "node-controller"
    workers = 0  # no work queue: all work is periodic (background)

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.options = opts = ctx.options
        self.nodes = ctx.informers.informer(NODES)
        self.pods = ctx.informers.informer(PODS, indexers={NODE_NAME_INDEX: pod_node_name})
        #: upstream's leaseLister: the kubelets' heartbeats in lease mode
        self.leases = ctx.informers.informer(LEASES, namespace=NODE_LEASE_NAMESPACE)
        self.recorder = ctx.recorder("node-controller")
        self.clock = time.time
        self.health: dict[str, NodeHealth] = {}
        self.known: set[str] = set()
        self.evictor = RateLimitedTimedQueue(
            TokenBucket(opts.deleting_pods_qps, opts.deleting_pods_burst))

    async def background(self) -> None:
        evictions = asyncio.create_task(self._eviction_loop(), name="node-eviction")
        try:
            while True:
                await self.resumed()
                try:
                    await self.monitor_node_status()
                    await self.delete_orphaned_pods()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - the monitor must keep running (HandleCrash)
                    self.log.exception("node monitor pass failed")
                await asyncio.sleep(self.options.node_monitor_period)
        finally:
            evictions.cancel()
            await asyncio.gather(evictions, return_exceptions=True)

    # -- the monitor ---------------------------------------------------------------------
    async def monitor_node_status(self) -> None:
        now = self.clock()
        nodes = self.nodes.indexer.list()
        names = {n["metadata"]["name"] for n in nodes}
        for name in sorted(names - self.known):
            self.log.info("observed a new node", node=name)
            self.recorder.event(node_ref(name), "Normal", "RegisteredNode",
                                f"Registered Node {name} in Controller")
            self.evictor.remove(name)
            self.known.add(name)
        for name in sorted(self.known - names):
            self.log.info("node no longer present", node=name)
            self.recorder.event(node_ref(name), "Normal", "RemovingNode",
                                f"Removing Node {name} from Controller")
            self.known.discard(name)
            self.health.pop(name, None)
            self.evictor.remove(name)  # its pods go with delete_orphaned_pods
        for node in nodes:
            await self._monitor_node(node, now)

    async def _monitor_node(self, node: Obj, now: float) -> None:
        name = node["metadata"]["name"]
        for _ in range(STATUS_UPDATE_RETRY):
            try:
                observed, current = await self._try_update_node_status(node, now)
                break
            except StatusError as exc:
                if exc.code != 409:
                    self.log.warning("could not update node status", node=name, error=str(exc))
                    return
            try:
                node = await self.client.get(NODES, name)
            except StatusError as exc:
                if exc.code == 404:
                    return
                raise
        else:
            self.log.warning("update node status exceeded retry count", node=name)
            return
        # a node that has no Ready condition yet (its kubelet is starting) is left alone
        # until the startup grace period has the condition written as Unknown
        if get_condition(node, "Ready") is not None or current != observed:
            await self._sync_taints(node, current, now)
        if not self.options.enable_taint_manager:
            health = self.health[name]
            decision = eviction_decision(observed, health, now, self.options.pod_eviction_timeout)
            if decision is Eviction.EVICT and self.evictor.add(name):
                self.log.info("adding pods to evict", node=name, ready=observed)
            elif decision is Eviction.CANCEL and self.evictor.remove(name):
                self.log.info("node is ready again; its pods won't be evicted", node=name)
        if current != "True" and observed == "True":
            self.log.info("node is not ready", node=name, ready=current)
            self.recorder.event(node_ref(name), "Normal", "NodeNotReady",
                                f"Node {name} status is now: NodeNotReady")
            await self.mark_all_pods_not_ready(name)

    async def _try_update_node_status(self, node: Obj, now: float) -> tuple[str, str]:
        """upstream tryUpdateNodeStatus: returns the Ready status observed and the one after
        our change (both "Unknown" for a node that never posted Ready)."""
        name = node["metadata"]["name"]
        health = observe(self.health.get(name), node, now)
        health = self.health[name] = observe_lease(
            health, self.leases.indexer.get(f"{NODE_LEASE_NAMESPACE}/{name}"), now)
        ready = get_condition(node, "Ready")
        observed = (ready or {}).get("status") or "Unknown"
        opts = self.options
        if not stale(health, grace_period(node, opts.node_monitor_grace_period,
                                          opts.node_startup_grace_period), now):
            return observed, observed
        conditions = conditions_unknown(node, meta.rfc3339(now))
        new_ready = next(c for c in conditions if c.get("type") == "Ready")
        if new_ready == ready:
            return observed, observed  # already Unknown: nothing to write
        status = dict(node.get("status") or {}, conditions=conditions)
        written = await self.client.update_status(NODES, {**node, "status": status})
        self.health[name] = after_marked_unknown(health, written, now)
        self.log.info("node stopped posting status; conditions set to Unknown", node=name,
                      reason=new_ready.get("reason"), silent_for=round(now - health.probe_timestamp, 3))
        return observed, "Unknown"

    async def _sync_taints(self, node: Obj, ready: str, now: float) -> None:
        """upstream doNoScheduleTaintingPass and (with the taint manager) doNoExecuteTaintingPass:
        the node carries the NoSchedule taints its conditions call for, and the NoExecute taint
        its Ready status calls for; the taint-eviction-controller does the evicting."""
        execute_key = no_execute_taint_key(ready)
        manage = self.options.enable_taint_manager

        def wanted(current: Obj, now_text: str) -> list[Obj] | None:
            return with_condition_taints(current, execute_key,
                                         no_schedule_taint_keys(current, ready), now_text,
                                         manage_no_execute=manage)

        if wanted(node, "") is None:
            return  # the cached node already agrees: no request
        name = node["metadata"]["name"]
        for _ in range(STATUS_UPDATE_RETRY):
            try:
                node = await self.client.get(NODES, name)
                taints = wanted(node, meta.rfc3339(now))
                if taints is None:
                    return
                spec = dict(node.get("spec") or {}, taints=taints)
                if not taints:
                    spec.pop("taints")
                await self.client.update(NODES, {**node, "spec": spec})
            except StatusError as exc:
                if exc.code == 404:
                    return
                if exc.code == 409:
                    continue
                self.log.warning("could not taint node", node=name, error=str(exc))
                return
            self.log.info("node taints updated", node=name,
                          no_execute=execute_key if manage else None,
                          no_schedule=no_schedule_taint_keys(node, ready))
            return

    async def mark_all_pods_not_ready(self, node_name: str) -> None:
        """upstream MarkAllPodsNotReady: every Ready pod on the node gets Ready=False."""
        for pod in self.pods.indexer.by_index(NODE_NAME_INDEX, node_name):
            try:
                await self._mark_pod_not_ready(pod, node_name)
            except StatusError as exc:
                self.log.warning("could not mark pod not ready", pod=pod["metadata"]["name"],
                                 error=str(exc))

    async def _mark_pod_not_ready(self, pod: Obj, node_name: str) -> None:
        for _ in range(STATUS_UPDATE_RETRY):
            if (pod.get("spec") or {}).get("nodeName") != node_name:
                return
            ready = get_condition(pod, "Ready")
            if ready is None or ready.get("status") != "True":
                return
            status = dict(pod.get("status") or {})
            status["conditions"] = [
                dict(c, status="False", lastTransitionTime=meta.now_rfc3339())
                if c.get("type") == "Ready" else c for c in status.get("conditions") or ()]
            md = pod["metadata"]
            try:
                await self.client.update_status(PODS, {**pod, "status": status})
            except StatusError as exc:
                if exc.code == 404:
                    return
                if exc.code != 409:
                    raise
                pod = await self.client.get(PODS, md["name"], md["namespace"])
                continue
            self.log.info("marked pod not ready", pod=f"{md['namespace']}/{md['name']}",
                          node=node_name)
            self.recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready")
            return

    # -- eviction ------------------------------------------------------------------------
    async def _eviction_loop(self) -> None:
        period = min(EVICTION_PERIOD, self.options.node_monitor_period)
        while True:
            await self.resumed()
            try:
                await self.evictor.try_process(self.delete_pods)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - keep draining on the next tick
                self.log.exception("eviction pass failed")
            await asyncio.sleep(period)

    async def delete_pods(self, node_name: str) -> tuple[bool, float]:
        """upstream deletePods: delete every pod bound to the node (gracefully: a kubelet
        that comes back finishes the job). (done, retry after)."""
        pods = self.pods.indexer.by_index(NODE_NAME_INDEX, node_name)
        if pods:
            self.recorder.event(node_ref(node_name), "Normal", "DeletingAllPods",
                                f"Deleting all Pods from Node {node_name}.")
        for pod in pods:
            md = pod["metadata"]
            if md.get("deletionGracePeriodSeconds") is not None:
                continue  # already being deleted
            self.log.info("evicting pod", pod=f"{md['namespace']}/{md['name']}", node=node_name)
            self.recorder.event(pod, "Normal", "NodeControllerEviction",
                                f"Marking for deletion Pod {md['name']} from Node {node_name}")
            try:
                await self.client.delete(PODS, md["name"], md["namespace"])
            except StatusError as exc:
                if exc.code != 404:
                    self.log.warning("could not evict pod", pod=md["name"], error=str(exc))
                    return False, 0.0
        return True, 0.0

    # -- pod GC: pods on nodes that do not exist -----------------------------------------
    async def delete_orphaned_pods(self) -> None:
        """upstream PodGC gcOrphaned: pods bound to a node that does not exist (checked with
        a GET, not just the cache) are deleted at once (grace 0: no kubelet will finish)."""
        index = self.pods.indexer.indices.get(NODE_NAME_INDEX) or {}
        for node_name in [n for n in index if self.nodes.indexer.get(n) is None]:
            try:
                await self.client.get(NODES, node_name)
                continue  # our node cache is behind
            except StatusError as exc:
                if exc.code != 404:
                    raise
            for pod in self.pods.indexer.by_index(NODE_NAME_INDEX, node_name):
                md = pod["metadata"]
                self.log.info("deleting orphaned pod", pod=f"{md['namespace']}/{md['name']}",
                              node=node_name)
                try:
                    await self.client.delete(PODS, md["name"], md["namespace"],
                                             grace_period_seconds=0)
                except StatusError as exc:
                    if exc.code != 404:
                        raise
