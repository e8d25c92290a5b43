"""A reconcile's CPU (controllers/sync_cpu.py): each step of the sync is charged, and the work
it fans out through `metered()` too; time spent waiting is not; errors and cancellation pass
through as a plain await would."""

from __future__ import annotations

import asyncio
import time

import pytest

from minikube_py.controllers.sync_cpu import CPUMeter, measure, metered


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def test_steps_and_fanned_out_work_are_charged_waiting_is_not() -> None:
    async def child() -> int:
        _burn(0.02)
        await asyncio.sleep(0)
        _burn(0.02)
        return 1

    async def sync() -> int:
        _burn(0.02)
        await asyncio.sleep(0.05)  # waiting: no CPU charged
        results = await asyncio.gather(*(metered(child()) for _ in range(2)))
        return sum(results)

    meter = CPUMeter()
    assert await measure(sync(), meter) == 2
    assert 0.09 <= meter.seconds < 0.2  # 20 ms + 2 x 40 ms, not the 50 ms sleep


async def test_without_a_running_sync_metered_is_the_coroutine_itself() -> None:
    async def work() -> str:
        return "done"

    coro = work()
    assert metered(coro) is coro
    assert await coro == "done"


async def test_errors_and_cancellation_pass_through() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise ValueError("boom")

    meter = CPUMeter()
    with pytest.raises(ValueError, match="boom"):
        await measure(failing(), meter)

    started = asyncio.Event()

    async def waiting() -> None:
        started.set()
        await asyncio.sleep(10)

    task = asyncio.create_task(measure(waiting(), CPUMeter()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
