"""The framework's PriorityQueue (upstream internal/queue scheduling_queue_test.go cases):
QueueSort order, backoff doubling, gates re-checked on update, queueing hints, in-flight
events, the unschedulable timeout, the nominator and the queue metrics."""

from __future__ import annotations

import asyncio
import random

import pytest
from prometheus_client import REGISTRY

from minikube_py.scheduler.framework import events
from minikube_py.scheduler.framework.heap import KeyedHeap
from minikube_py.scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from minikube_py.scheduler.framework.nominator import NominatingInfo
from minikube_py.scheduler.framework.queue import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    PriorityQueue,
    QueueClosed,
)
from minikube_py.scheduler.framework.queueing_hints import (
    hint_entries,
    registrations_of,
)


def pod(name: str, priority: int = 0, *, gates: list[str] | None = None, labels=None,
        nominated: str = "", scheduler: str = "default-scheduler") -> dict:
    spec: dict = {"priority": priority, "schedulerName": scheduler, "containers": [{"name": "c"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    md = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels or {}}
    return {"metadata": md, "spec": spec, "status": {"nominatedNodeName": nominated}}


def priority_sort(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """The PrioritySort plugin's order: higher priority first, then the older timestamp."""
    return a.priority > b.priority or (a.priority == b.priority and a.timestamp < b.timestamp)


class Gates:
    """A PreEnqueue plugin that gates pods carrying schedulingGates (what SchedulingGates
    does), registered for the gate-removal event with upstream's hint."""

    name = "SchedulingGates"

    def pre_enqueue(self, p: dict):
        gates = p["spec"].get("schedulingGates")
        if gates:
            return Status.unresolvable(f"waiting for scheduling gates: {[g['name'] for g in gates]}")
        return None

    def events_to_register(self):
        def hint(p, old, new):
            return QueueingHint.QUEUE if not new["spec"].get("schedulingGates") else QueueingHint.QUEUE_SKIP
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), hint)]


class NodeTaints:
    """A filter-side plugin registered for node taint changes only, with a hint that skips
    events on nodes labelled skip=yes."""

    name = "TaintToleration"

    def events_to_register(self):
        def hint(p, old, new):
            return QueueingHint.QUEUE_SKIP if new["metadata"].get("labels", {}).get("skip") else QueueingHint.QUEUE
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT), hint)]


class Legacy:
    """A plugin without EnqueueExtensions: woken by every event (upstream)."""

    name = "Legacy"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_queue(clock: Clock, **kw) -> PriorityQueue:
    plugins = [Gates(), NodeTaints(), Legacy()]

    def pre_enqueue(p):
        status = plugins[0].pre_enqueue(p)
        return status.with_plugin(plugins[0].name) if status is not None else None

    return PriorityQueue(less=priority_sort, clock=clock,
                         pre_enqueue={"default-scheduler": pre_enqueue},
                         hints={"default-scheduler": hint_entries(registrations_of(plugins))},
                         initial_backoff=1.0, max_backoff=10.0, **kw)


def node(name: str, **labels) -> dict:
    return {"metadata": {"name": name, "labels": labels}}


def fail(q: PriorityQueue, info: QueuedPodInfo, *plugins: str) -> str:
    info.unschedulable_plugins.update(plugins)
    where = q.add_unschedulable_if_not_present(info)
    q.done(info.pod)
    return where


def test_keyed_heap_orders_updates_and_deletes_by_key():
    rng = random.Random(7)
    heap: KeyedHeap[tuple[str, int]] = KeyedHeap(lambda t: t[0], lambda a, b: a[1] < b[1])
    values = {f"k{i}": rng.randrange(1000) for i in range(200)}
    for k, v in values.items():
        heap.add((k, v))
    for k in list(values)[:50]:  # update half of those in place, delete some others
        values[k] = rng.randrange(1000)
        heap.add((k, values[k]))
    for k in list(values)[50:80]:
        assert heap.delete(k) == (k, values.pop(k))
    assert heap.delete("nope") is None and len(heap) == len(values)
    popped = [heap.pop() for _ in range(len(heap))]
    assert [v for _, v in popped] == sorted(values.values())
    assert heap.pop() is None


def test_active_queue_pops_by_priority_then_age():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("low", 1))
    clock.now += 1
    q.add(pod("high", 100))
    clock.now += 1
    q.add(pod("low2", 1))
    order = [q.pop_nowait().pod["metadata"]["name"] for _ in range(3)]
    assert order == ["high", "low", "low2"]
    assert q.pop_nowait() is None


