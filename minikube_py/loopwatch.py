"""The event-loop stall watchdog: measures how late the loop runs, and names what held it.

Kubernetes piece: none directly — a Go component has no single thread to freeze. The nearest
are the Go runtime's scheduler-latency metrics and client-go's "Trace" logs of slow steps
(utiltrace: "Trace[...]: ... (total time: 512ms)"). Here every component of a process (API
server, scheduler, controllers, kubelets) shares one asyncio loop, so one callback that keeps
the loop for a second freezes the cluster; issue 14 asks for this monitor in every process.

How it measures, and why this way:
- **Ticker (on the loop).** A callback re-armed with `call_later(interval)` records its own
  lateness (actual minus expected wake time) in a histogram. That is the delay every other
  ready callback suffered, at no cost to the request path (50 cheap callbacks a second).
- **Watchdog (a daemon thread).** It wakes every `interval`; when the ticker is overdue by
  more than `stall_threshold`, the loop is stuck *now*, so the thread can look at it: the
  loop thread's stack (`sys._current_frames`), the task running (`asyncio.current_task(loop)`
  is a dict lookup, safe from another thread) and what that task said it was doing
  (`describe_task`: the API server's filter chain names the request's verb, path and user). It
  logs one WARNING per stall, not one per check.
- **The GIL.** A stall inside a C call that never releases the GIL (a huge `sum`, a big-int
  power, a regex) keeps the watchdog thread from running at all; when it finally runs, the
  culprit is gone and the stack it would see belongs to whatever ran next. So the thread
  notices when it woke late itself and then stays silent, and the ticker logs the stall after
  the fact (its duration, no stack). A small lock makes sure exactly one of the two logs it.
- **Startup.** The CLI starts a command's monitor not ready: lazy imports and opening the
  store hold the loop by design before anyone is served, so those stalls are debug lines
  until the command calls mark_ready() (they are counted all the same).

Metrics, labelled `component` (on prometheus_client's default registry unless told):
`minikube_py_event_loop_lag_seconds` (histogram, 1 ms - 10 s: every tick's lateness, so a
stall's whole duration is the tick that ended it), `minikube_py_event_loop_stalls_total`
(stalls over the threshold) and `minikube_py_event_loop_max_lag_seconds` (worst lag of the
last minute, computed at scrape time).
"""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import structlog
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["DESCRIPTIONS", "LoopMonitor", "RecentMax", "current_task", "describe_task",
           "forget_task", "loop_stack", "mark_ready"]

#: histogram buckets: 1 ms (ordinary scheduling noise) to 10 s (a frozen cluster)
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: innermost frames of the loop thread's stack put in the log line
STACK_FRAMES = 15
#: the watchdog thread counts as "held off" (by a GIL-holding call) when it wakes this share
#: of the threshold late; what it would see then is not the culprit
HELD_OFF_SHARE = 0.5

Description = str | Callable[..., str]

#: what each task is doing, for the stall log (a text, or a function and its arguments);
#: set and cleared by the task itself
_DESCRIPTIONS: dict[asyncio.Task, str | tuple[Callable[..., str], tuple]] = {}
#: the same map, for a hot path that sets `DESCRIPTIONS[task] = (function, args)` and pops it
#: itself: the API server's filter chain, where two function calls per request are ~1% of a GET
DESCRIPTIONS = _DESCRIPTIONS
#: asyncio's own map of the task each loop is running (the dict asyncio.current_task reads)
_current_tasks: dict[asyncio.AbstractEventLoop, asyncio.Task] = \
    asyncio.tasks._current_tasks  # type: ignore[attr-defined]
_get_running_loop = asyncio.events._get_running_loop
#: the started monitors, by loop (for mark_ready)
_MONITORS: dict[asyncio.AbstractEventLoop, "LoopMonitor"] = {}


def current_task() -> asyncio.Task | None:
    """asyncio.current_task() without its Python frame (3.11's is pure Python: ~0.3 µs of a
    request's budget); None outside a task or a running loop."""
    loop = _get_running_loop()
    return _current_tasks.get(loop) if loop is not None else None


def describe_task(task: asyncio.Task | None, text: Description, *args: Any) -> None:
    """Say what `task` is doing (e.g. 'PATCH /api/v1/namespaces/default/pods/web user=bob'),
    for the stall log. `text` may be a function that returns it from `args`: it is then
    called only if a stall is logged (from the watchdog thread), so the hot path formats
    nothing — and passing the arguments costs less than a closure (~0.2 µs against ~0.7 µs
    of a request's budget, measured in the API server's filter chain). One dict set; pair
    it with forget_task in a `finally`."""
    if task is not None:
        _DESCRIPTIONS[task] = (text, args) if args or callable(text) else text


