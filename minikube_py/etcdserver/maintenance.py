"""Maintenance, Cluster and Auth: what etcdctl asks besides keys and leases.

etcd piece: etcdserver/api/v3rpc/maintenance.go (Status, Defragment, Alarm, Hash, HashKV),
member.go (MemberList) and auth.go. One member that is its own leader: Status reports our
identity as leader, the store revision as raft index, term 1, the data dir's size as the
database size; Defragment has nothing to do (the embedded store keeps no free pages: its WAL
and snapshots are rewritten, not reused); no alarm is ever raised (a full disk shows as
ResourceExhausted on the write instead); authentication is not enabled. Membership changes,
snapshots, leader moves and downgrades answer Unimplemented with a message saying why.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import grpc

from ..storage import StorageError, TxnStore
from ..storage.txn import RangeOp, TxnOp
from . import errors
from .errors import EtcdError
from .identity import RAFT_TERM, SERVER_VERSION, Identity
from .kv import Headers
from .messages import pb


def data_dir_size(root: Path | None) -> int:
    """Bytes of the files under the store's data dir (0 when it has none)."""
    if root is None:
        return 0
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


class MaintenanceService:
    def __init__(self, store: TxnStore, headers: Headers, identity: Identity) -> None:
        self._store = store
        self._headers = headers
        self._identity = identity

    async def _header(self) -> Any:
        return self._headers(await self._store.current_revision())

    async def Status(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        revision = await self._store.current_revision()
        size = data_dir_size(getattr(self._store, "data_dir", None))
        return pb.StatusResponse(
            header=self._headers(revision),
            version=SERVER_VERSION,
            dbSize=size,
            dbSizeInUse=size,
            leader=self._identity.member_id,
            raftIndex=revision,
            raftTerm=RAFT_TERM,
            raftAppliedIndex=revision,
        )

    async def Defragment(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return pb.DefragmentResponse(header=await self._header())

    async def Alarm(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return pb.AlarmResponse(header=await self._header())

    async def HashKV(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        """A CRC32 of every key's (key, revisions, value) at the revision: equal on two calls
        iff the keyspace is (not comparable with a real etcd's hash, which covers its bolt
        pages)."""
        try:
            result = await self._store.txn(
                TxnOp(success=(RangeOp("\0", "\0", revision=request.revision),)))
            compact = await self._store.compact_revision()
        except StorageError as exc:
            await errors.abort(context, exc)
        crc = 0
        for kv in result.responses[0].kvs:
            crc = zlib.crc32(kv.key.encode(), crc)
            crc = zlib.crc32(f"{kv.create_revision}/{kv.mod_revision}/{kv.version}".encode(), crc)
            crc = zlib.crc32(kv.value, crc)
        return pb.HashKVResponse(header=self._headers(result.revision), hash=crc,
                                 compact_revision=compact)

    async def Hash(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        resp = await self.HashKV(pb.HashKVRequest(revision=0), context)
        return pb.HashResponse(header=resp.header, hash=resp.hash)


class ClusterService:
    def __init__(self, store: TxnStore, headers: Headers, identity: Identity) -> None:
        self._store = store
        self._headers = headers
        self._identity = identity

    async def MemberList(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        i = self._identity
        member = pb.Member(ID=i.member_id, name=i.name, clientURLs=list(i.client_urls))
        return pb.MemberListResponse(
            header=self._headers(await self._store.current_revision()), members=[member]
        )

    async def _one_member(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        await errors.abort(context, EtcdError(errors.ONE_MEMBER))

    MemberAdd = MemberRemove = MemberUpdate = MemberPromote = _one_member


class AuthService:
    def __init__(self, headers: Headers) -> None:
        self._headers = headers

    async def AuthStatus(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return pb.AuthStatusResponse(header=self._headers(0), enabled=False)

    async def _not_enabled(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        await errors.abort(context, EtcdError(errors.AUTH_NOT_ENABLED))

    Authenticate = _not_enabled
