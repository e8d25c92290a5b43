"""Waking futures that wait on other event loops.

Kubernetes piece: none — Go's channels wake a goroutine on any thread. Here an object written
on one event loop (the trace ring, a pause gate) may be waited on from another (tests run the
API server in a thread; `Cluster` runs its loop in a background thread), and an asyncio
future may only be resolved on its own loop. Both keep `(loop, future)` pairs and hand them
here.
"""

from __future__ import annotations

import asyncio

Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


def wake(waiters: list[Waiter]) -> None:
    """Resolve every waiter: directly when it waits on the running loop, through
    `call_soon_threadsafe` otherwise (a closed loop's waiter is gone with its loop)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    for loop, future in waiters:
        if loop is running:
            _resolve(future)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
