"""The API server: registries over the store, the watch fan-out, routes and filters.

Kubernetes v1.0 piece: pkg/master/master.go (New: build one REST storage per resource over
etcd, install the API groups, mount /healthz, /version, /metrics, /swaggerapi — here /openapi)
and cmd/kube-apiserver/app/server.go's flags (APIServerOptions below keeps their names). The
aiohttp application is assembled once; `start()` opens the per-resource watch caches and makes
sure the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease)
exist, as the v1.0 master's bootstrap controller did.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import orjson
import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from .. import __version__
from ..api import errors
from ..api.flowcontrol import GROUP as FLOWCONTROL
from ..api.rbac import GROUP as RBAC_GROUP
from ..pausing import REGISTRY as PAUSES
from ..pausing import PauseRegistry
from ..registry.allocators import NodePortAllocator, ServiceIPAllocator
from ..registry.generic import Registry
from ..registry.leases import LeaseManager
from ..registry.metrics import STRATEGIES as METRICS_STRATEGIES
from ..registry.priorityclasses import ensure_system_priority_classes
from ..storage import Store
from ..trace import TRACE
from . import discovery, healthz, render
from .admission import build_chain, registry_lookup
from .admission.chain import PluginContext
from .aggregator import Aggregator
from .authz import node_authorizer
from .authz.guard import build_guard
from .authz.node import RESOURCE_GROUPS as NODE_RESOURCE_GROUPS
from .authz.node import RESOURCES as NODE_RESOURCES
from .authz.rbac import RESOURCES as RBAC_RESOURCES
from .authz.rbac.aggregation import AggregationController
from .authz.rbac.bootstrap import reconcile as reconcile_bootstrap_policy
from .authz.rbac.escalation import EscalationCheck
from .authz.signers import is_authorized_for_signer_name
from .bootstrap import SYSTEM_NAMESPACES, BootstrapController, first_service_ip  # noqa: F401
from .componentstatus import ComponentStatuses, HTTPProbe, StoreProbe
from .connection import APIRunner
from .cors import CORS, parse_origins
from .crd_controller import CRDController
from .debug_components import ComponentsEndpoint
from .debug_trace import TraceEndpoint
from .discovery_memo import RenderedMemo
from .filters import INFO, filter_chain
from .flowcontrol_bootstrap import FlowControlBootstrap
from .handlers import ResourceHandlers
from .metrics import metrics as process_metrics
from .metrics_server.api import MetricsServer
from .openapi_service import OpenAPIDocuments
from .options import APIServerOptions
from .profiling import Profiling
from .requestinfo import RequestInfo
from .resource_table import ResourceTable
from .serviceaccount.authenticator import ServiceAccountAuthenticator
from .serviceaccount.config import build_token_config
from .serviceaccount.discovery import IssuerDiscovery
from .serving import Serving
from .version import KUBE_VERSION
from .watch_clock import WatchClock
from .webhook_client import WebhookClient

log = structlog.get_logger(component="apiserver")

SERVER_KEY = web.AppKey("apiserver", object)


class APIServer:
    def __init__(self, store: Store, options: APIServerOptions | None = None, *,
                 pauses: PauseRegistry | None = None) -> None:
        """`pauses`: the pause registry `/debug/components` serves — the all-in-one's
        cluster's; default the process's (empty in a lone API server process)."""
        self._shutting_down = False  # /readyz's shutdown check
        self.pauses = pauses if pauses is not None else PAUSES
        self.store = store
        self.options = options = options or APIServerOptions()
        self.metrics = process_metrics()
        self._leases = LeaseManager(store, int(options.event_ttl))
        #: every resource, built-in or custom: what routing, discovery, OpenAPI and admission
        #: read (ValueError at startup on a bad --runtime-config)
        self.resources = ResourceTable(store, options, self._leases)
        self.registries = self.resources.registries
        if options.enable_metrics_server:  # metrics.k8s.io/v1beta1, scraped from kubelets
            self.metrics_server = MetricsServer(self.registries["", "v1", "nodes"],
                                                self.registries["", "v1", "pods"], options)
            for registry in self.resources.serve_virtual(METRICS_STRATEGIES).values():
                registry.extras["metrics_server"] = self.metrics_server
        self.cachers = self.resources.cachers
        self.resource_config = self.resources.resource_config
        self.cors = CORS(parse_origins(options.cors_allowed_origins)) \
            if options.cors_allowed_origins.strip() else None  # ValueError on a bad regex
        services = self.registries["", "v1", "services"]
        services.extras["service_ips"] = ServiceIPAllocator(
            store, options.service_cluster_ip_range, options.etcd_prefix)
        services.extras["node_ports"] = NodePortAllocator(
            store, options.service_node_port_range, options.etcd_prefix)
        #: outbound calls: admission and conversion webhooks (services via their Endpoints)
        self.webhook_client = WebhookClient(services.get, self.registries["", "v1", "endpoints"].get)
        # --admission-control; ValueError on an unknown plugin name
        self.admission = build_chain(options.admission_control,
                                     registry_lookup(self.resources.registries), options)
        # service-account tokens (serviceaccount/): None unless a key or issuer is configured
        self.tokens = build_token_config(options)  # ValueError on bad key files
        # secure-port authn/authz; ValueError on bad files
        self.guard = build_guard(
            options,
            None if self.tokens is None else ServiceAccountAuthenticator(self.tokens.verifier,
                                                                        self._lookup),
            {resource: (store, self.registries[group, "v1", resource].root)
             for group, resource in (*((RBAC_GROUP, r) for r in RBAC_RESOURCES),
                                     *((NODE_RESOURCE_GROUPS[r], r) for r in NODE_RESOURCES))
             if (group, "v1", resource) in self.registries})
        #: the Node authorizer (--authorization-mode Node), its informers started with RBAC's
        self.node_authorizer = node_authorizer(self.guard.authorizer) if self.guard else None
        if self.guard is not None and self.guard.rbac is not None:
            # escalation prevention runs before every other admission step
            self.admission.plugins.insert(0, EscalationCheck(self.guard.rbac,
                                                             self.guard.authorizer))
        #: ClusterRole aggregation, with RBAC only (set at start)
        self.rbac_aggregation: AggregationController | None = None
        self.flowcontrol: FlowControlBootstrap | None = None
        self.component_statuses = ComponentStatuses(self._probes())
        self.watch_clock = WatchClock(min(0.25, options.bookmark_interval / 2))
        self.handlers = ResourceHandlers(Serving(
            self.resources, options, self.admission, self.component_statuses, self.metrics,
            self.watch_clock, self.guard, self.tokens))
        self.bootstrap = BootstrapController(
            self.registries, service_ip=first_service_ip(options.service_cluster_ip_range),
            public_address=options.public_address, public_port=options.public_port,
            interval=options.endpoint_reconciler_interval)
        self._openapi = OpenAPIDocuments(self.resources.groups)
        self.crd_controller = CRDController(self)
        # APIServices: proxy, availability, discovery
        self.aggregator = Aggregator(store, self.resources, options, self.webhook_client)
        self._discovery_memo = RenderedMemo()  # aggregated discovery's rendered bodies
        self.resources.on_change(self.aggregator.groups_changed)  # local APIServices

    # -- custom resources (crd_controller.py) --------------------------------------------
    async def serve_custom(self, strategies: list, crd: dict[str, Any] | None = None) -> None:
        """Serve a CRD's versions now (the resource table), in OpenAPI when `crd` is given."""
        if crd is not None and strategies:
            self._openapi.set_custom(crd["metadata"]["name"], crd, strategies)
        await self.resources.serve(strategies)

    async def unserve_custom(self, strategies: list) -> None:
        """Stop serving a CRD's versions: its routes answer 404, its watches end, OpenAPI
        drops it."""
        if strategies:
            self._openapi.remove_custom(f"{strategies[0].resource}.{strategies[0].group}")
        await self.resources.unserve(strategies)

    # -- wiring -------------------------------------------------------------------------
    async def _lookup(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """An object the service-account authenticator checks a token against, or None."""
        try:
            return await self.registries["", "v1", resource].get(namespace, name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise

    def registry_for(self, group: str, version: str, resource: str) -> Registry:
        return self.resources.registry_for(group, version, resource)

    def set_component_url(self, name: str, url: str) -> None:
        """Probe component `name` at `url` (the all-in-one start learns ports late)."""
        self.component_statuses.probes[name] = HTTPProbe(url)

    def _probes(self) -> dict[str, Any]:
        opts = self.options
        probes: dict[str, Any] = {
            "scheduler": HTTPProbe(opts.scheduler_health_url),
            "controller-manager": HTTPProbe(opts.controller_manager_health_url),
        }
        if opts.etcd_health_urls:
            for i, url in enumerate(opts.etcd_health_urls):
                probes[f"etcd-{i}"] = HTTPProbe(url)
        else:
            probes["etcd-0"] = StoreProbe(self.store.current_revision)
        return probes

    async def start(self) -> None:
        await asyncio.gather(*(c.start() for c in set(self.cachers.values())))
        await self.crd_controller.start()
        await self.aggregator.start()
        # plugins' informers (policies, webhook configurations) are synced before serving
        await self.admission.start(PluginContext(
            self.webhook_client, self.resources.versions_of,
            signer_authorizer=None if self.guard is None
            else functools.partial(is_authorized_for_signer_name, self.guard.authorizer)))
        await self.bootstrap.start()  # system namespaces, the `kubernetes` service
        if self.guard is not None and self.guard.rbac is not None:
            # the post-start hook rbac/bootstrap-roles, then the authorizer's informers
            await reconcile_bootstrap_policy(
                *(self.registries[RBAC_GROUP, "v1", resource] for resource in (
                    "clusterroles", "clusterrolebindings", "roles", "rolebindings")))
            await self.guard.rbac.start()
            self.rbac_aggregation = AggregationController(
                self.guard.rbac.informers["clusterroles"],
                self.registries[RBAC_GROUP, "v1", "clusterroles"])
            await self.rbac_aggregation.settle()  # admin/edit/view filled before serving
            await self.rbac_aggregation.start()
        if self.node_authorizer is not None:
            await self.node_authorizer.start()
        # the post-start hook scheduling/bootstrap-system-priority-classes
        await ensure_system_priority_classes(
            self.registries["scheduling.k8s.io", "v1", "priorityclasses"])
        # the post-start hook priority-and-fairness-config-producer
        self.flowcontrol = FlowControlBootstrap(
            self.registries[FLOWCONTROL, "v1", "prioritylevelconfigurations"],
            self.registries[FLOWCONTROL, "v1", "flowschemas"], self.options.apf_config_interval)
        await self.flowcontrol.start()

    def close_watchers(self) -> None:
        for cacher in set(self.cachers.values()):
            cacher.close_watchers()

    async def stop(self) -> None:
        if self.flowcontrol is not None:
            await self.flowcontrol.stop()
        await self.aggregator.stop()
        await self.crd_controller.stop()
        await self.admission.stop()
        if self.rbac_aggregation is not None:
            await self.rbac_aggregation.stop()
        if self.guard is not None and self.guard.rbac is not None:
            await self.guard.rbac.stop()
        if self.node_authorizer is not None:
            await self.node_authorizer.stop()
        await self.webhook_client.close()
        await self.bootstrap.stop()
        await self.watch_clock.stop()
        await asyncio.gather(*(c.stop() for c in set(self.cachers.values())))

    # -- the application ---------------------------------------------------------------
    def make_runner(self) -> web.AppRunner:
        """The application behind a runner with Go's connection handling (connection.py):
        a request line or header up to 1 MiB reaches the API, so e.g. an absurd labelSelector
        gets a 400 Status from the selector parser, and beyond that a 431 Status; headers must
        arrive within --read-header-timeout; watches see their client leave at once."""
        return APIRunner(self.build_app(), read_header_timeout=self.options.read_header_timeout)

    def build_app(self) -> web.Application:
        opts = self.options
        app = web.Application(
            middlewares=[filter_chain(self.metrics, readonly=opts.max_requests_inflight,
                                      mutating=opts.max_mutating_requests_inflight,
                                      guard=self.guard.check if self.guard else None,
                                      authorize_asserted=(self.guard.authorize
                                                          if self.guard else None),
                                      request_timeout=opts.request_timeout,
                                      max_watches_per_client=opts.max_watches_per_client)],
            client_max_size=4 * 1024 * 1024,
        )
        app[SERVER_KEY] = self
        router = app.router
        # resource routes first: the router tries routes in order, and these carry the load
        router.add_route("*", "/api/{tail:.*}", self.api)
        router.add_route("*", "/apis/{tail:.*}", self.api)
        router.add_route("*", "/api", self.api)
        router.add_route("*", "/apis", self.api)
        for endpoint in self._health_endpoints():
            router.add_get(f"/{endpoint.name}", functools.partial(self.health, endpoint))
            for check_name, check in endpoint.checks:
                router.add_get(f"/{endpoint.name}/{check_name}", functools.partial(self.health_check, check))
        router.add_get("/version", self.version)
        router.add_get("/version/", self.version)  # kr8s asks here; upstream's mux answers both
        router.add_get("/metrics", self.prometheus)
        router.add_get("/openapi/v2", self.openapi_v2)
        router.add_get("/openapi/v3", self.openapi_v3_index)
        router.add_get("/openapi/v3/{path:.*}", self.openapi_v3)
        router.add_get("/", self.root)
        if self.tokens is not None:
            IssuerDiscovery(self.tokens).install(router)  # /.well-known/openid-configuration
        if opts.profiling:
            Profiling().install(router)  # --profiling: /debug/pprof/
        trace = TraceEndpoint(TRACE)
        trace.install(router)  # /debug/trace: the trace ring, live (SSE)
        ComponentsEndpoint(self.pauses).install(router)  # /debug/components: pause, resume
        if self.cors is not None:
            self.cors.install(app)  # --cors-allowed-origins: before the filter chain

        async def on_startup(_app: web.Application) -> None:
            await self.start()

        async def on_shutdown(_app: web.Application) -> None:
            self._shutting_down = True
            self.close_watchers()  # open streams end now, not at their next wake-up
            trace.close()

        async def on_cleanup(_app: web.Application) -> None:
            await self.stop()

        app.on_startup.append(on_startup)
        app.on_shutdown.append(on_shutdown)
        app.on_cleanup.append(on_cleanup)
        return app

    # -- non-resource endpoints ---------------------------------------------------------
    def _health_endpoints(self) -> list[healthz.Endpoint]:
        """/healthz, /livez and /readyz with the checks of upstream's that mean something here."""
        async def ping() -> str | None:
            return None

        async def etcd() -> str | None:
            try:
                await asyncio.wait_for(self.store.current_revision(), 5.0)
            except Exception as exc:  # any failure is the answer
                return str(exc) or type(exc).__name__
            return None

        async def informer_sync() -> str | None:
            waiting = sorted(name for name, c in self.cachers.items() if not c.ready.is_set())
            return f"watch caches not synced: {waiting}" if waiting else None

        async def shutdown() -> str | None:
            return "process is shutting down" if self._shutting_down else None

        live = [("ping", ping), ("log", ping), ("etcd", etcd)]
        return [healthz.Endpoint("healthz", live), healthz.Endpoint("livez", live),
                healthz.Endpoint("readyz", [*live, ("informer-sync", informer_sync),
                                            ("shutdown", shutdown)])]

    async def health(self, endpoint: healthz.Endpoint, request: web.Request) -> web.Response:
        answer = await healthz.run_root(endpoint, "verbose" in request.query,
                                        request.query.getall("exclude", []))
        return _health_response(answer)

    async def health_check(self, check: healthz.Check, request: web.Request) -> web.Response:
        return _health_response(await healthz.run_one(check))

    async def version(self, request: web.Request) -> web.Response:
        body = dict(KUBE_VERSION, minikube_py=__version__, storage=self.options.backend)
        return render.json_response(orjson.dumps(body))

    async def prometheus(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(REGISTRY),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def openapi_v2(self, request: web.Request) -> web.Response:
        return await self._openapi.serve_v2(request)

    async def openapi_v3_index(self, request: web.Request) -> web.Response:
        return render.json_response((await self._openapi.v3_view()).index)

    async def openapi_v3(self, request: web.Request) -> web.Response:
        return await self._openapi.serve_v3(request, request.match_info["path"])

    async def root(self, request: web.Request) -> web.Response:
        paths = ["/apis", "/healthz", "/livez", "/metrics", "/openapi/v2",
                 "/openapi/v3", "/readyz", "/version"]
        groups = self.aggregator.ordered(self.resources.groups)  # local and aggregated
        paths += sorted(f"/apis/{g}/{v}" for g, vs in groups.items() for v in vs)
        paths += sorted(f"/apis/{g}" for g in groups)
        if "" in self.resources.groups:
            paths += ["/api", *(f"/api/{v}" for v in self.resources.groups[""])]
        paths += ["/debug/components", "/debug/trace"]
        if self.options.profiling:
            paths += ["/debug/pprof", "/debug/tasks"]
        return render.json_response(orjson.dumps({"paths": sorted(paths)}))

    async def api(self, request: web.Request) -> web.StreamResponse:
        info: RequestInfo = request[INFO]
        if info.group and (remote := self.aggregator.remote(info.group, info.version)):
            return await self.aggregator.proxy(request, remote)  # an aggregated API
        if info.is_resource:
            return await self.handlers.handle(request, info)
        if request.method != "GET":
            raise errors.method_not_allowed()
        return self._discovery(request, info)

    def _discovery(self, request: web.Request, info: RequestInfo) -> web.Response:
        path = request.path.rstrip("/")
        accept = request.headers.get("Accept")
        aggregated = discovery.aggregated_version(accept)
        if path == "/api" and "" not in self.resources.groups:
            raise errors.not_found_path()  # --runtime-config api/v1=false: no legacy API
        if path == "/api":
            if aggregated:
                return self._aggregated_memo(path, aggregated, lambda: discovery.aggregated(
                    {"": self.resources.groups[""]}, aggregated))
            return render.json_response(orjson.dumps(discovery.api_versions(
                request.host or self.options.advertise_address)))
        if path == "/apis":
            if aggregated:  # local and aggregated groups, in APIService priority order
                return self._aggregated_memo(path, aggregated, lambda: discovery.aggregated(
                    {}, aggregated) | {"items": self.aggregator.aggregated_items(
                        self.resources.groups, aggregated, functools.partial(
                            self._aggregated_version, aggregated))})
            return render.json_response(orjson.dumps(discovery.api_group_list(
                self.aggregator.ordered(self.resources.groups))))
        parts = [p for p in path.split("/") if p]
        if parts[0] == "apis" and len(parts) == 2 and (
                group := self.aggregator.group_document(parts[1], self.resources.groups)):
            return render.json_response(orjson.dumps(group))
        if parts[0] == "api" and len(parts) == 2 and parts[1] in self.resources.groups.get("", {}):
            return render.json_response(orjson.dumps(discovery.resource_list(
                parts[1], self.resources.groups[""][parts[1]])))
        if parts[0] == "apis" and len(parts) == 2 and parts[1] in self.resources.groups and parts[1]:
            return render.json_response(orjson.dumps(discovery.api_group(
                parts[1], list(self.resources.groups[parts[1]]))))
        if parts[0] == "apis" and len(parts) == 3 and parts[1] and parts[2] in self.resources.groups.get(
                parts[1], {}):
            return render.json_response(orjson.dumps(discovery.resource_list(
                f"{parts[1]}/{parts[2]}", self.resources.groups[parts[1]][parts[2]])))
        raise errors.not_found_path()

    def _aggregated_memo(self, path: str, version: str, document: Callable[[], dict]
                         ) -> web.Response:
        """An aggregated discovery answer, rendered again only when the served resources or
        the aggregator's APIServices changed since the last one (discovery_memo.py)."""
        fingerprint = (self.resources.generation, self.aggregator.discovery_fingerprint())
        body = self._discovery_memo.get((path, version), fingerprint,
                                        lambda: orjson.dumps(document()))
        return web.Response(body=body, headers={
            "Content-Type": discovery.aggregated_content_type(version)})

    @staticmethod
    def _aggregated_version(version: str, group: str, versions: dict[str, list]) -> dict:
        return discovery.aggregated({group: versions}, version)["items"][0]["versions"][0]



def _health_response(answer: healthz.Answer) -> web.Response:
    return web.Response(status=answer.status, text=answer.text, charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})
