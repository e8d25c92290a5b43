"""Serving CustomResourceDefinitions: the establishing, naming and finalizing controllers.

Kubernetes pieces: apiextensions-apiserver's pkg/controller/establish (Established),
pkg/controller/status naming controller (NamesAccepted, acceptedNames),
pkg/controller/finalizer (the `customresourcecleanup` finalizer deletes every object before
the CRD goes) and customresource_handler.go's crdHandler, which starts and stops serving a
CRD's versions. Here one task in the API server watches the CRDs' keys and asks the server to
serve or stop serving the Strategies registry/crds.py computes: the routes and discovery
change as soon as the CRD's event is read, before its status says Established.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

import structlog

from ..api import errors
from ..apiextensions.conversion import ConversionFailed, Post
from ..registry import codec, crds
from ..registry.generic import Registry
from ..registry.strategy import Obj, Strategy
from ..storage.errors import StorageError
from ..storage.kv import EventType
from .webhook_client import ClientConfig, WebhookCallError, WebhookClient

log = structlog.get_logger(component="crd-controller")


class CustomResourceServer(Protocol):
    """What the controller needs of the API server (server.APIServer is one): the store, the
    resource table's registries, the webhook client, and serving or not a CRD's versions."""

    store: Any
    registries: dict[tuple[str, str, str], Registry]
    webhook_client: WebhookClient

    async def serve_custom(self, strategies: list[Strategy], crd: Obj | None = None) -> None: ...

    async def unserve_custom(self, strategies: list[Strategy]) -> None: ...


class CRDController:
    """Keeps what the server serves equal to the established, undeleted CRDs."""

    def __init__(self, server: CustomResourceServer) -> None:
        self.server = server
        self.registry = server.registries[crds.GROUP, "v1", "customresourcedefinitions"]
        #: CRD name -> the spec it is served with
        self.served: dict[str, Any] = {}
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        result = await self.server.store.range(self.registry.root)
        for kv in result.kvs:
            await self._sync(codec.decode(kv))
        watch = await self.server.store.watch(self.registry.root,
                                              start_revision=result.revision + 1)
        self._task = asyncio.create_task(self._run(watch), name="crd-controller")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for name in list(self.served):
            await self._unserve(name)

    async def _run(self, watch: Any) -> None:
        try:
            while True:
                batch = await watch.next_batch()
                if not batch:
                    return
                for event in batch:
                    try:
                        if event.type is EventType.DELETE:
                            await self._unserve(codec.decode(event.prev_kv)["metadata"]["name"])
                        else:
                            await self._sync(codec.decode(event.kv))
                    except (errors.StatusError, StorageError) as exc:
                        log.warning("crd sync failed", error=str(exc))
        finally:
            await watch.cancel()

    def _conversion_post(self, client_config: Obj) -> Post:
        """How a CRD's conversion webhook is called: the server's webhook client, upstream's
        `?timeout=30s`, a failed call reported as the converter's failure text."""
        config = ClientConfig.from_api(client_config)
        client = self.server.webhook_client

        async def post(review: Obj, timeout: float) -> Obj:
            try:
                return await client.post_json(config, review, timeout,
                                              query=f"timeout={int(timeout)}s")
            except WebhookCallError as exc:
                raise ConversionFailed(str(exc)) from None

        return post

    def _taken(self, group: str) -> dict[str, str]:
        """Names (plural, singular, kinds, shortNames) served in `group`, by owner."""
        taken: dict[str, str] = {}
        for (g, _v, resource), registry in self.server.registries.items():
            if g == group and not registry.strategy.custom:
                taken[resource] = taken[registry.strategy.kind.lower()] = "<built-in>"
        for name, crd in self.served.items():
            if crd["spec"]["group"] == group:
                for claimed in crds.claimed_names(crd):
                    taken[claimed] = name
        return taken

    async def _sync(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        if crd["metadata"].get("deletionTimestamp"):
            await self._finalize(crd)
            return
        conflict = crds.name_conflicts(crd, self._taken(crd["spec"]["group"]))
        if conflict:
            await self._unserve(name)
        elif self.served.get(name, {}).get("spec") != crd["spec"]:
            await self._unserve(name)
            await self.server.serve_custom(crds.strategies_for(crd, self._conversion_post), crd)
            self.served[name] = crd
        await self._write_status(name, conflict)

    async def _write_status(self, name: str, conflict: str) -> None:
        def produce(old: Obj | None) -> Obj:
            if old is None:
                raise self.registry._not_found(name)
            new = codec.clone(old)
            status = new.setdefault("status", {})
            if conflict:
                crds.set_condition(new, "NamesAccepted", "False", "MultipleNamesNotAllowed",
                                   conflict)
                crds.set_condition(new, "Established", "False", "NotAccepted",
                                   "not all names are accepted")
                return new
            names = new["spec"]["names"]
            crds.set_condition(new, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
            crds.set_condition(new, "Established", "True", "InitialNamesAccepted",
                               "the initial names have been accepted")
            status["acceptedNames"] = {k: v for k, v in names.items()}
            return new  # storedVersions is the CRD strategy's (apiextensions/versions.py)

        old = await self.registry.get("", name)
        if produce(old) != old:
            await self.registry.update("", name, produce, subresource="status")

    async def _finalize(self, crd: Obj) -> None:
        """The finalizer controller: delete every object, stop serving, drop the finalizer."""
        name = crd["metadata"]["name"]
        if crds.CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or ()):
            return
        for strategy in crds.strategies_for(crd)[:1]:  # the storage version when served
            registry = self.server.registries.get(
                (strategy.group, strategy.version, strategy.resource))
            if registry is not None and self.served.get(name):
                await registry.delete_collection(None, labels=None, fields=None)
        await self._unserve(name)

        def produce(old: Obj | None) -> Obj:
            if old is None:
                raise self.registry._not_found(name)
            new = codec.clone(old)
            new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or ()
                                             if f != crds.CLEANUP_FINALIZER]
            return new

        await self.registry.update("", name, produce)

    async def _unserve(self, name: str) -> None:
        crd = self.served.pop(name, None)
        if crd is not None:
            await self.server.unserve_custom(crds.strategies_for(crd))
