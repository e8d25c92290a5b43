"""The Lease service: Grant, Revoke, KeepAlive (a stream), TimeToLive, Leases.

etcd piece: etcdserver/api/v3rpc/lease.go (LeaseServer) over lease/lessor.go. The store keeps
the leases — durable grants and revocations in its WAL, a deadline timer that revokes an
expired lease and deletes its keys at one revision — so this layer only translates. Like
etcd's lessor, a grant is raised to the minimum TTL (etcd: 1.5 election timeouts, 2 s with
the default flags) and a TTL above MaxLeaseTTL is refused; an unknown lease answers
KeepAlive with TTL 0 and TimeToLive with TTL -1, as etcd does (clients read those as expired).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import grpc

from ..storage import LeaseNotFoundError, StorageError, TxnStore
from . import errors
from .errors import EtcdError
from .kv import Headers
from .messages import pb

MIN_TTL = 2
MAX_TTL = 9_000_000_000


class LeaseService:
    def __init__(self, store: TxnStore, headers: Headers) -> None:
        self._store = store
        self._headers = headers

    async def _header(self) -> Any:
        return self._headers(await self._store.current_revision())

    async def LeaseGrant(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            if request.TTL > MAX_TTL:
                raise EtcdError(errors.LEASE_TTL_TOO_LARGE)
            ttl = max(MIN_TTL, request.TTL)
            lease_id = await self._store.grant_lease(ttl, lease_id=max(0, request.ID))
        except (EtcdError, StorageError) as exc:
            await errors.abort(context, exc)
        return pb.LeaseGrantResponse(header=await self._header(), ID=lease_id, TTL=ttl)

    async def LeaseRevoke(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            await self._store.revoke_lease(request.ID)
        except StorageError as exc:
            await errors.abort(context, exc)
        return pb.LeaseRevokeResponse(header=await self._header())

    async def LeaseKeepAlive(self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext):
        async for request in requests:
            try:
                ttl = await self._store.keep_alive(request.ID)
            except LeaseNotFoundError:
                ttl = 0
            except StorageError as exc:
                await errors.abort(context, exc)
            yield pb.LeaseKeepAliveResponse(header=await self._header(), ID=request.ID, TTL=ttl)

    async def LeaseTimeToLive(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            info = await self._store.lease_info(request.ID)
        except LeaseNotFoundError:
            return pb.LeaseTimeToLiveResponse(header=await self._header(), ID=request.ID, TTL=-1)
        except StorageError as exc:
            await errors.abort(context, exc)
        return pb.LeaseTimeToLiveResponse(
            header=await self._header(),
            ID=request.ID,
            TTL=math.ceil(info.remaining) if info.remaining > 0 else 0,
            grantedTTL=info.ttl,
            keys=[key.encode() for key in info.keys] if request.keys else [],
        )

    async def LeaseLeases(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            ids = await self._store.leases()
        except StorageError as exc:
            await errors.abort(context, exc)
        return pb.LeaseLeasesResponse(
            header=await self._header(), leases=[pb.LeaseStatus(ID=i) for i in ids]
        )
