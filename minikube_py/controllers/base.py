"""The shape every controller shares: informer events put keys on a work queue; workers take
a key, read the latest state from the informers' caches, and reconcile it through the API.

Kubernetes piece: the controller loop of pkg/controller (v1.0's RC manager `worker` /
`syncReplicationController`, later every client-go controller's `processNextWorkItem`): a
failed sync is retried with the queue's per-key backoff, a successful one forgets it.

Pausing (minikube_py/pausing.py): while the controller's gate is closed its workers take no
key from the queue; periodic passes that act without the queue (the node
monitor, pod GC, ...) wait at the top of each pass (`resumed()`). Informers keep feeding the
queue meanwhile, so the backlog drains on resume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from ..client import Client
from ..client.cache import InformerFactory
from ..client.record import EventRecorder
from ..client.workqueue import WorkQueue
from ..pausing import CONTROLLER, PauseGate
from ..trace import RECONCILE, TRACE
from .metrics import ControllerMetrics
from .options import ControllerOptions
from .sync_cpu import CPUMeter, measure

Obj = dict[str, Any]


@dataclass
class ControllerContext:
    """What the controller manager hands each controller: one client, the shared informers,
    the flags, and an event recorder per component name.

    `clients` is upstream's ControllerClientBuilder: service-account name -> a client acting
    as `system:serviceaccount:kube-system:<name>` (what `--use-service-account-credentials`
    gives each controller, the all-in-one's in-process identities); without it every
    controller shares `client` (upstream's default: the manager's own credentials)."""

    client: Client
    informers: InformerFactory
    options: ControllerOptions = field(default_factory=ControllerOptions)
    clients: Callable[[str], Client] | None = None
    #: wall-clock time (epoch seconds) for controllers whose decisions depend on it (Job
    #: deadlines, CronJob schedules, TTLs); a test passes one it can advance
    clock: Callable[[], float] = time.time
    _recorders: dict[str, EventRecorder] = field(default_factory=dict)

    def client_for(self, service_account: str | None) -> Client:
        """The client a controller running as `service_account` uses (None: the manager's
        own identity, as upstream's token controller and root client)."""
        if self.clients is None or service_account is None:
            return self.client
        return self.clients(service_account)

    def recorder(self, component: str) -> EventRecorder:
        recorder = self._recorders.get(component)
        if recorder is None:
            recorder = self._recorders[component] = EventRecorder(self.client, component)
        return recorder

    async def close(self) -> None:
        for recorder in self._recorders.values():
            await recorder.flush()
            recorder.close()


class Controller:
    """A named controller. Subclasses make their informers in `__init__` (through
    `ctx.informers`, before the factory starts) and implement `sync(key)`."""

    name = "controller"
    #: the kube-system service account upstream runs it as (its bootstrap ClusterRole is
    #: `system:controller:<service_account>`); None: the manager's own identity
    service_account: str | None = None
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client_for(self.service_account)
        self.queue = WorkQueue()
        self.log = structlog.get_logger(component="controller-manager", controller=self.name)
        #: the pause gate (the manager hands in one registered under the controller's name;
        #: a controller built alone gets a private one nobody else can flip by accident)
        self.gate = PauseGate(self.name, CONTROLLER)

    async def sync(self, key: str) -> None:
        raise NotImplementedError

    async def wait_for_caches(self) -> None:
        """Wait until every informer this controller uses has listed (upstream
        WaitForCacheSync); the manager has started them."""
        await self.ctx.informers.wait_for_sync()

    async def run(self) -> None:
        """Until cancelled: wait for the caches, then `workers` workers, plus `background()`."""
        await self.wait_for_caches()
        tasks = [asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}")
                 for i in range(self.workers)]
        tasks.append(asyncio.create_task(self.background(), name=f"{self.name}-background"))
        try:
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def background(self) -> None:
        """Periodic work besides the queue (e.g. the node monitor); none by default."""

    async def resumed(self) -> None:
        """Return when the controller is not paused (at once, without awaiting, if it is
        not): periodic passes call this before each pass."""
        if self.gate.paused:
            await self.gate.wait_resumed()

    async def _worker(self) -> None:
        metrics = ControllerMetrics.instance()
        depth, adds = metrics.depth.labels(self.name), metrics.adds.labels(self.name)
        retries, sync = metrics.retries.labels(self.name), metrics.sync.labels(self.name)
        sync_cpu = metrics.sync_cpu.labels(self.name)
        while True:
            depth.set(len(self.queue))
            key = await self.queue.get(self.gate)  # paused: takes nothing, keys queue up
            adds.inc()
            started = time.perf_counter()
            meter = CPUMeter()
            error = ""
            try:
                await measure(self.sync(key), meter)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried with backoff, never fatal
                self.log.warning("sync failed, will retry", key=key, error=str(exc),
                                 retries=self.queue.num_requeues(key))
                retries.inc()
                self.queue.add_rate_limited(key)
                error = str(exc)
            else:
                self.queue.forget(key)
            finally:
                self.queue.done(key)
                elapsed = time.perf_counter() - started
                sync.observe(elapsed)
                sync_cpu.observe(meter.seconds)
                if TRACE.active:
                    namespace, name = split_key(key) if isinstance(key, str) else ("", str(key))
                    TRACE.emit(RECONCILE, self.name, "", namespace, name, "",
                               (self.name, key, round(elapsed, 6), round(meter.seconds, 6),
                                error))


def enqueue_key(queue: WorkQueue, obj: Obj) -> None:
    """Queue `namespace/name` of `obj` (the handler most informers need)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    queue.add(f"{ns}/{md.get('name', '')}" if ns else md.get("name", ""))


def split_key(key: str) -> tuple[str, str]:
    """`namespace/name` -> (namespace, name); a cluster-scoped key has namespace ""."""
    ns, _, name = key.rpartition("/")
    return ns, name
