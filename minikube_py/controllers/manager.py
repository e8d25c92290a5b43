"""The controller manager: one client, one set of shared informers, every controller.

Kubernetes v1.0 piece: cmd/kube-controller-manager/app/controllermanager.go (CMServer.Run:
build the client from --master/--kubeconfig, start each controller — replication manager,
endpoints controller, node controller, namespace manager, service account controller — and
serve /healthz on --port 10252), with the later `--controllers` list and the shared informer
factory that lets them all share one pod watch.

Controllers are named as upstream's `--controllers` flag names them; their modules are
imported only when enabled, so a trimmed manager does not pay for the others.

Each controller gets a pause gate (minikube_py/pausing.py) registered under its `--controllers`
name in the manager's pause registry while it runs.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog

from ..client import Client
from ..client.cache import InformerFactory
from ..pausing import CONTROLLER, PauseRegistry
from .base import Controller, ControllerContext
from .options import ALL_CONTROLLERS, ControllerOptions

if TYPE_CHECKING:
    from aiohttp import web

log = structlog.get_logger(component="controller-manager")

#: `--controllers` name -> "module:Class" under minikube_py.controllers
CONTROLLERS: dict[str, str] = {
    "replicationcontroller": "replication:ReplicationManager",
    "replicaset": "replicaset:ReplicaSetController",
    "deployment": "deployment:DeploymentController",
    "endpoint": "endpoints:EndpointsController",
    "nodelifecycle": "node_lifecycle:NodeLifecycleController",
    "namespace": "namespace:NamespaceController",
    "garbagecollector": "garbagecollector:GarbageCollector",
    "serviceaccount": "serviceaccount:ServiceAccountsController",
    "resourcequota": "resourcequota:ResourceQuotaController",
    "persistentvolume-binder": "persistentvolume:PersistentVolumeController",
    "taint-eviction-controller": "taint_eviction:TaintEvictionController",
    "root-ca-cert-publisher": "rootcacertpublisher:RootCACertPublisher",
    "serviceaccount-token": "tokens:TokensController",
    "csrsigning": "csrsigning:CSRSigningController",
    "csrapproving": "csrapproving:CSRApprovingController",
    "csrcleaner": "csrcleaner:CSRCleanerController",
    "daemonset": "daemonset:DaemonSetsController",
    "statefulset": "statefulset:StatefulSetController",
    "job": "job:JobController",
    "cronjob": "cronjob:CronJobController",
    "ttl-after-finished": "ttl_after_finished:TTLAfterFinishedController",
    "podgc": "podgc:PodGCController",
    "disruption": "disruption:DisruptionController",
    "horizontalpodautoscaling": "hpa:HorizontalController",
    "endpointslice": "endpointslice:EndpointSliceController",
    "endpointslicemirroring": "endpointslicemirroring:EndpointSliceMirroringController",
    "attachdetach": "attachdetach:AttachDetachController",
    "csi-hostpath-provisioner": "csi_provisioner:CSIProvisioner",
    "csi-hostpath-attacher": "csi_attacher:CSIAttacher",
}
assert set(CONTROLLERS) == set(ALL_CONTROLLERS)


def controller_class(name: str) -> type[Controller]:
    module, _, cls = CONTROLLERS[name].partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)


def parse_controllers(text: str) -> tuple[str, ...]:
    """Upstream's `--controllers` syntax: `*` = all, `foo` enables, `-foo` disables;
    `*,-garbagecollector` runs all but the garbage collector. Unknown names are errors."""
    enabled: list[str] = []
    disabled: set[str] = set()
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        name = raw[1:] if raw.startswith("-") else raw
        if name != "*" and name not in CONTROLLERS:
            raise ValueError(f"unknown controller {name!r} (known: {', '.join(CONTROLLERS)})")
        if raw.startswith("-"):
            disabled.add(name)
        elif name == "*":
            enabled.extend(ALL_CONTROLLERS)
        else:
            enabled.append(name)
    return tuple(dict.fromkeys(n for n in enabled if n not in disabled))


class ControllerManager:
    """Builds the enabled controllers over one client and one informer factory; `run()`
    runs them all until cancelled (or until one fails for good, which stops the rest)."""

    def __init__(self, client: Client, options: ControllerOptions | None = None, *,
                 informers: InformerFactory | None = None,
                 clients: Callable[[str], Client] | None = None,
                 pauses: PauseRegistry | None = None) -> None:
        """`informers`: the process's shared factory (all-in-one; its owner stops it), else
        the manager makes and owns one. `clients`: service account -> client acting as it
        (ControllerContext.clients); default: every controller uses `client`. `pauses`: the
        cluster's pause registry, where each controller's gate is registered under its name
        while it runs; default: a private one."""
        self.options = options or ControllerOptions()
        self._owns_informers = informers is None
        self.ctx = ControllerContext(client, informers or InformerFactory(client), self.options,
                                     clients)
        self.pauses = pauses if pauses is not None else PauseRegistry()
        self.controllers: list[Controller] = []
        self.started = asyncio.Event()

    async def run(self) -> None:
        self.controllers = [controller_class(name)(self.ctx) for name in self.options.controllers]
        try:
            for name, controller in zip(self.options.controllers, self.controllers, strict=True):
                controller.gate = self.pauses.register(name, CONTROLLER)
        except ValueError:  # a name taken in this registry: leave it as it was
            for controller in self.controllers:
                self.pauses.unregister(controller.gate)
            raise
        self.ctx.informers.start()
        tasks = [asyncio.create_task(c.run(), name=f"controller:{c.name}")
                 for c in self.controllers]
        log.info("controllers started", controllers=[c.name for c in self.controllers])
        self.started.set()
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for controller in self.controllers:
                self.pauses.unregister(controller.gate)
            if self._owns_informers:
                await self.ctx.informers.stop()
            await self.ctx.close()


def build_app(manager: ControllerManager,
              config: dict[str, Any] | None = None) -> "web.Application":
    """/healthz and /metrics on --port (10252), which componentstatuses probes, and /configz
    (`config`: the effective KubeControllerManagerConfiguration)."""
    from aiohttp import web
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

    from .. import configz

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(REGISTRY),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    configz.install(app, config)
    return app
