"""One extra API server process of `start --apiservers N` (run as
`python -m minikube_py.cli.apiserver_child`, by cli/apiserver_fleet.py only).

Kubernetes piece: a second kube-apiserver of an HA control plane — the same binary and flags
as the first, its own watch caches, the shared etcd behind `--etcd-servers`. Here: the store
is reached through storage/remote (RemoteStore over the parent's Unix socket); the listening
sockets are inherited from the parent (apiserver_listeners.py), so every API server answers
on one port; TLS material, tokens and keys are the files the parent already generated.

What it is told arrives on stdin, one length-prefixed pickle (`Assignment`): the parent's
resolved StartOptions (the same values, not re-parsed flags), the store socket, which fds to
serve, its index. After that stdin stays open as the lifeline: EOF means the parent is gone
(and PR_SET_PDEATHSIG sends SIGTERM for the case the pipe is inherited elsewhere), so a killed
`start` never leaves API servers behind. It reports on stdout, one JSON line, once it serves:
`{"ready": true, "index": n, "pid": ..., "url": "http://127.0.0.1:PORT"}` — `url` is a
private port of this process alone (when the insecure port is on: the same trust), which the
parent probes (/readyz) and tests use to reach this API server in particular.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import pickle
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from aiohttp import web

    from .start_options import StartOptions

#: every response of API server n carries `X-Minikube-Apiserver: n` (the store process's is 0)
IDENTITY_HEADER = "X-Minikube-Apiserver"
_PR_SET_PDEATHSIG = 1
STARTED = time.monotonic()  # the process's start, for the "serving" line's seconds


@dataclass(frozen=True)
class Assignment:
    options: StartOptions
    store_socket: str
    revision_board: str
    index: int
    insecure_fds: tuple[int, ...]  # this process's sockets of the shared port(s)
    secure_fds: tuple[int, ...]
    log_level: str = "info"
    log_format: str = "console"


def encode(assignment: Assignment) -> bytes:
    body = pickle.dumps(assignment)
    return struct.pack(">I", len(body)) + body


def _read_assignment() -> Assignment | None:
    """The parent's assignment; None if the parent went away first (EOF)."""
    stdin = sys.stdin.buffer
    head = stdin.read(4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack(">I", head)
    return pickle.loads(stdin.read(size))


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG(SIGTERM): the kernel signals us when the parent exits (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the stdin lifeline still ends us


def add_identity(app: web.Application, index: int) -> None:
    """Every response names the API server that answered (before the app is frozen)."""
    value = str(index)

    async def stamp(_request: web.Request, response: web.StreamResponse) -> None:
        response.headers[IDENTITY_HEADER] = value

    app.on_response_prepare.append(stamp)


async def _lifeline(stop: asyncio.Event) -> None:
    """Set `stop` when stdin reaches EOF: the parent has exited or closed our pipe."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass
    stop.set()


async def serve(assignment: Assignment) -> int:
    from aiohttp import web

    from ..apiserver.server import APIServer
    from ..storage.remote import CachingStore, RemoteStore, RevisionBoard
    from . import runtime
    from .secure_serving import prepare

    log = structlog.get_logger(component="apiserver", apiserver=assignment.index)
    stop = runtime.stop_on_signals()
    lifeline = asyncio.create_task(_lifeline(stop))
    options, secure = prepare(assignment.options)  # the parent's files, reused
    # this process's copy of the store: consistent reads from memory (storage/remote/cached.py)
    store = CachingStore(await RemoteStore.connect(Path(assignment.store_socket)),
                         RevisionBoard(Path(assignment.revision_board)))
    runner = None
    began = time.monotonic()
    try:
        await store.start()
        apiserver = APIServer(store, options.apiserver)
        runner = apiserver.make_runner()
        add_identity(runner.app, assignment.index)
        await runner.setup()  # starts the API server: watch caches synced
        for fd in assignment.insecure_fds:
            await web.SockSite(runner, socket.socket(fileno=fd)).start()
        for fd in assignment.secure_fds:
            await web.SockSite(runner, socket.socket(fileno=fd), ssl_context=secure.ssl_context
                               if secure is not None else None).start()
        url = None
        if assignment.insecure_fds:  # a private port, as open as the shared one
            site = web.TCPSite(runner, options.address, 0)
            await site.start()
            url = f"http://{options.address}:{site._server.sockets[0].getsockname()[1]}"
        print(json.dumps({"ready": True, "index": assignment.index, "pid": os.getpid(),
                          "url": url}), flush=True)
        log.info("serving", url=url, store=assignment.store_socket,
                 seconds=round(time.monotonic() - STARTED, 3),
                 setup_seconds=round(time.monotonic() - began, 3))
        await stop.wait()
        log.info("stopping")
    finally:
        lifeline.cancel()
        if runner is not None:
            await runner.cleanup()
        await store.close()
        runtime.restore_signals()
    return 0


def main() -> int:
    die_with_parent()
    parent = os.getppid()
    # the heavy imports while the parent builds API server #0 (the assignment comes after)
    import aiohttp  # noqa: F401

    from ..apiserver import server  # noqa: F401
    from . import secure_serving  # noqa: F401

    assignment = _read_assignment()
    if assignment is None or os.getppid() != parent:  # the parent is gone
        return 1
    from ..logs import configure_logging
    from . import runtime

    configure_logging(level=assignment.log_level, fmt=assignment.log_format)  # type: ignore[arg-type]
    return runtime.run(serve(assignment), component=f"apiserver-{assignment.index}",
                       stall_threshold=assignment.options.loop_stall_threshold)


if __name__ == "__main__":
    sys.exit(main())
