"""Watches of the etcd backend: a gRPC Watch stream into a bounded buffer, resumed after a
connection loss.

Kubernetes v1.0 piece: pkg/tools/etcd_watcher.go (which v1.0 ran over etcd v2's wait=true
polling); here over etcd v3's Watch stream with prev_kv, the shape Kubernetes moved to.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

import aetcd
import grpc
import structlog
from aetcd import rpc

from .errors import CompactedError, StorageError, UnavailableError, WatchCancelledError
from .etcd_transport import METADATA, Endpoint, Op, is_connection_error
from .kv import Event

if TYPE_CHECKING:
    from .etcd_backend import EtcdStore

log = structlog.get_logger(component="storage", backend="etcd")



class EtcdWatch:
    """One prefix watch: a gRPC Watch stream feeding a bounded buffer, re-created after a
    connection loss from the last buffered revision + 1.

    etcd never splits one revision's events over two responses (without `fragment`), so
    resuming at "last buffered revision + 1" neither loses nor repeats an event. While the
    buffer is full the stream is not read (gRPC flow control pushes back on etcd); if it stays
    full for `stall_timeout` the watch ends with WatchCancelledError.
    """

    def __init__(
        self,
        store: EtcdStore,
        *,
        prefix: str,
        key: bytes,
        range_end: bytes,
        start_revision: int,
        buffer_size: int,
        stall_timeout: float,
    ) -> None:
        self._store = store
        self._prefix = prefix
        self._key = key
        self._range_end = range_end
        self._next_revision = start_revision
        self._buffer: collections.deque[Event] = collections.deque()
        self._buffer_size = buffer_size
        self._stall_timeout = stall_timeout
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._created = asyncio.Event()
        self._ended = False
        self._cancelled = False
        self._error: StorageError | None = None
        self._established = False
        self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def next_revision(self) -> int:
        """The revision the stream resumes from (last buffered event's revision + 1)."""
        return self._next_revision

    # -- consumer side ------------------------------------------------------------------------

    def __aiter__(self) -> "EtcdWatch":
        return self

    async def __anext__(self) -> Event:
        if not await self._wait_readable():
            raise StopAsyncIteration
        event = self._buffer.popleft()
        self._writable.set()
        return event

    async def next_batch(self) -> list[Event]:
        if not await self._wait_readable():
            return []
        batch = list(self._buffer)
        self._buffer.clear()
        self._writable.set()
        return batch

    async def _wait_readable(self) -> bool:
        """True once an event is buffered; False after cancel(); raises the ending error."""
        while not self._buffer:
            if self._ended:
                if self._error is not None and not self._cancelled:
                    raise self._error
                return False
            self._readable.clear()
            await self._readable.wait()
        return True

    async def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._buffer.clear()
        await self.terminate(None)

    # -- store side ---------------------------------------------------------------------------

    async def wait_created(self, timeout: float) -> None:
        """Wait until etcd has created the watch; raise (and end it) if that fails."""
        created = asyncio.ensure_future(self._created.wait())
        try:
            await asyncio.wait(
                [created, self._task], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            created.cancel()
        if self._created.is_set():
            return
        error = self._error or UnavailableError(f"watch {self._prefix}: etcd did not create it")
        await self.terminate(error)
        raise error

    async def terminate(self, error: StorageError | None) -> None:
        self._end(error)
        if self._task is not asyncio.current_task():
            self._task.cancel()
            await asyncio.wait([self._task])

    def _end(self, error: StorageError | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._readable.set()
        self._writable.set()
        self._store._watches.discard(self)

    async def _run(self) -> None:
        delay, reconnect = 0.05, False
        try:
            while True:
                endpoint = await self._store._current()
                self._established = False
                try:
                    await self._stream(endpoint, reconnect=reconnect)
                    reason = "stream ended"
                except grpc.aio.AioRpcError as exc:
                    if not is_connection_error(exc):
                        op = Op("watch", self._prefix, revision=self._next_revision)
                        raise await self._store._translate(exc, op) from None
                    reason = f"{exc.code().name}: {exc.details()}"
                except (grpc.aio.UsageError, aetcd.ClientError) as exc:
                    reason = str(exc)
                if self._established:
                    delay = 0.05  # it worked until now: retry quickly
                self._store._switch_from(endpoint, reason)
                # Warn once per outage; while etcd stays down, retries log at debug level.
                (log.debug if reconnect and not self._established else log.warning)(
                    "etcd watch lost, re-establishing",
                    prefix=self._prefix,
                    from_revision=self._next_revision,
                    reason=reason,
                    retry_in=delay,
                )
                reconnect = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        except StorageError as exc:
            self._end(exc)

    async def _stream(self, endpoint: Endpoint, *, reconnect: bool) -> None:
        create = rpc.WatchCreateRequest(
            key=self._key,
            range_end=self._range_end,
            start_revision=self._next_revision,
            prev_kv=True,
        )

        call = endpoint.watch_stub.Watch(metadata=METADATA)
        try:
            await call.write(rpc.WatchRequest(create_request=create))
            async for resp in call:
                if resp.compact_revision:
                    raise CompactedError(self._next_revision, resp.compact_revision)
                if resp.canceled:
                    raise WatchCancelledError(f"etcd cancelled the watch: {resp.cancel_reason}")
                if resp.created:
                    self._created.set()
                    self._established = True
                    if reconnect:
                        log.info(
                            "etcd watch re-established",
                            prefix=self._prefix,
                            from_revision=self._next_revision,
                            endpoint=endpoint.address,
                        )
                for pb in resp.events:
                    await self._push(self._store._event(pb))
        finally:
            call.cancel()

    async def _push(self, event: Event) -> None:
        while len(self._buffer) >= self._buffer_size:
            self._writable.clear()
            try:  # asyncio.timeout: 3.11's wait_for can swallow a racing cancellation
                async with asyncio.timeout(self._stall_timeout):
                    await self._writable.wait()
            except TimeoutError:
                raise WatchCancelledError(
                    f"watch {self._prefix}: consumer left its buffer of {self._buffer_size} "
                    f"events full for {self._stall_timeout:g} s"
                ) from None
            if self._ended:
                return
        self._buffer.append(event)
        self._next_revision = event.revision + 1
        self._readable.set()