def test_backoff_doubles_per_attempt_up_to_the_max():
    clock = Clock()
    q = make_queue(clock)
    info = QueuedPodInfo(pod("p"), timestamp=clock.now)
    durations = []
    for attempts in range(1, 8):
        info.attempts = attempts
        durations.append(q.backoff_duration(info))
    assert durations == [1, 2, 4, 8, 10, 10, 10]


def test_error_goes_to_backoff_then_active_when_expired():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("p"))
    info = q.pop_nowait()
    assert fail(q, info) == BACKOFF  # no rejecting plugin: an error, retried after backoff
    q.flush_backoff_completed()
    assert q.where(info.pod) == BACKOFF
    clock.now += 1.01
    q.flush_backoff_completed()
    assert q.where(info.pod) == ACTIVE
    again = q.pop_nowait()
    assert again.attempts == 2
    assert fail(q, again) == BACKOFF
    clock.now += 1.5
    q.flush_backoff_completed()
    assert q.where(info.pod) == BACKOFF  # second attempt: 2 s
    clock.now += 0.6
    q.flush_backoff_completed()
    assert q.where(info.pod) == ACTIVE


def test_add_unschedulable_refuses_a_pod_already_queued():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("p"))
    with pytest.raises(ValueError, match="Pod ns/p is already present in the active queue"):
        q.add_unschedulable_if_not_present(QueuedPodInfo(pod("p"), clock.now))


def test_gated_pod_waits_until_an_update_removes_its_gates():
    clock = Clock()
    q = make_queue(clock)
    gated = pod("g", gates=["example.com/wait"])
    q.add(gated)
    assert q.where(gated) == GATED and q.pop_nowait() is None
    info = q.get(gated)
    assert info.gated_by == "SchedulingGates"
    assert q.counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    q.move_all_to_active_or_backoff_queue(events.WILDCARD_EVENT)
    assert q.where(gated) == GATED  # cluster events never move gated pods
    relabelled = pod("g", gates=["example.com/wait"], labels={"a": "b"})
    q.update(gated, relabelled)
    assert q.where(gated) == GATED  # still gated: PreEnqueue ran again
    ungated = pod("g", labels={"a": "b"})
    q.update(relabelled, ungated)
    assert q.where(gated) == ACTIVE
    popped = q.pop_nowait()
    assert popped.pod is ungated and popped.attempts == 1 and not popped.gated_by


def test_cluster_event_requeues_only_pods_whose_rejector_registered_for_it():
    clock = Clock()
    q = make_queue(clock)
    for name in ("taint", "legacy", "other"):
        q.add(pod(name))
    rejectors = {"taint": "TaintToleration", "legacy": "Legacy", "other": "NodeResourcesFit"}
    for _ in range(3):
        info = q.pop_nowait()
        assert fail(q, info, rejectors[info.pod["metadata"]["name"]]) == UNSCHEDULABLE
    clock.now += 20  # past every backoff
    q.move_all_to_active_or_backoff_queue(events.NODE_LABEL_CHANGE, node("n"), node("n"))
    # only the plugin without EnqueueExtensions is woken by a label change
    assert [q.where(pod(n)) for n in ("taint", "legacy", "other")] == [UNSCHEDULABLE, ACTIVE, UNSCHEDULABLE]
    q.move_all_to_active_or_backoff_queue(events.NODE_TAINT_CHANGE, node("n"), node("n", skip="yes"))
    assert q.where(pod("taint")) == UNSCHEDULABLE  # the hint said QueueSkip
    q.move_all_to_active_or_backoff_queue(events.NODE_ADD, None, node("n2"))
    assert q.where(pod("taint")) == ACTIVE
    assert q.where(pod("other")) == UNSCHEDULABLE  # nobody registered for it: waits for the timeout


def test_requeued_pod_still_backing_off_goes_to_backoff_queue():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("p"))
    fail(q, q.pop_nowait(), "TaintToleration")
    q.move_all_to_active_or_backoff_queue(events.NODE_ADD, None, node("n"))
    assert q.where(pod("p")) == BACKOFF
    clock.now += 1.01
    q.flush_backoff_completed()
    assert q.where(pod("p")) == ACTIVE


def test_event_while_in_flight_requeues_the_pod_when_it_fails():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("a"))
    q.add(pod("b"))
    a = q.pop_nowait()
    q.move_all_to_active_or_backoff_queue(events.NODE_ADD, None, node("n"))  # during a's attempt
    b = q.pop_nowait()
    # the node add happened while a was in flight: requeued (after its fresh backoff)
    assert fail(q, a, "TaintToleration") == BACKOFF
    assert fail(q, b, "TaintToleration") == UNSCHEDULABLE  # popped after the event
    assert not q._in_flight_events  # done() pruned what no in-flight pod needs


