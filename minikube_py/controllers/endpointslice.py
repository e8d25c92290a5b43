"""The EndpointSlice controller: every Service with a selector gets EndpointSlices listing the
pods it selects, at most `--max-endpoints-per-slice` endpoints each.

Kubernetes piece: pkg/controller/endpointslice (endpointslice_controller.go: the informer
handlers and syncService) over the reconciler of staging/src/k8s.io/endpointslice
(endpointslice_reconciler.py). Services, pods, nodes and EndpointSlices come from the shared
informers; a pod event queues the services whose selector matched it before or after; a
slice event queues its service unless the tracker recognises it as this controller's own write.
A sync reads the service's pods and the slices labelled `managed-by: endpointslice-controller.k8s.io`
for it, refuses a cache that is behind its own writes (StaleInformerCache: retried with
backoff), reconciles and writes the plan. Slices of a deleted service go with it through their
owner reference (the garbage collector). Runs as `kube-system:endpointslice-controller`
(system:controller:endpointslice-controller: read pods, services, nodes; write endpointslices
and events).

Created and updated slices carry `endpoints.kubernetes.io/last-change-trigger-time`
(endpointslice_trigger_time.py). Not built: the `--endpoint-updates-batch-period` batching,
trafficDistribution.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import offload
from ..client.cache import NAMESPACE_INDEX, meta_namespace_index
from ..client.resources import ENDPOINT_SLICES, NODES, PODS, SERVICES
from .base import Controller, ControllerContext, enqueue_key, split_key
from .controller_utils import in_namespace
from .endpoints_util import pod_endpoint_view, service_selects
from .endpointslice_hints import Event, TopologyHints, hints_enabled, node_topology_view
from .endpointslice_metrics import endpointslice_metrics
from .endpointslice_reconciler import reconcile
from .endpointslice_tracker import EndpointSliceTracker, StaleInformerCache
from .endpointslice_trigger_time import TriggerTimeTracker, with_trigger_time
from .endpointslice_util import (
    CONTROLLER_NAME,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    drop_pending_deletion,
)
from .endpointslice_writer import write_plan

Obj = dict[str, Any]

#: index of EndpointSlices by `namespace/<service-name label>`, shared with the mirroring
#: controller (the same function object, so the shared informer accepts it twice)
SERVICE_INDEX = "service"
#: offload weight of one pod: a sync costs ~20 us per pod, so services of more than 256 pods
#: (offload.HEAVY_BYTES / 128, ~5 ms of work) are reconciled on the offload worker thread
POD_WEIGHT = 128


def slice_service_index(slice_: Obj) -> list[str]:
    md = slice_.get("metadata") or {}
    name = (md.get("labels") or {}).get(LABEL_SERVICE_NAME)
    return [f"{md.get('namespace', '')}/{name}"] if name else []


class EndpointSliceController(Controller):
    name = "endpointslice"
    service_account = "endpointslice-controller"
    component = "endpoint-slice-controller"  # upstream's event source

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_service_endpoint_syncs
        self.max_per_slice = ctx.options.max_endpoints_per_slice
        indexers = {NAMESPACE_INDEX: meta_namespace_index}
        self.services = ctx.informers.informer(SERVICES, indexers=indexers)
        self.pods = ctx.informers.informer(PODS, indexers=indexers)
        self.nodes = ctx.informers.informer(NODES)
        self.slices = ctx.informers.informer(ENDPOINT_SLICES,
                                             indexers={SERVICE_INDEX: slice_service_index})
        self.tracker = EndpointSliceTracker(LABEL_SERVICE_NAME)
        self.trigger_times = TriggerTimeTracker()
        self.metrics = endpointslice_metrics()
        self.recorder = ctx.recorder(self.component)
        self.topology = TopologyHints()
        self.services.add_event_handler(on_add=self._enqueue,
                                        on_update=lambda old, new: self._enqueue(new),
                                        on_delete=self._enqueue)
        self.pods.add_event_handler(on_add=self._pod_changed,
                                    on_update=self._pod_updated, on_delete=self._pod_changed)
        self.nodes.add_event_handler(on_add=self._node_changed, on_update=self._node_updated,
                                     on_delete=self._node_changed)
        self.slices.add_event_handler(on_add=self._slice_changed,
                                      on_update=self._slice_updated,
                                      on_delete=self._slice_deleted)

    def _enqueue(self, obj: Obj) -> None:
        enqueue_key(self.queue, obj)

    # -- pod and node events ----------------------------------------------------------
    def _services_for(self, pod: Obj) -> list[Obj]:
        md = pod.get("metadata") or {}
        labels = md.get("labels") or {}
        return [svc for svc in in_namespace(self.services, md.get("namespace", ""))
                if service_selects(svc, labels)]

    def _pod_changed(self, pod: Obj) -> None:
        for svc in self._services_for(pod):
            self._enqueue(svc)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        """podEndpointsChanged: only what an endpoint shows (address, readiness, node,
        hostname, ports, being deleted) or the labels."""
        labels_changed = (old.get("metadata") or {}).get("labels") != \
            (new.get("metadata") or {}).get("labels")
        if not labels_changed and pod_endpoint_view(old) == pod_endpoint_view(new) and \
                (old.get("metadata") or {}).get("deletionTimestamp") == \
                (new.get("metadata") or {}).get("deletionTimestamp"):
            return
        services = {id(s): s for s in self._services_for(new)}
        if labels_changed:
            services.update((id(s), s) for s in self._services_for(old))
        for svc in services.values():
            self._enqueue(svc)

    def _node_updated(self, old: Obj, new: Obj) -> None:
        """Only a change of readiness, zone or allocatable CPU matters (upstream updateNode):
        heartbeats, the bulk of node events, cost nothing here."""
        if node_topology_view(old) != node_topology_view(new):
            self._node_changed(new)

    def _node_changed(self, node: Obj) -> None:
        """checkNodeTopologyDistribution: node capacity or zones changed, so services with
        topology hints are synced again."""
        if not self.topology.nodes_changed(self.nodes.indexer.list()):
            return
        for svc in self.services.indexer.list():
            if hints_enabled(svc):
                self._enqueue(svc)

    # -- slice events: only what we did not write ourselves ----------------------------
    def _ours(self, slice_: Obj) -> bool:
        labels = (slice_.get("metadata") or {}).get("labels") or {}
        return labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME and LABEL_SERVICE_NAME in labels

    def _queue_service_of(self, slice_: Obj) -> None:
        for key in slice_service_index(slice_):
            self.queue.add(key)

    def _slice_changed(self, slice_: Obj) -> None:
        if self._ours(slice_) and self.tracker.should_sync(slice_):
            self._queue_service_of(slice_)

    def _slice_updated(self, old: Obj, new: Obj) -> None:
        """A slice whose service or manager label changed is queued for both sides."""
        old_labels = (old.get("metadata") or {}).get("labels") or {}
        new_labels = (new.get("metadata") or {}).get("labels") or {}
        if any(old_labels.get(k) != new_labels.get(k)
               for k in (LABEL_SERVICE_NAME, LABEL_MANAGED_BY)):
            if self._ours(old):
                self._queue_service_of(old)
            if self._ours(new):
                self._queue_service_of(new)
            return
        self._slice_changed(new)

    def _slice_deleted(self, slice_: Obj) -> None:
        if self._ours(slice_) and self.tracker.has(slice_) and \
                self.tracker.handle_deletion(slice_):
            self._queue_service_of(slice_)

    # -- reconcile ----------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """trackSync: syncs{result} is success, stale (the cache was behind) or error."""
        try:
            await self._sync(key)
        except StaleInformerCache:
            self.metrics.syncs.labels("stale").inc()
            raise
        except Exception:
            self.metrics.syncs.labels("error").inc()
            raise
        self.metrics.syncs.labels("success").inc()

    async def _sync(self, key: str) -> None:
        namespace, _ = split_key(key)
        service = self.services.indexer.get(key)
        if service is None:
            self.tracker.delete_service(key)
            self.trigger_times.delete_service(key)
            self.topology.forget(key)
            self.metrics.delete_service(key)
            return
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName" or not spec.get("selector"):
            return  # no endpoints from us (ExternalName: issue 105986; no selector: mirroring)
        pods = [p for p in in_namespace(self.pods, namespace)
                if service_selects(service, (p.get("metadata") or {}).get("labels") or {})]
        slices = drop_pending_deletion(
            s for s in self.slices.indexer.by_index(SERVICE_INDEX, key) if self._ours(s))
        if self.tracker.stale_slices(key, slices):
            raise StaleInformerCache("EndpointSlice informer cache is out of date")
        # computed even when nothing is written, so the tracker's state stays current
        trigger_time = self.trigger_times.compute(key, service, pods)
        events: list[Event] = []
        # the pure work of a big service's sync runs off the loop (events come back here);
        # each sync is judged by its own size (begin: a flag left by the last one is cleared)
        offload.begin()
        plan, skipped = await offload.run(
            reconcile, service, pods, self.nodes.indexer, slices,
            max_endpoints_per_slice=self.max_per_slice,
            hints=functools.partial(self.topology.apply, events=events),
            weight=len(pods) * POD_WEIGHT)
        for event in events:
            self.recorder.event(*event)
        plan.create = [with_trigger_time(s, trigger_time) for s in plan.create]
        plan.update = [with_trigger_time(s, trigger_time) for s in plan.update]
        self.metrics.added.observe(plan.added)
        self.metrics.removed.observe(plan.removed)
        await write_plan(self.client, plan, self.tracker, self.metrics, namespace,
                         allow_create=not (service.get("metadata") or {}).get(
                             "deletionTimestamp"))
        self.metrics.set_service(key, plan.desired,
                                 len(slices) + len(plan.create) - len(plan.delete),
                                 self.max_per_slice)
        topology = "Auto" if hints_enabled(service) else "Disabled"
        self.metrics.slices_changed.labels(topology).observe(plan.changes)
        if plan.changes:
            self.log.debug("endpoint slices updated", service=key, created=len(plan.create),
                           updated=len(plan.update), deleted=len(plan.delete))
        if skipped:
            raise RuntimeError(f"skipping pods of Service {key}: their node was not found")
