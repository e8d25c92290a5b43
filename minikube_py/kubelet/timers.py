"""One node's pending simulated steps, as timers on the shared event loop.

Kubernetes piece: none directly — it replaces the goroutine per pod (podWorkers.managePodLoop)
and the container runtime's real time passing. 50,000 pods cannot each own a task, so every
simulated step (an image pull finishing, a container starting, a `sleep 5` exiting, a back-off
ending, a grace period running out) is one `loop.call_later` handle. A node can be paused
(`stop_node`): its handles are cancelled but their due times kept; on resume each is re-armed
for whatever time is left (overdue steps run at once — containers went on running while the
kubelet was away).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import structlog

log = structlog.get_logger(component="kubelet")


class Step:
    __slots__ = ("due", "fn", "args", "handle")

    def __init__(self, due: float, fn: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.due = due
        self.fn = fn
        self.args = args
        self.handle: asyncio.TimerHandle | None = None


class Timers:
    def __init__(self) -> None:
        self.pending: set[Step] = set()
        self.paused = False

    def __len__(self) -> int:
        return len(self.pending)

    def later(self, delay: float, fn: Callable[..., None], *args: Any) -> Step:
        loop = asyncio.get_running_loop()
        step = Step(loop.time() + max(0.0, delay), fn, args)
        self.pending.add(step)
        if not self.paused:
            step.handle = loop.call_at(step.due, self._fire, step)
        return step

    def cancel(self, step: Step | None) -> None:
        if step is None:
            return
        self.pending.discard(step)
        if step.handle is not None:
            step.handle.cancel()
            step.handle = None

    def pause(self) -> None:
        self.paused = True
        for step in self.pending:
            if step.handle is not None:
                step.handle.cancel()
                step.handle = None

    def resume(self) -> None:
        self.paused = False
        loop = asyncio.get_running_loop()
        for step in list(self.pending):
            step.handle = loop.call_at(max(step.due, loop.time()), self._fire, step)

    def clear(self) -> None:
        for step in self.pending:
            if step.handle is not None:
                step.handle.cancel()
        self.pending.clear()

    def _fire(self, step: Step) -> None:
        step.handle = None
        if step not in self.pending:
            return
        self.pending.discard(step)
        try:
            step.fn(*step.args)
        except Exception:  # one broken pod must not stop the node
            log.exception("simulated step failed", step=getattr(step.fn, "__name__", "?"))
