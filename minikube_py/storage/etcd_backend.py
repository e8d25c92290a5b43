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
import collections
import dataclasses
import time
from typing import Awaitable, Callable, TypeVar

import aetcd
import grpc
import structlog
from aetcd import rpc
from aetcd.rpc import kv_pb2

from .continuation import decode_continue, encode_continue
from .errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    InvalidContinueError,
    KeyExistsError,
    KeyNotFoundError,
    LeaseNotFoundError,
    MAX_VALUE_BYTES,
    StorageError,
    UnavailableError,
    ValueTooLargeError,
    WatchCancelledError,
)
from .kv import Event, EventType, KeyValue, LeaseInfo, RangeResult

log = structlog.get_logger(component="storage", backend="etcd")

T = TypeVar("T")

#: Ask etcd to refuse (rather than hang) requests and close watch streams on a member that has
#: lost its leader, so failover moves on instead of waiting out the timeout (clientv3 does this).
_METADATA = (("hasleader", "true"),)
#: Fast reconnects (a restarted member is used again within a second) and no 4 MiB cap on
#: responses (a large List is one Range response).
_CHANNEL_OPTIONS = {
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.min_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000,
    "grpc.max_receive_message_length": -1,
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 5_000,
}
#: A key nothing writes: target of the probes that find the compaction revision.
_PROBE_KEY = b"\x00minikube-py/compact-probe"
#: UNAVAILABLE details that mean the request never reached raft: no connection could be made,
#: or the member refused it up front for lack of a leader (the "hasleader" metadata).
_UNSENT = ("failed to connect to all addresses", "Connection refused", "etcdserver: no leader")
_CONNECTION_CODES = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}


# ---------------------------------------------------------------------------------------------
# gRPC error classification (pure)


def _is_connection_error(exc: grpc.aio.AioRpcError) -> bool:
    """The endpoint failed (down, unreachable, leaderless, too slow), not the request."""
    if exc.code() in _CONNECTION_CODES:
        return True
    details = exc.details() or ""
    return exc.code() in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL) and any(
        s in details for s in ("Stream removed", "RST_STREAM", "Socket closed")
    )


def _surely_unsent(exc: grpc.aio.AioRpcError) -> bool:
    """True when the request cannot have reached etcd's raft log, so any retry is safe."""
    details = exc.details() or ""
    return exc.code() == grpc.StatusCode.UNAVAILABLE and any(s in details for s in _UNSENT)


def _is_compacted(exc: grpc.aio.AioRpcError) -> bool:
    return exc.code() == grpc.StatusCode.OUT_OF_RANGE and "compacted" in (exc.details() or "")


def _is_future(exc: grpc.aio.AioRpcError) -> bool:
    return exc.code() == grpc.StatusCode.OUT_OF_RANGE and "future revision" in (exc.details() or "")


