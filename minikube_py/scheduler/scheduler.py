"""The scheduler's I/O shell: informers in, scheduleOne, bindings out.

Kubernetes v1.0 piece: plugin/pkg/scheduler/scheduler.go (Scheduler.Run / scheduleOne) and
factory.go's ConfigFactory (the reflectors that feed it). Two pod reflectors, as in v1.0:
unassigned pods (spec.nodeName == "") of ours go to the FIFO queue; assigned pods go to the
scheduler cache. Nodes feed the cache; services and controllers feed spreading.

scheduleOne: pop -> genericScheduler.Schedule -> assume in the cache -> bind in the
background (the next pod does not wait for the API) -> `Scheduled` event; on failure (no node
fits, or ErrNoNodesAvailable "no nodes available to schedule pods") a `FailedScheduling`
event, `PodScheduled=False` (reason Unschedulable) on the pod, and the pod waits out its
backoff. A binding the API rejects is v1.5's bind failure (seed 003): the assumption is
forgotten, a "Binding rejected: ..." event, `PodScheduled=False` with reason BindingRejected,
and a retry after backoff (1.31 says reason SchedulerError for the same path). A 409 means
another scheduler was faster: the assumption is forgotten, nothing is retried.

Pausing (minikube_py/pausing.py): while the scheduler's gate is closed the loop takes no pod
from its queue (v1.x's or the framework's); the informers keep
filling the queue, whose `scheduler_pending_pods` gauge keeps rising, so pods pile up Pending
and are scheduled in order on resume.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from ..api import meta
from ..api.errors import StatusError
from ..client import Client
from ..client.cache import (
    FilteredInformer,
    Informer,
    InformerFactory,
    meta_namespace_key,
)
from ..client.flowcontrol import TokenBucket
from ..client.record import EventRecorder
from ..client.resources import (
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    REPLICASETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STORAGE_CLASSES,
)
from ..pausing import SCHEDULER, PauseRegistry
from ..trace import SCHEDULE, TRACE
from .algorithm.predicates_volume_binding import bind_plan
from .algorithm.predicates_volumes import pod_claims
from .algorithm.priorities import PriorityContext
from .algorithm.priorities_spreading import controller_selector, service_selector
from .algorithm.select_host import HostSelector
from .cache import SchedulerCache
from .extender import ExtenderError, HTTPExtender
from .factory import Algorithm, ExtenderConfig
from .framework.config.extenders import extender_configs
from .framework.config.types import SchedulerConfiguration
from .framework.explain import FrameworkExplanation
from .framework.interface import PluginFactory
from .framework_cycle import FrameworkScheduling
from .generic_scheduler import (
    Failures,
    FitError,
    GenericScheduler,
    NoNodesAvailable,
    ScheduleResult,
)
from .metrics import SchedulerMetrics
from .queue import SchedulingQueue
from .selecting import SelectingObjects

log = structlog.get_logger(component="scheduler")

Obj = dict[str, Any]
SCHEDULER_NAME_ANNOTATION = "scheduler.alpha.kubernetes.io/name"
DEFAULT_SCHEDULER_NAME = "default-scheduler"


def gate_name(scheduler_name: str) -> str:
    """The pause gate's name: `scheduler` for the default scheduler (the component's name in
    /debug/components), else the scheduler's own name (a second scheduler in the cluster)."""
    return "scheduler" if scheduler_name == DEFAULT_SCHEDULER_NAME else scheduler_name
_NOT_FINISHED = "status.phase!=Succeeded,status.phase!=Failed"
#: how often the scheduler's housekeeping runs (assumed-pod expiry, backoff gc), in seconds
JANITOR_PERIOD = 1.0
#: PodScheduled=False reasons: api.PodReasonUnschedulable; v1.5 scheduleOne's bind failure
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_BINDING_REJECTED = "BindingRejected"
#: how long the first pod needing PersistentVolumes waits for the PV/PVC informers to list
VOLUME_SYNC_TIMEOUT = 10.0


def _phase_finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _unassigned(pod: Obj) -> bool:
    """The field selector `spec.nodeName=,` + not finished, in the client."""
    return not (pod.get("spec") or {}).get("nodeName") and not _phase_finished(pod)


def _assigned(pod: Obj) -> bool:
    """`spec.nodeName!=,` + not finished."""
    return bool((pod.get("spec") or {}).get("nodeName")) and not _phase_finished(pod)


