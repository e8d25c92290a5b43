"""How a command runs: one event loop (uvloop when installed), tuned garbage collection, and a
clean stop on signals.

Kubernetes v1.0 piece: the `util.Until(..., util.NeverStop)` plus signal handling in each
cmd/*/app server. A command is one coroutine; SIGINT and SIGTERM set an event the coroutine
waits on, so it leaves through its own clean-up (store closed, data dir lock released)
instead of being torn down by KeyboardInterrupt in the middle of a write. A long-running
command (a component) also names itself: its loop is then watched for stalls
(loopwatch.LoopMonitor, `--loop-stall-threshold`) from start to stop, and the memory it frees
is given back to the OS (memtrim.MemoryTrimmer: Go's scavenger does this for upstream's
binaries; glibc keeps freed chunks otherwise).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable, Coroutine, TypeVar

from .settings import Setting, duration

if TYPE_CHECKING:
    from ..loopwatch import LoopMonitor

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: cyclic-GC thresholds for a long-running server (CPython's defaults are 700, 10, 10)
GC_THRESHOLDS = (50_000, 50, 100)

#: every component command's flag for its event-loop watchdog
LOOP_WATCH = (
    Setting("loop-stall-threshold", 0.1, "log a WARNING (stack, task, request) when one "
            "callback holds the event loop longer than this; every stall is counted in "
            "/metrics (minikube_py_event_loop_*)", duration, metavar="DURATION"),
)


def tune_gc() -> None:
    """Collect cycles less often, and never re-scan what startup built.

    A control plane allocates and frees request, event and watch objects by the hundred
    thousand. Reference counting frees almost all of them; with CPython's default thresholds
    the cycle collector still runs every 700 allocations and, as the watch caches and informer
    stores grow, its older generations re-scan them again and again: in the scheduler
    benchmark that cost 15-35% of the process's CPU (908 -> 1143 pods/s at 100 nodes, with
    the default run slowing further on later runs as the heap grew). `gc.freeze()` moves what
    exists now (modules, OpenAPI schemas, tables) out of the collector's sight."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(coro: Coroutine[Any, Any, T], *, component: str | None = None,
        stall_threshold: float = LOOP_WATCH[0].default) -> T:
    """Run `coro` to completion on a fresh event loop (uvloop's when installed); with a
    `component` name, under a LoopMonitor for the whole run. Its stalls are warnings once
    the command calls loopwatch.mark_ready() (serving), debug lines before."""
    tune_gc()
    if component is not None:
        from ..loopwatch import LoopMonitor

        monitor = LoopMonitor(component=component, stall_threshold=stall_threshold, ready=False)
        coro = trimmed(watched(coro, monitor))
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        return runner.run(coro)


async def watched(coro: Coroutine[Any, Any, T], monitor: "LoopMonitor") -> T:
    """`coro`, with `monitor` watching the loop it runs on until it ends."""
    monitor.start()
    try:
        return await coro
    finally:
        await monitor.stop()


async def trimmed(coro: Coroutine[Any, Any, T]) -> T:
    """`coro`, with the process's memory trimmer running until it ends."""
    from ..memtrim import MemoryTrimmer

    trimmer = MemoryTrimmer()
    trimmer.start()
    try:
        return await coro
    finally:
        await trimmer.stop()


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM, for the running loop. Outside the main thread
    (signals cannot be caught there) the event is only set by whoever else holds it."""
    stop = asyncio.Event()
    if threading.current_thread() is threading.main_thread():
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
    return stop


def restore_signals() -> None:
    """Give SIGINT and SIGTERM back to their defaults on the running loop."""
    if threading.current_thread() is threading.main_thread():
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
