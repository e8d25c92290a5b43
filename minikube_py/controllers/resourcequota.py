"""The resource quota controller: every quota's `status.used` recalculated from what exists.

Kubernetes v1.0 piece: pkg/resourcequota/resource_quota_controller.go (ResourceQuotaManager,
run by kube-controller-manager every --resource-quota-sync-period, 10 s in v1.0), with the
later controller's event-driven parts (pkg/controller/resourcequota): a new or changed quota is
synced at once, and so is every quota of a namespace where a tracked object is deleted or a
pod finishes ("replenishment"), so freed usage shows without waiting for the period.

Why it exists beside the ResourceQuota admission plugin: admission charges usage *before* a
write and never gives back what an update frees (upstream does the same), and usage can drift
when a charged write then fails. Recalculating from the objects themselves is what makes
`status.used` true again. The cost model is api/quota.py, shared with the plugin. Pods and
services are counted from the shared informer caches the controller watches anyway (as
upstream's listers); other counted resources are listed through the API, custom resources
found through discovery (upstream's generic object-count evaluator over a dynamic lister).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..api import quota as qu
from ..api.errors import StatusError
from ..client import resources as refs
from ..client.cache.store import NAMESPACE_INDEX
from ..client.resources import PODS, RESOURCE_QUOTAS, SERVICES, Resource
from .base import Controller, ControllerContext, enqueue_key, split_key
from .controller_utils import NAMESPACE_INDEXERS
from .discovery import DiscoveredResources

Obj = dict[str, Any]

#: what a quota name can count, by (group, plural): the resources the client knows
_RESOURCES: dict[tuple[str, str], Resource] = {
    (r.group, r.plural): r for r in vars(refs).values() if isinstance(r, Resource) and r.namespaced}


class ResourceQuotaController(Controller):
    name = "resourcequota"
    service_account = "resourcequota-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_resource_quota_syncs
        self.period = ctx.options.resource_quota_sync_period
        self.quotas = ctx.informers.informer(RESOURCE_QUOTAS, indexers=NAMESPACE_INDEXERS)
        # a quota is itself counted (`resourcequotas`, `count/resourcequotas`): one going away
        # replenishes the namespace's others
        self.quotas.add_event_handler(
            on_add=lambda q: enqueue_key(self.queue, q),
            on_update=self._quota_updated, on_delete=self._namespace_changed)
        # replenishment: usage goes down when a tracked object goes away or a pod finishes
        pods = ctx.informers.informer(PODS, indexers=NAMESPACE_INDEXERS)
        services = ctx.informers.informer(SERVICES, indexers=NAMESPACE_INDEXERS)
        pods.add_event_handler(on_update=self._pod_updated, on_delete=self._namespace_changed)
        services.add_event_handler(on_update=self._service_updated,
                                   on_delete=self._namespace_changed)
        #: resources counted from the shared caches; anything else a quota counts is listed
        self.cached = {("", "pods"): pods, ("", "services"): services}
        #: what the client does not know (custom resources: `count/widgets.example.com`)
        self.discovered = DiscoveredResources(self.client)

    def _quota_updated(self, old: Obj, new: Obj) -> None:
        if (old.get("spec") != new.get("spec")
                or qu.used_of(new) is None):  # a spec change, or status.used incomplete
            enqueue_key(self.queue, new)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if qu.pod_terminal(new) and not qu.pod_terminal(old):
            self._namespace_changed(new)

    def _service_updated(self, old: Obj, new: Obj) -> None:
        if old.get("spec") != new.get("spec"):
            self._namespace_changed(new)

    def _namespace_changed(self, obj: Obj) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace:
            for quota in self.quotas.indexer.by_index(NAMESPACE_INDEX, namespace):
                enqueue_key(self.queue, quota)

    async def background(self) -> None:
        """The full resync every period (v1.0's only trigger)."""
        while True:
            await asyncio.sleep(self.period)
            for quota in self.quotas.indexer.list():
                enqueue_key(self.queue, quota)

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        quota = self.quotas.indexer.get(key)
        if quota is None:
            return
        used = await self.calculate(quota, namespace)
        status = qu.status_for(quota, used)
        if quota.get("status") == status:
            return
        body = {**quota, "status": status}
        try:
            await self.client.update_status(RESOURCE_QUOTAS, body)
        except StatusError as exc:
            if exc.code in (404, 409):  # gone, or changed under us: the informer requeues it
                return
            raise
        self.log.info("quota usage recalculated", namespace=namespace, quota=name,
                      used=status["used"])

    async def calculate(self, quota: Obj, namespace: str) -> qu.Usage:
        used = qu.no_usage(quota)
        for group, plural in qu.tracked_resources(quota):
            informer = self.cached.get((group, plural))
            if informer is not None:
                objects = informer.indexer.by_index(NAMESPACE_INDEX, namespace)
            elif (resource := _RESOURCES.get((group, plural))
                  or await self.discovered.by_plural(group, plural)) is not None:
                try:
                    objects = (await self.client.list(resource, namespace)).get("items") or []
                except StatusError as exc:
                    if exc.code != 404:
                        raise
                    objects = []  # its CRD went away since discovery was read
            else:
                continue  # a count/ of something this server does not serve counts 0
            qu.tally(quota, group, plural, objects, used)
        return used
