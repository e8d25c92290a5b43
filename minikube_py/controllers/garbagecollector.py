"""The garbage collector: deletes objects whose owners are gone, and carries out foreground
and orphan deletion of owners.

Kubernetes piece: pkg/controller/garbagecollector (v1.8+ GarbageCollector: GraphBuilder fed
by informers of every resource it monitors, the attemptToDelete and attemptToOrphan queues,
attemptToDeleteItem, processDeletingDependentsItem, orphanDependents, removeFinalizer).

The API server's side (registry.generic `_pending_finalizers`): a DELETE with
propagationPolicy Orphan or Foreground does not remove the owner but gives it a
deletionTimestamp and the `orphan` / `foregroundDeletion` finalizer; Background (the default)
removes it at once and leaves the dependents to us. Here:
- a dependent whose owners are all gone — checked with a GET, never trusted from the cache —
  is deleted in the background (with a uid precondition); if some owner remains, only the
  dangling references are dropped by a patch;
- `foregroundDeletion`: the owner's dependents are deleted, and the finalizer removed once
  no dependent with blockOwnerDeletion=true remains; a dependent that has dependents of its
  own is deleted in the foreground too, and when one of those also waits (an owner-reference
  cycle, A owned by B owned by A) its references are first made non-blocking, so the wait
  ends, as upstream's attemptToDeleteItem breaks cycles;
- `orphan`: the owner's references are removed from its dependents, then the finalizer.
Both kinds of work share one queue, keyed `delete:<uid>` and `orphan:<uid>`.

Which resources are watched: the built-ins in MONITORED through the shared informers, and
every other resource discovery lists as deletable (list, watch, delete) — other built-ins such
as PersistentVolumeClaims, and custom resources — through metadata-only monitors of the
collector's own, resynced every `discovery_period` seconds as upstream's GarbageCollector.Sync
(every 30 s) re-reads discovery and starts and stops monitors (gc_monitors.py): a ConfigMap
owned by a custom resource goes with it, a custom resource owned by a Deployment too, and so
does the PVC that kopf's walkthrough operator adopts. Beyond upstream: an object naming an
owner of a kind no monitor watches triggers the resync at once (at most once a
MIN_RESYNC_GAP), so the children an operator adopts right after its CRD was created are
collected without the 30 s wait; so does a deleted CRD, whose monitor then stops instead of
re-listing a resource that is no longer served.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

from ..api.errors import StatusError
from ..client import resources as known
from ..client.cache.informer import Informer
from ..client.resources import Resource
from .base import Controller, ControllerContext
from .discovery import DiscoveredResources
from .gc_graph import (
    FOREGROUND,
    ORPHAN,
    Changes,
    DependencyGraph,
    GraphNode,
    Identity,
    OwnerState,
    deleting_with,
    owner_state,
    plan_attempt_to_delete,
    unblocked,
)
from .gc_monitors import (
    deletable_resources,
    metadata_only,
    plan_monitors,
    unwatched_owner_kinds,
)

Obj = dict[str, Any]

#: resources whose objects carry (or are) owners here; all of them are watched
MONITORED = (known.PODS, known.REPLICATION_CONTROLLERS, known.REPLICASETS, known.DEPLOYMENTS,
             known.SERVICES, known.ENDPOINTS, known.CONFIGMAPS, known.SECRETS,
             known.SERVICEACCOUNTS, known.JOBS, known.CRONJOBS)
ABSENT_CACHE_SIZE = 500
CONFLICT_RETRIES = 5
#: the least time between two resyncs that unwatched owner kinds or CRD deletions asked for
MIN_RESYNC_GAP = 1.0


class GarbageCollector(Controller):
    name = "garbagecollector"
    service_account = "generic-garbage-collector"
    #: seconds between discovery resyncs (upstream: the 30 s period of GarbageCollector.Sync)
    discovery_period = 30.0

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_gc_syncs
        self.graph = DependencyGraph()
        #: owner uids known to be absent (upstream absentOwnerCache): spares GETs when many
        #: dependents of one deleted owner are collected
        self.absent: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._kinds: dict[tuple[str, str], Resource] = {
            (r.api_version, r.kind): r for r in vars(known).values() if isinstance(r, Resource)}
        self.discovery = DiscoveredResources(self.client)
        #: the collector's own monitors of resources found by discovery
        self.monitors: dict[Resource, Informer] = {}
        self._watched_kinds = {(r.group, r.kind) for r in MONITORED}
        self._resync = asyncio.Event()
        #: unwatched owner kinds that already asked for a resync: a kind discovery does not
        #: list (a reference to a removed CRD's kind) asks once per period, not per event
        self._asked: set[tuple[str, str]] = set()
        for resource in MONITORED:
            self._watch(ctx.informers.informer(resource))

    def _watch(self, informer: Informer) -> None:
        informer.add_event_handler(on_add=self._seen,
                                   on_update=lambda old, new: self._seen(new, old),
                                   on_delete=self._gone)

    def _seen(self, obj: Obj, old: Obj | None = None) -> None:
        unwatched = unwatched_owner_kinds(obj, self._watched_kinds) - self._asked
        if unwatched:
            self._asked |= unwatched
            self._resync.set()
        self._apply(self.graph.upsert(obj, old))

    def _gone(self, obj: Obj) -> None:
        if obj.get("kind") == "CustomResourceDefinition":
            self._resync.set()  # its resource is no longer served: stop watching it now
        self._apply(self.graph.remove(obj))

    async def background(self) -> None:
        """Resync the monitors with discovery now, every `discovery_period` seconds, and
        when asked (an unwatched owner kind, a deleted CRD)."""
        gap = min(MIN_RESYNC_GAP, self.discovery_period)
        try:
            while True:
                self._resync.clear()  # what asks from here on is served by the next resync
                try:
                    await self.resync_monitors()
                except (StatusError, OSError) as exc:  # discovery failed: try next period
                    self.log.warning("discovery resync failed", error=str(exc))
                await asyncio.sleep(gap)
                try:
                    await asyncio.wait_for(self._resync.wait(), self.discovery_period - gap)
                except TimeoutError:
                    self._asked.clear()  # the periodic resync: every unwatched kind may ask again
        finally:
            await asyncio.gather(*(i.stop() for i in self.monitors.values()),
                                 return_exceptions=True)

    async def resync_monitors(self) -> None:
        """upstream resyncMonitors: a monitor for every deletable resource that is not
        monitored yet; a resource that went away (its CRD deleted) loses its monitor."""
        plan = plan_monitors(self.monitors, deletable_resources(await self.discovery.refresh()),
                             MONITORED)
        for resource in plan.stop:
            await self.monitors.pop(resource).stop()
            self.log.info("stopped monitoring", resource=_qualified(resource))
        for resource in plan.start:
            informer = Informer(self.client, resource, transform=metadata_only(resource))
            self._watch(informer)
            self.monitors[resource] = informer
            informer.start()
            self.log.info("monitoring", resource=_qualified(resource), version=resource.version)
        self._watched_kinds = ({(r.group, r.kind) for r in MONITORED}
                               | {(r.group, r.kind) for r in self.monitors})

    def _apply(self, changes: Changes) -> None:
        for uid in changes.attempt_to_delete:
            self.queue.add(f"delete:{uid}")
        for uid in changes.attempt_to_orphan:
            self.queue.add(f"orphan:{uid}")

    async def sync(self, key: str) -> None:
        kind, _, uid = key.partition(":")
        node = self.graph.get(uid)
        if node is None:
            return
        if kind == "orphan":
            await self.attempt_to_orphan(node)
        else:
            await self.attempt_to_delete(node)

    # -- mapping and reading -------------------------------------------------------------
    async def resource_for(self, api_version: str, kind: str) -> Resource | None:
        """upstream RESTMapper: the resource of a kind, from discovery when not known yet."""
        resource = self._kinds.get((api_version, kind))
        if resource is None:
            resource = await self.discovery.by_kind(api_version, kind)
        return resource

    async def _get(self, identity: Identity) -> tuple[Resource | None, Obj | None]:
        """(resource, live object or None when absent)."""
        resource = await self.resource_for(identity.api_version, identity.kind)
        if resource is None:
            return None, None
        try:
            obj = await self.client.get(resource, identity.name,
                                        identity.namespace if resource.namespaced else None)
        except StatusError as exc:
            if exc.code == 404:
                return resource, None
            raise
        return resource, obj

    async def _owner_state(self, ref: Obj, namespace: str) -> OwnerState:
        uid = ref.get("uid", "")
        if uid in self.absent:
            return OwnerState.DANGLING
        identity = Identity(ref.get("apiVersion", ""), ref.get("kind", ""), namespace,
                            ref.get("name", ""), uid)
        resource, owner = await self._get(identity)
        if resource is None:
            self.log.warning("cannot map owner kind; keeping its dependents",
                             api_version=identity.api_version, kind=identity.kind)
            return OwnerState.SOLID
        state = owner_state(owner, uid)
        if state is OwnerState.DANGLING:
            self._remember_absent(uid)
        return state

    def _remember_absent(self, uid: str) -> None:
        self.absent[uid] = None
        self.absent.move_to_end(uid)
        if len(self.absent) > ABSENT_CACHE_SIZE:
            self.absent.popitem(last=False)

    # -- attemptToDelete -----------------------------------------------------------------
    async def attempt_to_delete(self, node: GraphNode) -> None:
        """upstream attemptToDeleteItem."""
        identity = node.identity
        if not node.observed:
            # a virtual owner: if it does not exist, its dependents are orphans
            resource, live = await self._get(identity)
            if resource is not None and (live is None or
                                         live["metadata"].get("uid") != identity.uid):
                self._remember_absent(identity.uid)
                self._apply(self.graph.remove_virtual(identity.uid))
            return
        if node.being_deleted and not node.deleting_dependents:
            return  # being deleted already, nothing waits on us
        resource, latest = await self._get(identity)
        if resource is None or latest is None or latest["metadata"].get("uid") != identity.uid:
            return  # gone: the informer's delete event updates the graph
        if deleting_with(latest, FOREGROUND):
            await self.process_deleting_dependents(node, resource)
            return
        md = latest["metadata"]
        refs = list(md.get("ownerReferences") or ())
        if not refs:
            return
        states = {r.get("uid", ""): await self._owner_state(r, identity.namespace) for r in refs}
        dependents = [self.graph.get(uid) for uid in node.dependents]
        plan = plan_attempt_to_delete(refs, states, bool(node.dependents),
                                      list(md.get("finalizers") or ()),
                                      any(d is not None and d.deleting_dependents
                                          for d in dependents))
        if plan.action == "patch":
            self.log.info("removing dangling owner references", object=_describe(identity),
                          kept=[r.get("name") for r in plan.owner_references or ()])
            await self.client.patch(resource, identity.name,
                                    {"metadata": {"ownerReferences": plan.owner_references,
                                                  "resourceVersion": md.get("resourceVersion")}},
                                    _ns(resource, identity))
        elif plan.action == "delete":
            if plan.unblock:
                self.log.info("an owner and a dependent both wait for their dependents: making "
                              "the owner references non-blocking to break a possible cycle",
                              object=_describe(identity))
                await self.client.patch(resource, identity.name,
                                        {"metadata": {"ownerReferences": unblocked(refs),
                                                      "resourceVersion": md.get("resourceVersion")}},
                                        _ns(resource, identity))
            self.log.info("deleting object whose owners are gone", object=_describe(identity),
                          propagation=plan.policy)
            try:
                await self.client.delete(resource, identity.name, _ns(resource, identity),
                                         propagation_policy=plan.policy,
                                         preconditions={"uid": identity.uid})
            except StatusError as exc:
                if exc.code not in (404, 409):
                    raise

    async def process_deleting_dependents(self, node: GraphNode, resource: Resource) -> None:
        """upstream processDeletingDependentsItem: wait for the blocking dependents, then
        let the owner go."""
        blocking = self.graph.blocking_dependents(node.identity.uid)
        if not blocking:
            await self.remove_finalizer(node.identity, FOREGROUND)
            return
        for dep in blocking:
            if not dep.deleting_dependents:  # one waiting itself is handled as its own item
                self.queue.add(f"delete:{dep.identity.uid}")

    # -- attemptToOrphan -----------------------------------------------------------------
    async def attempt_to_orphan(self, node: GraphNode) -> None:
        """upstream orphanDependents + removeFinalizer(orphan)."""
        owner_uid = node.identity.uid
        for dep_uid in list(node.dependents):
            dep = self.graph.get(dep_uid)
            if dep is not None:
                await self._drop_reference(dep.identity, owner_uid)
        await self.remove_finalizer(node.identity, ORPHAN)

    async def _drop_reference(self, identity: Identity, owner_uid: str) -> None:
        if await self._remove_from_list(identity, "ownerReferences",
                                        lambda ref: ref.get("uid") == owner_uid):
            self.log.info("orphaned dependent", object=_describe(identity), owner_uid=owner_uid)

    async def remove_finalizer(self, identity: Identity, finalizer: str) -> None:
        """upstream removeFinalizer. The API server deletes an object being deleted once its
        last finalizer is gone."""
        if await self._remove_from_list(identity, "finalizers", lambda f: f == finalizer):
            self.log.info("removed finalizer", object=_describe(identity), finalizer=finalizer)

    async def _remove_from_list(self, identity: Identity, field: str,
                                drop: Callable[[Any], bool]) -> bool:
        """Read the object, drop the entries of metadata.`field` that `drop` picks, write
        with the read's resourceVersion; again on conflict. False when there was nothing to
        drop or the object is gone (or was replaced: another uid)."""
        for _ in range(CONFLICT_RETRIES):
            resource, latest = await self._get(identity)
            if resource is None or latest is None or latest["metadata"].get("uid") != identity.uid:
                return False
            md = latest["metadata"]
            entries = list(md.get(field) or ())
            kept = [e for e in entries if not drop(e)]
            if len(kept) == len(entries):
                return False
            try:
                await self.client.patch(resource, identity.name,
                                        {"metadata": {field: kept or None,
                                                      "resourceVersion": md.get("resourceVersion")}},
                                        _ns(resource, identity))
            except StatusError as exc:
                if exc.code == 404:
                    return False
                if exc.code == 409:
                    continue
                raise
            return True
        raise RuntimeError(f"could not update {field} of {_describe(identity)}: "
                           "too many conflicts")


def _qualified(resource: Resource) -> str:
    """`pods`, `widgets.example.com` (as kubectl names a resource)."""
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def _ns(resource: Resource, identity: Identity) -> str | None:
    return identity.namespace if resource.namespaced else None


def _describe(identity: Identity) -> str:
    where = f"{identity.namespace}/" if identity.namespace else ""
    return f"{identity.kind} {where}{identity.name}"
