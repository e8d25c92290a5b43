"""EtcdStore: the Store contract over a real etcd v3 cluster (through aetcd's gRPC stubs).

Kubernetes v1.0 piece: pkg/tools/etcd_helper.go over the etcd client — the same Store the
embedded MVCC store implements, so `--storage=etcd` runs the control plane on a real etcd and
both backends pass one conformance suite.

Why it talks to aetcd's raw stubs rather than its high-level methods (see
/work/shared/reference/etcd-client.md): aetcd 1.0 drops `limit`/`revision` from Range requests,
hands back one unbounded queue per watch, resumes no watch after a connection loss and knows
one endpoint only. So this module builds the protobuf requests itself and adds:

- failover over several endpoints: a request that fails for connection reasons moves the store
  to the next endpoint and is retried there — but only when a retry cannot apply a write twice:
  reads, keep-alives and compare-and-swap writes (whose unknown outcome is settled by re-reading
  the key), or any request that surely never left (connection refused);
- watches that survive a connection loss: re-created from the last buffered revision + 1 on the
  next endpoint, with backoff, until the store closes; a compacted resume point ends the watch
  with CompactedError, exactly like a fresh watch would;
- one error vocabulary: every gRPC/aetcd failure becomes a StorageError subtype.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable, TypeVar

import aetcd
import grpc
import structlog
from aetcd import rpc
from aetcd.rpc import kv_pb2

from .continuation import decode_continue, encode_continue
from .errors import (
    MAX_VALUE_BYTES,
    CompactedError,
    ConflictError,
    FutureRevisionError,
    InvalidContinueError,
    KeyExistsError,
    KeyNotFoundError,
    LeaseNotFoundError,
    StorageError,
    UnavailableError,
    ValueTooLargeError,
    WatchCancelledError,
)
from .kv import Event, EventType, KeyValue, LeaseInfo, RangeResult

log = structlog.get_logger(component="storage", backend="etcd")

T = TypeVar("T")
from .etcd_transport import (
    CONNECTION_CODES,
    METADATA,
    PROBE_KEY,
    Endpoint,
    Op,
    OutcomeUnknown,
    bytes_prefix_end,
    is_compacted,
    is_connection_error,
    is_future,
    surely_unsent,
)
from .etcd_watch import EtcdWatch

# ---------------------------------------------------------------------------------------------
# The store


class EtcdStore:
    """The Store protocol over etcd v3. Open with `await EtcdStore.connect([...])`."""

    def __init__(
        self,
        endpoints: list[str],
        *,
        key_prefix: str,
        timeout: float,
        retry_timeout: float,
        watch_buffer_size: int,
        watch_stall_timeout: float,
    ) -> None:
        if not endpoints:
            raise ValueError("EtcdStore needs at least one endpoint")
        self._endpoints = [Endpoint(e, timeout=timeout) for e in endpoints]
        self._active = 0
        self._prefix = key_prefix.encode()
        self._timeout = timeout
        self._retry_timeout = retry_timeout
        self._watch_buffer_size = watch_buffer_size
        self._watch_stall_timeout = watch_stall_timeout
        self._watches: set[EtcdWatch] = set()
        self._known_compact_revision = 0
        self._closed = False

    @classmethod
    async def connect(
        cls,
        endpoints: list[str],
        *,
        key_prefix: str = "",
        timeout: float = 5.0,
        retry_timeout: float | None = None,
        watch_buffer_size: int = 10_000,
        watch_stall_timeout: float = 60.0,
    ) -> "EtcdStore":
        """Open a store on `endpoints` ("host:port" or "http://host:port") and check that one
        answers (else UnavailableError). `timeout` bounds each request; `retry_timeout`
        (default 2 × timeout) bounds failover retries of one operation.

        `key_prefix` is prepended to every key sent and stripped from every key returned, so
        several clusters share one etcd. It is a plain string prefix: stores on "/a" and "/ab"
        overlap for `range("")`, so do not let one prefix extend another."""
        store = cls(
            endpoints,
            key_prefix=key_prefix,
            timeout=timeout,
            retry_timeout=2 * timeout if retry_timeout is None else retry_timeout,
            watch_buffer_size=watch_buffer_size,
            watch_stall_timeout=watch_stall_timeout,
        )
        try:
            revision = await store.current_revision()
        except BaseException:
            await store.close()
            raise
        log.info("etcd store connected", endpoint=store.endpoint, revision=revision)
        return store

    @property
    def endpoint(self) -> str:
        """The endpoint requests go to now ("host:port")."""
        return self._endpoints[self._active].address

    # -- keys and values ----------------------------------------------------------------------

    def _key(self, key: str) -> bytes:
        return self._prefix + key.encode()

    def _start_key(self, prefix: str) -> bytes:
        """First key of a range or watch; etcd refuses an empty key, b"\\0" is the lowest."""
        return self._key(prefix) or b"\x00"

    def _range_end(self, prefix: str) -> bytes:
        return bytes_prefix_end(self._key(prefix))

    def _kv(self, pb: kv_pb2.KeyValue) -> KeyValue:
        return KeyValue(
            key=pb.key[len(self._prefix) :].decode(),
            value=bytes(pb.value),
            create_revision=pb.create_revision,
            mod_revision=pb.mod_revision,
            version=pb.version,
            lease=pb.lease,
        )

    def _event(self, pb: kv_pb2.Event) -> Event:
        prev = self._kv(pb.prev_kv) if pb.HasField("prev_kv") else None
        kind = EventType.DELETE if pb.type == kv_pb2.Event.DELETE else EventType.PUT
        return Event(kind, self._kv(pb.kv), prev)

    # -- request machinery --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise UnavailableError("etcd store is closed")

    async def _current(self) -> Endpoint:
        self._check_open()
        return await self._endpoints[self._active].ready()

    def _switch_from(self, failed: Endpoint, reason: str) -> None:
        """Move to the next endpoint, unless another request already moved away from `failed`."""
        if self._endpoints[self._active] is not failed or len(self._endpoints) == 1:
            return
        self._active = (self._active + 1) % len(self._endpoints)
        log.warning(
            "etcd endpoint failed, switching",
            failed=failed.address,
            endpoint=self.endpoint,
            reason=reason,
        )

    async def _call(
        self, op: Op, fn: Callable[[Endpoint], Awaitable[T]], *, safe: bool
    ) -> T:
        """Run `fn` on the current endpoint; on a connection failure switch endpoints and, if
        `safe` (or the request surely never left), retry with backoff for up to
        retry_timeout. An unsafe request whose outcome is unknown raises OutcomeUnknown."""
        deadline = time.monotonic() + self._retry_timeout
        attempts, delay = 0, 0.05
        while True:
            endpoint = await self._current()
            try:
                return await fn(endpoint)
            except grpc.aio.AioRpcError as exc:
                if not is_connection_error(exc):
                    raise await self._translate(exc, op) from None
                self._switch_from(endpoint, f"{exc.code().name}: {exc.details()}")
                if not (safe or surely_unsent(exc)):
                    raise OutcomeUnknown(op, exc) from None
                last = f"{exc.code().name}: {exc.details()}"
            except (grpc.aio.UsageError, aetcd.ClientError) as exc:
                self._check_open()
                last = str(exc)
            attempts += 1
            if attempts % len(self._endpoints) == 0:
                if time.monotonic() + delay > deadline:
                    raise UnavailableError(f"{op.name}: no etcd endpoint answers ({last})")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _translate(self, exc: grpc.aio.AioRpcError, op: Op) -> StorageError:
        details = exc.details() or ""
        if is_compacted(exc):
            return CompactedError(op.revision, await self._compact_revision_or(0))
        if is_future(exc):
            return FutureRevisionError(op.revision, await self._current_revision_or(0))
        if "lease not found" in details:
            return LeaseNotFoundError(op.lease)
        if "request is too large" in details or exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return ValueTooLargeError(op.key, op.size)
        if exc.code() in CONNECTION_CODES:
            return UnavailableError(f"{op.name}: {details}")
        return StorageError(f"{op.name} {op.key}: etcd error {exc.code().name}: {details}")

    async def _compact_revision_or(self, default: int) -> int:
        try:
            return await self.compact_revision()
        except StorageError:
            return default

    async def _current_revision_or(self, default: int) -> int:
        try:
            return await self.current_revision()
        except StorageError:
            return default

    async def _range(self, op: Op, request: rpc.RangeRequest) -> rpc.RangeResponse:
        async def fn(ep: Endpoint) -> rpc.RangeResponse:
            return await ep.kv.Range(request, timeout=self._timeout, metadata=METADATA)

        return await self._call(op, fn, safe=True)

    async def _txn(self, op: Op, request: rpc.TxnRequest, *, safe: bool) -> rpc.TxnResponse:
        async def fn(ep: Endpoint) -> rpc.TxnResponse:
            return await ep.kv.Txn(request, timeout=self._timeout, metadata=METADATA)

        return await self._call(op, fn, safe=safe)

    # -- reads --------------------------------------------------------------------------------

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        op = Op("get", key=key, revision=revision)
        resp = await self._range(op, rpc.RangeRequest(key=self._key(key), revision=revision))
        if not resp.kvs:
            raise KeyNotFoundError(key)
        return self._kv(resp.kvs[0])

    async def _get_or_none(self, key: str) -> KeyValue | None:
        try:
            return await self.get(key)
        except KeyNotFoundError:
            return None

    async def range(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_token: str | None = None,
        revision: int = 0,
    ) -> RangeResult:
        start = prefix
        if continue_token is not None:
            start, token_revision = decode_continue(continue_token, prefix=prefix)
            if revision not in (0, token_revision):
                raise InvalidContinueError(
                    f"continue token is for revision {token_revision}, not {revision}"
                )
            revision = token_revision
        request = rpc.RangeRequest(
            key=self._start_key(start),
            range_end=self._range_end(prefix),
            limit=limit,
            revision=revision,
        )
        resp = await self._range(Op("range", key=prefix, revision=revision), request)
        # A Range at a past revision still reports the current one in its header.
        read_revision = revision or resp.header.revision
        kvs = [self._kv(pb) for pb in resp.kvs]
        token = None
        if resp.more and kvs:
            token = encode_continue(
                prefix=prefix, next_key=kvs[-1].key + "\x00", revision=read_revision
            )
        return RangeResult(
            kvs=kvs,
            revision=read_revision,
            more=bool(resp.more),
            continue_token=token,
            remaining=resp.count - len(kvs),
        )

    async def current_revision(self) -> int:
        request = rpc.RangeRequest(key=PROBE_KEY, count_only=True)
        resp = await self._range(Op("current_revision"), request)
        return resp.header.revision

    async def compact_revision(self) -> int:
        """0 if a Range at revision 1 works; otherwise a watch from revision 1 on an unused key
        is cancelled by etcd with the compaction revision (a Range error carries no number)."""

        async def fn(ep: Endpoint) -> int:
            # The compaction point only moves up: if the last one seen is still readable, it
            # is still the compaction point (a revision below it never is readable).
            known = self._known_compact_revision
            request = rpc.RangeRequest(key=PROBE_KEY, revision=max(known, 1), count_only=True)
            try:
                await ep.kv.Range(request, timeout=self._timeout, metadata=METADATA)
                return known
            except grpc.aio.AioRpcError as exc:
                if not is_compacted(exc):
                    raise
            return await self._probe_compaction(ep)

        revision = await self._call(Op("compact_revision"), fn, safe=True)
        self._known_compact_revision = max(self._known_compact_revision, revision)
        return revision

    async def _probe_compaction(self, ep: Endpoint) -> int:
        create = rpc.WatchCreateRequest(key=PROBE_KEY, start_revision=1)
        call = ep.watch_stub.Watch(timeout=self._timeout, metadata=METADATA)
        try:
            await call.write(rpc.WatchRequest(create_request=create))
            async for resp in call:
                if resp.compact_revision:
                    return resp.compact_revision
                if resp.canceled:
                    break
        finally:
            call.cancel()
        raise StorageError("etcd did not report the compaction revision")

    # -- writes -------------------------------------------------------------------------------

    def _check_size(self, key: str, value: bytes) -> None:
        if len(value) > MAX_VALUE_BYTES:
            raise ValueTooLargeError(key, len(value))

    def _put_op(self, key: str, value: bytes, lease: int) -> rpc.RequestOp:
        put = rpc.PutRequest(key=self._key(key), value=value, lease=lease, prev_kv=True)
        return rpc.RequestOp(request_put=put)

    def _get_op(self, key: str) -> rpc.RequestOp:
        return rpc.RequestOp(request_range=rpc.RangeRequest(key=self._key(key)))

    def _mod_compare(self, key: str, expected: int | None) -> rpc.Compare:
        """mod == expected, or (None) mod > 0, which is "the key exists"."""
        result = rpc.Compare.GREATER if expected is None else rpc.Compare.EQUAL
        return rpc.Compare(
            key=self._key(key), target=rpc.Compare.MOD, result=result, mod_revision=expected or 0
        )

    def _failure_current(self, resp: rpc.TxnResponse) -> KeyValue | None:
        kvs = resp.responses[0].response_range.kvs
        return self._kv(kvs[0]) if kvs else None

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        self._check_size(key, value)
        op = Op("create", key=key, lease=lease, size=len(value))
        request = rpc.TxnRequest(
            compare=[self._mod_compare(key, 0)],
            success=[self._put_op(key, value, lease)],
            failure=[self._get_op(key)],
        )
        unknown = False
        while True:
            try:
                resp = await self._txn(op, request, safe=False)
            except OutcomeUnknown:
                unknown = True
                current = await self._get_or_none(key)
                if current is None:
                    continue  # it did not land: creating again is safe
                resp = None
            else:
                current = None if resp.succeeded else self._failure_current(resp)
            if resp is not None and resp.succeeded:
                rev = resp.header.revision
                return KeyValue(key, value, rev, rev, 1, lease)
            if unknown and current is not None and _is_ours(current, value, lease, version=1):
                log.info("create landed despite a connection failure", key=key)
                return current
            raise KeyExistsError(key, current)

    async def update(
        self,
        key: str,
        value: bytes,
        *,
        expected_mod_revision: int | None,
        lease: int = 0,
    ) -> KeyValue:
        self._check_size(key, value)
        op = Op("update", key=key, lease=lease, size=len(value))
        request = rpc.TxnRequest(
            compare=[self._mod_compare(key, expected_mod_revision)],
            success=[self._put_op(key, value, lease)],
            failure=[self._get_op(key)],
        )
        cas = expected_mod_revision is not None
        resp, current, unknown = await self._cas(op, request, cas=cas)
        if resp is not None and resp.succeeded:
            prev = resp.responses[0].response_put.prev_kv
            return KeyValue(
                key, value, prev.create_revision, resp.header.revision, prev.version + 1, lease
            )
        if current is None:
            raise KeyNotFoundError(key)
        if unknown and current.value == value and current.mod_revision > expected_mod_revision:
            log.info("update landed despite a connection failure", key=key)
            return current
        raise ConflictError(key, expected_mod_revision or 0, current)

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        op = Op("delete", key=key)
        delete = rpc.DeleteRangeRequest(key=self._key(key), prev_kv=True)
        request = rpc.TxnRequest(
            compare=[self._mod_compare(key, expected_mod_revision)],
            success=[rpc.RequestOp(request_delete_range=delete)],
            failure=[self._get_op(key)],
        )
        resp, current, unknown = await self._cas(op, request, cas=expected_mod_revision is not None)
        if resp is not None and resp.succeeded:
            return self._kv(resp.responses[0].response_delete_range.prev_kvs[0])
        if unknown and (current is None or current.create_revision > expected_mod_revision):
            # Gone (or re-created since): the delete landed; return what it deleted.
            log.info("delete landed despite a connection failure", key=key)
            try:
                return await self.get(key, revision=expected_mod_revision)
            except StorageError as exc:
                raise UnavailableError(f"delete {key}: landed, but its value is gone") from exc
        if current is None:
            raise KeyNotFoundError(key)
        raise ConflictError(key, expected_mod_revision or 0, current)

    async def _cas(
        self, op: Op, request: rpc.TxnRequest, *, cas: bool
    ) -> tuple[rpc.TxnResponse | None, KeyValue | None, bool]:
        """Run an update/delete Txn. Returns (response or None, current value on failure,
        whether an attempt's outcome was unknown). A CAS (`cas`) whose outcome is unknown is
        settled by re-reading: still at the expected revision means it did not land, so it is
        sent again; otherwise the caller decides from the current value. Without a CAS an
        unknown outcome cannot be settled and is reported as UnavailableError."""
        expected = request.compare[0].mod_revision
        unknown = False
        while True:
            try:
                resp = await self._txn(op, request, safe=False)
            except OutcomeUnknown as exc:
                if not cas:
                    raise UnavailableError(str(exc)) from None
                unknown = True
                current = await self._get_or_none(op.key)
                if current is not None and current.mod_revision == expected:
                    continue
                return None, current, unknown
            if resp.succeeded:
                return resp, None, unknown
            return resp, self._failure_current(resp), unknown

    # -- watch --------------------------------------------------------------------------------

    async def watch(self, prefix: str, *, start_revision: int = 0) -> "EtcdWatch":
        if start_revision <= 0:
            start_revision = await self.current_revision() + 1
        else:
            await self._check_watchable(start_revision)
        watch = EtcdWatch(
            self,
            prefix=prefix,
            key=self._start_key(prefix),
            range_end=self._range_end(prefix),
            start_revision=start_revision,
            buffer_size=self._watch_buffer_size,
            stall_timeout=self._watch_stall_timeout,
        )
        self._watches.add(watch)
        await watch.wait_created(self._timeout + self._retry_timeout)
        return watch

    async def _check_watchable(self, revision: int) -> None:
        """CompactedError now if `revision` is compacted (etcd would cancel the watch ~100 ms
        after creating it); a future revision is fine for a watch."""
        try:
            await self._range(
                Op("watch", revision=revision),
                rpc.RangeRequest(key=PROBE_KEY, revision=revision, count_only=True),
            )
        except FutureRevisionError:
            pass

    # -- leases -------------------------------------------------------------------------------

    async def grant_lease(self, ttl: int) -> int:
        """Retried after a failover even if the first grant may have landed: an orphan lease
        has no keys and expires on its own."""

        async def fn(ep: Endpoint) -> rpc.LeaseGrantResponse:
            request = rpc.LeaseGrantRequest(TTL=ttl)
            return await ep.lease.LeaseGrant(request, timeout=self._timeout, metadata=METADATA)

        resp = await self._call(Op("grant_lease"), fn, safe=True)
        if resp.error:
            raise StorageError(f"grant_lease: {resp.error}")
        return resp.ID

    async def keep_alive(self, lease_id: int) -> int:
        async def fn(ep: Endpoint) -> rpc.LeaseKeepAliveResponse:
            call = ep.lease.LeaseKeepAlive(timeout=self._timeout, metadata=METADATA)
            try:
                await call.write(rpc.LeaseKeepAliveRequest(ID=lease_id))
                await call.done_writing()
                async for resp in call:
                    return resp
            finally:
                call.cancel()
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(),
                "keep-alive stream ended without an answer",
            )

        resp = await self._call(Op("keep_alive", lease=lease_id), fn, safe=True)
        if resp.TTL <= 0:
            raise LeaseNotFoundError(lease_id)
        return resp.TTL

    async def revoke_lease(self, lease_id: int) -> None:
        """Revoking is idempotent in effect: after a failover with an unknown outcome it is
        sent again, and "not found" then means the first attempt did it."""
        op = Op("revoke_lease", lease=lease_id)

        async def fn(ep: Endpoint) -> rpc.LeaseRevokeResponse:
            request = rpc.LeaseRevokeRequest(ID=lease_id)
            return await ep.lease.LeaseRevoke(request, timeout=self._timeout, metadata=METADATA)

        try:
            await self._call(op, fn, safe=False)
        except OutcomeUnknown:
            try:
                await self._call(op, fn, safe=True)
            except LeaseNotFoundError:
                log.info("lease revoke landed despite a connection failure", lease=lease_id)

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        async def fn(ep: Endpoint) -> rpc.LeaseTimeToLiveResponse:
            request = rpc.LeaseTimeToLiveRequest(ID=lease_id, keys=True)
            return await ep.lease.LeaseTimeToLive(
                request, timeout=self._timeout, metadata=METADATA
            )

        resp = await self._call(Op("lease_info", lease=lease_id), fn, safe=True)
        if resp.TTL < 0:
            raise LeaseNotFoundError(lease_id)
        keys = tuple(
            k[len(self._prefix) :].decode() for k in resp.keys if k.startswith(self._prefix)
        )
        return LeaseInfo(id=lease_id, ttl=resp.grantedTTL, remaining=float(resp.TTL), keys=keys)

    # -- compaction and lifecycle -------------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Compaction is idempotent in effect: retried after a failover, and "already
        compacted" then means the first attempt did it."""
        op = Op("compact", revision=revision)

        async def fn(ep: Endpoint) -> rpc.CompactionResponse:
            request = rpc.CompactionRequest(revision=revision, physical=True)
            return await ep.kv.Compact(request, timeout=self._timeout, metadata=METADATA)

        try:
            await self._call(op, fn, safe=False)
        except OutcomeUnknown:
            try:
                await self._call(op, fn, safe=True)
            except CompactedError as exc:
                if exc.compact_revision != revision:
                    raise
        self._known_compact_revision = max(self._known_compact_revision, revision)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for watch in list(self._watches):
            await watch.terminate(WatchCancelledError("etcd store closed"))
        for endpoint in self._endpoints:
            await endpoint.close()
        log.info("etcd store closed")


def _is_ours(current: KeyValue, value: bytes, lease: int, *, version: int) -> bool:
    return current.value == value and current.lease == lease and current.version == version
