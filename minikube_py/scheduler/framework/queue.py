"""The framework's scheduling queue: activeQ, backoffQ, unschedulable pods, gates and hints.

Kubernetes piece: pkg/scheduler/internal/queue/scheduling_queue.go (1.31 `PriorityQueue`, with
SchedulerQueueingHints on). Where the v1.0 queue (scheduler/queue.py) is a FIFO plus a timer
per failed pod, the modern queue has three places a pending pod can be:

- activeQ: a heap ordered by the profile's QueueSort `less` (PrioritySort: priority, then age);
  `pop()` takes the head;
- backoffQ: pods that failed recently, ordered by when their backoff expires
  (initial * 2^(attempts-1), capped at max); `flush_backoff_completed()` moves the expired;
- unschedulablePods: pods that failed and wait for a cluster event that may help, and pods
  a PreEnqueue plugin (SchedulingGates) keeps out of activeQ ("gated").

A failed pod records which plugins rejected it; a cluster event requeues only the pods whose
rejecting plugins registered for that event and whose queueing hint says Queue
(queueing_hints.py). Events seen while a pod is being scheduled ("in flight") are kept and
replayed when that pod comes back as unschedulable, so an event that raced the attempt is not
lost. Pods left in unschedulablePods longer than podMaxInUnschedulablePodsDuration (5 min) are
flushed anyway. The nominator (nominator.py) keeps the nominated pods per node.

Pure: the clock is injected and nothing here sleeps except the awaitable `pop()` and `run()`,
the loop that calls the two flushes (every 1 s and 30 s, as upstream's goroutines).
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ...pausing import PauseGate
from ..metrics import SchedulerMetrics
from ..nodeinfo import pod_key
from . import events
from .heap import KeyedHeap
from .interface import ClusterEvent, QueuedPodInfo, Status, is_success
from .nominator import Nominator, pod_uid
from .queueing_hints import EventInterest, HintEntry, worth_requeuing

Obj = dict[str, Any]
Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
#: a profile's PreEnqueue plugins run in order: the first rejection, with its plugin's name
PreEnqueue = Callable[[Obj], "Status | None"]

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: upstream DefaultPodMaxInUnschedulablePodsDuration
POD_MAX_IN_UNSCHEDULABLE_SECONDS = 300.0


class QueueClosed(Exception):
    """pop() on a closed queue (upstream Pop returns an error once Close was called)."""


class QueueMetrics(Protocol):
    def pending(self, queue: str, count: int) -> None: ...

    def incoming(self, queue: str, event: str) -> None: ...


class PrometheusQueueMetrics:
    """`scheduler_pending_pods{queue}` and `scheduler_queue_incoming_pods_total{queue,event}`."""

    def __init__(self, metrics: SchedulerMetrics | None = None) -> None:
        self._metrics = metrics or SchedulerMetrics.instance()
        self._gauges = {q: self._metrics.pending.labels(queue=q)
                        for q in (ACTIVE, BACKOFF, UNSCHEDULABLE, GATED)}
        self._counters: dict[tuple[str, str], Any] = {}

    def pending(self, queue: str, count: int) -> None:
        self._gauges[queue].set(count)

    def incoming(self, queue: str, event: str) -> None:
        counter = self._counters.get((queue, event))
        if counter is None:
            counter = self._counters[(queue, event)] = self._metrics.queue_incoming.labels(
                queue=queue, event=event)
        counter.inc()


def scheduler_name(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME


class PriorityQueue:
    """upstream PriorityQueue. `less` is the QueueSort of the profiles (upstream requires one
    QueueSort for all profiles); `pre_enqueue` (the framework's run_pre_enqueue_plugins) and
    `hints` are per schedulerName."""

    def __init__(self, *, less: Less, clock: Callable[[], float] = time.monotonic,
                 pre_enqueue: Mapping[str, PreEnqueue] | None = None,
                 hints: Mapping[str, Sequence[HintEntry]] | None = None,
                 initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_in_unschedulable: float = POD_MAX_IN_UNSCHEDULABLE_SECONDS,
                 metrics: QueueMetrics | None = None) -> None:
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self._pre_enqueue = dict(pre_enqueue or {})
        self._hints = dict(hints or {})
        self._interested = EventInterest(self._hints)
        self._metrics = metrics if metrics is not None else PrometheusQueueMetrics()
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(_info_key, less)
        self._backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap(
            _info_key, lambda a, b: self.backoff_expiry(a) < self.backoff_expiry(b))
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated: set[str] = set()
        #: pod uid -> the sequence number of its pop (upstream inFlightPods)
        self._in_flight: dict[str, int] = {}
        #: (sequence, event, old, new) received while some pod was in flight (inFlightEvents)
        self._in_flight_events: collections.deque[tuple[int, ClusterEvent, Any, Any]] = \
            collections.deque()
        self._sequence = 0
        self.scheduling_cycle = 0
        self.nominator = Nominator()
        self._wakeup: asyncio.Event | None = None
        self._closed = False
        self._recorded: dict[str, int] = {}

    # -- sizes -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._active) + len(self._backoff) + len(self._unschedulable)

    def counts(self) -> dict[str, int]:
        gated = len(self._gated)
        return {ACTIVE: len(self._active), BACKOFF: len(self._backoff),
                UNSCHEDULABLE: len(self._unschedulable) - gated, GATED: gated}

    def where(self, pod: Obj) -> str:
        """Which queue holds `pod` ("" when none): for tests and the debug endpoint."""
        key = pod_key(pod)
        if key in self._active:
            return ACTIVE
        if key in self._backoff:
            return BACKOFF
        if key in self._gated:
            return GATED
        return UNSCHEDULABLE if key in self._unschedulable else ""

    def pending_pods(self) -> list[Obj]:
        """upstream PendingPods: every queued pod."""
        return ([i.pod for i in self._active] + [i.pod for i in self._backoff]
                + [i.pod for i in self._unschedulable.values()])

    def get(self, pod: Obj) -> QueuedPodInfo | None:
        key = pod_key(pod)
        return self._active.get(key) or self._backoff.get(key) or self._unschedulable.get(key)

    # -- backoff ---------------------------------------------------------------------------
    def backoff_duration(self, info: QueuedPodInfo) -> float:
        """upstream calculateBackoffDuration: initial, doubled per attempt after the first,
        capped at max."""
        duration = self.initial_backoff
        for _ in range(1, info.attempts):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return duration

    def backoff_expiry(self, info: QueuedPodInfo) -> float:
        return info.timestamp + self.backoff_duration(info)

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        return not info.gated_by and self.backoff_expiry(info) > self.clock()

    # -- the informer side ------------------------------------------------------------------
    def add(self, pod: Obj) -> None:
        """upstream Add: a new unscheduled pod goes to activeQ, unless a PreEnqueue plugin
        gates it."""
        info = self._new_info(pod)
        key = pod_key(pod)
        self._backoff.delete(key)
        if self._add_to_active(info):
            self._metrics.incoming(ACTIVE, events.POD_ADD)
            self._broadcast()
        self.nominator.add(pod)
        self._record()

    def update(self, old: Obj | None, new: Obj) -> None:
        """upstream Update: refresh the pod where it is; an unschedulable (or gated) pod is
        requeued if the change may help (queueing hints for the pod's own update events, and
        the PreEnqueue plugins run again)."""
        if pod_uid(new) in self._in_flight:
            # it is being scheduled: remember the update for when it comes back
            self._in_flight_events.append((self._next(), events.UNSCHEDULED_POD_UPDATE, old, new))
            return
        key = pod_key(new)
        if old is not None:
            for heap in (self._active, self._backoff):
                info = heap.get(key)
                if info is not None:
                    info.pod = new
                    heap.add(info)
                    self.nominator.update(old, new)
                    return
        info = self._unschedulable.get(key)
        if info is not None:
            info.pod = new
            self.nominator.update(old, new)
            self._requeue_updated(info, old, new)
            self._record()
            return
        info = self._new_info(new)
        if self._add_to_active(info):
            self._metrics.incoming(ACTIVE, events.POD_UPDATE)
            self._broadcast()
        self.nominator.add(new)
        self._record()

    def _requeue_updated(self, info: QueuedPodInfo, old: Obj | None, new: Obj) -> None:
        entries = self._hints.get(scheduler_name(new))
        rejectors = info.unschedulable_plugins
        for event in events.pod_scheduling_properties_change(new, old):
            if not worth_requeuing(rejectors, entries, new, event, old, new):
                continue
            if self._requeue(info, events.UNSCHEDULED_POD_UPDATE.label) == ACTIVE:
                self._broadcast()
            return

    def delete(self, pod: Obj) -> None:
        """upstream Delete: the pod is gone (or was bound by someone else)."""
        key = pod_key(pod)
        self.nominator.delete(pod)
        self._active.delete(key)
        self._backoff.delete(key)
        self._unschedulable_delete(key)
        self._record()

    def assigned_pod_added(self, pod: Obj) -> None:
        """upstream AssignedPodAdded: a bound pod may satisfy pending pods' inter-pod
        affinity; the hints decide which (queueing hints on)."""
        self.move_all_to_active_or_backoff_queue(events.ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Obj, new: Obj, event: ClusterEvent) -> None:
        self.move_all_to_active_or_backoff_queue(event, old, new)

    # -- the scheduling-cycle side ----------------------------------------------------------
    def pop_nowait(self) -> QueuedPodInfo | None:
        """upstream Pop without the wait: the head of activeQ, now in flight."""
        info = self._active.pop()
        if info is None:
            return None
        info.attempts += 1
        self.scheduling_cycle += 1
        self._in_flight[pod_uid(info.pod)] = self._next()
        info.unschedulable_plugins.clear()
        self._record()
        return info

    async def pop(self, gate: PauseGate | None = None) -> QueuedPodInfo:
        """Wait for a pod in activeQ; QueueClosed once `close()` was called. `gate`: while it
        is paused no pod is taken (activeQ keeps filling; minikube_py/pausing.py)."""
        while True:
            if self._closed:
                raise QueueClosed
            if gate is not None and gate.paused:
                await gate.wait_resumed()
                continue
            info = self.pop_nowait()
            if info is not None:
                return info
            if self._wakeup is None:
                self._wakeup = asyncio.Event()
            self._wakeup.clear()
            await self._wakeup.wait()

    def done(self, pod: Obj) -> None:
        """upstream Done: the pod's attempt is over (bound, or back in a queue); events no
        in-flight pod needs any more are dropped."""
        if self._in_flight.pop(pod_uid(pod), None) is None:
            return
        oldest = min(self._in_flight.values(), default=self._sequence + 1)
        while self._in_flight_events and self._in_flight_events[0][0] < oldest:
            self._in_flight_events.popleft()

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo) -> str:
        """upstream AddUnschedulableIfNotPresent: a failed attempt. With the plugins that
        rejected it in `info.unschedulable_plugins` (none: an error, retried after backoff),
        the events seen during its attempt decide where it goes. Returns the queue."""
        key = pod_key(info.pod)
        if key in self._active:
            raise ValueError(f"Pod {key} is already present in the active queue")
        if key in self._backoff:
            raise ValueError(f"Pod {key} is already present in the backoff queue")
        info.timestamp = self.clock()
        if self._worth_requeuing_in_flight(info):
            queue = self._requeue(info, events.SCHEDULE_ATTEMPT_FAILURE)
        else:
            queue = self._park(info, events.SCHEDULE_ATTEMPT_FAILURE)
        self.nominator.add(info.pod)
        if queue == ACTIVE:
            self._broadcast()
        self._record()
        return queue

    def _worth_requeuing_in_flight(self, info: QueuedPodInfo) -> bool:
        """upstream determineSchedulingHintForInFlightPod."""
        if not info.unschedulable_plugins:
            return True
        popped = self._in_flight.get(pod_uid(info.pod))
        if popped is None:
            return True  # not popped from this queue: upstream logs a bug and backs off
        entries = self._hints.get(scheduler_name(info.pod))
        return any(worth_requeuing(info.unschedulable_plugins, entries, info.pod, event, old, new)
                   for seq, event, old, new in self._in_flight_events if seq > popped)

    # -- cluster events --------------------------------------------------------------------
    def move_all_to_active_or_backoff_queue(
            self, event: ClusterEvent, old: Obj | None = None, new: Obj | None = None,
            pre_check: Callable[[Obj], bool] | None = None) -> None:
        """upstream MoveAllToActiveOrBackoffQueue: `event` happened; requeue the
        unschedulable pods it may help."""
        if not self._interested(event):
            return
        infos = [info for info in self._unschedulable.values()
                 if pre_check is None or pre_check(info.pod)]
        self._move(infos, event, old, new)

    def activate(self, pods: Iterable[Obj]) -> None:
        """upstream Activate: plugins ask for these pods to be retried now (ForceActivate)."""
        activated = False
        for pod in pods:
            key = pod_key(pod)
            info = self._unschedulable.get(key) or self._backoff.get(key)
            if info is None:
                continue
            self._backoff.delete(key)
            if self._add_to_active(info):
                self._metrics.incoming(ACTIVE, events.FORCE_ACTIVATE)
                self.nominator.add(info.pod)
                activated = True
        if activated:
            self._broadcast()
        self._record()

    def flush_backoff_completed(self) -> None:
        """upstream flushBackoffQCompleted: pods whose backoff expired go to activeQ."""
        activated = False
        while True:
            info = self._backoff.peek()
            if info is None or self.backoff_expiry(info) > self.clock():
                break
            self._backoff.pop()
            if self._add_to_active(info):
                self._metrics.incoming(ACTIVE, events.BACKOFF_COMPLETE)
                activated = True
        if activated:
            self._broadcast()
        self._record()

    def flush_unschedulable_leftover(self) -> None:
        """upstream flushUnschedulablePodsLeftover: pods unschedulable for longer than
        podMaxInUnschedulablePodsDuration are retried whatever their hints say."""
        now = self.clock()
        stale = [info for info in self._unschedulable.values()
                 if now - info.timestamp > self.max_in_unschedulable]
        if stale:
            self._move(stale, events.UNSCHEDULABLE_TIMEOUT, None, None)

    async def run(self, backoff_interval: float = 1.0, leftover_interval: float = 30.0) -> None:
        """The two flush loops of upstream Run, in one task."""
        next_leftover = self.clock() + leftover_interval
        while not self._closed:
            await asyncio.sleep(backoff_interval)
            self.flush_backoff_completed()
            if self.clock() >= next_leftover:
                self.flush_unschedulable_leftover()
                next_leftover = self.clock() + leftover_interval

    def close(self) -> None:
        self._closed = True
        self._broadcast()

    # -- internals -------------------------------------------------------------------------
    def _new_info(self, pod: Obj) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self.clock())

    def _next(self) -> int:
        self._sequence += 1
        return self._sequence

    def _move(self, infos: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """upstream movePodsToActiveOrBackoffQueue."""
        activated = False
        for info in infos:
            if info.gated_by:
                continue  # only their own update (PreEnqueue again) ungates them
            entries = self._hints.get(scheduler_name(info.pod))
            if not worth_requeuing(info.unschedulable_plugins, entries, info.pod, event, old, new):
                continue
            if self._requeue(info, event.label) == ACTIVE:
                activated = True
        if self._in_flight:
            self._in_flight_events.append((self._next(), event, old, new))
        if activated:
            self._broadcast()
        self._record()

    def _requeue(self, info: QueuedPodInfo, label: str) -> str:
        """upstream requeuePodViaQueueingHint for Queue: backoffQ while backing off, else
        activeQ (PreEnqueue permitting)."""
        key = pod_key(info.pod)
        self._unschedulable_delete(key)
        if self.is_backing_off(info):
            self._backoff.add(info)
            self._metrics.incoming(BACKOFF, label)
            return BACKOFF
        if self._add_to_active(info):
            self._metrics.incoming(ACTIVE, label)
            return ACTIVE
        return GATED

    def _park(self, info: QueuedPodInfo, label: str) -> str:
        self._unschedulable_put(info)
        self._metrics.incoming(UNSCHEDULABLE, label)
        return UNSCHEDULABLE

    def _add_to_active(self, info: QueuedPodInfo) -> bool:
        """upstream addToActiveQ: run PreEnqueue; a gated pod waits in unschedulablePods."""
        gate = self._run_pre_enqueue(info)
        info.gated_by = gate
        if gate:
            self._unschedulable_put(info)
            return False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock()
        self._unschedulable_delete(pod_key(info.pod))
        self._active.add(info)
        return True

    def _run_pre_enqueue(self, info: QueuedPodInfo) -> str:
        """The PreEnqueue plugin that rejects the pod ("" when all admit it)."""
        run = self._pre_enqueue.get(scheduler_name(info.pod))
        status = run(info.pod) if run is not None else None
        if is_success(status):
            return ""
        assert status is not None
        gate = status.plugin or "PreEnqueue"
        info.unschedulable_plugins.add(gate)
        return gate

    def _unschedulable_put(self, info: QueuedPodInfo) -> None:
        key = pod_key(info.pod)
        self._unschedulable[key] = info
        if info.gated_by:
            self._gated.add(key)
        else:
            self._gated.discard(key)

    def _unschedulable_delete(self, key: str) -> None:
        self._unschedulable.pop(key, None)
        self._gated.discard(key)

    def _broadcast(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    def _record(self) -> None:
        """Publish the queue sizes (only those that changed: this runs on every event)."""
        counts = self.counts()
        if counts == self._recorded:
            return
        for queue, count in counts.items():
            if self._recorded.get(queue) != count:
                self._metrics.pending(queue, count)
        self._recorded = counts


def _info_key(info: QueuedPodInfo) -> str:
    return pod_key(info.pod)