def forget_task(task: asyncio.Task | None) -> None:
    """The task finished what it described (one dict pop)."""
    _DESCRIPTIONS.pop(task, None)  # type: ignore[arg-type]


def description_of(task: asyncio.Task | None) -> str | None:
    """What `task` said it was doing, rendered; never raises (read from another thread)."""
    text = _DESCRIPTIONS.get(task) if task is not None else None  # type: ignore[arg-type]
    if text is None:
        return None
    try:
        if isinstance(text, tuple):
            function, args = text
            return str(function(*args))
        return str(text)
    except Exception as exc:  # noqa: BLE001 - the log line must still go out
        return f"<description failed: {exc!r}>"


def loop_stack(frame: FrameType | None, limit: int = STACK_FRAMES) -> str:
    """The innermost `limit` frames from `frame` outwards, oldest first, as a traceback."""
    if frame is None:
        return ""
    summary = traceback.StackSummary.extract(traceback.walk_stack(frame), limit=limit,
                                             lookup_lines=False)
    summary.reverse()
    return "".join(summary.format())


class RecentMax:
    """The largest value recorded in roughly the last `span` seconds, in `slots` slots (so
    it remembers between span - span/slots and span). Pure: the caller passes the time."""

    def __init__(self, span: float = 60.0, slots: int = 6) -> None:
        self.width = span / slots
        self.values = [0.0] * slots
        self.epochs = [-1] * slots

    def record(self, now: float, value: float) -> None:
        epoch = int(now // self.width)
        slot = epoch % len(self.values)
        if self.epochs[slot] != epoch:
            self.epochs[slot], self.values[slot] = epoch, value
        elif value > self.values[slot]:
            self.values[slot] = value

    def value(self, now: float) -> float:
        epoch = int(now // self.width)
        live = [v for v, e in zip(self.values, self.epochs) if 0 <= epoch - e < len(self.values)]
        return max(live, default=0.0)


@dataclass(frozen=True)
class _Metrics:
    lag: Histogram
    stalls: Counter
    max_lag: Gauge


_METRICS: "weakref.WeakKeyDictionary[CollectorRegistry, _Metrics]" = weakref.WeakKeyDictionary()
_METRICS_LOCK = threading.Lock()


def _metrics(registry: CollectorRegistry) -> _Metrics:
    """One set of metrics per registry: every monitor of the process shares them, by label
    (prometheus_client refuses to register a name twice)."""
    with _METRICS_LOCK:
        found = _METRICS.get(registry)
        if found is None:
            found = _METRICS[registry] = _Metrics(
                Histogram("minikube_py_event_loop_lag_seconds",
                          "How late the event loop ran a timer due now (a stall's whole "
                          "duration is the tick that ended it).", ["component"],
                          buckets=LAG_BUCKETS, registry=registry),
                Counter("minikube_py_event_loop_stalls_total",
                        "Times the event loop was held longer than the stall threshold.",
                        ["component"], registry=registry),
                Gauge("minikube_py_event_loop_max_lag_seconds",
                      "Worst event-loop lag of the last minute.", ["component"],
                      registry=registry))
        return found


class LoopMonitor:
    """Watches one event loop: a ticker on it and a watchdog thread beside it (see the
    module docstring). `start()` from the loop's thread, `await stop()` on the way out."""

    def __init__(self, *, component: str, interval: float = 0.02, stall_threshold: float = 0.1,
                 registry: CollectorRegistry | None = None, ready: bool = True) -> None:
        """`ready=False`: the process is still starting (lazy imports, opening the store
        hold the loop by design, and nobody waits on it yet), so stalls are logged at debug,
        not as warnings, until mark_ready(); they are counted in the metrics all the same."""
        if interval <= 0 or stall_threshold <= 0:
            raise ValueError("interval and stall_threshold must be positive")
        self.component = component
        self.ready = ready
        self.interval = interval
        self.stall_threshold = stall_threshold
        self.stalls = 0
        self.log = structlog.get_logger(component=component)
        metrics = _metrics(registry if registry is not None else REGISTRY)
        self._lag = metrics.lag.labels(component)
        self._stall_count = metrics.stalls.labels(component)
        self._recent = RecentMax()
        metrics.max_lag.labels(component).set_function(
            lambda: self._recent.value(time.monotonic()))
        self._max = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._handle: asyncio.TimerHandle | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._claim = threading.Lock()
        self._due = math.inf      # monotonic time the armed tick is due (written by the loop)
        self._reported = math.nan  # the `_due` of the last stall already logged

    # --- public face -------------------------------------------------------------------

    @property
    def max_lag(self) -> float:
        """Worst lag (seconds) seen since the last reset_max()."""
        return self._max

    def reset_max(self) -> float:
        """max_lag, which restarts from 0."""
        worst, self._max = self._max, 0.0
        return worst

    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Start ticking on `loop` (default: the running one) and the watchdog thread.
        Idempotent. Call it from the loop's thread: that is the thread whose stack is shown."""
        if self._handle is not None:
            return
        self._loop = loop or asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._stopping.clear()
        self._arm(time.monotonic())
        self._thread = threading.Thread(target=self._watch, name=f"loopwatch-{self.component}",
                                        daemon=True)
        self._thread.start()
        _MONITORS[self._loop] = self

    async def stop(self) -> None:
        """Stop the ticker and the watchdog thread (returns once the thread has ended)."""
        self.close()

    def close(self) -> None:
        """stop(), for callers without a loop at hand; call it on the loop's thread."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._loop is not None and _MONITORS.get(self._loop) is self:
            del _MONITORS[self._loop]
        self._due = math.inf
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # --- the ticker (loop thread) ------------------------------------------------------

    def _arm(self, now: float) -> None:
        assert self._loop is not None
        self._due = now + self.interval
        self._handle = self._loop.call_later(self.interval, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        due = self._due
        lag = now - due if now > due else 0.0
        self._lag.observe(lag)
        self._recent.record(now, lag)
        if lag > self._max:
            self._max = lag
        if lag > self.stall_threshold:
            self._stall_ended(due, lag)
        self._arm(now)

    def _stall_ended(self, due: float, lag: float) -> None:
        """Count the stall; log it if the watchdog could not (it was held off by the GIL)."""
        self.stalls += 1
        self._stall_count.inc()
        if self._claim_report(due):
            self._emit(blocked_seconds=round(lag, 3), threshold_seconds=self.stall_threshold,
                       seen="after it ended",
                       hint="the blocking call held the GIL (C code), so the watchdog could "
                            "not look while it lasted; look for CPU-heavy calls on the loop")

    def _claim_report(self, due: float) -> bool:
        """Whether the caller is the one to log the stall of the tick due at `due` (the
        watchdog while it lasts, or the ticker after it)."""
        with self._claim:
            if self._reported == due or self._due != due:
                return False
            self._reported = due
            return True

    # --- the watchdog (its own thread) -------------------------------------------------

    def _watch(self) -> None:
        wake = time.monotonic() + self.interval
        while not self._stopping.wait(max(0.0, wake - time.monotonic())):
            now = time.monotonic()
            held_off = now - wake > self.stall_threshold * HELD_OFF_SHARE
            wake = now + self.interval
            loop = self._loop
            if loop is None or loop.is_closed():
                return
            due = self._due
            if not held_off and now - due > self.stall_threshold and self._reported != due:
                self._report_stall(loop, due, now - due)

    def _report_stall(self, loop: asyncio.AbstractEventLoop, due: float, so_far: float) -> None:
        """Log the stall in progress, once: what the loop thread is running right now."""
        task = _current_tasks.get(loop)
        frame = sys._current_frames().get(self._loop_thread)
        stack = loop_stack(frame)
        request = description_of(task)
        del frame
        if not self._claim_report(due):
            return
        fields: dict[str, Any] = {"task": task.get_name() if task is not None else None}
        if request is not None:
            fields["request"] = request
        self._emit(blocked_seconds=round(so_far, 3), threshold_seconds=self.stall_threshold,
                   seen="while blocked", **fields, stack=stack)

    def _emit(self, **fields: Any) -> None:
        """The one log line of a stall: a warning once ready, debug while starting up."""
        if self.ready:
            self.log.warning("event loop blocked", **fields)
        else:
            self.log.debug("event loop blocked", phase="startup", **fields)


def mark_ready(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """The process on `loop` (default: the running one) now serves: from here on its
    monitor logs stalls as warnings. A no-op without a monitor (tests, embedding)."""
    monitor = _MONITORS.get(loop or asyncio.get_running_loop())
    if monitor is not None:
        monitor.ready = True
