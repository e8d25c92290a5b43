"""A Store in another process, over a Unix socket: what each extra API server of
`start --apiservers N` stores through.

Kubernetes piece: k8s.io/apiserver/pkg/storage/etcd3 with clientv3 underneath — the API
server's view of a store that lives elsewhere. One connection carries every call, pipelined
(any number in flight, answered by request id) and batched (the frames of one loop turn leave
in one write), plus every watch as a stream. The semantics are the store's own: revisions,
CAS, errors (the same exception types, rebuilt from the wire), watch order; the Store
conformance suite runs over it (tests/storage_remote).

Every call has a timeout (`call_timeout`), so a store process that stops answering makes
calls fail with UnavailableError rather than hang a request; a lost connection fails every
pending call and ends every watch with UnavailableError (the API server's watch caches then
retry, and `start` stops the API servers when the store process is gone).
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from ..errors import UnavailableError, WatchCancelledError
from ..eventbuffer import EventBuffer
from ..kv import Event, KeyValue, LeaseInfo, RangeResult
from . import protocol
from .outbox import Outbox

#: events a watch buffers for a consumer that does not take them; past this it is ended with
#: WatchCancelledError (the store's own watchers are bounded the same way)
WATCH_CAPACITY = 100_000


class RemoteWatch(EventBuffer):
    """One watch over the connection (implements the storage `Watch` protocol)."""

    def __init__(self, store: RemoteStore, rid: int) -> None:
        super().__init__()
        self._store = store
        self.rid = rid

    def _deliver(self, events: list[Event]) -> None:
        if self.done:
            return
        self.buffer.extend(events)
        if len(self.buffer) > WATCH_CAPACITY:
            self.finish(WatchCancelledError("watch consumer too slow: buffer full"))
            self._store._send_cancel(self.rid)
            return
        self.wake()

    async def cancel(self) -> None:
        if not self.finish(None):
            return
        self.buffer.clear()
        self._store._watches.pop(self.rid, None)
        self._store._send_cancel(self.rid)


class RemoteStore:
    """The Store contract over a StoreServer's socket. Open with `await RemoteStore.connect(path)`."""

    def __init__(self, path: Path, *, call_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.call_timeout = call_timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.Future, str]] = {}
        self._watches: dict[int, RemoteWatch] = {}
        self._out: Outbox | None = None  # once connected
        self._reading: asyncio.Task | None = None
        self._closed = False
        self._lost: str | None = None

    @classmethod
    async def connect(cls, path: Path, *, call_timeout: float = 30.0,
                      timeout: float = 10.0) -> RemoteStore:
        store = cls(path, call_timeout=call_timeout)
        try:
            store._reader, store._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(store.path), limit=1 << 20), timeout)
        except (TimeoutError, OSError) as exc:
            raise UnavailableError(f"cannot reach the store at {path}: {exc}") from None
        store._out = Outbox(store._writer)
        store._reading = asyncio.create_task(store._read_loop(), name="remote-store")
        return store

    # ------------------------------------------------------------------ the connection

    def _send(self, frame: list) -> None:
        assert self._out is not None, "not connected"
        self._out.send(frame)

    def _send_cancel(self, rid: int) -> None:
        if self._lost is None and not self._closed:
            self._send([next(self._ids), "cancel", (rid,)])  # its reply is not awaited

    async def _read_loop(self) -> None:
        assert self._reader is not None
        frames = protocol.unpacker()
        reason = "the store closed the connection"
        try:
            while True:
                data = await self._reader.read(1 << 20)
                if not data:
                    break
                frames.feed(data)
                for rid, kind, body in frames:
                    self._receive(rid, kind, body)
        except (ConnectionError, OSError) as exc:
            reason = f"connection to the store lost: {exc}"
        except Exception as exc:  # noqa: BLE001 - a bad frame ends the connection, loudly
            reason = f"bad frame from the store: {type(exc).__name__}: {exc}"
        self._lose(reason)

    def _receive(self, rid: int, kind: int, body: Any) -> None:
        if kind == protocol.EVENTS:
            watch = self._watches.get(rid)
            if watch is not None:
                watch._deliver([protocol.event_in(e) for e in body])
            return
        if kind == protocol.END:
            watch = self._watches.pop(rid, None)
            if watch is not None:
                watch.finish(None if body is None else protocol.error_in(body))
            return
        entry = self._pending.pop(rid, None)
        if entry is None:
            return  # a call that timed out, or a cancel's reply
        future, op = entry
        if future.done():
            return
        if kind == protocol.OK:
            future.set_result(protocol.result_in(op, body))
        else:
            future.set_exception(protocol.error_in(body))

    def _lose(self, reason: str) -> None:
        if self._lost is not None:
            return
        self._lost = reason
        for future, _op in self._pending.values():
            if not future.done():
                future.set_exception(UnavailableError(reason))
        self._pending.clear()
        for watch in self._watches.values():
            watch.finish(UnavailableError(reason))
        self._watches.clear()

    async def _call(self, op: str, *args: Any) -> Any:
        if self._closed:
            raise UnavailableError("store is closed")
        if self._lost is not None:
            raise UnavailableError(self._lost)
        rid = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[rid] = (future, op)
        self._send([rid, op, args])
        try:
            return await asyncio.wait_for(future, self.call_timeout)
        except TimeoutError:
            self._pending.pop(rid, None)
            raise UnavailableError(f"the store did not answer {op} within "
                                   f"{self.call_timeout:g} s") from None

    # ------------------------------------------------------------------ the contract

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        return await self._call("get", key, revision)

    async def range(self, prefix: str, *, limit: int = 0, continue_token: str | None = None,
                    revision: int = 0) -> RangeResult:
        return await self._call("range", prefix, limit, continue_token, revision)

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        return await self._call("create", key, value, lease)

    async def update(self, key: str, value: bytes, *, expected_mod_revision: int | None,
                     lease: int = 0) -> KeyValue:
        return await self._call("update", key, value, expected_mod_revision, lease)

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        return await self._call("delete", key, expected_mod_revision)

    async def watch(self, prefix: str, *, start_revision: int = 0) -> RemoteWatch:
        if self._closed:
            raise UnavailableError("store is closed")
        if self._lost is not None:
            raise UnavailableError(self._lost)
        rid = next(self._ids)
        watch = RemoteWatch(self, rid)
        self._watches[rid] = watch  # before the reply: events may follow it in one read
        future = asyncio.get_running_loop().create_future()
        self._pending[rid] = (future, "watch")
        self._send([rid, "watch", (prefix, start_revision)])
        try:
            await asyncio.wait_for(future, self.call_timeout)
        except BaseException as exc:
            self._watches.pop(rid, None)
            self._pending.pop(rid, None)
            if isinstance(exc, asyncio.TimeoutError):
                raise UnavailableError("the store did not open a watch within "
                                       f"{self.call_timeout:g} s") from None
            raise
        return watch

    async def grant_lease(self, ttl: int) -> int:
        return await self._call("grant_lease", ttl)

    async def keep_alive(self, lease_id: int) -> int:
        return await self._call("keep_alive", lease_id)

    async def revoke_lease(self, lease_id: int) -> None:
        await self._call("revoke_lease", lease_id)

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        return await self._call("lease_info", lease_id)

    async def compact(self, revision: int) -> None:
        await self._call("compact", revision)

    async def current_revision(self) -> int:
        return await self._call("current_revision")

    async def compact_revision(self) -> int:
        return await self._call("compact_revision")

    async def close(self) -> None:
        """Close the connection (the store itself lives on in its process)."""
        if self._closed:
            return
        self._closed = True
        self._lose("store is closed")
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
        if self._writer is not None:
            if self._out is not None:
                self._out.flush()
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass
