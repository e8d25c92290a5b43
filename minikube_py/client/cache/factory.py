"""One informer per (resource, selectors), shared by every component of a process.

Kubernetes piece: client-go's SharedInformerFactory (informers/factory.go), the scale
mechanic DESIGN.md names: in the all-in-one process the controllers share one pod informer
instead of each opening its own watch, and one watch feeds every handler. Seed 004 walks the
same code (`sharedInformerFactory.InformerFor`, `Start`): informers are kept per resource
(and, here, per namespace and selectors, which upstream fixes per factory), each created with
the factory's default resync period unless a custom one is set for its resource
(NewSharedInformerFactory(client, defaultResync), WithCustomResyncConfig).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from ..resources import Resource
from ..rest import Client
from .informer import Informer
from .listers import Lister
from .store import IndexFunc


class InformerFactory:
    def __init__(self, client: Client, *, resync_period: float = 0.0,
                 custom_resync: Mapping[Resource, float] | None = None) -> None:
        """`resync_period` (0: never) is each informer's default handler resync period and
        resync check period; `custom_resync` overrides it per resource."""
        self.client = client
        self.resync_period = resync_period
        self.custom_resync = dict(custom_resync or {})
        self._informers: dict[tuple[Resource, str, str, str], Informer] = {}
        self._started = False

    def informer(self, resource: Resource, *, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "",
                 indexers: Mapping[str, IndexFunc] | None = None) -> Informer:
        """The shared informer for these selectors; `indexers` are added to it (an index
        of the same name must be the same function)."""
        key = (resource, namespace or "", label_selector, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(self.client, resource, namespace=namespace,
                                label_selector=label_selector, field_selector=field_selector,
                                resync_period=self.custom_resync.get(resource, self.resync_period))
            self._informers[key] = informer
            if self._started:
                informer.start()
        for name, func in (indexers or {}).items():
            informer.indexer.add_indexer(name, func)
        return informer

    def lister(self, resource: Resource, **selectors: str) -> Lister:
        """The lister over the shared informer's cache (upstream `factory.Core().V1().Pods()
        .Lister()`); the informer is made (and started, if the factory is) as `informer`."""
        return self.informer(resource, **selectors).lister()

    def start(self) -> None:
        """Start every informer made so far, and any made later."""
        self._started = True
        for informer in self._informers.values():
            informer.start()

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        await asyncio.gather(*(i.wait_for_sync(timeout) for i in self._informers.values()))

    async def stop(self) -> None:
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
        self._started = False
