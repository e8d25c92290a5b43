"""A token-bucket rate limiter, for anything that must not do a thing faster than N per second.

Kubernetes v1.0 piece: pkg/util/throttle.go (`util.RateLimiter`, `NewTokenBucketRateLimiter(qps,
burst)` with `TryAccept` and the blocking `Accept`; later pkg/util/flowcontrol). v1.0 used one
implementation for the node controller's pod evictions (--deleting-pods-qps/-burst) and the
scheduler's BindPodsRateLimiter (--bind-pods-qps/-burst); so does this package.

The bucket starts full (`burst` tokens) and refills at `qps` per second up to `burst`.
`accept()` *reserves* a token and sleeps until it is due (the balance may go negative), so
concurrent callers are served in call order at exactly `qps` — no thundering herd re-polling
the bucket. The clock is injectable so pure tests need no sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    """upstream TokenBucketRateLimiter: `try_accept()` never waits, `accept()` waits its turn."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.qps = qps
        self.burst = max(1, burst)
        self.clock = clock
        self.tokens = float(self.burst)
        self.last = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
        self.last = now

    def try_accept(self) -> bool:
        """Take a token if one is there now (upstream TryAccept)."""
        self._refill()
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def reserve(self) -> float:
        """Take a token, possibly one not yet refilled: the seconds until it is due (0 when one
        was there). A later caller queues behind every earlier reservation."""
        self._refill()
        self.tokens -= 1
        if self.tokens >= 0:
            return 0.0
        if self.qps <= 0:
            raise ValueError("a token bucket with qps <= 0 never refills")
        return -self.tokens / self.qps

    async def accept(self) -> None:
        """Wait until a token is ours (upstream Accept, without blocking the event loop)."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
