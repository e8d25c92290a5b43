"""The endpoints controller: each Service with a selector gets an Endpoints object of the
same name listing the pods it selects.

Kubernetes piece: pkg/controller/endpoint (v1.0 EndpointController, its later shape with a
work queue of service keys). Services and pods come from the shared informers; a pod event
requeues every service whose selector matched the pod before or after the change; a sync
computes the subsets (endpoints_util) and writes only when they or the labels changed. A
deleted service's Endpoints are deleted; at start, Endpoints left without a service are
cleaned up — except leader-election locks (upstream checkLeftoverEndpoints), which live in
Endpoints objects with no service behind them.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.labels import selector_from_set
from ..client.cache import NAMESPACE_INDEX, meta_namespace_index
from ..client.leaderelection import LEADER_ANNOTATION
from ..client.resources import ENDPOINTS, PODS, SERVICES
from .base import Controller, ControllerContext, enqueue_key, split_key
from .endpoints_util import (
    build_subsets,
    endpoints_labels,
    pod_endpoint_view,
    service_selects,
)

Obj = dict[str, Any]


class EndpointsController(Controller):
    name = "endpoint"
    service_account = "endpoint-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_endpoint_syncs
        indexers = {NAMESPACE_INDEX: meta_namespace_index}
        self.services = ctx.informers.informer(SERVICES, indexers=indexers)
        self.pods = ctx.informers.informer(PODS, indexers=indexers)
        self.endpoints = ctx.informers.informer(ENDPOINTS)
        self.services.add_event_handler(
            on_add=self._enqueue,
            on_update=lambda old, new: self._enqueue(new),
            on_delete=self._enqueue)
        self.pods.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                    on_delete=self._pod_added)
        # someone deleted a service's Endpoints: write them again (upstream onEndpointsDelete)
        self.endpoints.add_event_handler(on_delete=self._endpoints_deleted)

    def _enqueue(self, obj: Obj) -> None:
        enqueue_key(self.queue, obj)

    def _endpoints_deleted(self, ep: Obj) -> None:
        key = f"{ep['metadata'].get('namespace')}/{ep['metadata'].get('name')}"
        if self.services.indexer.get(key) is not None:
            self.queue.add(key)

    # -- pod events -> service keys -----------------------------------------------------
    def _services_for(self, pod: Obj) -> list[Obj]:
        md = pod.get("metadata") or {}
        labels = md.get("labels") or {}
        return [svc for svc in self.services.indexer.by_index(NAMESPACE_INDEX,
                                                                md.get("namespace", ""))
                if service_selects(svc, labels)]

    def _pod_added(self, pod: Obj) -> None:
        for svc in self._services_for(pod):
            self._enqueue(svc)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        labels_changed = (old.get("metadata") or {}).get("labels") != \
            (new.get("metadata") or {}).get("labels")
        if not labels_changed and pod_endpoint_view(old) == pod_endpoint_view(new):
            return
        services = {id(s): s for s in self._services_for(new)}
        if labels_changed:
            services.update((id(s), s) for s in self._services_for(old))
        for svc in services.values():
            self._enqueue(svc)

    # -- reconcile ----------------------------------------------------------------------
    async def background(self) -> None:
        """Upstream checkLeftoverEndpoints, once the caches are full: Endpoints whose
        service is gone (while we were down) are queued for deletion."""
        for ep in self.endpoints.indexer.list():
            md = ep.get("metadata") or {}
            if LEADER_ANNOTATION in (md.get("annotations") or {}):
                continue
            key = f"{md.get('namespace')}/{md.get('name')}"
            if self.services.indexer.get(key) is None:
                self.queue.add(key)

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        service = self.services.indexer.get(key)
        if service is None:
            await self._delete_endpoints(key, namespace, name)
            return
        selector = (service.get("spec") or {}).get("selector")
        if not selector:
            return  # services without a selector get their Endpoints from someone else
        match = selector_from_set(selector)
        pods = [p for p in self.pods.indexer.by_index(NAMESPACE_INDEX, namespace)
                if match.matches((p.get("metadata") or {}).get("labels") or {})]
        subsets = build_subsets(service, pods)
        labels = endpoints_labels(service)
        current = self.endpoints.indexer.get(key)
        if current is not None and (current.get("subsets") or []) == subsets and \
                ((current.get("metadata") or {}).get("labels") or {}) == labels:
            return
        if current is None:
            body: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                         "metadata": {"name": name, "namespace": namespace, "labels": labels},
                         "subsets": subsets}
            try:
                await self.client.create(ENDPOINTS, body, namespace)
            except StatusError as exc:
                if exc.code == 403 and "being terminated" in exc.message:
                    return  # the namespace is going away; nothing to publish
                raise  # AlreadyExists: our cache is behind, retried once it catches up
        else:
            md = current["metadata"]
            body = {**current, "subsets": subsets,
                    "metadata": {**md, "labels": labels}}
            await self.client.update(ENDPOINTS, body)
        self.log.debug("endpoints updated", service=key,
                       ready=sum(len(s.get("addresses") or ()) for s in subsets),
                       not_ready=sum(len(s.get("notReadyAddresses") or ()) for s in subsets))

    async def _delete_endpoints(self, key: str, namespace: str, name: str) -> None:
        current = self.endpoints.indexer.get(key)
        if current is not None and LEADER_ANNOTATION in (
                (current.get("metadata") or {}).get("annotations") or {}):
            return  # a leader-election lock, not a service's endpoints
        try:
            await self.client.delete(ENDPOINTS, name, namespace)
        except StatusError as exc:
            if exc.code != 404:
                raise
