"""A queue of node names whose pods are to be evicted, drained at a limited rate.

Kubernetes v1.0 piece: pkg/cloudprovider/nodecontroller/rate_limited_queue.go
(RateLimitedTimedQueue over util.TokenBucketRateLimiter — here client/flowcontrol.py — built
from --deleting-pods-qps and --deleting-pods-burst). When many nodes go silent at once (a network partition, a zone
outage) the controller must not delete every pod in the cluster at once: each node costs a
token, and tokens refill at `qps` up to `burst`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from ..client.flowcontrol import TokenBucket  # one token bucket, shared with the scheduler

__all__ = ["RateLimitedTimedQueue", "TokenBucket"]


#: an action on a queued value: (done, retry after seconds)
Action = Callable[[str], Awaitable[tuple[bool, float]]]


class RateLimitedTimedQueue:
    """Unique values, each due at a time; `try_process` hands due values to an action while
    the limiter gives tokens (upstream Try: a token per value looked at)."""

    def __init__(self, limiter: TokenBucket, clock: Callable[[], float] = time.monotonic):
        self.limiter = limiter
        self.clock = clock
        self._due: dict[str, float] = {}
        #: processed values, kept so they are not queued again until removed (upstream
        #: UniqueQueue.RemoveFromQueue: a node's pods are evicted once per outage)
        self._done: set[str] = set()

    def __contains__(self, value: str) -> bool:
        return value in self._due

    def __len__(self) -> int:
        return len(self._due)

    def add(self, value: str) -> bool:
        """Queue `value` now; False if it is queued or was processed and not removed since."""
        if value in self._due or value in self._done:
            return False
        self._due[value] = self.clock()
        return True

    def remove(self, value: str) -> bool:
        """Forget `value` (queued or processed); True if it was queued."""
        self._done.discard(value)
        return self._due.pop(value, None) is not None

    def _head(self) -> str | None:
        return min(self._due, key=self._due.__getitem__) if self._due else None

    async def try_process(self, action: Action) -> None:
        """Process due values in due order until none is due or the limiter says wait. A
        value the action did not finish is due again after the wait it asked for, and ends
        this round."""
        while (value := self._head()) is not None:
            if not self.limiter.try_accept():
                return
            now = self.clock()
            if now < self._due[value]:
                return
            done, wait = await action(value)
            if value not in self._due:
                continue  # removed while the action ran (the node came back)
            if done:
                del self._due[value]
                self._done.add(value)
            else:
                self._due[value] = now + wait
                return  # a failure ends this round rather than spinning on the same value
