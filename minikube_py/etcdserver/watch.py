"""The Watch service: many watches multiplexed on one bidirectional stream.

etcd piece: etcdserver/api/v3rpc/watch.go (serverWatchStream: recvLoop and sendLoop) over
mvcc's watchable store. Each etcd watch is one store watch (Store.watch, a key prefix) plus a
filter for etcd's exact range ([key, range_end), one key, or every key >= key) and for the
NOPUT/NODELETE filters. What the client sees follows etcd:

- a create answers `created` (with the watch id) before any event of that watch;
- events arrive in revision order, the events of one revision in one response;
- a start revision below the compaction point (at create, or later for a watcher that fell
  out of the history) answers `compact_revision` with `canceled`, which clients report as
  "etcdserver: mvcc: required revision has been compacted";
- a progress request answers a response with watch id -1 whose header revision promises that
  no event at or below it is still to come — sent only while every watch of the stream is in
  sync, as etcd does; `progress_notify` watches get such a response every `progress_interval`
  seconds in which they sent nothing;
- `fragment` is accepted and ignored: responses are cut at revision boundaries instead.

Backpressure: event responses go through one queue of at most OUTGOING_QUEUE responses; a
pump that finds it full waits, its store watcher's buffer fills and the store sets it aside and
catches it up later (or cancels it after its stall timeout) — a slow client never grows
memory. Control responses (created, canceled, progress) never wait, so ending a stream can
never block on a client that stopped reading; a progress response is not sent while any pump
waits (it would overtake events it promises were sent).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import grpc
import structlog

from ..storage import (
    CompactedError,
    Event,
    EventType,
    StorageError,
    TxnStore,
    Watch,
)
from ..storage.txn_eval import in_range
from . import convert, metrics
from .errors import EtcdError
from .kv import Headers
from .messages import pb

log = structlog.get_logger(component="etcdserver")

NOPUT, NODELETE = 0, 1
#: etcd's watch progress notification interval (embed.DefaultWatchProgressNotifyInterval).
PROGRESS_INTERVAL = 600.0
#: Cut a response after this many value bytes (at a revision boundary): clients' default
#: receive limit is 4 MiB.
RESPONSE_BYTES = 1 << 20
OUTGOING_QUEUE = 256


def store_prefix(key: str, range_end: str) -> str:
    """The longest key prefix every key of etcd's range starts with (what Store.watch takes)."""
    if range_end == "":
        return key
    if range_end == "\0":
        return ""
    common = []
    for a, b in zip(key, range_end):
        if a != b:
            break
        common.append(a)
    return "".join(common)


class _WatchState:
    __slots__ = (
        "filters",
        "id",
        "key",
        "prev_kv",
        "progress_notify",
        "range_end",
        "sent_since_tick",
        "store_watch",
        "task",
    )

    def __init__(self, watch_id: int, create: Any, key: str, range_end: str) -> None:
        self.id = watch_id
        self.key = key
        self.range_end = range_end
        self.prev_kv = create.prev_kv
        self.filters = frozenset(create.filters)
        self.progress_notify = create.progress_notify
        self.store_watch: Watch | None = None
        self.task: asyncio.Task | None = None
        self.sent_since_tick = False

    def wants(self, event: Event) -> bool:
        if event.type is EventType.PUT and NOPUT in self.filters:
            return False
        if event.type is EventType.DELETE and NODELETE in self.filters:
            return False
        return in_range(event.kv.key, self.key, self.range_end)


