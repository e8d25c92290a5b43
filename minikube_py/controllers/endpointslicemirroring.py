"""The EndpointSliceMirroring controller: a Service without a selector, whose Endpoints someone
writes by hand, still gets EndpointSlices — mirrored from those Endpoints.

Kubernetes piece: pkg/controller/endpointslicemirroring (endpointslicemirroring_controller.go:
handlers, syncEndpoints, deleteMirroredSlices) over its reconciler
(endpointslicemirroring_reconciler.py). Work is keyed by the Endpoints' (= the Service's)
`namespace/name`; Services, Endpoints and EndpointSlices come from the shared informers.
Endpoints are mirrored only while their Service exists, has no selector and is not
ExternalName, and the Endpoints neither carry `endpointslice.kubernetes.io/skip-mirror: "true"`
nor are a leader-election lock; otherwise the mirrored slices (label `managed-by:
endpointslicemirroring-controller.k8s.io`) are deleted. Runs as
`kube-system:endpointslicemirroring-controller`.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..client.leaderelection import LEADER_ANNOTATION
from ..client.resources import ENDPOINT_SLICES, ENDPOINTS, SERVICES
from .base import Controller, ControllerContext, enqueue_key, split_key
from .endpointslice import SERVICE_INDEX, slice_service_index
from .endpointslice_metrics import mirroring_metrics
from .endpointslice_tracker import EndpointSliceTracker, StaleInformerCache
from .endpointslice_util import (
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    MIRRORING_CONTROLLER_NAME,
    drop_pending_deletion,
)
from .endpointslice_writer import write_plan
from .endpointslicemirroring_reconciler import reconcile

Obj = dict[str, Any]

#: discovery.LabelSkipMirror
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"


def should_mirror(endpoints: Obj | None) -> bool:
    """shouldMirror: not labelled skip-mirror "true", not a leader-election lock."""
    if endpoints is None:
        return False
    md = endpoints.get("metadata") or {}
    return (md.get("labels") or {}).get(SKIP_MIRROR_LABEL) != "true" and \
        LEADER_ANNOTATION not in (md.get("annotations") or {})


class EndpointSliceMirroringController(Controller):
    name = "endpointslicemirroring"
    service_account = "endpointslicemirroring-controller"
    component = "endpoint-slice-mirroring-controller"  # upstream's event source

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.mirroring_concurrent_service_endpoint_syncs
        self.max_per_subset = ctx.options.mirroring_max_endpoints_per_subset
        self.services = ctx.informers.informer(SERVICES)
        self.endpoints = ctx.informers.informer(ENDPOINTS)
        self.slices = ctx.informers.informer(ENDPOINT_SLICES,
                                             indexers={SERVICE_INDEX: slice_service_index})
        self.tracker = EndpointSliceTracker(LABEL_SERVICE_NAME)
        self.metrics = mirroring_metrics()
        self.recorder = ctx.recorder(self.component)
        self.services.add_event_handler(on_add=self._enqueue,
                                        on_update=lambda old, new: self._enqueue(new),
                                        on_delete=self._enqueue)
        self.endpoints.add_event_handler(on_add=self._endpoints_added,
                                         on_update=self._endpoints_updated,
                                         on_delete=self._endpoints_added)
        self.slices.add_event_handler(on_add=self._slice_changed,
                                      on_update=self._slice_updated,
                                      on_delete=self._slice_deleted)

    def _enqueue(self, obj: Obj) -> None:
        enqueue_key(self.queue, obj)

    def _endpoints_added(self, endpoints: Obj) -> None:
        if should_mirror(endpoints):
            self._enqueue(endpoints)

    def _endpoints_updated(self, old: Obj, new: Obj) -> None:
        if should_mirror(old) or should_mirror(new):
            self._enqueue(new)

    def _ours(self, slice_: Obj) -> bool:
        labels = (slice_.get("metadata") or {}).get("labels") or {}
        return labels.get(LABEL_MANAGED_BY) == MIRRORING_CONTROLLER_NAME and \
            LABEL_SERVICE_NAME in labels

    def _queue_for(self, slice_: Obj) -> None:
        for key in slice_service_index(slice_):
            self.queue.add(key)

    def _slice_changed(self, slice_: Obj) -> None:
        if self._ours(slice_) and self.tracker.should_sync(slice_):
            self._queue_for(slice_)

    def _slice_updated(self, old: Obj, new: Obj) -> None:
        if self._ours(old) and not self._ours(new):
            self._queue_for(old)  # someone took the slice over: mirror again
        self._slice_changed(new)

    def _slice_deleted(self, slice_: Obj) -> None:
        if self._ours(slice_) and self.tracker.has(slice_) and \
                self.tracker.handle_deletion(slice_):
            self._queue_for(slice_)

    # -- reconcile ----------------------------------------------------------------------
    def _mirrored(self, key: str) -> list[Obj]:
        return [s for s in self.slices.indexer.by_index(SERVICE_INDEX, key) if self._ours(s)]

    async def sync(self, key: str) -> None:
        namespace, _ = split_key(key)
        service = self.services.indexer.get(key)
        if service is None:
            self.tracker.delete_service(key)
            return  # the slices go with the Endpoints (owner reference)
        spec = service.get("spec") or {}
        endpoints = self.endpoints.indexer.get(key)
        if spec.get("type") == "ExternalName" or spec.get("selector") or \
                not should_mirror(endpoints):
            self.tracker.delete_service(key)
            await self._delete_mirrored(key, namespace)
            return
        assert endpoints is not None
        slices = drop_pending_deletion(self._mirrored(key))
        if self.tracker.stale_slices(key, slices):
            raise StaleInformerCache("EndpointSlice informer cache is out of date")
        result = reconcile(endpoints, slices, max_per_subset=self.max_per_subset)
        self.metrics.added.observe(result.plan.added)
        self.metrics.updated.observe(result.updated)
        self.metrics.removed.observe(result.plan.removed)
        self.metrics.skipped.observe(result.skipped)
        if result.invalid:
            self.recorder.event(endpoints, "Warning", "InvalidIPAddress",
                                f"Skipped {result.invalid} invalid IP addresses when mirroring "
                                "to EndpointSlices")
        if result.skipped > result.invalid:
            self.recorder.event(endpoints, "Warning", "TooManyAddressesToMirror",
                                f"A max of {self.max_per_subset} addresses can be mirrored to "
                                "EndpointSlices per Endpoints subset. "
                                f"{result.skipped} addresses were skipped")
        await write_plan(self.client, result.plan, self.tracker, self.metrics, namespace,
                         allow_create=not (endpoints.get("metadata") or {}).get(
                             "deletionTimestamp"))

    async def _delete_mirrored(self, key: str, namespace: str) -> None:
        """deleteMirroredSlices."""
        for slice_ in self._mirrored(key):
            try:
                await self.client.delete(ENDPOINT_SLICES, slice_["metadata"]["name"], namespace)
            except StatusError as exc:
                if exc.code != 404:
                    raise
            self.tracker.expect_deletion(slice_)
            self.metrics.changes.labels("delete").inc()
