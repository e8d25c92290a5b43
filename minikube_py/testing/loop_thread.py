"""An event loop on a background thread, for callers that are not on one.

Kubernetes piece: none; the Python side of envtest's "the control plane runs beside the test".
A sync test (the official `kubernetes` client, subprocesses, plain asserts) blocks its thread;
the cluster must keep serving meanwhile, so its loop runs here and the test's calls hop onto
it with `call()` (run_coroutine_threadsafe, a few tens of microseconds).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "minikube-py-cluster") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result (its exception is raised here)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("called from the cluster's own loop thread: await it instead")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Cancel what is left on the loop, stop it and join the thread."""
        async def cancel_rest() -> None:
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        if self.loop.is_running():
            try:
                self.call(cancel_rest(), timeout)
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
