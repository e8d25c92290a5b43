"""`start --apiservers N`: the store's process serves the store to N-1 more API server
processes and keeps them alive exactly as long as itself.

Kubernetes piece: an HA control plane on one machine — etcd, and several kube-apiservers with
`--etcd-servers` pointing at it behind one address (v1.0's docs/admin/high-availability.md) —
with the lifecycle kubelet's static pods gave it. The layout (docs/architecture.md, "Several
API servers"):

    store process: EmbeddedStore + StoreServer (Unix socket) + API server #0
                   + scheduler, controller manager, kubelets (in-process client of #0)
    child 1..N-1:  API server #i over RemoteStore, its own watch caches

Every API server (#0 too) serves its own SO_REUSEPORT sockets of the one shared port — #0 one,
each child CHILD_SHARE, as #0 also serves the store (apiserver_listeners.py) — so clients never
know there are several.

Lifecycle: children get SIGTERM on `start`'s stop and are killed after a grace period; they
die with the parent (their stdin lifeline and PR_SET_PDEATHSIG, apiserver_child.py); `start`
is ready when API server #0 is, and each child joins the shared port when it serves
(`serving` is set once all have); a child that exits on its own, or does not serve within
`--ready-timeout`, is logged and makes `start` stop and exit 1 (a control plane with a
missing API server is not what was asked for; restarting it silently would hide the crash).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import structlog

from ..storage import Store
from ..storage.remote import PublishingStore, RevisionBoard, StoreServer
from .apiserver_child import Assignment, encode
from .apiserver_listeners import deal
from .start_options import StartOptions

log = structlog.get_logger(component="minikube-py")

STOP_GRACE = 5.0


class Child:
    """One spawned API server process."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self.url: str | None = None
        self.ready = False
        self.task: asyncio.Task | None = None
        self.insecure_fds: tuple[int, ...] = ()  # its sockets of the shared port(s)
        self.secure_fds: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"apiserver-{self.index}"