#: attempts explained by /debug/scheduler/last (each keeps per-node arrays: ~20 KB at 5000 nodes)
_EXPLANATIONS_KEPT = 256


@dataclass
class Attempt:
    """The last scheduling attempt of a pod, for /debug/scheduler/last. The per-node detail
    stays in the decision's arrays until someone asks (`to_dict`)."""

    pod: str
    time: str
    result: str  # "scheduled" | "unschedulable" | "bind-failed" | "error"
    node: str
    message: str
    feasible: int
    total: int
    seconds: float
    failures: Failures | None = None
    decision: ScheduleResult | None = None
    #: framework runs: profile, Filter statuses, Score parts, time per extension point
    explanation: FrameworkExplanation | None = None

    def to_dict(self) -> dict[str, Any]:
        """The explanation: per node the predicate reasons it failed, per feasible node its
        weighted score; for framework runs also the profile, each Filter plugin's status per
        failing node, each Score plugin's normalised and weighted score per scored node and
        the time per extension point."""
        out = {"pod": self.pod, "time": self.time, "result": self.result, "node": self.node,
               "message": self.message, "feasible": self.feasible, "total": self.total,
               "failed": self.failures.by_node() if self.failures is not None else {},
               "scores": self.decision.scores if self.decision is not None else {},
               "seconds": self.seconds}
        if self.decision is not None and self.decision.parts:
            out["priorityScores"] = self.decision.priority_scores()
        if self.explanation is not None:
            out["failed"] = self.explanation.failed_reasons()
            out["scores"] = self.explanation.totals()
            out.update(self.explanation.to_dict())
        return out


