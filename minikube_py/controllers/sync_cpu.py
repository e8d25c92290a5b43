"""CPU time of one reconcile: what a controller's sync costs the process, step by step.

Kubernetes piece: none upstream measures this (controller_sync_duration_seconds-style
histograms are wall time). Here every component shares one event loop, so a sync's wall time
includes whatever else ran while it awaited; the CPU it really used is what tells a learner
which controller is expensive. A coroutine runs in steps (from one await to the next); wrapping
it in `Metered` reads the thread's CPU clock around each step and adds it up. A sync's
in-process API requests run inside its steps (the in-process transport serves them in the
caller's task), so their server-side work counts too — the whole cost of the reconcile. Work a
sync fans out to other tasks (`asyncio.gather` of creates or deletes) is counted when those
coroutines are wrapped with `metered()`, which charges them to the sync that started them.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine, Generator
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")


class CPUMeter:
    """Seconds of thread CPU charged to one reconcile."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds = 0.0


_current: ContextVar[CPUMeter | None] = ContextVar("minikube_py_sync_cpu", default=None)


class Metered:
    """Awaitable running `coro` to completion while charging each of its steps to `meter`."""

    __slots__ = ("coro", "meter")

    def __init__(self, coro: Coroutine[Any, Any, T], meter: CPUMeter) -> None:
        self.coro = coro
        self.meter = meter

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, meter, clock = self.coro, self.meter, time.thread_time
        value: Any = None
        error: BaseException | None = None
        while True:
            started = clock()
            try:
                yielded = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                meter.seconds += clock() - started
                return stop.value
            except BaseException:
                meter.seconds += clock() - started
                raise
            meter.seconds += clock() - started
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # noqa: BLE001 - thrown into the coroutine, as await does
                value, error = None, exc


async def measure(coro: Coroutine[Any, Any, T], meter: CPUMeter) -> T:
    """Run `coro` (a sync) charging it to `meter`; `metered()` inside it charges there too."""
    token = _current.set(meter)
    try:
        return await Metered(coro, meter)
    finally:
        _current.reset(token)


def metered(coro: Coroutine[Any, Any, T]) -> Any:
    """`coro` charged to the reconcile that is running (for work it hands to other tasks,
    e.g. the coroutines of an `asyncio.gather`); `coro` itself when none is."""
    meter = _current.get()
    return coro if meter is None else Metered(coro, meter)  # gather() takes any awaitable
