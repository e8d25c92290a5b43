"""Waiting in async tests: poll a check until it holds, as controllers and informers follow the
store asynchronously. One helper for the integration suites (each had its own copy)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 5.0,
                     message: str = "", *, interval: float = 0.02) -> Any:
    """Poll `check` until it returns something truthy, and return that; AssertionError
    naming `message` (else the check's docstring) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            what = message or (check.__doc__ or "").strip() or repr(check)
            raise AssertionError(f"timed out after {timeout:g} s waiting: {what}")
        await asyncio.sleep(interval)