class Scheduler:
    def __init__(self, client: Client, algorithm: Algorithm | SchedulerConfiguration, *,
                 scheduler_name: str = DEFAULT_SCHEDULER_NAME,
                 percentage_of_nodes_to_score: int = 100, seed: int | None = None,
                 initial_backoff: float = 1.0, max_backoff: float = 60.0,
                 informers: InformerFactory | None = None,
                 bind_pods_qps: float = 0.0, bind_pods_burst: int = 100,
                 registry: Mapping[str, PluginFactory] | None = None,
                 extenders: Sequence[ExtenderConfig] | None = None,
                 pauses: PauseRegistry | None = None) -> None:
        """`algorithm`: a v1.0/v1.5 Algorithm (provider or Policy file), or a
        SchedulerConfiguration — then every profile gets a framework (framework_cycle.py),
        pods are matched to profiles by spec.schedulerName, and the configuration's backoff
        applies (see `use_configuration`; a configuration can also be handed over after
        construction, as the CLI's --config does); `registry`, `extenders`: as there.
        `informers`: the process's shared informers (all-in-one), filtered here in the
        client; without them the scheduler opens its own watches with field selectors, as the
        v1.0 ConfigFactory did. `bind_pods_qps` > 0: v1.0's BindPodsRateLimiter, a token
        bucket each pod waits on before it is scheduled and bound (--bind-pods-qps/-burst).
        `pauses`: the cluster's pause registry, where `run` registers the scheduler's gate
        (`gate_name`); default: a private one."""
        config = algorithm if isinstance(algorithm, SchedulerConfiguration) else None
        if config is not None:
            algorithm = Algorithm({}, [])  # the v1.x algorithm stays unused
        assert isinstance(algorithm, Algorithm)
        self._seed = seed
        self.client = client
        self.name = scheduler_name
        self.pauses = pauses if pauses is not None else PauseRegistry()
        self.gate = self.pauses.register(gate_name(scheduler_name), SCHEDULER)
        self.bind_limiter = TokenBucket(bind_pods_qps, bind_pods_burst) if bind_pods_qps > 0 \
            else None
        self.cache = SchedulerCache()
        self.recorder = EventRecorder(client, scheduler_name)
        self.metrics = SchedulerMetrics.instance()
        self.extenders = [HTTPExtender(config) for config in algorithm.extenders]
        self.algorithm = GenericScheduler(
            algorithm.predicates, algorithm.priorities, extenders=self.extenders,
            selector=HostSelector(seed),
            context=self._priority_context,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
            check_all_predicates=algorithm.check_all_predicates)
        self._shared = informers is not None
        self.unassigned: Informer | FilteredInformer
        self.assigned: Informer | FilteredInformer
        if informers is not None:
            pods = informers.informer(PODS)
            self.unassigned = FilteredInformer(pods, _unassigned)
            self.assigned = FilteredInformer(pods, _assigned)
            self.nodes = informers.informer(NODES)
            self.services = informers.informer(SERVICES)
            self.controllers = [informers.informer(REPLICATION_CONTROLLERS),
                                informers.informer(REPLICASETS)]
        else:
            self.unassigned = Informer(client, PODS,
                                       field_selector="spec.nodeName=," + _NOT_FINISHED)
            self.assigned = Informer(client, PODS,
                                     field_selector="spec.nodeName!=," + _NOT_FINISHED)
            self.nodes = Informer(client, NODES)
            self.services = Informer(client, SERVICES)
            self.controllers = [Informer(client, REPLICATION_CONTROLLERS),
                                Informer(client, REPLICASETS)]
        self.attempts: collections.OrderedDict[str, Attempt] = collections.OrderedDict()
        self._backoff = (initial_backoff, max_backoff)
        self._binds: set[asyncio.Task] = set()
        self._selectors = SelectingObjects()  # Services and controllers selecting a pod
        self.queue: SchedulingQueue | None = None  # the v1.x queue (the framework has its own)
        self._running = False
        # PV/PVC informers (upstream ConfigFactory's pVLister / pVCLister): started only when
        # a configured predicate reads volumes and a pod with a claim shows up
        self._informer_factory = informers
        #: framework plugins read PVs, services, controllers... through informers (upstream
        #: Handle.SharedInformerFactory); without the process's shared ones the scheduler
        #: owns a factory for them, started and stopped with it
        self.plugin_informers: InformerFactory | None = informers
        self._own_plugin_informers = False
        self.volumes = algorithm.volumes
        self.volume_informers: list[Informer] = []
        self._claims_seen = False
        self._volume_sync_pending = True
        # serviceAffinity's listers (upstream PluginFactoryArgs: ServiceLister, PodLister =
        # the scheduler cache, NodeLister)
        algorithm.listers.bind(services_for_pod=self._services_for_pod,
                               all_pods=self._cached_pods, node=self._cached_node)
        #: the configuration the framework runs (cli/scheduler_config.hand_off also records a
        #: loaded --config here; `use_configuration` is what switches to the framework)
        self.configuration: SchedulerConfiguration | None = None
        self.framework: FrameworkScheduling | None = None
        if config is not None:
            self.use_configuration(config, registry=registry, extenders=extenders)

    def use_configuration(self, config: SchedulerConfiguration | None, *,
                          registry: Mapping[str, PluginFactory] | None = None,
                          extenders: Sequence[ExtenderConfig] | None = None) -> None:
        """Schedule through the framework (before `run`): one Framework per profile of
        `config`, pods matched to profiles by spec.schedulerName, the configuration's pod
        backoff and HTTP extenders (`extenders`, else its `extenders:` entries); None keeps
        the v1.x algorithm. `registry`: the plugins to build the profiles from (default:
        in-tree plus the `minikube_py.scheduler.plugins` entry points). Plugins read the
        cluster through the process's shared informers, or through a factory the scheduler
        owns, started and synced with it."""
        if self._running:
            raise RuntimeError("a scheduler's configuration is set before it runs")
        self.configuration = config
        if config is None:
            self.framework = None
            return
        self._backoff = (float(config.pod_initial_backoff_seconds),
                         float(config.pod_max_backoff_seconds))
        configs = list(extenders) if extenders is not None else \
            extender_configs(config.extenders)
        self.extenders = [HTTPExtender(c) for c in configs]
        if self.plugin_informers is None:
            self.plugin_informers = InformerFactory(self.client)
            self._own_plugin_informers = True
        self.framework = FrameworkScheduling(self, config, registry=registry, seed=self._seed)

    @property
    def running(self) -> bool:
        """`run` has started (its queue exists: the v1.x one, or the framework's)."""
        return self._running

    def _informers(self) -> list[Informer | FilteredInformer]:
        return [self.unassigned, self.assigned, self.nodes, self.services, *self.controllers]

    def _owned(self) -> list[Informer | FilteredInformer]:
        """What `run` stops when it ends: its own informers, or only its views of shared
        ones (their owner stops those)."""
        if self._shared:
            return [self.unassigned, self.assigned]
        return [*self._informers(), *self.volume_informers]

    # -- wiring (ConfigFactory) ----------------------------------------------------------
    def wanted_scheduler(self, pod: Obj) -> str:
        """The scheduler a pod asks for: spec.schedulerName (the framework reads only that,
        as upstream since 1.6; the v1.x path also honours the alpha annotation)."""
        wanted = (pod.get("spec") or {}).get("schedulerName")
        if self.framework is None:
            annotations = (pod.get("metadata") or {}).get("annotations") or {}
            wanted = annotations.get(SCHEDULER_NAME_ANNOTATION) or wanted
        return wanted or DEFAULT_SCHEDULER_NAME

    def is_ours(self, pod: Obj) -> bool:
        wanted = self.wanted_scheduler(pod)
        if self.framework is not None:
            return self.framework.framework_for(wanted) is not None
        return wanted == self.name

    def _wire(self) -> None:
        if self.framework is not None:
            # the modern queue: PreEnqueue gates, cluster events, waiting pods on delete
            self.framework.wire()
            return
        queue = self.queue
        assert queue is not None
        self.unassigned.add_event_handler(
            on_add=lambda p: self._queued(queue.add, p),
            on_update=lambda old, new: self._queued(queue.update, new),
            on_delete=lambda p: self._queued(queue.delete, p))
        self.assigned.add_event_handler(
            on_add=self._assigned_pod_added, on_update=self.cache.update_pod,
            on_delete=self._assigned_pod_gone)
        self.nodes.add_event_handler(
            on_add=self._node_changed, on_update=lambda old, new: self._node_changed(new),
            on_delete=self.cache.remove_node)

    def _queued(self, put: Callable[[Obj], None], pod: Obj) -> None:
        """One of our pods into the v1.x queue; the pending gauge follows (also while the
        loop is paused and pops nothing)."""
        if self.is_ours(pod):
            put(pod)
            self._publish_pending()

    def _publish_pending(self) -> None:
        """`scheduler_pending_pods{queue}` of the v1.x queue (the framework's queue publishes
        its own)."""
        assert self.queue is not None
        self.metrics.pending.labels(queue="active").set(len(self.queue.active))
        self.metrics.pending.labels(queue="unschedulable").set(len(self.queue.unschedulable))

    def _assigned_pod_added(self, pod: Obj) -> None:
        self.cache.add_pod(pod)
        if not self._claims_seen and pod_claims(pod):
            self._claims_seen = True  # counted volumes now include PV-backed ones

    def _start_volume_informers(self) -> None:
        """PV and PVC informers, through the shared factory when there is one; the volume
        predicates' listers read them from now on."""
        if self.volume_informers:
            return
        if self._informer_factory is not None:
            pvs = self._informer_factory.informer(PERSISTENT_VOLUMES)
            pvcs = self._informer_factory.informer(PERSISTENT_VOLUME_CLAIMS)
            classes = self._informer_factory.informer(STORAGE_CLASSES)
        else:
            pvs = Informer(self.client, PERSISTENT_VOLUMES)
            pvcs = Informer(self.client, PERSISTENT_VOLUME_CLAIMS)
            classes = Informer(self.client, STORAGE_CLASSES)
        self.volume_informers = [pvs, pvcs, classes]
        for informer in self.volume_informers:
            # upstream VolumeBinding's cluster events: a claim, volume or class that appears
            # or changes may make an unschedulable pod fit (each still waits its backoff)
            informer.add_event_handler(on_add=self._volume_object_changed,
                                       on_update=lambda old, new: self._volume_object_changed(new))
            informer.start()
        self.volumes.bind(lambda namespace, name: pvcs.indexer.get(f"{namespace}/{name}"),
                          pvs.indexer.get, classes.indexer.get, pvs.indexer.list)

    async def _volumes_ready(self, pod: Obj) -> None:
        """Before the first decision that reads volumes, start the PV/PVC informers and wait
        (once, bounded) for their first list, so a pod's claim is not reported missing just
        because it was not listed yet. Clusters without volumes never open these watches."""
        if not self.volumes.needed or not (self._claims_seen or pod_claims(pod)):
            return
        self._start_volume_informers()
        if self._volume_sync_pending:
            self._volume_sync_pending = False
            try:
                await asyncio.wait_for(asyncio.gather(
                    *(i.wait_for_sync() for i in self.volume_informers)), VOLUME_SYNC_TIMEOUT)
            except TimeoutError:
                log.warning("persistent volume informers not synced; claims are unknown "
                            "until they list", timeout_s=VOLUME_SYNC_TIMEOUT)

    def _volume_object_changed(self, obj: Obj) -> None:
        if self.queue is not None:
            self.queue.move_all_to_active()

    def _node_changed(self, node: Obj) -> None:
        self.cache.add_node(node)
        assert self.queue is not None
        self.queue.move_all_to_active()

    def _assigned_pod_gone(self, pod: Obj) -> None:
        self.cache.remove_pod(pod)
        assert self.queue is not None
        self.queue.move_all_to_active()  # freed resources may fit a waiting pod

    def _priority_context(self) -> PriorityContext:
        return PriorityContext(services_for_pod=self._services_for_pod,
                               controllers_for_pod=self._controllers_for_pod)

    def _services_for_pod(self, pod: Obj) -> list[Obj]:
        return self._selecting(pod, [self.services], service_selector)

    def _cached_pods(self) -> Iterable[Obj]:
        """Every pod counted on a node: bound, and assumed while its binding is in flight."""
        for info in list(self.cache.nodes.values()):
            yield from list(info.pods.values())

    def _cached_node(self, name: str) -> Obj | None:
        info = self.cache.nodes.get(name)
        return None if info is None else info.node

    def _controllers_for_pod(self, pod: Obj) -> list[Obj]:
        return self._selecting(pod, self.controllers, controller_selector)

    def _selecting(self, pod: Obj, informers: list[Informer], selector_of) -> list[Obj]:
        """Objects in the pod's namespace whose selector (as the priorities read it) matches
        the pod's labels (selecting.SelectingObjects)."""
        return [obj for obj, _ in self._selectors.matching(
            pod, [(informer.indexer.list(), selector_of) for informer in informers])]

    # -- the loop ------------------------------------------------------------------------
    async def run(self) -> None:
        """Start the informers, wait until they have listed, then schedule forever."""
        self._running = True
        if self.framework is None:
            self.queue = SchedulingQueue(initial_backoff=self._backoff[0],
                                         max_backoff=self._backoff[1])
        self._wire()
        for informer in self._informers():
            informer.start()
        if self._own_plugin_informers:
            assert self.plugin_informers is not None
            self.plugin_informers.start()
        try:
            for informer in self._informers():
                await informer.wait_for_sync()
            if self._own_plugin_informers:
                assert self.plugin_informers is not None
                await self.plugin_informers.wait_for_sync()
            pending = self.framework.queue if self.framework is not None else self.queue
            log.info("scheduler synced", scheduler=self.name, nodes=len(self.nodes.indexer),
                     pending=len(pending or ()))
            janitor = asyncio.create_task(self._expire_assumed())
            flushes = asyncio.create_task(self.framework.queue.run()) \
                if self.framework is not None else None
            try:
                while True:
                    await self.schedule_one()
            finally:
                janitor.cancel()
                if flushes is not None:
                    flushes.cancel()
        finally:
            for informer in self._owned():
                await informer.stop()
            if self._own_plugin_informers:
                assert self.plugin_informers is not None
                await self.plugin_informers.stop()
            for task in list(self._binds):
                task.cancel()
            self.recorder.close()
            if self.queue is not None:
                self.queue.close()
            if self.framework is not None:
                self.framework.queue.close()
            for extender in self.extenders:
                await extender.close()
            self.pauses.unregister(self.gate)

    async def _expire_assumed(self) -> None:
        """Housekeeping once a second: assumed pods whose binding was never observed expire
        (upstream cache.cleanupAssumedPods), and every max-backoff period the per-pod backoff
        entries idle that long are dropped (upstream podBackoff.gc, which v1.5 ran on every
        scheduling error: here on a timer, so a burst of failures does not walk the map each
        time)."""
        loop = asyncio.get_running_loop()
        next_gc = loop.time() + self._backoff[1]
        while True:
            await asyncio.sleep(JANITOR_PERIOD)
            for pod in self.cache.cleanup_expired():
                log.warning("assumed pod expired: binding never observed",
                            pod=meta_namespace_key(pod))
            if self.queue is not None and loop.time() >= next_gc:
                next_gc = loop.time() + self._backoff[1]
                dropped = self.queue.backoff.gc()
                if dropped:
                    log.debug("pod backoff entries dropped", count=dropped)

    async def schedule_one(self) -> None:
        if self.framework is not None:
            await self.framework.schedule_next()
            return
        assert self.queue is not None
        pod = await self.queue.pop(self.gate)
        if self.bind_limiter is not None:  # upstream scheduleOne: BindPodsRateLimiter.Accept()
            await self.bind_limiter.accept()
        self._publish_pending()
        key = meta_namespace_key(pod)
        current = self.unassigned.indexer.get(key)
        if current is None or self.cache.is_assumed(pod):
            return  # bound or deleted since it was queued
        await self._volumes_ready(current)
        if self.framework is not None:
            framework = self.framework.framework_for(self.wanted_scheduler(current))
            if framework is not None:
                await self.framework.schedule_one(framework, current)
            return
        started = time.perf_counter()
        try:
            result = await self.algorithm.schedule(current, self.cache.snapshot())
        except NoNodesAvailable as err:  # upstream: Unschedulable, no per-node explanation
            self._unschedulable(current, str(err), 0, None, time.perf_counter() - started)
            return
        except FitError as err:
            self._unschedulable(current, err.message(), err.total, err.failures,
                                time.perf_counter() - started)
            return
        except ExtenderError as err:  # upstream: the attempt errors, the pod backs off
            self._failed(current, str(err), time.perf_counter() - started)
            return
        self.metrics.algorithm.observe(result.seconds)
        assumed = self.cache.assume_pod(current, result.node)
        task = asyncio.create_task(self._bind(current, assumed, result, started))
        self._binds.add(task)
        task.add_done_callback(self._binds.discard)

    def _unschedulable(self, pod: Obj, message: str, total: int, failures: Failures | None,
                       seconds: float) -> None:
        assert self.queue is not None
        delay = self.queue.add_unschedulable(pod)
        self.metrics.attempts.labels("unschedulable", self.name).inc()
        self._remember(pod, "unschedulable", "", message, 0, total, seconds, failures)
        log.info("unschedulable", pod=meta_namespace_key(pod), reason=message,
                 retry_in_s=delay)
        self.recorder.event(pod, "Warning", "FailedScheduling", message)
        self._update_condition(pod, REASON_UNSCHEDULABLE, message)

    def _update_condition(self, pod: Obj, reason: str, message: str,
                          nominated_node: str | None = None) -> None:
        """PodScheduled=False with `reason`, written in the background (upstream
        PodConditionUpdater / 1.31 updatePod, both through pods/status). `nominated_node`
        (framework): the status.nominatedNodeName to write when it differs from the pod's
        ("" clears it); None leaves it alone."""
        task = asyncio.create_task(self._set_scheduled_false(pod, reason, message,
                                                             nominated_node))
        self._binds.add(task)
        task.add_done_callback(self._binds.discard)

    def _failed(self, pod: Obj, message: str, seconds: float) -> None:
        """The algorithm itself failed (an extender's filter): event, backoff, retry."""
        assert self.queue is not None
        delay = self.queue.add_unschedulable(pod)
        self.metrics.attempts.labels("error", self.name).inc()
        self._remember(pod, "error", "", message, 0, 0, seconds)
        log.warning("scheduling failed", pod=meta_namespace_key(pod), error=message,
                    retry_in_s=delay)
        self.recorder.event(pod, "Warning", "FailedScheduling", message)

    async def _set_scheduled_false(self, pod: Obj, reason: str, message: str,
                                   nominated_node: str | None = None) -> None:
        md = pod["metadata"]
        condition = {"type": "PodScheduled", "status": "False", "reason": reason,
                     "message": message, "lastProbeTime": None,
                     "lastTransitionTime": meta.now_rfc3339()}
        status: Obj = {"conditions": [condition]}
        current = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated_node is not None and nominated_node != current:
            status["nominatedNodeName"] = nominated_node or None  # null removes it
        try:
            await self.client.patch(PODS, md["name"], {"status": status},
                                    md.get("namespace"), patch_type="strategic",
                                    subresource="status")
        except StatusError as exc:
            if exc.code != 404:
                log.warning("could not set PodScheduled=False", pod=meta_namespace_key(pod),
                            reason=reason, error=exc.message)
        except Exception as exc:  # noqa: BLE001 — connection trouble: the next attempt writes it
            log.warning("could not set PodScheduled=False", pod=meta_namespace_key(pod),
                        reason=reason, error=repr(exc))

    async def _bind(self, pod: Obj, assumed: Obj, result: ScheduleResult, started: float) -> None:
        md = pod["metadata"]
        key = meta_namespace_key(pod)
        bind_started = time.perf_counter()
        try:
            await self._bind_volumes(pod, result.node)
            await self.client.bind(md.get("namespace", ""), md["name"], result.node)
        except StatusError as exc:
            self.cache.forget_pod(assumed)
            self.metrics.attempts.labels("error", self.name).inc()
            self._remember(pod, "bind-failed", result.node, exc.message, result.feasible,
                           result.total, result.seconds, result.failures, result)
            if exc.code == 409:  # another scheduler bound it first, or it is being deleted
                log.info("binding refused", pod=key, node=result.node, reason=exc.message)
                return
            self._binding_rejected(pod, result.node, exc.message)
            return
        except Exception as exc:  # connection trouble: the same, the error as its text
            self.cache.forget_pod(assumed)
            self.metrics.attempts.labels("error", self.name).inc()
            self._binding_rejected(pod, result.node, str(exc) or repr(exc))
            return
        self.cache.finish_binding(assumed)
        assert self.queue is not None
        self.queue.scheduled(pod)
        now = time.perf_counter()
        self.metrics.binding.observe(now - bind_started)
        self.metrics.e2e.observe(now - started)
        self.metrics.attempts.labels("scheduled", self.name).inc()
        self._remember(pod, "scheduled", result.node, "", result.feasible, result.total,
                       result.seconds, result.failures, result)
        log.info("scheduled", pod=key, node=result.node, score=result.score,
                 feasible=result.feasible, nodes=result.total,
                 ms=round((now - started) * 1000, 2))
        self.recorder.event(pod, "Normal", "Scheduled",
                            f"Successfully assigned {key} to {result.node}")

    def _binding_rejected(self, pod: Obj, node: str, error: str) -> None:
        """v1.5 scheduleOne's bind failure (seed 003): the assumption is already forgotten;
        a `FailedScheduling` "Binding rejected: ..." event, PodScheduled=False with reason
        BindingRejected, and the pod back in the queue after its backoff (upstream's
        Config.Error). The freed room may fit a waiting pod, so those are retried too (1.31
        handleBindingCycleError: forgetting is an assigned-pod delete)."""
        assert self.queue is not None
        message = f"Binding rejected: {error}"
        log.warning("binding failed", pod=meta_namespace_key(pod), node=node, error=error)
        self.queue.move_all_to_active()
        self.queue.add_unschedulable(pod)
        self.recorder.event(pod, "Warning", "FailedScheduling", message)
        self._update_condition(pod, REASON_BINDING_REJECTED, message)

    async def _bind_volumes(self, pod: Obj, node: str) -> None:
        """The volume binding step (VolumeBinding PreBind, predicates_volume_binding.py): the
        chosen node goes into the pod's delayed claims before the pod is bound."""
        if not self.volume_informers:
            return
        namespace = pod["metadata"].get("namespace", "")
        claims = [claim for _volume, claim, _read_only in pod_claims(pod)]
        info = self.cache.nodes.get(node)
        if not claims or info is None or info.node is None:
            return
        for write in bind_plan(self.volumes, namespace, claims, info.node):
            if write.kind == "volume":
                await self.client.update(PERSISTENT_VOLUMES, write.body)
                log.info("volume pre-bound", volume=write.name, node=node)
            else:
                await self.client.patch(PERSISTENT_VOLUME_CLAIMS, write.name, write.body,
                                        namespace)
                log.info("claim node selected", claim=f"{namespace}/{write.name}", node=node)

    def _remember(self, pod: Obj, result: str, node: str, message: str, feasible: int,
                  total: int, seconds: float, failures: Failures | None = None,
                  decision: ScheduleResult | None = None,
                  explanation: FrameworkExplanation | None = None) -> None:
        key = meta_namespace_key(pod)
        self.attempts.pop(key, None)
        attempt = self.attempts[key] = Attempt(key, meta.now_rfc3339(), result, node, message,
                                               feasible, total, round(seconds, 6), failures,
                                               decision, explanation)
        if TRACE.active:  # the trace keeps the attempt itself: explained when read
            md = pod["metadata"]
            TRACE.emit(SCHEDULE, "scheduler", "pods", md.get("namespace", ""), md["name"],
                       md.get("uid", ""), attempt)
        if len(self.attempts) > _EXPLANATIONS_KEPT:
            self.attempts.popitem(last=False)
