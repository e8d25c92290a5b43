"""Serve a Store over a Unix socket to other processes (the store side of `start --apiservers`).

Kubernetes piece: the etcd server several kube-apiservers share (etcdserver's v3 KV, Watch and
Lease services) — here only our Store contract, in the frames of protocol.py. Why not gRPC: our
etcd v3 server (minikube_py/etcdserver) costs ~0.5 ms of grpcio CPU per call in the store's
process, which is the process that also runs API server #0 and the components; these frames
cost a few tens of microseconds (bench/store_transport.py).

How a connection is served: frames are decoded as they arrive; reads the store answers without
suspending (protocol.READS) run inline, writes and lease calls get a task (they wait for the
WAL's fsync, and group commit wants many in flight). Replies of one loop turn leave in one
write (`outbox.Outbox`). Each watch is a task forwarding the store watch's batches in order; when the
socket backs up, it stops reading the store watch, whose bounded buffer then ends it the way it
ends any slow watcher (WatchCancelledError, delivered to the client as the stream's END).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import structlog

from ..interface import Store
from . import protocol
from .outbox import Outbox

log = structlog.get_logger(component="store-server")

#: unsent bytes on one connection above which watch forwarding waits for the socket
HIGH_WATER = 4 * 1024 * 1024


class StoreServer:
    """Serves `store` on a Unix socket at `path` (mode 0600: the store holds every Secret)."""

    def __init__(self, store: Store, path: Path) -> None:
        self.store = store
        self.path = Path(path)
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task] = set()

    @classmethod
    async def start(cls, store: Store, path: Path) -> StoreServer:
        server = cls(store, path)
        with contextlib.suppress(FileNotFoundError):
            server.path.unlink()
        old = os.umask(0o177)
        try:
            server._server = await asyncio.start_unix_server(server._serve, str(server.path))
        finally:
            os.umask(old)
        return server

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        connection = _Connection(self.store, writer)
        try:
            await connection.run(reader)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # stop(): asyncio's server callback would log a cancelled handler as an error
            pass
        finally:
            self._connections.discard(task)
            await connection.close()


class _Connection:
    def __init__(self, store: Store, writer: asyncio.StreamWriter) -> None:
        self.store = store
        self.writer = writer
        self.out = Outbox(writer)
        self.calls: set[asyncio.Task] = set()
        self.watches: dict[int, asyncio.Task] = {}

    async def run(self, reader: asyncio.StreamReader) -> None:
        frames = protocol.unpacker()
        while True:
            data = await reader.read(256 * 1024)
            if not data:
                return
            frames.feed(data)
            for rid, op, args in frames:
                self.dispatch(rid, op, args)

    def dispatch(self, rid: int, op: str, args: tuple) -> None:
        if op not in protocol.OPS:
            self.out.send([rid, protocol.ERROR, ("UnavailableError", (f"unknown call {op!r}",))])
        elif op == "watch":
            self.watches[rid] = asyncio.create_task(self._watch(rid, *args), name="store-watch")
        elif op == "cancel":
            task = self.watches.pop(args[0], None)
            if task is not None:
                task.cancel()
            self.out.send([rid, protocol.OK, None])
        elif op in protocol.READS and self._run_inline(rid, op, args):
            pass
        else:
            task = asyncio.create_task(self._call(rid, op, args))
            self.calls.add(task)
            task.add_done_callback(self.calls.discard)

    def _run_inline(self, rid: int, op: str, args: tuple) -> bool:
        """Run a read to completion without a task if it never suspends (the embedded store's
        reads do not); False if it suspended (it is closed, and run again as a task — a read
        has no side effect)."""
        coro = _invoke(self.store, op, args)
        try:
            coro.send(None)
        except StopIteration as done:
            self.out.send([rid, protocol.OK, protocol.result_out(op, done.value)])
            return True
        except Exception as exc:  # noqa: BLE001 - every failure is the caller's answer
            self.out.send([rid, protocol.ERROR, protocol.error_out(exc)])
            return True
        coro.close()
        return False

    async def _call(self, rid: int, op: str, args: tuple) -> None:
        try:
            value = await _invoke(self.store, op, args)
        except Exception as exc:  # noqa: BLE001 - every failure is the caller's answer
            self.out.send([rid, protocol.ERROR, protocol.error_out(exc)])
        else:
            self.out.send([rid, protocol.OK, protocol.result_out(op, value)])

    async def _watch(self, rid: int, prefix: str, start_revision: int) -> None:
        try:
            watch = await self.store.watch(prefix, start_revision=start_revision)
        except Exception as exc:  # noqa: BLE001
            self.watches.pop(rid, None)
            self.out.send([rid, protocol.ERROR, protocol.error_out(exc)])
            return
        self.out.send([rid, protocol.OK, None])
        error: Any = None
        try:
            while True:
                batch = await watch.next_batch()
                if not batch:
                    break
                self.out.send([rid, protocol.EVENTS, [protocol.event_out(e) for e in batch]])
                transport = self.writer.transport
                if transport.get_write_buffer_size() > HIGH_WATER:
                    self.out.flush()
                    await self.writer.drain()
        except asyncio.CancelledError:
            await watch.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - the watch's end, told to its client
            error = protocol.error_out(exc)
        self.watches.pop(rid, None)
        await watch.cancel()
        self.out.send([rid, protocol.END, error])

    async def close(self) -> None:
        for task in [*self.watches.values(), *self.calls]:
            task.cancel()
        await asyncio.gather(*self.watches.values(), *self.calls, return_exceptions=True)
        self.out.flush()
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


def _invoke(store: Store, op: str, args: tuple):
    """The coroutine of Store method `op` for the wire's positional `args`."""
    if op == "get":
        key, revision = args
        return store.get(key, revision=revision)
    if op == "range":
        prefix, limit, token, revision = args
        return store.range(prefix, limit=limit, continue_token=token, revision=revision)
    if op == "create":
        key, value, lease = args
        return store.create(key, value, lease=lease)
    if op == "update":
        key, value, expected, lease = args
        return store.update(key, value, expected_mod_revision=expected, lease=lease)
    if op == "delete":
        key, expected = args
        return store.delete(key, expected_mod_revision=expected)
    return getattr(store, op)(*args)
