"""The pause registry (minikube_py/pausing.py): gates, names unique per registry, waking
parked loops (also from another thread), the trace record and the gauge."""

from __future__ import annotations

import asyncio
import threading

import pytest
from prometheus_client import REGISTRY as PROMETHEUS

from minikube_py.pausing import REGISTRY, PauseGate, PauseRegistry
from minikube_py.trace import PAUSE, TRACE, to_json


def gauge(name: str, kind: str) -> float | None:
    return PROMETHEUS.get_sample_value("paused_components", {"name": name, "kind": kind})


def test_register_get_snapshot_sorted() -> None:
    registry = PauseRegistry()
    registry.register("scheduler", "scheduler")
    deployment = registry.register("deployment", "controller")
    assert registry.get("deployment") is deployment
    deployment.pause()
    snapshot = registry.snapshot()
    assert [(c["name"], c["kind"], c["paused"]) for c in snapshot] == [
        ("deployment", "controller", True), ("scheduler", "scheduler", False)]
    assert snapshot[0]["since"] == deployment.since
    with pytest.raises(KeyError):
        registry.get("nodelifecycle")


def test_names_unique_per_registry_not_per_process() -> None:
    one, two = PauseRegistry(), PauseRegistry()
    first = one.register("replicaset", "controller")
    with pytest.raises(ValueError, match="already registered"):
        one.register("replicaset", "controller")
    assert two.register("replicaset", "controller") is not first
    assert "replicaset" not in REGISTRY
    with pytest.raises(ValueError, match="unknown component kind"):
        one.register("x", "kubelet")


def test_unregister_opens_the_gate_and_frees_the_name() -> None:
    registry = PauseRegistry()
    gate = registry.register("podgc", "controller")
    gate.pause()
    registry.unregister(gate)
    assert not gate.paused and "podgc" not in registry
    assert registry.register("podgc", "controller") is not gate


async def test_wait_resumed_parks_until_resume() -> None:
    gate = PauseGate("scheduler", "scheduler")
    await asyncio.wait_for(gate.wait_resumed(), 1)  # open: returns at once
    gate.pause()
    gate.pause()  # idempotent
    waiter = asyncio.create_task(gate.wait_resumed())
    await asyncio.sleep(0.05)
    assert not waiter.done()
    gate.resume()
    await asyncio.wait_for(waiter, 1)


async def test_resume_from_another_thread_wakes_the_loop() -> None:
    gate = PauseGate("scheduler", "scheduler")
    gate.pause()
    waiter = asyncio.create_task(gate.wait_resumed())
    await asyncio.sleep(0.01)
    thread = threading.Thread(target=gate.resume)
    thread.start()
    thread.join()
    await asyncio.wait_for(waiter, 1)


async def test_cancelled_waiter_is_forgotten() -> None:
    gate = PauseGate("job", "controller")
    gate.pause()
    waiter = asyncio.create_task(gate.wait_resumed())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert gate._waiters == []


def test_trace_record_and_gauge() -> None:
    registry = PauseRegistry()
    gate = registry.register("unit-gauge", "controller")
    assert gauge("unit-gauge", "controller") == 0
    TRACE.hold()
    try:
        start = TRACE.last_seq
        gate.pause()
        assert gauge("unit-gauge", "controller") == 1
        gate.resume()
        records = [to_json(r) for r in TRACE.since(start)[0] if r.kind == PAUSE]
    finally:
        TRACE.release()
    assert [(r["name"], r["component_kind"], r["action"]) for r in records] == [
        ("unit-gauge", "controller", "pause"), ("unit-gauge", "controller", "resume")]
    assert gauge("unit-gauge", "controller") == 0
    registry.unregister(gate)
    assert gauge("unit-gauge", "controller") is None


async def test_queues_take_nothing_while_the_gate_is_closed() -> None:
    """The work queue (controllers) and the FIFO (v1.x scheduler) keep filling while paused;
    a consumer already waiting for an item takes none until the gate opens."""
    from minikube_py.client.cache import FIFO
    from minikube_py.client.workqueue import WorkQueue

    gate = PauseGate("replicaset", "controller")
    work, fifo = WorkQueue(), FIFO()
    key = asyncio.create_task(work.get(gate))
    obj = asyncio.create_task(fifo.pop(gate))
    await asyncio.sleep(0.01)
    gate.pause()
    work.add("default/web")
    fifo.add({"metadata": {"namespace": "default", "name": "web"}})
    await asyncio.sleep(0.05)
    assert not key.done() and not obj.done()
    assert len(work) == 1 and len(fifo) == 1
    gate.resume()
    assert await asyncio.wait_for(key, 1) == "default/web"
    assert (await asyncio.wait_for(obj, 1))["metadata"]["name"] == "web"