def test_update_of_an_in_flight_pod_is_replayed_as_an_event():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("a"))
    a = q.pop_nowait()
    q.update(a.pod, pod("a", labels={"x": "y"}))
    assert q.where(a.pod) == ""  # not queued twice while in flight
    assert fail(q, a, "Legacy") == BACKOFF  # requeued by its own update, not parked


def test_unschedulable_timeout_flushes_everyone_not_gated():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("p"))
    q.add(pod("g", gates=["x"]))
    fail(q, q.pop_nowait(), "NodeResourcesFit")
    clock.now += 299
    q.flush_unschedulable_leftover()
    assert q.where(pod("p")) == UNSCHEDULABLE
    clock.now += 2
    q.flush_unschedulable_leftover()
    assert q.where(pod("p")) == ACTIVE and q.where(pod("g")) == GATED


def test_delete_removes_from_every_queue_and_the_nominator():
    clock = Clock()
    q = make_queue(clock)
    p = pod("p", nominated="n1")
    q.add(p)
    assert [x["metadata"]["name"] for x in q.nominator.nominated_pods_for_node("n1")] == ["p"]
    fail(q, q.pop_nowait(), "TaintToleration")
    q.delete(p)
    assert q.where(p) == "" and len(q) == 0 and q.nominator.nominated_pods_for_node("n1") == []


def test_nominator_keeps_an_in_memory_nomination_across_an_update_without_one():
    clock = Clock()
    q = make_queue(clock)
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    fail(q, info, "TaintToleration")
    q.nominator.add(p, NominatingInfo("n2", override=True))  # what preemption does
    q.update(p, pod("p", labels={"x": "1"}))
    assert q.nominator.node_of(p) == "n2"  # the API has not echoed it yet: kept
    q.update(pod("p", labels={"x": "1"}), pod("p", nominated="n3"))
    assert q.nominator.node_of(p) == "n3"
    bound = pod("p", nominated="n3")
    bound["spec"]["nodeName"] = "n3"
    q.nominator.update(pod("p", nominated="n3"), bound)
    assert q.nominator.node_of(p) == "" and q.nominator.nodes() == []


def test_activate_moves_unschedulable_and_backoff_pods_now():
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("a"))
    q.add(pod("b"))
    fail(q, q.pop_nowait(), "NodeResourcesFit")
    fail(q, q.pop_nowait())
    assert {q.where(pod("a")), q.where(pod("b"))} == {UNSCHEDULABLE, BACKOFF}
    q.activate([pod("a"), pod("b"), pod("absent")])
    assert q.where(pod("a")) == ACTIVE and q.where(pod("b")) == ACTIVE


def test_metrics_pending_by_queue_and_incoming_by_event():
    def incoming(queue, event):
        return REGISTRY.get_sample_value("scheduler_queue_incoming_pods_total",
                                         {"queue": queue, "event": event}) or 0.0

    before_add = incoming("active", "PodAdd")
    before_fail = incoming("unschedulable", "ScheduleAttemptFailure")
    before_node = incoming("backoff", "NodeAdd")
    clock = Clock()
    q = make_queue(clock)
    q.add(pod("a"))
    q.add(pod("g", gates=["x"]))
    fail(q, q.pop_nowait(), "TaintToleration")
    assert incoming("active", "PodAdd") == before_add + 1
    assert incoming("unschedulable", "ScheduleAttemptFailure") == before_fail + 1
    gauge = {k: REGISTRY.get_sample_value("scheduler_pending_pods", {"queue": k})
             for k in ("active", "backoff", "unschedulable", "gated")}
    assert gauge == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 1}
    q.move_all_to_active_or_backoff_queue(events.NODE_ADD, None, node("n"))
    assert incoming("backoff", "NodeAdd") == before_node + 1
    assert REGISTRY.get_sample_value("scheduler_pending_pods", {"queue": "backoff"}) == 1


