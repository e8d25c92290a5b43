"""--profiling: /debug/pprof/ — what the server process is doing, over HTTP.

Kubernetes piece: cmd/kube-apiserver's --profiling (default true) mounting Go's net/http/pprof
at /debug/pprof/ (index, `profile?seconds=N` for a CPU profile, `goroutine?debug=2` for every
goroutine's stack). Python has no pprof, so the same paths answer in text a person can read:

- `/debug/pprof/profile?seconds=N` (default 30, at most 300): a **CPU profile** of the
  event-loop thread — the thread that serves every request — taken with cProfile for N seconds
  while the loop keeps serving, answered as **pstats text**: the header (calls, total time),
  then one row per function with ncalls, tottime, percall, cumtime, percall and
  `file:line(function)`, sorted by `sort=` (tottime by default; also cumulative, ncalls),
  the top `limit=` rows (default 60). Deterministic rather than sampled: an in-process sampler
  thread only gets the GIL when the loop releases it (in `select`), so its samples would all
  land there. cProfile adds a cost to every Python call on the loop while it runs.
- `/debug/pprof/goroutine?debug=2` (also `/debug/tasks`): every asyncio task with its state,
  its coroutine and its stack (the "goroutines" of this process), then every other thread's
  stack. `debug=1` groups tasks with identical stacks and counts them, as Go's does.
- `/debug/pprof/block` (only with contention profiling: the scheduler's and the controller
  manager's `--contention-profiling`, Go's block profile): the asyncio tasks waiting *now* on
  a synchronisation primitive (Lock, Semaphore, Event, Condition, Queue), grouped by the
  primitive and stack with counts — a snapshot, where Go's profile accumulates wait times.
- `/debug/pprof/`: the index of the above.

With --profiling=false none of these routes exist (404). On the secure port they need an
authenticated, authorized user, like every path but the health checks (authz/guard.py).
"""

from __future__ import annotations

import asyncio
import collections
import cProfile
import io
import pstats
import sys
import threading
import traceback
from types import FrameType
from typing import Any

from aiohttp import web

MAX_SECONDS = 300
SORTS = {"tottime": "tottime", "cumulative": "cumulative", "cumtime": "cumulative",
         "ncalls": "ncalls", "calls": "ncalls"}

INDEX = """<html><head><title>/debug/pprof/</title></head><body>
<p>/debug/pprof/ (minikube-py: text profiles, not Go's binary format)</p>
<table>
<tr><td><a href="profile?seconds=30">profile</a></td><td>CPU profile of the event-loop thread
for <code>seconds</code> (default 30): cProfile's pstats text, <code>sort=</code>tottime,
cumulative or ncalls, <code>limit=</code> rows</td></tr>
<tr><td><a href="goroutine?debug=1">goroutine?debug=1</a></td><td>asyncio tasks grouped by
stack, with counts</td></tr>
<tr><td><a href="goroutine?debug=2">goroutine?debug=2</a></td><td>every asyncio task and thread
with its full stack (also <a href="/debug/tasks">/debug/tasks</a>)</td></tr>
<tr><td><a href="block">block</a></td><td>with contention profiling: tasks waiting on a lock,
semaphore, event, condition or queue, grouped by stack</td></tr>
</table></body></html>
"""


def render_profile(profile: cProfile.Profile, seconds: float, sort: str, limit: int) -> str:
    """pstats text of `profile`, with a header saying what it is."""
    out = io.StringIO()
    out.write(f"# minikube-py CPU profile of the event-loop thread: {seconds:g} s (cProfile), "
              f"top {limit} functions by {sort}\n")
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats(sort).print_stats(limit)
    return out.getvalue()


def task_stack(task: asyncio.Task) -> list[str]:
    """The task's stack as traceback lines, innermost last (asyncio's Task.print_stack)."""
    frames = task.get_stack()
    if not frames:
        return []
    summary = traceback.StackSummary.extract((f, f.f_lineno) for f in frames)
    return [line.rstrip("\n") for line in summary.format()]


def _task_state(task: asyncio.Task) -> str:
    if task.done():
        return "done"
    coro = task.get_coro()
    waiting = getattr(coro, "cr_await", None)
    return f"waiting on {type(waiting).__name__}" if waiting is not None else "runnable"


