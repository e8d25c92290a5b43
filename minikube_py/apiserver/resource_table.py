"""The one table of resources the API server stores and serves: built-in kinds and CRDs alike.

Kubernetes pieces: v1.0's pkg/master (one REST storage per resource, installed per API
group), kube-apiserver's `--runtime-config` (which of them are served), and
apiextensions-apiserver's crdHandler, which adds and removes a CRD's versions while the
server runs. Routing (`registry_for`), discovery (`groups`), OpenAPI, admission (`lookup`) and
the watch fan-out (`cachers`) all read this table, so a CRD that is served here is at once
routable, discoverable, documented, admitted and watchable — and gone from all of them when
it is removed. Whoever must react to a change (OpenAPI, the aggregator's local APIServices)
subscribes with `on_change`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..api import errors
from ..registry import resources
from ..registry.cacher import Cacher, events_history_window
from ..registry.generic import Registry
from ..registry.leases import LeaseManager
from ..registry.strategy import Strategy
from ..storage import Store
from . import discovery, legacy_clients, runtime_config
from .options import APIServerOptions

GVR = tuple[str, str, str]


class ResourceTable:
    def __init__(self, store: Store, options: APIServerOptions, leases: LeaseManager) -> None:
        self.store, self.options, self._leases = store, options, leases
        #: every stored (group, version, resource), served or not
        self.registries: dict[GVR, Registry] = {}
        #: one watch cache per (resource, group): a resource's versions share their keys
        self.cachers: dict[tuple[str, str], Cacher] = {}
        for strategy in resources.STORED:
            registry = self._registry(strategy)
            self.registries[strategy.group, strategy.version, strategy.resource] = registry
            if strategy.stored_as is not None:  # a view shares its storage's watch fan-out
                storage = strategy.stored_as.storage
                self.cachers[strategy.resource, strategy.group] = \
                    self.cachers[storage.resource, storage.group]
            elif strategy.resource not in resources.VIRTUAL:
                self.cachers[strategy.resource, strategy.group] = self._cacher(strategy, registry)
        # --runtime-config: what is served (ValueError at startup on an unknown group)
        try:
            self.resource_config = runtime_config.parse(
                options.runtime_config, self.registries,
                default_off=resources.DISABLED_BY_DEFAULT, bundles=legacy_clients.bundles())
        except ValueError as exc:
            raise ValueError(f"--runtime-config: {exc}") from None
        #: what requests reach: the stored resources --runtime-config serves, and CRDs
        self.served: dict[GVR, Registry] = {
            gvr: r for gvr, r in self.registries.items() if self.resource_config.serves(*gvr)}
        #: discovery's view: group -> version -> strategies, versions in priority order
        self.groups: dict[str, dict[str, list[Strategy]]] = {}
        for strategy in resources.STORED:
            if self.resource_config.serves(strategy.group, strategy.version, strategy.resource):
                self.groups.setdefault(strategy.group, {}).setdefault(
                    strategy.version, []).append(strategy)
        self._listeners: list[Callable[[], None]] = []
        #: bumped by every change of what is served (discovery's memo keys on it)
        self.generation = 0

    def _cacher(self, strategy: Strategy, registry: Registry) -> Cacher:
        """A resource's watch cache: --watch-cache-size events at most, kept for upstream's
        events history window (max(75 s, --request-timeout + 15 s))."""
        return Cacher(strategy, self.store, registry.root, window=self.options.watch_cache_size,
                      fresh=events_history_window(self.options.request_timeout))

    def _registry(self, strategy: Strategy) -> Registry:
        return Registry(strategy, self.store, prefix=self.options.etcd_prefix,
                        leases=self._leases, gc_enabled=self.options.enable_garbage_collector)

    # -- reading ------------------------------------------------------------------------
    def registry_for(self, group: str, version: str, resource: str) -> Registry:
        """The served registry of a request's group/version/resource; 404 when not served."""
        registry = self.served.get((group, version, resource))
        if registry is None:
            raise errors.not_found_path()
        return registry

    def lookup(self, group: str, resource: str) -> Registry | None:
        """The registry of (group, resource) in any stored version (admission's view)."""
        for (g, _version, r), registry in list(self.registries.items()):
            if g == group and r == resource:
                return registry
        return None

    def versions_of(self, group: str, resource: str) -> list[Strategy]:
        """The served strategies of every version of (group, resource): what admission
        webhooks' and policies' matchPolicy Equivalent matches across."""
        return [r.strategy for (g, _v, res), r in list(self.served.items())
                if g == group and res == resource]

    def cacher_of(self, registry: Registry) -> Cacher:
        return self.cachers[registry.strategy.resource, registry.strategy.group]

    # -- changing (a CRD's versions) -------------------------------------------------------
    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every serve/unserve (OpenAPI, local APIServices)."""
        self._listeners.append(listener)

    async def serve(self, strategies: Iterable[Strategy]) -> None:
        """Serve these versions of one resource now: registries, routes, discovery (versions
        in kube-aware priority order, as upstream's CRD discovery); the watch cache of the
        first (all versions share the keys) starts before this returns."""
        cacher = None
        for strategy in strategies:
            gvr = (strategy.group, strategy.version, strategy.resource)
            registry = self._registry(strategy)
            self.registries[gvr] = self.served[gvr] = registry
            versions = self.groups.setdefault(strategy.group, {})
            versions.setdefault(strategy.version, []).append(strategy)
            self.groups[strategy.group] = discovery.sort_versions(versions)
            if cacher is None:
                cacher = self._cacher(strategy, registry)
                self.cachers[strategy.resource, strategy.group] = cacher
                await cacher.start()
        self._changed()

    def serve_virtual(self, strategies: Iterable[Strategy]) -> dict[GVR, Registry]:
        """Serve resources that store nothing (the metrics API): routes and discovery, no
        watch cache. Returns their registries (where the serving component is attached)."""
        out = {}
        for strategy in strategies:
            gvr = (strategy.group, strategy.version, strategy.resource)
            self.registries[gvr] = self.served[gvr] = out[gvr] = self._registry(strategy)
            versions = self.groups.setdefault(strategy.group, {})
            versions.setdefault(strategy.version, []).append(strategy)
        self._changed()
        return out

    async def unserve(self, strategies: list[Strategy]) -> None:
        """Stop serving these versions: routes answer 404 and the watches end."""
        for strategy in strategies:
            gvr = (strategy.group, strategy.version, strategy.resource)
            self.registries.pop(gvr, None)
            self.served.pop(gvr, None)
            versions = self.groups.get(strategy.group, {})
            kept = [s for s in versions.get(strategy.version, []) if s.resource != strategy.resource]
            if kept:
                versions[strategy.version] = kept
            else:
                versions.pop(strategy.version, None)
            if not versions:
                self.groups.pop(strategy.group, None)
        if strategies:
            cacher = self.cachers.pop((strategies[0].resource, strategies[0].group), None)
            if cacher is not None:
                await cacher.stop()
        self._changed()

    def _changed(self) -> None:
        self.generation += 1
        for listener in self._listeners:
            listener()
