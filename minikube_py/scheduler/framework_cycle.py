"""scheduleOne through the framework: one Framework per profile, the scheduling and binding cycles.

Kubernetes piece: pkg/scheduler/schedule_one.go (1.31: ScheduleOne, schedulingCycle,
bindingCycle, handleBindingCycleError, handleSchedulingFailure) and profile.NewMap (one
framework per `schedulerName`). The scheduler (scheduler.py) keeps its informers, cache and
queue; when it is given a SchedulerConfiguration instead of a v1.0/v1.5 Algorithm it hands
each popped pod here.

Scheduling cycle, on the event loop: schedulePod (framework/schedule_one.py), PostFilter on a
FitError, assume in the cache, Reserve, Permit. Binding cycle, as its own task (upstream's
goroutine) so the next pod is decided while this one binds: WaitOnPermit, PreBind, Bind,
PostBind. A failure after the assumption unreserves (in reverse order) and forgets it; every
failure ends in upstream's handleSchedulingFailure: back to the queue unless the pod is gone
or bound, a `FailedScheduling` event and `PodScheduled=False` with reason `Unschedulable`, or
`SchedulerError` when the status was an Error. Pods whose `spec.schedulerName` no profile has
are not ours and are ignored, as upstream.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import structlog

from ..client.cache import meta_namespace_key
from .algorithm.predicates_meta import PodMeta
from .algorithm.select_host import HostSelector
from .framework.config.types import SchedulerConfiguration
from .framework.events import ASSIGNED_POD_DELETE, WILDCARD
from .framework.explain import FrameworkExplanation
from .framework.handle import FrameworkHandle
from .framework.interface import (
    Code,
    CycleState,
    PluginFactory,
    QueuedPodInfo,
    Status,
    StatusError,
    is_success,
)
from .framework.metrics import sample_plugin_metrics
from .framework.nominator import NominatingInfo
from .framework.preemption import DECISION_KEY as PREEMPTION_DECISION_KEY
from .framework.registry import build_registry
from .framework.runtime import Framework
from .framework.schedule_one import (
    TIMINGS_KEY,
    FitError,
    PodScheduler,
    single_node_fit_error,
)
from .framework.waiting_pods import WaitingPodsMap, pod_uid
from .framework_queueing import QueueEventHandlers, new_queue
from .generic_scheduler import NoNodesAvailable

if TYPE_CHECKING:
    from .framework.schedule_one import Decision
    from .scheduler import Scheduler

log = structlog.get_logger(component="scheduler")
Obj = dict[str, Any]

#: PodScheduled=False reasons (v1.PodReasonUnschedulable, v1.PodReasonSchedulerError)
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def _rejection(pod: Obj, node: str, status: Status) -> Status:
    """A Reserve/Permit rejection reads as a one-node FitError (upstream)."""
    if not status.is_rejected():
        return status
    return Status(status.code, (single_node_fit_error(pod, node, status).message(),),
                  status.plugin)


class FrameworkScheduling:
    """The profiles of one scheduler and its framework scheduleOne."""

    def __init__(self, scheduler: Scheduler, config: SchedulerConfiguration, *,
                 registry: Mapping[str, PluginFactory] | None = None,
                 seed: int | None = None) -> None:
        self.scheduler = scheduler
        self.config = config
        self.waiting_pods = WaitingPodsMap()
        registry = registry if registry is not None else build_registry()
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            handle = FrameworkHandle(client=scheduler.client,
                                     informers=scheduler.plugin_informers,
                                     snapshot=scheduler.cache.snapshot,
                                     recorder=scheduler.recorder,
                                     parallelism=config.parallelism)
            self.frameworks[profile.scheduler_name] = Framework(
                profile, registry, handle, waiting_pods=self.waiting_pods)
        self.pod_scheduler = PodScheduler(HostSelector(seed), config.percentage_of_nodes_to_score,
                                          scheduler.extenders)
        #: the modern scheduling queue of every profile (framework_queueing.py)
        self.queue = new_queue(self.frameworks, config)
        registered = frozenset(
            entry.event.resource if entries is not None else WILDCARD
            for fw in self.frameworks.values() for entries in fw.events_to_register().values()
            for entry in (entries if entries is not None else (None,)))
        self._handlers = QueueEventHandlers(scheduler, self.queue, self.pod_deleted, registered)

    def wire(self) -> None:
        """The informers' events into the queue and the cache (upstream addAllEventHandlers)."""
        self._handlers.wire()

    async def schedule_next(self) -> None:
        """upstream ScheduleOne's start: pop, skip a pod deleted or assumed meanwhile."""
        sched = self.scheduler
        info = await self.queue.pop(sched.gate)
        current = sched.unassigned.indexer.get(meta_namespace_key(info.pod))
        framework = self.framework_for(sched.wanted_scheduler(current)) \
            if current is not None else None
        if current is None or framework is None or sched.cache.is_assumed(current):
            self.queue.done(info.pod)
            return
        info.pod = current
        await self.schedule_one(framework, current, info)

    def framework_for(self, scheduler_name: str) -> Framework | None:
        return self.frameworks.get(scheduler_name)

    def pod_deleted(self, pod: Obj) -> None:
        """upstream: a deleted pod that waits on Permit is rejected ("removed")."""
        waiting = self.waiting_pods.get(pod_uid(pod))
        if waiting is not None:
            waiting.reject("", "removed")

    # -- the scheduling cycle ---------------------------------------------------------------
    async def schedule_one(self, framework: Framework, pod: Obj,
                           info: QueuedPodInfo | None = None) -> None:
        """`info`: the pod as popped from the queue (its attempts and rejecting plugins
        follow it back into the queue)."""
        info = info if info is not None else QueuedPodInfo(pod, time.monotonic(), attempts=1)
        sched = self.scheduler
        handle = framework.handle
        state = CycleState()
        state.record_plugin_metrics = sample_plugin_metrics()
        timings: dict[str, float] = {}
        state.write(TIMINGS_KEY, timings)
        table = sched.cache.snapshot()
        if isinstance(handle, FrameworkHandle):
            handle.set_snapshot(table)
        meta = PodMeta.of(pod)
        started = time.perf_counter()
        explanation = FrameworkExplanation(framework.profile_name, table.names, timings=timings)
        try:
            decision = await self.pod_scheduler.schedule_pod(framework, handle, state, meta, table)
        except NoNodesAvailable as err:
            self._failed(framework, info, Status.unresolvable(str(err)), explanation, started,
                         nominated="")
            return
        except FitError as err:
            explanation.diagnosis = err.diagnosis
            nominated: str | None = None  # no PostFilter answer: leave any nomination
            if framework.has_post_filter_plugins():
                begun = time.perf_counter()
                result, status = await framework.run_post_filter_plugins(state, meta,
                                                                         err.diagnosis)
                timings["PostFilter"] = time.perf_counter() - begun
                err.diagnosis.post_filter_msg = status.message()
                explanation.post_filter = status
                # an answer overrides the nomination; "" clears it (preemption found nothing)
                nominated = result.nominated_node_name if result is not None else None
                explanation.nominated_node = nominated or ""
                explanation.preemption = state.get(PREEMPTION_DECISION_KEY)
            self._failed(framework, info, Status(Code.UNSCHEDULABLE, (err.message(),)),
                         explanation, started, total=err.total, nominated=nominated,
                         plugins=err.diagnosis.unschedulable_plugins)
            return
        except StatusError as err:
            self._failed(framework, info, err.status, explanation, started, total=table.size,
                         nominated="")
            return
        explanation.diagnosis = decision.diagnosis
        explanation.decision = decision
        sched.metrics.algorithm.observe(decision.seconds)
        node = decision.node
        assumed = sched.cache.assume_pod(pod, node)
        begun = time.perf_counter()
        status = framework.run_reserve_plugins_reserve(state, assumed, node)
        timings["Reserve"] = time.perf_counter() - begun
        if is_success(status):
            begun = time.perf_counter()
            status = framework.run_permit_plugins(state, assumed, node)
            timings["Permit"] = time.perf_counter() - begun
            if status is not None and status.code is Code.WAIT:
                status = None
        if not is_success(status):
            assert status is not None
            framework.run_reserve_plugins_unreserve(state, assumed, node)
            sched.cache.forget_pod(assumed)
            self._failed(framework, info, _rejection(pod, node, status), explanation, started,
                         total=decision.total, decision=decision, nominated="",
                         plugins=_rejectors(status))
            return
        task = asyncio.create_task(self._binding_cycle(framework, state, info, assumed, decision,
                                                       explanation, started))
        sched._binds.add(task)
        task.add_done_callback(sched._binds.discard)

    # -- the binding cycle ------------------------------------------------------------------
    async def _binding_cycle(self, framework: Framework, state: CycleState, info: QueuedPodInfo,
                             assumed: Obj, decision: Decision, explanation: FrameworkExplanation,
                             started: float) -> None:
        sched = self.scheduler
        pod = info.pod
        node = decision.node
        timings = explanation.timings
        bind_started = time.perf_counter()
        status = await framework.wait_on_permit(assumed)
        if status is not None:
            status = _rejection(pod, node, status)
        if is_success(status):
            begun = time.perf_counter()
            status = await framework.run_pre_bind_plugins(state, assumed, node)
            timings["PreBind"] = time.perf_counter() - begun
        if is_success(status):
            begun = time.perf_counter()
            status = await framework.run_bind_plugins(state, assumed, node)
            timings["Bind"] = time.perf_counter() - begun
        if not is_success(status):  # Skip from every binder is a failure too (upstream)
            assert status is not None
            framework.run_reserve_plugins_unreserve(state, assumed, node)
            sched.cache.forget_pod(assumed)
            # the room it held may fit a waiting pod (upstream handleBindingCycleError)
            self.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
            self._failed(framework, info, status, explanation, started, total=decision.total,
                         decision=decision, result="bind-failed", nominated="",
                         plugins=_rejectors(status))
            return
        sched.cache.finish_binding(assumed)
        self.queue.done(pod)
        now = time.perf_counter()
        sched.metrics.binding.observe(now - bind_started)
        sched.metrics.e2e.observe(now - started)
        sched.metrics.attempts.labels("scheduled", framework.profile_name).inc()
        key = meta_namespace_key(pod)
        sched._remember(pod, "scheduled", node, "", decision.feasible, decision.total,
                        decision.seconds, explanation=explanation)
        log.info("scheduled", pod=key, node=node, profile=framework.profile_name,
                 feasible=decision.feasible, evaluated=decision.evaluated, nodes=decision.total,
                 ms=round((now - started) * 1000, 2))
        sched.recorder.event(pod, "Normal", "Scheduled", f"Successfully assigned {key} to {node}")
        begun = time.perf_counter()
        await framework.run_post_bind_plugins(state, assumed, node)
        timings["PostBind"] = time.perf_counter() - begun

    # -- failures ---------------------------------------------------------------------------
    def _failed(self, framework: Framework, info: QueuedPodInfo, status: Status,
                explanation: FrameworkExplanation, started: float, *, total: int = 0,
                decision: Decision | None = None, result: str = "",
                nominated: str | None = None,
                plugins: set[str] | frozenset[str] = frozenset()) -> None:
        """upstream handleSchedulingFailure: requeue (unless deleted or bound meanwhile),
        event, PodScheduled=False, and status.nominatedNodeName as the attempt's
        NominatingInfo says — PostFilter's node, "" to clear it after an error, None
        (no PostFilter answer) to leave it. The pod goes back to the queue with the plugins
        that rejected it (`plugins`: its requeueing hints), and a nominated node into the
        queue's nominator."""
        sched = self.scheduler
        pod = info.pod
        error = status.code is Code.ERROR
        message = status.message()
        key = meta_namespace_key(pod)
        current = sched.unassigned.indexer.get(key)
        queued = ""
        if current is not None and not (current.get("spec") or {}).get("nodeName"):
            info.pod = current
            info.unschedulable_plugins = set() if error else set(plugins)
            try:
                queued = self.queue.add_unschedulable_if_not_present(info)
            except ValueError:
                queued = "active"  # an update queued it again meanwhile
            if nominated is not None:
                self.queue.nominator.add(current, NominatingInfo(nominated, override=True))
        self.queue.done(pod)
        outcome = result or ("error" if error else "unschedulable")
        sched.metrics.attempts.labels("error" if error or result else "unschedulable",
                                      framework.profile_name).inc()
        sched._remember(pod, outcome, decision.node if decision else "", message,
                        decision.feasible if decision else 0, total,
                        time.perf_counter() - started, explanation=explanation)
        log.info("unschedulable" if not error else "scheduling failed", pod=key,
                 profile=framework.profile_name, reason=message, queue=queued)
        sched.recorder.event(pod, "Warning", "FailedScheduling", message)
        sched._update_condition(pod, REASON_SCHEDULER_ERROR if error else REASON_UNSCHEDULABLE,
                                message, nominated)


def _rejectors(status: Status | None) -> set[str]:
    """The plugin whose rejection failed a Reserve/Permit/bind step (requeue hints)."""
    return {status.plugin} if status is not None and status.is_rejected() and status.plugin \
        else set()
