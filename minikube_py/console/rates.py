"""Requests per second to the API server, and watch events per second from it, per
component, for the overview's arrows.

Kubernetes piece: what `apiserver_request_total` would give if it had a client label — it
does not (upstream drops the user agent from metrics for cardinality; ours follows), so the
rates are counted from the trace ring's REQUEST records, whose `component` is the request's
User-Agent, and its WATCH records (one per event handed to one watch stream, named by the
watcher's User-Agent) — a watch is one long request, so what flows on it is counted as events. Why the ring and not the metrics: the metrics cannot tell the scheduler from a
kubelet, and the ring costs nothing while nobody looks (`TraceRing.active`). While an overview
is open, the console keeps the ring on as a viewer — a lease renewed by each poll and let go
LEASE_SECONDS after the last one — and each poll reads only the records since the previous
one (`TraceRing.since`), counting them into one-second buckets.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterable

from ..trace.records import REQUEST, WATCH, Record
from ..trace.ring import TraceRing

#: the seconds a rate is averaged over
WINDOW = 5
#: the ring stays on this long after the last poll (an overview polls every second)
LEASE_SECONDS = 10.0

#: the boxes of the overview diagram, by User-Agent prefix (first match wins)
BOXES = (
    ("kube-scheduler", "scheduler"),
    ("kube-controller-manager", "controller-manager"),
    ("kubelet", "kubelet"),
    ("minikube-py-informers", "informers"),
)


def box_of(user_agent: str) -> str:
    """The diagram box a request's User-Agent belongs to; anything else is a client
    (kubectl, the Python clients, tests, the console's own watches and actions)."""
    for prefix, box in BOXES:
        if user_agent.startswith(prefix):
            return box
    return "clients"


#: what the overview shows per box: requests made, watch events received
COUNTED = {REQUEST: "requests", WATCH: "watchEvents"}


def count_by_second(records: Iterable[Record]) -> dict[int, Counter[tuple[str, str]]]:
    """REQUEST and WATCH records counted per whole second, by (what, diagram box)."""
    out: dict[int, Counter[tuple[str, str]]] = {}
    for record in records:
        what = COUNTED.get(record.kind)
        if what is not None:
            out.setdefault(int(record.time), Counter())[what, box_of(record.component)] += 1
    return out


def rates(buckets: dict[int, Counter[tuple[str, str]]], now: float, since: float,
          window: int = WINDOW) -> dict[str, dict[str, float]]:
    """{"requests": {box: per second}, "watchEvents": {box: per second}} over the last
    `window` whole seconds before `now` — or since `since` (when counting began), if that is
    shorter."""
    end = int(now)
    span = min(window, max(1, end - int(since)))
    total: Counter[tuple[str, str]] = Counter()
    for second in range(end - span, end):
        total.update(buckets.get(second, {}))
    out: dict[str, dict[str, float]] = {what: {} for what in COUNTED.values()}
    for (what, box), count in sorted(total.items()):
        out[what][box] = round(count / span, 1)
    return out


class RequestRates:
    """The rate sampler: one per console, shared by every open overview."""

    def __init__(self, ring: TraceRing) -> None:
        self.ring = ring
        self.buckets: dict[int, Counter[tuple[str, str]]] = {}
        self.seq = ring.last_seq
        self.began = time.time()
        self.lost = 0
        self._viewing: contextlib.ExitStack | None = None
        self._last_poll = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def sample(self) -> dict[str, dict[str, float]]:
        """Renew the lease, count what arrived since the last sample, answer the rates."""
        now = time.time()
        self._last_poll = time.monotonic()
        if self._viewing is None:
            self._viewing = contextlib.ExitStack()
            self._viewing.enter_context(self.ring.viewer())
            self.seq, self.began, self.buckets = self.ring.last_seq, now, {}
            self._arm()
        records, missed = self.ring.since(self.seq)
        self.lost += missed
        if records:
            self.seq = records[-1].seq
        for second, counts in count_by_second(records).items():
            self.buckets.setdefault(second, Counter()).update(counts)
        for second in [s for s in self.buckets if s < int(now) - WINDOW - 1]:
            del self.buckets[second]
        return rates(self.buckets, now, self.began)

    def _arm(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(LEASE_SECONDS, self._check)

    def _check(self) -> None:
        if time.monotonic() - self._last_poll >= LEASE_SECONDS:
            self.close()
        else:
            self._arm()

    @property
    def viewing(self) -> bool:
        return self._viewing is not None

    def close(self) -> None:
        """Let the ring go (no overview polled for LEASE_SECONDS, or the console stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._viewing is not None:
            self._viewing.close()
            self._viewing = None