class Fleet:
    """The children and the store server they reach the store through."""

    def __init__(self, options: StartOptions, store: Store) -> None:
        """Before API server #0 is built: it (and the etcd server, and the children through
        the socket) must write through `self.store`, which publishes each acknowledged
        revision on the board the children's consistent reads wait for."""
        self.options = options
        self._dir = Path(tempfile.mkdtemp(prefix="minikube-py-"))  # 0700: socket and board
        self.board = RevisionBoard(self._dir / "revision", create=True)
        self.store = PublishingStore(store, self.board)
        self.insecure: list[socket.socket] = []  # [0] is API server #0's, then the children's
        self.secure: list[socket.socket] = []
        self.on_failure: Callable[[str], None] = lambda _reason: None
        self.children = [Child(i) for i in range(1, options.apiservers)]
        self.failed: str | None = None
        self.stopping = False
        self.stopped = False
        self.server: StoreServer | None = None
        #: set once every child serves (has joined the shared port): benchmarks and tests
        #: that want every API server wait on it; `start` does not
        self.serving = asyncio.Event()
        self._began = 0.0

    @property
    def urls(self) -> list[str]:
        """Each child's private URL (with the insecure port on), in index order."""
        return [c.url for c in self.children if c.url]

    def pending(self) -> list[str]:
        return [c.name for c in self.children if not c.ready]

    async def spawn(self, insecure: list[socket.socket], secure: list[socket.socket]) -> None:
        """Start the children with their sockets of the shared port(s). They import the API
        server meanwhile and wait for `start` (API server #0 first does the bootstrap every
        API server would otherwise race to do)."""
        self.insecure, self.secure = insecure, secure
        count = self.options.apiservers
        insecure_dealt = deal(insecure, count) if insecure else [[] for _ in range(count)]
        secure_dealt = deal(secure, count) if secure else [[] for _ in range(count)]
        for child in self.children:
            i = child.index
            mine = [*insecure_dealt[i], *secure_dealt[i]]
            child.insecure_fds = tuple(s.fileno() for s in insecure_dealt[i])
            child.secure_fds = tuple(s.fileno() for s in secure_dealt[i])
            child.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "minikube_py.cli.apiserver_child",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                pass_fds=tuple(s.fileno() for s in mine), env=_child_env())
            for sock in mine:  # the child's now: were it to die, its socket must close, or
                sock.close()   # the kernel would keep routing connections to it

    async def start(self, on_failure: Callable[[str], None]) -> None:
        """Serve the store and tell each child what to serve; `on_failure` hears of a child
        that exits on its own."""
        self.on_failure = on_failure
        self._began = asyncio.get_running_loop().time()
        if not self.children:
            self.serving.set()
        self.board.publish(await self.store.current_revision())
        self.server = await StoreServer.start(self.store, self._dir / "store.sock")
        level, fmt = _log_settings()
        # what only the store process's components use stays here (a test's clock is not
        # even picklable)
        options = dataclasses.replace(self.options, controller_clock=None)
        for child in self.children:
            assert child.process is not None and child.process.stdin is not None
            assignment = Assignment(options, str(self.server.path), str(self.board.path),
                                    child.index, child.insecure_fds, child.secure_fds,
                                    level, fmt)
            child.process.stdin.write(encode(assignment))  # then held open: the lifeline
            await child.process.stdin.drain()
            child.task = asyncio.create_task(self._watch(child), name=child.name)

    async def _watch(self, child: Child) -> None:
        """Until the child exits: take its ready line (it listens on its sockets of the shared
        port from then on), confirm /readyz, then wait. A child that does not serve within
        the ready timeout has failed like one that exits."""
        process = child.process
        assert process is not None and process.stdout is not None
        try:
            async with asyncio.timeout(self.options.ready_timeout):
                line = await process.stdout.readline()
                if line:
                    child.url = json.loads(line).get("url")
                    if child.url:
                        await _until_ready(child.url)
        except TimeoutError:
            self._fail(child, f"{child.name} (pid {process.pid}) did not serve within "
                              f"{self.options.ready_timeout:g} s (see --ready-timeout)")
            return
        if line:
            child.ready = True
            log.info("API server serving", apiserver=child.index, pid=process.pid, url=child.url)
            if not self.pending():
                self.serving.set()
                log.info("all API servers serving", apiservers=len(self.children) + 1,
                         seconds=round(asyncio.get_running_loop().time() - self._began, 3))
            while await process.stdout.readline():
                pass
        code = await process.wait()
        self._fail(child, f"{child.name} (pid {process.pid}) exited with code {code}")

    def _fail(self, child: Child, reason: str) -> None:
        if self.stopping:
            return
        self.failed = reason
        log.error("an API server process failed; stopping", apiserver=child.index, reason=reason)
        self.on_failure(reason)

    async def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = self.stopping = True
        running = [c.process for c in self.children
                   if c.process is not None and c.process.returncode is None]
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                await asyncio.wait_for(process.wait(), STOP_GRACE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        for child in self.children:
            if child.task is not None:
                child.task.cancel()
        await asyncio.gather(*(c.task for c in self.children if c.task), return_exceptions=True)
        for child in self.children:
            if child.process is not None and child.process.stdin is not None:
                child.process.stdin.close()
        if self.server is not None:
            await self.server.stop()
        self.board.close()
        shutil.rmtree(self._dir, ignore_errors=True)


async def _until_ready(url: str, timeout: float = 60.0) -> None:
    """Poll `url`/readyz until it answers 200 (the caller's ready timeout bounds the wait)."""
    import aiohttp

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
        while loop.time() < deadline:
            try:
                async with session.get(f"{url}/readyz") as response:
                    if response.status == 200:
                        return
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(0.02)


def _child_env() -> dict[str, str]:
    """Our environment, with this package's root first on PYTHONPATH: the child imports the
    same minikube_py as the parent (a checkout, not whatever is installed)."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def _log_settings() -> tuple[str, str]:
    """This process's log level and format, for the children to log alike."""
    level = logging.getLevelName(logging.getLogger().level).lower()
    if level not in ("debug", "info", "warning", "error", "critical"):
        level = "info"
    processors = structlog.get_config().get("processors") or []
    fmt = "json" if any(type(p).__name__ == "JSONRenderer" for p in processors) else "console"
    return level, fmt