def dump_tasks(debug: int) -> str:
    """Every task of the running loop (debug=2: each with its stack; debug=1: grouped by
    identical stack with counts) and every other thread's stack."""
    tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    out: list[str] = []
    if debug >= 2:
        out.append(f"# {len(tasks)} asyncio tasks")
        for task in tasks:
            out.append(f"task {task.get_name()} [{_task_state(task)}]: {task.get_coro()!r}")
            out += [f"    {line}" for line in "\n".join(task_stack(task)).splitlines()]
            out.append("")
    else:
        groups: collections.Counter[tuple[str, ...]] = collections.Counter()
        for task in tasks:
            groups[tuple(task_stack(task)) or (f"  {task.get_coro()!r}",)] += 1
        out.append(f"# {len(tasks)} asyncio tasks in {len(groups)} distinct stacks")
        for stack, count in groups.most_common():
            out.append(f"{count} @")
            out += [f"    {line}" for line in "\n".join(stack).splitlines()]
            out.append("")
    current = threading.get_ident()
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident == current:
            continue
        out.append(f"thread {names.get(ident, ident)}:")
        out += [f"    {line}" for line in "".join(traceback.format_stack(frame)).splitlines()]
        out.append("")
    return "\n".join(out) + "\n"


#: where asyncio's waitable primitives live: a task whose innermost frame is in one of these
#: is blocked on a Lock, Semaphore, Event, Condition or Queue
_PRIMITIVE_MODULES = ("asyncio/locks.py", "asyncio/queues.py")


def awaited_frames(task: asyncio.Task) -> list[FrameType]:
    """The frames of the coroutines the task is suspended in, outermost first (the task's
    coroutine, what it awaits, and so on down to the one awaiting a future). Task.get_stack
    gives only the outermost one."""
    frames = []
    coro: Any = task.get_coro()
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        frames.append(coro.cr_frame)
        coro = coro.cr_await
    return frames


def dump_blocked() -> str:
    """Tasks of the running loop waiting on a synchronisation primitive, grouped by
    (primitive, stack) with counts, most common first."""
    groups: collections.Counter[tuple[str, tuple[str, ...]]] = collections.Counter()
    for task in asyncio.all_tasks():
        frames = awaited_frames(task)
        if not frames:
            continue
        code = frames[-1].f_code
        if not code.co_filename.replace("\\", "/").endswith(_PRIMITIVE_MODULES):
            continue
        summary = traceback.StackSummary.extract((f, f.f_lineno) for f in frames)
        stack = tuple(line.rstrip("\n") for line in summary.format())
        groups[(code.co_qualname, stack)] += 1
    header = (f"# {sum(groups.values())} asyncio tasks waiting on a lock, semaphore, event, "
              f"condition or queue, in {len(groups)} distinct stacks")
    out = [header]
    for (primitive, stack), count in groups.most_common():
        out.append(f"{count} @ {primitive}")
        out += [f"    {line}" for line in "\n".join(stack).splitlines()]
        out.append("")
    return "\n".join(out) + "\n"


class Profiling:
    """The /debug/pprof handlers; one CPU profile at a time (Go answers a second one with an
    error too). `contention`: also /debug/pprof/block (--contention-profiling)."""

    def __init__(self, *, contention: bool = False) -> None:
        self.profiling = False
        self.contention = contention

    async def index(self, request: web.Request) -> web.Response:
        return web.Response(text=INDEX, content_type="text/html")

    async def profile(self, request: web.Request) -> web.Response:
        raw = request.query.get("seconds", "30")
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= MAX_SECONDS:
            raise web.HTTPBadRequest(text=f"seconds={raw!r}: must be a number of seconds in "
                                     f"(0, {MAX_SECONDS}]\n")
        sort = SORTS.get(request.query.get("sort", "tottime"))
        if sort is None:
            raise web.HTTPBadRequest(text=f"sort: one of {', '.join(SORTS)}\n")
        try:
            limit = int(request.query.get("limit", "60"))
        except ValueError:
            limit = 0
        if limit <= 0:
            raise web.HTTPBadRequest(text="limit: a positive number of rows\n")
        if self.profiling:
            raise web.HTTPConflict(text="Could not enable CPU profiling: cpu profiling already "
                                   "in use\n")
        self.profiling = True
        profile = cProfile.Profile()
        try:
            profile.enable()  # this thread only: the event loop's
            try:
                await asyncio.sleep(seconds)
            finally:
                profile.disable()
        finally:
            self.profiling = False
        return web.Response(text=render_profile(profile, seconds, sort, limit))

    async def goroutine(self, request: web.Request) -> web.Response:
        try:
            debug = int(request.query.get("debug", "1"))
        except ValueError:
            raise web.HTTPBadRequest(text="debug: must be 0, 1 or 2\n") from None
        return web.Response(text=dump_tasks(debug))

    async def tasks(self, request: web.Request) -> web.Response:
        return web.Response(text=dump_tasks(2))

    async def block(self, request: web.Request) -> web.Response:
        return web.Response(text=dump_blocked())

    def install(self, router: web.UrlDispatcher) -> None:
        router.add_get("/debug/pprof/", self.index)
        router.add_get("/debug/pprof", self.index)
        router.add_get("/debug/pprof/profile", self.profile)
        router.add_get("/debug/pprof/goroutine", self.goroutine)
        router.add_get("/debug/tasks", self.tasks)
        if self.contention:
            router.add_get("/debug/pprof/block", self.block)
