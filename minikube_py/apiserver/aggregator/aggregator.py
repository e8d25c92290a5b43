"""The aggregation layer: APIServices watched, probed, proxied and listed in discovery.

Kubernetes piece: kube-aggregator's APIAggregator (pkg/apiserver/apiserver.go), which sits in
front of kube-apiserver: its APIService informer drives the proxy handlers (one per
non-local APIService), the `/apis` handlers, the AvailableConditionController and, in
kube-apiserver, the autoregister controller. Here one object in the API server plays that part,
with the APIService objects kept in memory from a store watch (as crd_controller.py does for
CRDs). Four tasks: the APIService watch; a watch of Services and Endpoints, which re-probes the
APIServices naming one that changed (upstream's service and endpoints event handlers); the
periodic availability resync (upstream: 30 s); and the autoregister sync, woken whenever the
set of locally served group versions changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import structlog
from aiohttp import web

from ...api import errors
from ...registry import codec
from ...registry.apiservices import (
    GROUP,
    is_available,
    service_of,
    set_available,
    spec_of,
)
from ...storage.errors import StorageError
from ...storage.kv import EventType
from ..authz.guard import USER
from ..webhook_client import WebhookCallError, resolve, ssl_context
from . import autoregister, availability, discovery, proxy
from .metrics import availability_metrics
from .priorities import Entry, Priority, local_priority, ordered_groups

if TYPE_CHECKING:
    from ...storage import Store
    from ..options import APIServerOptions
    from ..resource_table import ResourceTable
    from ..webhook_client import WebhookClient

log = structlog.get_logger(component="aggregator")
Obj = dict[str, Any]


class Aggregator:
    """One per API server: `remote()` and `proxy()` for the request path, `ordered()`,
    `group_document()` and `aggregated_items()` for discovery, `groups_changed()` from the
    CRD wiring; everything else runs in its own tasks between `start()` and `stop()`."""

    def __init__(self, store: Store, resources: ResourceTable, options: APIServerOptions,
                 webhook_client: WebhookClient) -> None:
        self.store, self.resources, self.webhook_client = store, resources, webhook_client
        self.registry = resources.registries[GROUP, "v1", "apiservices"]
        opts = options
        self.client_cert = opts.proxy_client_cert_file
        self.client_key = opts.proxy_client_key_file
        self.resync_seconds = opts.apiservice_resync_seconds
        #: APIService name -> the object (from the watch)
        self.apiservices: dict[str, Obj] = {}
        #: APIService name -> (its backend's APIResourceList, last refresh succeeded)
        self.documents: dict[str, tuple[Obj, bool]] = {}
        self._session: aiohttp.ClientSession | None = None
        self._insecure: ssl.SSLContext | None = None
        self._probing: dict[str, asyncio.Task] = {}
        self._tasks: list[asyncio.Task] = []
        self._groups_changed = asyncio.Event()
        self.metrics = availability_metrics()

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        result = await self.store.range(self.registry.root)
        for kv in result.kvs:
            obj = codec.decode(kv)
            self.apiservices[obj["metadata"]["name"]] = obj
        watch = await self.store.watch(self.registry.root,
                                              start_revision=result.revision + 1)
        backends = [await self.store.watch(self.resources.registries["", "v1", r].root,
                                                  start_revision=result.revision + 1)
                    for r in ("services", "endpoints")]
        # upstream's readyz waits for autoregister-completion: the local APIServices of the
        # groups served at start exist before the server says it is ready
        try:
            await autoregister.sync(self.registry, autoregister.desired(self._served()),
                                    dict(self.apiservices))
        except (errors.StatusError, StorageError) as exc:
            log.warning("autoregister failed", error=str(exc))
            self._groups_changed.set()  # the task below retries
        self._tasks = [asyncio.create_task(self._watch(watch), name="aggregator-watch"),
                       *(asyncio.create_task(self._watch_backends(w),
                                             name="aggregator-service-watch") for w in backends),
                       asyncio.create_task(self._autoregister(), name="aggregator-autoregister"),
                       asyncio.create_task(self._resync(), name="aggregator-availability")]
        for name in self.apiservices:
            self._check(name)

    async def stop(self) -> None:
        for task in [*self._tasks, *self._probing.values()]:
            task.cancel()
        for task in [*self._tasks, *self._probing.values()]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks, self._probing = [], {}
        if self._session is not None:
            await self._session.close()
            self._session = None

    def session(self) -> aiohttp.ClientSession:
        """Its own session: bodies pass through compressed or not, as the backend sent them
        (the webhook client's session decodes them)."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                auto_decompress=False,
                connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True))
        return self._session

    def groups_changed(self) -> None:
        """The server started or stopped serving a group version (a CRD came or went)."""
        self._groups_changed.set()

    # -- the tasks ----------------------------------------------------------------------
    async def _watch(self, watch: Any) -> None:
        try:
            while True:
                batch = await watch.next_batch()
                if not batch:
                    return
                for event in batch:
                    if event.type is EventType.DELETE:
                        gone = codec.decode(event.prev_kv)
                        self.apiservices.pop(gone["metadata"]["name"], None)
                        self.documents.pop(gone["metadata"]["name"], None)
                        self.metrics.forget(gone["metadata"]["name"])
                        if autoregister.kept_in_sync(gone):  # a CRD's: put it back if served
                            self._groups_changed.set()
                        continue
                    obj = codec.decode(event.kv)
                    name = obj["metadata"]["name"]
                    old = self.apiservices.get(name)
                    self.apiservices[name] = obj
                    if old is None or old.get("spec") != obj.get("spec"):
                        self.documents.pop(name, None)
                        self._check(name)
        finally:
            await watch.cancel()

    async def _watch_backends(self, watch: Any) -> None:
        """A Service or Endpoints changed: probe the APIServices that name it now."""
        try:
            while True:
                batch = await watch.next_batch()
                if not batch:
                    return
                for event in batch:
                    _, namespace, name = event.kv.key.rsplit("/", 2)
                    for apiservice, obj in list(self.apiservices.items()):
                        ref = service_of(obj)
                        if ref and (ref.get("namespace"), ref.get("name")) == (namespace, name):
                            self._check(apiservice)
        finally:
            await watch.cancel()

    async def _autoregister(self) -> None:
        while True:
            await self._groups_changed.wait()
            self._groups_changed.clear()
            try:
                await autoregister.sync(self.registry, autoregister.desired(self._served()),
                                        dict(self.apiservices))
            except (errors.StatusError, StorageError) as exc:
                log.warning("autoregister failed", error=str(exc))
                await asyncio.sleep(1.0)
                self._groups_changed.set()

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync_seconds)
            for name, obj in list(self.apiservices.items()):
                if service_of(obj) is not None:
                    self._check(name)

    def _served(self) -> list[tuple[str, str, bool]]:
        return [(group, version, all(s.custom for s in strategies))
                for group, versions in self.resources.groups.items()
                for version, strategies in versions.items()
                if not self._remote_name(group, version)]

    def _remote_name(self, group: str, version: str) -> bool:
        obj = self.apiservices.get(f"{version}.{group}")
        return obj is not None and service_of(obj) is not None

    # -- availability -------------------------------------------------------------------
    def _check(self, name: str) -> None:
        """Probe `name` unless a probe of it is already running."""
        if name in self._probing:
            return
        task = asyncio.create_task(self._probe(name), name=f"apiservice-probe {name}")
        self._probing[name] = task
        task.add_done_callback(lambda _t, name=name: self._probing.pop(name, None))

    async def _probe(self, name: str) -> None:
        obj = self.apiservices.get(name)
        if obj is None:
            return
        try:
            verdict, document = await availability.probe(
                obj, services=self.webhook_client.services,
                endpoints=self.webhook_client.endpoints, session=self.session(),
                insecure_context=self._insecure_context())
        except errors.StatusError as exc:
            verdict, document = availability.Verdict(
                "Unknown", "ServiceAccessError", f"service cannot be checked due to: "
                                                 f"{exc.message}"), None
        except (OSError, ssl.SSLError, ValueError) as exc:  # e.g. an unreadable client cert
            log.warning("apiservice probe failed", name=name, error=str(exc))
            return
        if document is not None:
            self.documents[name] = (document, True)
        elif name in self.documents:
            self.documents[name] = (self.documents[name][0], False)
        await self._write_status(name, verdict)

    async def _write_status(self, name: str, verdict: availability.Verdict) -> None:
        def produce(old: Obj | None) -> Obj:
            if old is None:
                raise errors.StatusError(404, "NotFound", "gone")
            new = codec.clone(old)
            set_available(new, *verdict)
            return new

        current = self.apiservices.get(name)
        if current is not None:
            self.metrics.observe(name, is_available(current), verdict.status == "True",
                                 verdict.reason)
        if current is not None and produce(current).get("status") == current.get("status"):
            return  # upstream updateAPIServiceStatus: no write when nothing changed
        try:
            await self.registry.update("", name, produce, subresource="status")
        except (errors.StatusError, StorageError) as exc:
            log.debug("apiservice status not written", name=name, error=str(exc))

    def _insecure_context(self) -> ssl.SSLContext:
        """No server verification (the probe; `insecureSkipTLSVerify`), built once."""
        if self._insecure is None:
            # not create_default_context: loading the system CA bundle (~70 ms on the loop)
            # is wasted on a context that verifies nothing
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            if self.client_cert:
                context.load_cert_chain(self.client_cert, self.client_key or None)
            self._insecure = context
        return self._insecure

    # -- proxy --------------------------------------------------------------------------
    def remote(self, group: str, version: str) -> Obj | None:
        """The non-local APIService serving group/version, if any."""
        obj = self.apiservices.get(f"{version}.{group}")
        return obj if obj is not None and service_of(obj) is not None else None

    async def proxy(self, request: web.Request, apiservice: Obj) -> web.StreamResponse:
        if not is_available(apiservice):
            return proxy.plain_error("service unavailable", 503)
        spec = spec_of(apiservice)
        try:
            target = await resolve(availability.client_config(apiservice),
                                   self.webhook_client.services,
                                   self.webhook_client.endpoints)
        except WebhookCallError as exc:
            log.warning("error resolving apiservice", name=apiservice["metadata"]["name"],
                        error=str(exc))
            return proxy.plain_error("service unavailable", 503)
        try:
            context = self._insecure_context() if spec.get("insecureSkipTLSVerify") else \
                ssl_context(availability.client_config(apiservice).ca_bundle,
                            self.client_cert, self.client_key)
        except (WebhookCallError, OSError, ssl.SSLError) as exc:
            return proxy.plain_error(str(exc), 500)
        user = request.get(USER) or proxy.UNSECURED
        return await proxy.forward(request, base_url=target.url, context=context,
                                   server_hostname=target.server_hostname, user=user,
                                   session=self.session())

    # -- discovery ----------------------------------------------------------------------
    def _priority(self, group: str, version: str, custom: bool) -> Priority:
        obj = self.apiservices.get(f"{version}.{group}")
        if obj is not None:
            spec = spec_of(obj)
            return Priority(int(spec.get("groupPriorityMinimum") or 0),
                            int(spec.get("versionPriority") or 0))
        return local_priority(group, version, custom)

    def ordered(self, local: dict[str, dict[str, list]]) -> dict[str, list[str]]:
        """Every named group (local and aggregated) -> its versions, in discovery order."""
        entries = [Entry(g, v, self._priority(g, v, all(s.custom for s in ss)))
                   for g, vs in local.items() if g for v, ss in vs.items()
                   if not self._remote_name(g, v)]
        entries += [Entry(spec_of(o).get("group", ""), spec_of(o).get("version", ""),
                          self._priority(spec_of(o).get("group", ""),
                                         spec_of(o).get("version", ""), False))
                    for o in self.apiservices.values()
                    if service_of(o) is not None and spec_of(o).get("group")]
        return ordered_groups(entries)

    def discovery_fingerprint(self) -> tuple:
        """What aggregated discovery renders from here: every APIService at its
        resourceVersion and every fetched backend document with its freshness (by content:
        a refetch that changed nothing keeps the rendered body)."""
        return (tuple((name, (o.get("metadata") or {}).get("resourceVersion"))
                      for name, o in self.apiservices.items()),
                orjson.dumps(self.documents, option=orjson.OPT_SORT_KEYS)
                if self.documents else b"")

    def remote_groups(self) -> set[str]:
        return {spec_of(o).get("group", "") for o in self.apiservices.values()
                if service_of(o) is not None}

    def group_document(self, group: str, local: dict[str, dict[str, list]]) -> Obj | None:
        """`/apis/<group>` of a group with an aggregated version (built here, not proxied)."""
        if group not in self.remote_groups():
            return None
        versions = self.ordered({group: local.get(group, {})}).get(group)
        return discovery.api_group(group, versions) if versions else None

    def aggregated_items(self, local: dict[str, dict[str, list]], version: str,
                         render_local: Any) -> list[Obj]:
        """APIGroupDiscovery items in discovery order; `render_local(group, {v: strategies})`
        renders a local group version (apiserver/discovery.py)."""
        items = []
        for group, versions in self.ordered(local).items():
            entries = []
            for v in versions:
                name = f"{v}.{group}"
                if self.remote(group, v) is not None:  # never fetched: Stale, no resources
                    document, fresh = self.documents.get(name, (None, False))
                    entries.append(discovery.aggregated_version(group, v, document, fresh))
                else:
                    entries.append(render_local(group, {v: local[group][v]}))
            if entries:
                items.append({"metadata": {"name": group, "creationTimestamp": None},
                              "versions": entries})
        return items
