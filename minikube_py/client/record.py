"""The event recorder: components say what happened, as Event objects, without blocking.

Kubernetes v1.0 piece: pkg/client/record (EventRecorder, EventBroadcaster) and the
EventCorrelator of v1.2+: an event identical to a recent one (same object, type, reason,
message, source) is not written again — the existing Event's `count` goes up and its
`lastTimestamp` moves, as upstream aggregates repeats (kubectl describe shows `x5 over 2m`).
Before that, the correlator's spam filter (EventSourceObjectSpamFilter): each source may
write a burst of 25 events about one object, then one per 5 minutes (a token bucket per
source + involved object, 4096 kept); the rest are dropped, so a DaemonSet creating a
thousand pods writes 25 `SuccessfulCreate` events, not a thousand.
Sending happens in background tasks: a component never waits for, nor fails on, an event.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any

import structlog

from ..api import meta
from ..api.errors import StatusError
from .resources import EVENTS
from .rest import Client

log = structlog.get_logger(component="client")

Obj = dict[str, Any]
CACHE_SIZE = 4096
#: events_cache.go's defaultSpamBurst and defaultSpamQPS
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0


class SpamFilter:
    """EventSourceObjectSpamFilter: a token bucket per (source, involved object), LRU-bounded.
    Pure: the caller passes the time."""

    def __init__(self, burst: int = SPAM_BURST, qps: float = SPAM_QPS,
                 size: int = CACHE_SIZE) -> None:
        self.burst, self.qps, self.size = burst, qps, size
        self._buckets: collections.OrderedDict[tuple, list[float]] = collections.OrderedDict()

    def allow(self, key: tuple, now: float) -> bool:
        """Take a token for `key` (False: the event is dropped)."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [float(self.burst), now]
            if len(self._buckets) > self.size:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket[0] = min(float(self.burst), bucket[0] + (now - bucket[1]) * self.qps)
            bucket[1] = now
        if bucket[0] < 1.0:
            return False
        bucket[0] -= 1.0
        return True


def object_reference(obj: Obj) -> Obj:
    md = obj.get("metadata") or {}
    ref = {"kind": obj.get("kind", ""), "namespace": md.get("namespace", ""),
           "name": md.get("name", ""), "uid": md.get("uid", ""),
           "apiVersion": obj.get("apiVersion", ""),
           "resourceVersion": md.get("resourceVersion", "")}
    return {k: v for k, v in ref.items() if v}


class EventRecorder:
    def __init__(self, client: Client, component: str, host: str = "",
                 clock: Any = time.monotonic) -> None:
        self.client = client
        self.source = {"component": component, **({"host": host} if host else {})}
        self.clock = clock
        self.spam = SpamFilter()
        self.dropped = 0  # events the spam filter refused
        #: recent events by identity -> (event name, namespace, count): the correlator's memory
        self._recent: collections.OrderedDict[tuple, list] = collections.OrderedDict()
        self._pending: set[asyncio.Task] = set()

    def _admitted(self, ref: Obj) -> bool:
        """The spam filter's verdict for one more event about `ref` from this source."""
        key = (ref.get("kind"), ref.get("namespace"), ref.get("name"), ref.get("uid"),
               ref.get("apiVersion"))
        if self.spam.allow(key, self.clock()):
            return True
        self.dropped += 1
        return False

    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        """Record an event about `obj` (type Normal or Warning); returns at once."""
        ref = object_reference(obj)
        if not self._admitted(ref):
            return
        task = asyncio.get_running_loop().create_task(
            self._send(ref, event_type, reason, message))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def record(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        """Like `event`, but the caller awaits the write (for callers that bound their own
        concurrency, e.g. the kubelet pool's event writers); never raises."""
        ref = object_reference(obj)
        if self._admitted(ref):
            await self._send(ref, event_type, reason, message)

    async def flush(self) -> None:
        """Wait until every event recorded so far has been written (tests, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def close(self) -> None:
        """Drop events still being sent (the component is stopping)."""
        for task in list(self._pending):
            task.cancel()

    async def _send(self, ref: Obj, event_type: str, reason: str, message: str) -> None:
        namespace = ref.get("namespace") or "default"
        key = (ref.get("kind"), namespace, ref.get("name"), ref.get("uid"), event_type, reason,
               message)
        now = meta.now_rfc3339()
        try:
            recent = self._recent.get(key)
            if recent is not None:
                recent[2] += 1
                self._recent.move_to_end(key)
                try:
                    await self.client.patch(EVENTS, recent[0], {"count": recent[2],
                                                                "lastTimestamp": now},
                                            recent[1])
                    return
                except StatusError as exc:
                    if exc.code != 404:  # expired (event TTL) or deleted: write a new one
                        raise
            name = f"{ref.get('name', 'object')}.{time.time_ns():x}"
            body = {"apiVersion": "v1", "kind": "Event",
                    "metadata": {"name": name, "namespace": namespace},
                    "involvedObject": ref, "reason": reason, "message": message,
                    "type": event_type, "source": self.source, "count": 1,
                    "firstTimestamp": now, "lastTimestamp": now,
                    "reportingComponent": self.source["component"],
                    "reportingInstance": self.source.get("host", "")}
            await self.client.create(EVENTS, body, namespace)
            self._recent[key] = [name, namespace, 1]
            if len(self._recent) > CACHE_SIZE:
                self._recent.popitem(last=False)
        except Exception as exc:  # events are best effort, as upstream: log and carry on
            log.warning("could not write event", reason=reason, object=ref.get("name"),
                        error=str(exc))
