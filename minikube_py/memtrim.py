"""Give freed heap memory back to the operating system.

Kubernetes piece: none — Go's runtime scavenger returns unused heap pages to the OS in the
background (and `debug.FreeOSMemory`), so kube-apiserver's RSS falls after a burst. CPython
has no scavenger: objects over 512 bytes (every stored value, encoded watch frame and JSON
body) come from glibc malloc, whose arenas keep freed chunks for reuse and only shrink from
the top of the main heap. After a create/delete burst the store's history is compacted and
the watch caches' windows expire, yet RSS stays where the burst left it (issue 23 item 3:
~690 MB after ~94k pods, from ~60 MB idle). `malloc_trim(0)` walks every arena and returns
each free page (madvise MADV_DONTNEED), which is what makes that memory come back.

When: every `interval` seconds (a quiet process has nothing to return and the walk is cheap),
and soon after something released a lot — the store calls `request()` after a compaction.
The call runs on a worker thread: ctypes releases the GIL for a foreign call, so the event
loop keeps running while glibc walks the arenas (nothing may hold the loop).
pymalloc's own 1 MiB arenas (objects of 512 bytes or less) are unmapped by CPython itself once
empty; what stays of them is fragmentation no trim can fix.

Only glibc has malloc_trim; elsewhere (musl, macOS) this module does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger(component="memtrim")

#: how often a running process returns free memory (seconds)
DEFAULT_INTERVAL = 60.0
#: after a request (a compaction), wait this long so the releases that follow it (the
#: watch caches dropping their events, the informers' deletions) are trimmed in one walk
REQUEST_DELAY = 2.0


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_malloc_trim = _load_malloc_trim()


def available() -> bool:
    """Whether this libc can return memory (glibc)."""
    return _malloc_trim is not None


def trim() -> bool:
    """Return free heap pages to the OS now (blocking: call it off the event loop).
    True when glibc released something."""
    return bool(_malloc_trim(0)) if _malloc_trim is not None else False


class MemoryTrimmer:
    """The process's periodic trim, on a worker thread; `request()` asks for one soon."""

    def __init__(self, interval: float = DEFAULT_INTERVAL,
                 request_delay: float = REQUEST_DELAY) -> None:
        self.interval = interval
        self.request_delay = request_delay
        self.trims = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        global _current
        if available() and self.interval > 0:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="memtrim")
            _current = self

    async def stop(self) -> None:
        global _current
        if _current is self:
            _current = None
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def request(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
                await asyncio.sleep(self.request_delay)
            except TimeoutError:
                pass
            self._wake.clear()
            await self.trim_now()

    async def trim_now(self) -> bool:
        began = time.perf_counter()
        released = await asyncio.to_thread(trim)
        self.trims += 1
        log.debug("memtrim.trimmed", released=released,
                  seconds=round(time.perf_counter() - began, 4))
        return released


_current: MemoryTrimmer | None = None


def request() -> None:
    """Ask the process's running trimmer, if any, to trim soon (after a compaction)."""
    if _current is not None:
        _current.request()
