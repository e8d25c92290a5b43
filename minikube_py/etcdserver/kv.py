"""The KV service: Range, Put, DeleteRange, Txn, Compact over a TxnStore.

etcd piece: etcdserver/api/v3rpc/key.go (kvServer) and the KV half of etcdserver/v3_server.go.
Every request becomes one store transaction (storage/txn.py), so a Range, a Put and a nested
Txn run through one code path with one set of rules (atomic, one revision per write request).
A large read is turned into protobuf off the event loop (minikube_py/offload.py).
"""

from __future__ import annotations

from typing import Any

import grpc

from .. import offload
from ..storage import StorageError, TxnStore
from ..storage.txn import RangeOpResult, TxnOp, TxnResult
from . import convert, errors
from .errors import EtcdError
from .identity import RAFT_TERM, Identity
from .messages import pb


class Headers:
    """ResponseHeader factory: cluster/member ids and raft term fixed, revision per response."""

    def __init__(self, identity: Identity) -> None:
        self._identity = identity

    def __call__(self, revision: int) -> Any:
        i = self._identity
        return pb.ResponseHeader(
            cluster_id=i.cluster_id, member_id=i.member_id, revision=revision, raft_term=RAFT_TERM
        )


class KVService:
    def __init__(self, store: TxnStore, headers: Headers) -> None:
        self._store = store
        self._headers = headers

    async def _run(self, build, context: grpc.aio.ServicerContext):
        try:
            op = build()
            return await self._store.txn(op)
        except (EtcdError, StorageError) as exc:
            await errors.abort(context, exc)

    async def Range(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        result = await self._run(lambda: TxnOp(success=(convert.range_op(request),)), context)
        return await offload.run(convert.range_response, result.responses[0],
                                 self._headers(result.revision), weight=_weight(result))

    async def Put(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        result = await self._run(lambda: TxnOp(success=(convert.put_op(request),)), context)
        return convert.put_response(result.responses[0], self._headers(result.revision))

    async def DeleteRange(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        result = await self._run(lambda: TxnOp(success=(convert.delete_op(request),)), context)
        return convert.delete_response(result.responses[0], self._headers(result.revision))

    async def Txn(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        result = await self._run(lambda: convert.txn_op(request), context)
        return await offload.run(convert.txn_response, result, self._headers(result.revision),
                                 weight=_weight(result))

    async def Compact(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            await self._store.compact(request.revision)
            revision = await self._store.current_revision()
        except StorageError as exc:
            await errors.abort(context, exc)
        return pb.CompactionResponse(header=self._headers(revision))


#: a rough size of one key-value in a response, for offload's weight (no pass over the values)
KV_WEIGHT = 128


def _weight(result: TxnResult) -> int:
    """How heavy building the response is: a range of thousands of keys is converted to
    protobuf on offload's worker thread (the values are immutable, so that is safe) instead
    of holding the event loop the store and the API server share."""
    return sum(len(r.kvs) for r in result.responses if isinstance(r, RangeOpResult)) * KV_WEIGHT