class WatchStream:
    """One client stream: its watches, and the queue of responses to send."""

    def __init__(self, store: TxnStore, headers: Headers, progress_interval: float) -> None:
        self._store = store
        self._headers = headers
        self._progress_interval = progress_interval
        self._watches: dict[int, _WatchState] = {}
        self._ids = itertools.count()
        self.outgoing: asyncio.Queue[Any] = asyncio.Queue()
        self._room = asyncio.Event()
        self._waiting_pumps = 0

    async def serve(self, requests: AsyncIterator[Any]) -> None:
        """Read requests until the client closes its side; then end the response stream."""
        ticker = asyncio.create_task(self._tick())
        try:
            async for request in requests:
                which = request.WhichOneof("request_union")
                if which == "create_request":
                    await self._create(request.create_request)
                elif which == "cancel_request":
                    await self._cancel(request.cancel_request.watch_id, notify=True)
                elif which == "progress_request":
                    await self._progress(-1)
        finally:
            ticker.cancel()
            await self.close()
            self.outgoing.put_nowait(None)

    async def close(self) -> None:
        for watch_id in list(self._watches):
            await self._cancel(watch_id, notify=False)

    def _send(self, revision: int, **fields: Any) -> None:
        """Queue a control response (never waits)."""
        self.outgoing.put_nowait(pb.WatchResponse(header=self._headers(revision), **fields))

    async def _send_events(self, revision: int, **fields: Any) -> None:
        """Queue an event response, waiting while OUTGOING_QUEUE responses are unsent."""
        while self.outgoing.qsize() >= OUTGOING_QUEUE:
            self._waiting_pumps += 1
            try:
                self._room.clear()
                await self._room.wait()
            finally:
                self._waiting_pumps -= 1
        self._send(revision, **fields)

    def taken(self) -> None:
        """The handler took a response off the queue: wake pumps waiting for room."""
        if self.outgoing.qsize() < OUTGOING_QUEUE:
            self._room.set()

    async def _create(self, create: Any) -> None:
        try:
            key = convert.text(bytes(create.key) or b"\0")
            range_end = convert.text(create.range_end)
        except EtcdError as exc:
            self._send(await self._store.current_revision(), watch_id=-1, created=True,
                       canceled=True, cancel_reason=exc.message)
            return
        watch_id = create.watch_id or next(self._ids)
        while watch_id in self._watches and not create.watch_id:
            watch_id = next(self._ids)
        if watch_id in self._watches:
            self._send(await self._store.current_revision(), watch_id=watch_id,
                       created=True, canceled=True,
                       cancel_reason="etcdserver: duplicate watch ID provided on the WatchStream")
            return
        state = _WatchState(watch_id, create, key, range_end)
        revision = await self._store.current_revision()
        try:
            store_watch = await self._store.watch(
                store_prefix(key, range_end), start_revision=max(0, create.start_revision)
            )
        except CompactedError as exc:
            self._send(revision, watch_id=watch_id, created=True)
            self._send(revision, watch_id=watch_id, canceled=True,
                       compact_revision=exc.compact_revision)
            return
        except StorageError as exc:
            self._send(revision, watch_id=watch_id, created=True, canceled=True,
                       cancel_reason=f"etcdserver: {exc}")
            return
        state.store_watch = store_watch
        self._watches[watch_id] = state
        metrics.WATCHES["open"] += 1
        self._send(revision, watch_id=watch_id, created=True)
        state.task = asyncio.create_task(self._pump(state), name=f"etcd-watch-{watch_id}")

    def _forget(self, watch_id: int) -> _WatchState | None:
        state = self._watches.pop(watch_id, None)
        if state is not None:
            metrics.WATCHES["open"] -= 1
        return state

    async def _cancel(self, watch_id: int, *, notify: bool) -> None:
        state = self._forget(watch_id)
        if state is None:
            return
        if state.task is not None and state.task is not asyncio.current_task():
            state.task.cancel()
        if state.store_watch is not None:
            await state.store_watch.cancel()
        if notify:
            self._send(await self._store.current_revision(), watch_id=watch_id, canceled=True)

    async def _pump(self, state: _WatchState) -> None:
        assert state.store_watch is not None
        try:
            while True:
                batch = await state.store_watch.next_batch()
                if not batch:
                    return
                for revision, events in _responses(batch, state):
                    state.sent_since_tick = True
                    await self._send_events(revision, watch_id=state.id, events=events)
        except CompactedError as exc:
            self._forget(state.id)
            self._send(await self._store.current_revision(), watch_id=state.id,
                       canceled=True, compact_revision=exc.compact_revision)
        except StorageError as exc:
            self._forget(state.id)
            log.info("etcd_watch.ended", watch_id=state.id, reason=str(exc))
            self._send(0, watch_id=state.id, canceled=True, cancel_reason=f"etcdserver: {exc}")

    async def _progress(self, watch_id: int) -> bool:
        """Send a progress response if every watch is in sync; returns whether it did."""
        revision = await self._store.progress_revision()
        await asyncio.sleep(0)  # let pumps woken by events <= revision queue them first
        if self._waiting_pumps or not all(
                getattr(s.store_watch, "synced", True) for s in self._watches.values()):
            return False
        self._send(revision, watch_id=watch_id)
        return True

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self._progress_interval)
            for state in list(self._watches.values()):
                if state.progress_notify and not state.sent_since_tick:
                    await self._progress(state.id)
                state.sent_since_tick = False


def _responses(batch: list[Event], state: _WatchState) -> list[tuple[int, list[Any]]]:
    """The batch's wanted events as responses: (header revision, events), cut at revision
    boundaries once RESPONSE_BYTES of values have accumulated."""
    out: list[tuple[int, list[Any]]] = []
    current: list[Any] = []
    size = 0
    last_revision = 0
    for event in batch:
        if not state.wants(event):
            continue
        revision = event.kv.mod_revision
        if current and size >= RESPONSE_BYTES and revision != last_revision:
            out.append((last_revision, current))
            current, size = [], 0
        current.append(convert.event_message(event, prev_kv=state.prev_kv))
        size += len(event.kv.value) + (len(event.prev_kv.value) if event.prev_kv else 0)
        last_revision = revision
    if current:
        out.append((last_revision, current))
    return out


class WatchService:
    def __init__(self, store: TxnStore, headers: Headers, *,
                 progress_interval: float = PROGRESS_INTERVAL) -> None:
        self._store = store
        self._headers = headers
        self._progress_interval = progress_interval

    async def Watch(self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext):
        stream = WatchStream(self._store, self._headers, self._progress_interval)
        reader = asyncio.create_task(stream.serve(requests), name="etcd-watch-stream")
        try:
            while True:
                response = await stream.outgoing.get()
                stream.taken()
                if response is None:
                    return
                yield response
        finally:
            reader.cancel()
            try:
                await reader
            except asyncio.CancelledError:
                pass  # we cancelled it: the client went away or the server is stopping
            except Exception as exc:  # noqa: BLE001 - the stream is gone; say why
                log.info("etcd_watch.stream_failed", error=repr(exc))
            await stream.close()
