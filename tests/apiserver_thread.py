"""A real API server on a free loopback port, run in a background thread.

Sync tests (real kubectl subprocesses, the official `kubernetes` client) need a server that
keeps serving while the test thread blocks; so the server gets its own event loop in a thread.
Everything is real: an EmbeddedStore on disk (fsync off for speed), the APIServer, a TCP
socket. `stop()` closes the site, the watch caches and the store.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.storage import EmbeddedStore, Store


class ServerThread:
    def __init__(self, data_dir: Path, *, store: Store | None = None, **options: Any) -> None:
        self.data_dir = data_dir
        self._store = store
        self.options = options
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.port = 0
        self.server: APIServer | None = None
        self.store: Store | None = None
        self._thread = threading.Thread(target=self._run, name="apiserver", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ServerThread":
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("API server did not start within 30 s")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        except BaseException as exc:  # surfaced to start()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self.store = self._store or await EmbeddedStore.open(self.data_dir, fsync=False)
        opts = dict(self.options)
        opts.setdefault("scheduler_health_url", "http://127.0.0.1:1/healthz")
        opts.setdefault("controller_manager_health_url", "http://127.0.0.1:1/healthz")
        self.server = APIServer(self.store, APIServerOptions(**opts))
        runner = self.server.make_runner()
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = runner.addresses[0][1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()
            await self.store.close()

    def call(self, coro) -> Any:
        """Run a coroutine on the server's loop (e.g. compact the store) and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def stop(self) -> None:
        if self._stop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
