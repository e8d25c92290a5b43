"""Starting child processes on ports picked by `free_port()` without losing the race.

`free_port()` asks the OS for a port nobody holds *now*; by the time a child binds it, another
cluster on the shared machine may have taken it ("address already in use"). The child's own
flags cannot bind port 0 and report back (upstream's `--port 0` means "do not serve"), so the
harness retries the whole start with fresh ports instead: the race is rare, so one or two more
attempts make it vanish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: what Python's asyncio/aiohttp and etcd both print when bind() finds the port taken
PORT_IN_USE = "address already in use"


def lost_port_race(exc: BaseException) -> bool:
    """True when a start failed only because a port we picked was taken meanwhile."""
    return PORT_IN_USE in str(exc).lower()


def start_retrying_port_races(start: Callable[[], T], *, cleanup: Callable[[], None],
                              attempts: int = 4) -> T:
    """`start()`; when it loses a port race, `cleanup()` (which also picks new ports) and retry."""
    for attempt in range(attempts):
        try:
            return start()
        except (EOFError, AssertionError, RuntimeError, TimeoutError) as exc:
            if attempt == attempts - 1 or not lost_port_race(exc):
                raise
            cleanup()
    raise AssertionError("unreachable")