def _bytes_prefix_end(prefix: bytes) -> bytes:
    """etcd's range_end for a prefix: bump the last byte below 0xff; b"\\0" means "to the end"."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b"\x00"
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def _endpoint_address(endpoint: str) -> tuple[str, int]:
    address = endpoint.removeprefix("http://").rstrip("/")
    if "://" in address:
        raise ValueError(f"unsupported etcd endpoint {endpoint!r} (only http:// or host:port)")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"etcd endpoint {endpoint!r} is not host:port")
    return host, int(port)


@dataclasses.dataclass(frozen=True)
class _Op:
    """What an error needs to be told precisely: the operation and its key/revision/lease."""

    name: str
    key: str = ""
    revision: int = 0
    lease: int = 0
    size: int = 0


class _OutcomeUnknown(Exception):
    """A write failed for connection reasons after it may have reached etcd."""

    def __init__(self, op: _Op, exc: grpc.aio.AioRpcError) -> None:
        super().__init__(f"{op.name} {op.key}: outcome unknown: {exc.details()}")
        self.op = op


# ---------------------------------------------------------------------------------------------
# Endpoints


class _Endpoint:
    """One etcd member: an aetcd client (its gRPC channel and stubs), connected lazily."""

    def __init__(self, endpoint: str, *, timeout: float) -> None:
        host, port = _endpoint_address(endpoint)
        self.address = f"{host}:{port}"
        self.client = aetcd.Client(host=host, port=port, timeout=timeout, options=_CHANNEL_OPTIONS)
        self.watch_stub: rpc.WatchStub | None = None

    async def ready(self) -> "_Endpoint":
        # Creating the channel does no network I/O; the first RPC connects.
        await self.client.connect()
        if self.watch_stub is None:
            self.watch_stub = rpc.WatchStub(self.client.channel)
        return self

    @property
    def kv(self) -> rpc.KVStub:
        return self.client.kvstub

    @property
    def lease(self) -> rpc.LeaseStub:
        return self.client.leasestub

    async def close(self) -> None:
        try:
            await self.client.close()
        except Exception:  # noqa: BLE001 - closing a broken channel must not fail close()
            pass
        self.watch_stub = None


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
        self._endpoints = [_Endpoint(e, timeout=timeout) for e in endpoints]
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
        return _bytes_prefix_end(self._key(prefix))

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

    async def _current(self) -> _Endpoint:
        self._check_open()
        return await self._endpoints[self._active].ready()

    def _switch_from(self, failed: _Endpoint, reason: str) -> None:
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
        self, op: _Op, fn: Callable[[_Endpoint], Awaitable[T]], *, safe: bool
    ) -> T:
        """Run `fn` on the current endpoint; on a connection failure switch endpoints and, if
        `safe` (or the request surely never left), retry with backoff for up to
        retry_timeout. An unsafe request whose outcome is unknown raises _OutcomeUnknown."""
        deadline = time.monotonic() + self._retry_timeout
        attempts, delay = 0, 0.05
        while True:
            endpoint = await self._current()
            try:
                return await fn(endpoint)
            except grpc.aio.AioRpcError as exc:
                if not _is_connection_error(exc):
                    raise await self._translate(exc, op) from None
                self._switch_from(endpoint, f"{exc.code().name}: {exc.details()}")
                if not (safe or _surely_unsent(exc)):
                    raise _OutcomeUnknown(op, exc) from None
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

    async def _translate(self, exc: grpc.aio.AioRpcError, op: _Op) -> StorageError:
        details = exc.details() or ""
        if _is_compacted(exc):
            return CompactedError(op.revision, await self._compact_revision_or(0))
        if _is_future(exc):
            return FutureRevisionError(op.revision, await self._current_revision_or(0))
        if "lease not found" in details:
            return LeaseNotFoundError(op.lease)
        if "request is too large" in details or exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return ValueTooLargeError(op.key, op.size)
        if exc.code() in _CONNECTION_CODES:
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

    async def _range(self, op: _Op, request: rpc.RangeRequest) -> rpc.RangeResponse:
        async def fn(ep: _Endpoint) -> rpc.RangeResponse:
            return await ep.kv.Range(request, timeout=self._timeout, metadata=_METADATA)

        return await self._call(op, fn, safe=True)

    async def _txn(self, op: _Op, request: rpc.TxnRequest, *, safe: bool) -> rpc.TxnResponse:
        async def fn(ep: _Endpoint) -> rpc.TxnResponse:
            return await ep.kv.Txn(request, timeout=self._timeout, metadata=_METADATA)

        return await self._call(op, fn, safe=safe)

    # -- reads --------------------------------------------------------------------------------

    async def get(self, key: str, *, revision: int = 0) -> KeyValue:
        op = _Op("get", key=key, revision=revision)
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
        resp = await self._range(_Op("range", key=prefix, revision=revision), request)
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
        request = rpc.RangeRequest(key=_PROBE_KEY, count_only=True)
        resp = await self._range(_Op("current_revision"), request)
        return resp.header.revision

    async def compact_revision(self) -> int:
        """0 if a Range at revision 1 works; otherwise a watch from revision 1 on an unused key
        is cancelled by etcd with the compaction revision (a Range error carries no number)."""

        async def fn(ep: _Endpoint) -> int:
            # The compaction point only moves up: if the last one seen is still readable, it
            # is still the compaction point (a revision below it never is readable).
            known = self._known_compact_revision
            request = rpc.RangeRequest(key=_PROBE_KEY, revision=max(known, 1), count_only=True)
            try:
                await ep.kv.Range(request, timeout=self._timeout, metadata=_METADATA)
                return known
            except grpc.aio.AioRpcError as exc:
                if not _is_compacted(exc):
                    raise
            return await self._probe_compaction(ep)

        revision = await self._call(_Op("compact_revision"), fn, safe=True)
        self._known_compact_revision = max(self._known_compact_revision, revision)
        return revision

    async def _probe_compaction(self, ep: _Endpoint) -> int:
        create = rpc.WatchCreateRequest(key=_PROBE_KEY, start_revision=1)
        call = ep.watch_stub.Watch(timeout=self._timeout, metadata=_METADATA)
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
        op = _Op("create", key=key, lease=lease, size=len(value))
        request = rpc.TxnRequest(
            compare=[self._mod_compare(key, 0)],
            success=[self._put_op(key, value, lease)],
            failure=[self._get_op(key)],
        )
        unknown = False
        while True:
            try:
                resp = await self._txn(op, request, safe=False)
            except _OutcomeUnknown:
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
        op = _Op("update", key=key, lease=lease, size=len(value))
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
        op = _Op("delete", key=key)
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
        self, op: _Op, request: rpc.TxnRequest, *, cas: bool
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
            except _OutcomeUnknown as exc:
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
                _Op("watch", revision=revision),
                rpc.RangeRequest(key=_PROBE_KEY, revision=revision, count_only=True),
            )
        except FutureRevisionError:
            pass

    # -- leases -------------------------------------------------------------------------------

    async def grant_lease(self, ttl: int) -> int:
        """Retried after a failover even if the first grant may have landed: an orphan lease
        has no keys and expires on its own."""

        async def fn(ep: _Endpoint) -> rpc.LeaseGrantResponse:
            request = rpc.LeaseGrantRequest(TTL=ttl)
            return await ep.lease.LeaseGrant(request, timeout=self._timeout, metadata=_METADATA)

        resp = await self._call(_Op("grant_lease"), fn, safe=True)
        if resp.error:
            raise StorageError(f"grant_lease: {resp.error}")
        return resp.ID

    async def keep_alive(self, lease_id: int) -> int:
        async def fn(ep: _Endpoint) -> rpc.LeaseKeepAliveResponse:
            call = ep.lease.LeaseKeepAlive(timeout=self._timeout, metadata=_METADATA)
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

        resp = await self._call(_Op("keep_alive", lease=lease_id), fn, safe=True)
        if resp.TTL <= 0:
            raise LeaseNotFoundError(lease_id)
        return resp.TTL

    async def revoke_lease(self, lease_id: int) -> None:
        """Revoking is idempotent in effect: after a failover with an unknown outcome it is
        sent again, and "not found" then means the first attempt did it."""
        op = _Op("revoke_lease", lease=lease_id)

        async def fn(ep: _Endpoint) -> rpc.LeaseRevokeResponse:
            request = rpc.LeaseRevokeRequest(ID=lease_id)
            return await ep.lease.LeaseRevoke(request, timeout=self._timeout, metadata=_METADATA)

        try:
            await self._call(op, fn, safe=False)
        except _OutcomeUnknown:
            try:
                await self._call(op, fn, safe=True)
            except LeaseNotFoundError:
                log.info("lease revoke landed despite a connection failure", lease=lease_id)

    async def lease_info(self, lease_id: int) -> LeaseInfo:
        async def fn(ep: _Endpoint) -> rpc.LeaseTimeToLiveResponse:
            request = rpc.LeaseTimeToLiveRequest(ID=lease_id, keys=True)
            return await ep.lease.LeaseTimeToLive(
                request, timeout=self._timeout, metadata=_METADATA
            )

        resp = await self._call(_Op("lease_info", lease=lease_id), fn, safe=True)
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
        op = _Op("compact", revision=revision)

        async def fn(ep: _Endpoint) -> rpc.CompactionResponse:
            request = rpc.CompactionRequest(revision=revision, physical=True)
            return await ep.kv.Compact(request, timeout=self._timeout, metadata=_METADATA)

        try:
            await self._call(op, fn, safe=False)
        except _OutcomeUnknown:
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


# ---------------------------------------------------------------------------------------------
# Watch


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
                    if not _is_connection_error(exc):
                        op = _Op("watch", self._prefix, revision=self._next_revision)
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

    async def _stream(self, endpoint: _Endpoint, *, reconnect: bool) -> None:
        create = rpc.WatchCreateRequest(
            key=self._key,
            range_end=self._range_end,
            start_revision=self._next_revision,
            prev_kv=True,
        )

        call = endpoint.watch_stub.Watch(metadata=_METADATA)
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
