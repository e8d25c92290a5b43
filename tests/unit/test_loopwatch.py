"""The event-loop watchdog (minikube_py/loopwatch.py) on a real loop with a real thread.

Each test blocks the loop for real (time.sleep, or a C call that keeps the GIL) and reads what
the monitor logged (structlog's capture works across threads: it is a global configuration)
and what it put in its own Prometheus registry.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from minikube_py import loopwatch
from minikube_py.cli import runtime
from minikube_py.loopwatch import (
    LoopMonitor,
    RecentMax,
    current_task,
    describe_task,
    forget_task,
)

REQUEST = "PATCH /api/v1/namespaces/default/pods/web user=bob"


def stalls(logs: list[dict]) -> list[dict]:
    return [e for e in logs if e["event"] == "event loop blocked"]


def warnings(logs: list[dict]) -> list[dict]:
    return [e for e in logs if e["log_level"] == "warning"]


def sample(registry: CollectorRegistry, name: str, component: str, **labels: str) -> float:
    return registry.get_sample_value(name, {"component": component, **labels}) or 0.0


def block_loop_for(seconds: float) -> None:
    """The culprit: a callback that sleeps on the loop (the GIL is free meanwhile)."""
    time.sleep(seconds)


async def watch(monitor: LoopMonitor, blocker, settle: float = 0.1) -> None:
    """Start `monitor`, let it tick, run `blocker()` on the loop, let it recover, stop."""
    monitor.start()
    try:
        await asyncio.sleep(0.06)
        await blocker()
        await asyncio.sleep(settle)
    finally:
        await monitor.stop()


async def test_a_300ms_callback_is_logged_once_with_its_stack() -> None:
    registry = CollectorRegistry()
    monitor = LoopMonitor(component="unit-callback", registry=registry)

    async def blocker() -> None:
        done = asyncio.Event()
        asyncio.get_running_loop().call_soon(lambda: (block_loop_for(0.3), done.set()))
        await done.wait()

    with capture_logs() as logs:
        await watch(monitor, blocker)
    [line] = warnings(logs)
    assert line["event"] == "event loop blocked"
    assert line["component"] == "unit-callback"
    assert line["seen"] == "while blocked"
    assert 0.1 <= line["blocked_seconds"] < 0.3
    assert "block_loop_for" in line["stack"] and "time.sleep(seconds)" in line["stack"]
    assert line["stack"].count("\n  File ") <= loopwatch.STACK_FRAMES
    assert line["task"] is None  # a plain callback, not a task
    assert monitor.stalls == 1
    assert sample(registry, "minikube_py_event_loop_stalls_total", "unit-callback") == 1


async def test_the_described_request_of_the_blocking_task_is_named() -> None:
    monitor = LoopMonitor(component="unit-task", registry=CollectorRegistry())

    async def handler() -> None:
        task = current_task()
        describe_task(task, lambda: REQUEST)
        try:
            block_loop_for(0.3)
        finally:
            forget_task(task)

    async def blocker() -> None:
        await asyncio.create_task(handler(), name="request-handler")

    with capture_logs() as logs:
        await watch(monitor, blocker)
    [line] = warnings(logs)
    assert line["request"] == REQUEST
    assert line["task"] == "request-handler"
    assert "handler" in line["stack"]


async def test_a_20ms_callback_logs_nothing() -> None:
    registry = CollectorRegistry()
    monitor = LoopMonitor(component="unit-short", registry=registry, stall_threshold=0.15)

    async def blocker() -> None:
        for _ in range(3):
            block_loop_for(0.02)
            await asyncio.sleep(0.03)

    with capture_logs() as logs:
        await watch(monitor, blocker)
    assert stalls(logs) == []
    assert monitor.stalls == 0
    assert 0 < monitor.max_lag < 0.15
    assert sample(registry, "minikube_py_event_loop_lag_seconds_count", "unit-short") >= 5


async def test_the_histogram_holds_the_stall_and_max_lag_resets() -> None:
    registry = CollectorRegistry()
    monitor = LoopMonitor(component="unit-metrics", registry=registry)

    async def blocker() -> None:
        block_loop_for(0.3)

    with capture_logs():
        await watch(monitor, blocker)
    name = "minikube_py_event_loop_lag_seconds_bucket"
    over_250ms = (sample(registry, name, "unit-metrics", le="+Inf")
                  - sample(registry, name, "unit-metrics", le="0.25"))
    assert over_250ms == 1  # the whole stall, as the lag of the tick that ended it
    assert sample(registry, name, "unit-metrics", le="0.001") >= 3  # ordinary ticks
    assert 0.3 - monitor.interval - 0.01 <= monitor.max_lag < 1.0  # it came due mid-block
    assert sample(registry, "minikube_py_event_loop_max_lag_seconds", "unit-metrics") \
        == pytest.approx(monitor.max_lag)
    assert monitor.reset_max() >= 0.27
    assert monitor.max_lag == 0.0


async def test_a_stall_that_holds_the_gil_is_logged_once_after_it_ends() -> None:
    """A C call that never releases the GIL keeps the watchdog thread out: the ticker logs it
    when the loop comes back (and the thread, woken late, stays silent)."""
    n = 200_000
    took = []
    for _ in range(5):  # the fastest run: a busy machine may deschedule us mid-calibration
        began = time.process_time()
        sum(range(n))
        took.append(time.process_time() - began)
    n = int(n * 0.35 / max(min(took), 1e-6))
    monitor = LoopMonitor(component="unit-gil", registry=CollectorRegistry())

    async def blocker() -> None:
        sum(range(n))  # one C loop: no bytecode boundary at which to hand over the GIL

    with capture_logs() as logs:
        await watch(monitor, blocker)
    [line] = warnings(logs)
    assert line["seen"] == "after it ended"
    assert line["blocked_seconds"] >= 0.15
    assert "stack" not in line
    assert monitor.stalls == 1


async def test_stop_ends_the_thread_and_start_is_idempotent() -> None:
    monitor = LoopMonitor(component="unit-stop", registry=CollectorRegistry())
    monitor.start()
    monitor.start()
    assert [t.name for t in threading.enumerate()].count("loopwatch-unit-stop") == 1
    await asyncio.sleep(0.05)
    await monitor.stop()
    assert "loopwatch-unit-stop" not in [t.name for t in threading.enumerate()]
    await monitor.stop()  # twice is fine


async def test_until_ready_stalls_are_debug_lines() -> None:
    monitor = LoopMonitor(component="unit-startup", registry=CollectorRegistry(), ready=False)

    async def blocker() -> None:
        block_loop_for(0.25)
        await asyncio.sleep(0.05)
        loopwatch.mark_ready()
        block_loop_for(0.25)

    with capture_logs() as logs:
        await watch(monitor, blocker)
    first, second = stalls(logs)
    assert (first["log_level"], first["phase"]) == ("debug", "startup")
    assert second["log_level"] == "warning" and "phase" not in second
    assert monitor.stalls == 2


async def test_a_failing_description_does_not_stop_the_log() -> None:
    task = current_task()
    describe_task(task, lambda: 1 / 0)
    try:
        assert loopwatch.description_of(task).startswith("<description failed")
    finally:
        forget_task(task)
    assert loopwatch.description_of(task) is None
    describe_task(None, "ignored")  # outside a task: nothing to describe


async def test_runtime_watches_a_component_command_for_its_whole_run() -> None:
    monitor = LoopMonitor(component="unit-runtime", registry=CollectorRegistry())

    async def command() -> str:
        assert "loopwatch-unit-runtime" in [t.name for t in threading.enumerate()]
        return "done"

    assert await runtime.watched(command(), monitor) == "done"
    assert "loopwatch-unit-runtime" not in [t.name for t in threading.enumerate()]


def test_every_component_command_takes_the_threshold_flag() -> None:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.settings import resolve
    from minikube_py.cli.start_options import StartOptions

    parser = build_parser()
    for command in ("scheduler", "controller-manager", "kubelet"):
        args = parser.parse_args([command, "--loop-stall-threshold", "250ms"])
        assert resolve(args, runtime.LOOP_WATCH, {})["loop_stall_threshold"] == 0.25
    for command in ("start", "apiserver"):
        args = parser.parse_args([command, "--loop-stall-threshold", "2s"])
        assert StartOptions.from_args(args).loop_stall_threshold == 2.0
    assert StartOptions.from_args(parser.parse_args(["start"])).loop_stall_threshold == 0.1


def test_recent_max_forgets_after_a_minute() -> None:
    recent = RecentMax(span=60, slots=6)
    recent.record(100.0, 0.5)
    recent.record(101.0, 0.2)
    recent.record(125.0, 0.3)
    assert recent.value(126.0) == 0.5
    assert recent.value(165.0) == 0.3   # the slot of t=100 has aged out
    assert recent.value(200.0) == 0.0
