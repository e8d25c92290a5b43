"""Heavy request work runs off the event loop.

Kubernetes piece: none — upstream serves each request on its own goroutine, so a request that
takes a second of CPU costs that request a second and nobody else anything. Here the API
server, the scheduler, the controllers and every kubelet share one event loop, so the same
second would freeze the whole cluster. The pure steps of a request (decoding, unknown-field
checks, patches, server-side apply, defaulting, validation, Table printing) are bounded in
size by api/bounds.py; this module moves the *legitimately* large ones — a 3 MiB ConfigMap, a
pod with 50,000 environment variables, a Table of 50,000 pods — onto a worker thread.

Why a thread and not a process: the work is on request-owned Python objects that would cost
more to ship to a process than to walk here. While a worker holds the GIL the loop still gets
it back every `sys.getswitchinterval()` (5 ms), so the loop's lag stays in milliseconds, which
is what the cluster needs (`/healthz`, kubelet heartbeats, watches keep flowing).

How a request is judged heavy: by a weight in bytes — the request body (YAML weighs eight times
its length: decoding it is that much slower), the stored object it updates, the objects a list
prints. Small requests, almost all of them, pay one context-variable read per step. Once a
request is heavy, every later step of it runs on the worker (`ResourceHandlers.handle` starts
every request light). It sits at the package's top level because both the registry and the
API server's handlers use it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

#: bytes of input above which a step runs on the worker: ~20 ms of Python work on JSON
HEAVY_BYTES = 32 * 1024
#: two workers: one heavy request cannot queue another behind it for long, and two never
#: compete with the loop for more than the GIL's share
_WORKERS = 2

_heavy: ContextVar[bool] = ContextVar("minikube_py_heavy_request", default=False)
_executor: ThreadPoolExecutor | None = None


def begin() -> None:
    """A request starts light. No reset at its end: an HTTP request is its own task, and an
    in-process one runs in its caller's task, whose next request starts light again (a token
    and a `finally` cost a coroutine frame per request, ~2 µs of a ~90 µs GET)."""
    _heavy.set(False)


def weigh(weight: int) -> bool:
    """Note `weight` bytes of input for the current request; True when it is (now) heavy."""
    if weight > HEAVY_BYTES:
        _heavy.set(True)
        return True
    return _heavy.get()


def is_heavy() -> bool:
    return _heavy.get()


async def run(fn: Callable[..., T], *args: Any, weight: int = 0, **kwargs: Any) -> T:
    """`fn(*args)` — inline for a light request, on the worker thread for a heavy one (or when
    this step alone weighs more than HEAVY_BYTES). `fn` must be pure over objects this request
    owns: the worker may run it while the loop serves other requests."""
    if not weigh(weight):
        return fn(*args, **kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool(), functools.partial(fn, *args, **kwargs))


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="apiserver-heavy")
    return _executor
