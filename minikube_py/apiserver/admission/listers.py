"""The admission plugins' shared informers and listers: per-request reads from memory.

Kubernetes piece: the SharedInformerFactory upstream hands admission plugins
(k8s.io/apiserver/pkg/admission/initializer WantsExternalKubeInformerFactory) and the listers
built on it. Upstream's NamespaceLifecycle, ResourceQuota, LimitRanger, ServiceAccount and
Priority plugins read namespaces, quotas, limit ranges, service accounts and priority classes
from those informers, never from etcd per request; a pod create here used to list or get five
kinds from the store (about a quarter of its API server CPU).

- `SharedInformers`: one StoreInformer per (store prefix, view), created when a plugin is
  built and started by the admission chain before the server serves; plugins that want the
  same view share it.
- `NamespacedLister`: a per-namespace index over an informer (quotas and limit ranges of one
  namespace without scanning all), with upstream's live-lookup fallback: when the cache holds
  nothing for a namespace, one live list is made and remembered for `LIVE_TTL` seconds
  (upstream quotaAccessor/limitRanger liveLookupCache, 30 s), dropped as soon as the informer
  sees a change in that namespace, so an object created a moment ago is not missed.
- `cached_or_live`: a get from the cache, a live get on a miss (upstream's ServiceAccount
  plugin and NamespaceLifecycle do the same for objects created a moment ago).

Views are compact where the plugins need little (`namespace_phase`, `automount_only`), so no
second decoded copy of every namespace or service account is kept.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...registry.generic import Registry
from .informer import StoreInformer

Obj = dict[str, Any]
#: upstream's liveTTL of the quota and limit-range live lookups
LIVE_TTL = 30.0
#: live-lookup entries kept (upstream's LRU holds 100 for quota, 10000 for limit ranges)
LIVE_ENTRIES = 1024


def namespace_phase(obj: Obj) -> Obj:
    """A namespace as NamespaceLifecycle needs it: its phase."""
    return {"status": {"phase": (obj.get("status") or {}).get("phase")}}


def automount_only(obj: Obj) -> Obj:
    """A service account as the ServiceAccount plugin needs it: its automount flag."""
    value = obj.get("automountServiceAccountToken")
    return {} if value is None else {"automountServiceAccountToken": value}


class SharedInformers:
    """One informer per (registry key root, view); started and stopped as a group."""

    def __init__(self) -> None:
        self._informers: dict[tuple[str, str], StoreInformer] = {}
        self._started: set[tuple[str, str]] = set()

    def informer(self, registry: Registry, view: Callable[[Obj], Obj] | None = None
                 ) -> StoreInformer:
        """The informer of `registry`'s objects (or of `view` of each), shared."""
        key = (registry.root, "objects" if view is None else view.__name__)
        informer = self._informers.get(key)
        if informer is None:
            informer = StoreInformer(registry.store, registry.root, f"admission:{key[1]}:"
                                     f"{registry.strategy.resource}", project=view)
            self._informers[key] = informer
        return informer

    async def start(self) -> None:
        """List and watch every informer asked for so far (returns once all are synced)."""
        for key, informer in list(self._informers.items()):
            if key not in self._started:
                await informer.start()
                self._started.add(key)

    async def stop(self) -> None:
        for key in list(self._started):
            await self._informers[key].stop()
        self._started.clear()


def cached(informer: StoreInformer, namespace: str, name: str) -> Obj | None:
    """The cached object (None: not in the cache, or the cache is not synced yet)."""
    return informer.by_name(namespace, name) if informer.synced else None


def cached_or_live(informer: StoreInformer, registry: Registry
                   ) -> Callable[[str, str], Awaitable[Obj]]:
    """get(namespace, name): the cached object, else a live get (404 StatusError when gone)."""

    async def get(namespace: str, name: str) -> Obj:
        obj = cached(informer, namespace, name)
        if obj is not None:
            return obj
        return await registry.get(namespace, name)

    return get


def cached_list(informer: StoreInformer, registry: Registry) -> Callable[[], Awaitable[list[Obj]]]:
    """list(): every object of a cluster-scoped kind from the cache (a live list until the
    cache is synced) — the StorageClass and IngressClass listers of upstream's defaulting
    plugins."""

    async def list_all() -> list[Obj]:
        if informer.synced:
            return list(informer.items.values())
        return (await registry.list("")).decoded()

    return list_all


class NamespacedLister:
    """The objects of one namespace from an informer, with upstream's live lookup on empty."""

    def __init__(self, informer: StoreInformer, registry: Registry, *,
                 ttl: float = LIVE_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self._informer = informer
        self._registry = registry
        self._ttl = ttl
        self._clock = clock
        self._by_namespace: dict[str, dict[str, Obj]] = {}
        self._live: collections.OrderedDict[str, tuple[float, list[Obj]]] = \
            collections.OrderedDict()
        informer.key_listeners.append(self._on_change)

    def _on_change(self, key: str, obj: Obj | None) -> None:
        rest = key[len(self._informer.prefix):]
        namespace = rest.partition("/")[0]
        self._live.pop(namespace, None)
        objects = self._by_namespace.setdefault(namespace, {})
        if obj is None:
            objects.pop(key, None)
            if not objects:
                del self._by_namespace[namespace]
        else:
            objects[key] = obj

    async def list(self, namespace: str) -> list[Obj]:
        """The namespace's objects: cached; when the cache has none, a live list remembered
        for the TTL (an object created a moment ago is found before its watch event)."""
        objects = self._by_namespace.get(namespace)
        if objects:
            return list(objects.values())
        if not self._informer.synced:
            return await self.list_live(namespace)
        now = self._clock()
        entry = self._live.get(namespace)
        if entry is not None and entry[0] > now:
            self._live.move_to_end(namespace)
            return entry[1]
        version = self._informer.version
        items = await self.list_live(namespace)
        if self._informer.version == version:  # nothing changed while listing
            self._live[namespace] = (now + self._ttl, items)
            self._live.move_to_end(namespace)
            while len(self._live) > LIVE_ENTRIES:
                self._live.popitem(last=False)
        return items

    async def list_live(self, namespace: str) -> list[Obj]:
        """The namespace's objects read from the store now."""
        return (await self._registry.list(namespace)).decoded()

