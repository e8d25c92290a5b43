"""The bounded ring every component writes and every viewer reads.

Kubernetes piece: none directly — the closest are the watch cache's ring of recent events
(pkg/storage/cacher's watchCache, resumable by resourceVersion) and the audit log's buffered
backend. Like the watch cache, the ring keeps the last `capacity` records and numbers them
with a sequence that only grows, so a viewer resumes with "everything after seq N" and learns
how many it missed when the ring moved past N.

Cost when nobody reads: every hook is `if TRACE.active: TRACE.emit(...)` — one attribute
check. `active` is a plain attribute recomputed only when a viewer attaches or leaves, or an
always-on holder (`minikube-py start --trace`, the testing package) holds it on.

Followers wait on an asyncio future that `emit` resolves — no polling. A ring may be written
from one event loop and followed from another (tests run the API server in a thread), so a
waiter's future is resolved on its own loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..crossloop import wake
from .records import Record

DEFAULT_CAPACITY = 50_000


class TraceRing:
    """The last `capacity` records, numbered from 1, plus the viewers waiting for more."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.records: collections.deque[Record] = collections.deque(maxlen=capacity)
        #: what every hook checks: someone reads, or someone holds the ring on
        self.active = False
        self._seq = itertools.count(1)
        self.last_seq = 0
        self._viewers = 0
        self._holders = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def capacity(self) -> int:
        return self.records.maxlen or 0

    @property
    def viewers(self) -> int:
        return self._viewers

    # -- writing --------------------------------------------------------------------------
    def emit(self, kind: str, component: str, resource: str, namespace: str, name: str,
             uid: str, detail: Any) -> None:
        """Append one record (callers check `active` first) and wake the followers."""
        seq = next(self._seq)
        self.records.append(Record(seq, time.time(), kind, component, resource, namespace,
                                   name, uid, detail))
        self.last_seq = seq
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, []
        wake(waiters)

    # -- who is looking -------------------------------------------------------------------
    def _update(self) -> None:
        self.active = self._viewers > 0 or self._holders > 0

    @contextlib.contextmanager
    def viewer(self) -> Iterator[None]:
        """While a viewer is attached the ring records (a live stream, the console)."""
        with self._lock:
            self._viewers += 1
            self._update()
        try:
            yield
        finally:
            with self._lock:
                self._viewers -= 1
                self._update()

    def hold(self) -> None:
        """Keep recording even with no viewer (`start --trace`, the testing package); one
        `release` per `hold`."""
        with self._lock:
            self._holders += 1
            self._update()

    def release(self) -> None:
        with self._lock:
            if self._holders > 0:
                self._holders -= 1
            self._update()

    # -- reading --------------------------------------------------------------------------
    def since(self, seq: int) -> tuple[list[Record], int]:
        """The records after `seq`, oldest first, and how many after `seq` the ring no longer
        holds (the viewer fell behind or asked for history already dropped). A reader resumes
        after the last record returned or, when none is, at `seq + missed`: the last sequence
        number the ring had given out — an emptied ring (`clear`) still counts on, so a reader
        that stayed at `seq` would be told the same loss again, at once, forever."""
        # read before the walk: every record up to `last` is already in the deque (emit sets
        # last_seq after the append), so with nothing found after `seq` they are all gone —
        # and a record another thread appends meanwhile is not counted lost
        last = self.last_seq
        try:
            out = _after(self.records, seq)
        except RuntimeError:
            # Appended to from another thread meanwhile (another cluster's loop in the same
            # process). Retrying the walk can livelock while that thread keeps writing — a
            # replay of a full ring takes longer than the GIL's switch interval — so scan a
            # snapshot: list() copies the deque in C without releasing the GIL.
            out = _after(list(self.records), seq)
        first = out[0].seq if out else last + 1
        return out, max(0, first - seq - 1)

    async def wait(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until a record after `seq` exists; False if `timeout` passed first."""
        if self.last_seq > seq:
            return True
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiters.append((loop, future))
        if self.last_seq > seq:  # written between the check and the registration
            return True
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except TimeoutError:
            return self.last_seq > seq
        finally:  # woken (already taken off), timed out or cancelled (the viewer left)
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove((loop, future))

    def clear(self) -> None:
        """Forget every record (the sequence keeps growing, so resumes stay correct)."""
        self.records.clear()


def _after(records: collections.deque[Record] | list[Record], seq: int) -> list[Record]:
    """The records after `seq`, walking back from the newest (a follower is usually near
    the end). RuntimeError when `records` is a deque another thread appends to meanwhile."""
    out: list[Record] = []
    for record in reversed(records):
        if record.seq <= seq:
            break
        out.append(record)
    out.reverse()
    return out