async def test_pop_waits_for_a_pod_and_close_wakes_waiters():
    q = make_queue(Clock())
    waiter = asyncio.ensure_future(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.add(pod("p"))
    info = await asyncio.wait_for(waiter, 1)
    assert info.pod["metadata"]["name"] == "p"
    second = asyncio.ensure_future(q.pop())
    await asyncio.sleep(0)
    q.close()
    with pytest.raises(QueueClosed):
        await asyncio.wait_for(second, 1)


async def test_run_flushes_backoff_on_the_real_clock():
    import time

    q = PriorityQueue(less=priority_sort, clock=time.monotonic, initial_backoff=0.05,
                      max_backoff=0.1)
    q.add(pod("p"))
    info = q.pop_nowait()
    fail(q, info)
    runner = asyncio.ensure_future(q.run(backoff_interval=0.02, leftover_interval=10))
    try:
        again = await asyncio.wait_for(q.pop(), 2)
        assert again.attempts == 2
    finally:
        q.close()
        await asyncio.wait_for(runner, 1)


def test_node_updates_become_upstream_events_and_heartbeats_none():
    base = {"metadata": {"name": "n", "labels": {"a": "1"}},
            "spec": {}, "status": {"allocatable": {"cpu": "2"}, "conditions": [
                {"type": "Ready", "status": "True", "lastHeartbeatTime": "t1"}]}}
    beat = {**base, "status": {**base["status"], "conditions": [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": "t2"}]}}
    assert events.node_scheduling_properties_change(beat, base) == []
    tainted = {**base, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}],
                                "unschedulable": True}}
    labels = [e.label for e in events.node_scheduling_properties_change(tainted, base)]
    assert labels == ["NodeSpecUnschedulableChange", "NodeTaintChange"]
    relabelled = {**base, "metadata": {"name": "n", "labels": {"a": "2"}}}
    assert [e.label for e in events.node_scheduling_properties_change(relabelled, base)] == \
        ["NodeLabelChange"]


def test_pod_updates_become_upstream_events():
    old = pod("p", gates=["g"], labels={"a": "1"})
    new = pod("p", labels={"a": "2"})
    assert [e.label for e in events.pod_scheduling_properties_change(new, old)] == \
        ["PodLabelChange", "PodSchedulingGateEliminatedChange"]
    smaller = pod("p")
    smaller["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    bigger = pod("p")
    bigger["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    assert [e.label for e in events.pod_scheduling_properties_change(smaller, bigger)] == \
        ["PodRequestScaledDown"]
    assert [e.label for e in events.pod_scheduling_properties_change(bigger, bigger)] == \
        ["AssignedPodUpdate"]
    registered = ClusterEvent("Pod", ActionType.UPDATE_POD_LABEL)
    assert events.matches(registered, events.POD_LABEL_CHANGE)
    assert not events.matches(registered, events.NODE_LABEL_CHANGE)
    assert events.matches(events.WILDCARD_EVENT, events.NODE_ADD)


def test_event_interest_is_per_resource_and_action():
    from minikube_py.scheduler.framework.queueing_hints import EventInterest

    interest = EventInterest({"default-scheduler": hint_entries(registrations_of([NodeTaints()]))})
    assert interest(events.NODE_ADD) and interest(events.NODE_TAINT_CHANGE)
    assert not interest(events.NODE_LABEL_CHANGE) and not interest(events.ASSIGNED_POD_DELETE)
    assert interest(events.UNSCHEDULABLE_TIMEOUT)  # the wildcard always is
    everything = EventInterest({"default-scheduler": hint_entries(registrations_of([Legacy()]))})
    assert everything(events.ASSIGNED_POD_DELETE)


def test_an_unspecific_pod_update_wakes_only_plugins_registered_for_every_update():
    """upstream assignedPodOtherUpdate: the scheduler's own PodScheduled=False patch of a
    pod NodeResourcesFit rejected (registered for Pod Delete|UpdatePodScaleDown) must not
    requeue it; a plugin registered for all Pod events is woken."""
    scale_down = ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)
    assert not events.matches(scale_down, events.POD_OTHER_UPDATE)
    assert events.matches(ClusterEvent("Pod", ActionType.ALL), events.POD_OTHER_UPDATE)
    assert events.matches(scale_down, events.POD_REQUEST_SCALED_DOWN)
    clock = Clock()
    fits = type("Fit", (), {"name": "NodeResourcesFit", "events_to_register":
                            lambda self: [ClusterEventWithHint(scale_down)]})()
    q = PriorityQueue(less=priority_sort, clock=clock,
                      hints={"default-scheduler": hint_entries(registrations_of([fits]))})
    q.add(pod("p"))
    fail(q, q.pop_nowait(), "NodeResourcesFit")
    clock.now += 20
    patched = pod("p")
    patched["status"]["conditions"] = [{"type": "PodScheduled", "status": "False"}]
    q.update(pod("p"), patched)
    assert q.where(patched) == UNSCHEDULABLE
