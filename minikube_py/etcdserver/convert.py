"""etcd v3 protobuf messages <-> the Store contract's values (storage/kv.py, storage/txn.py).

etcd piece: the request checks of etcdserver/api/v3rpc/key.go (checkRangeRequest,
checkPutRequest, checkDeleteRequest, checkTxnReqs) and the response building of
etcdserver/apply.go. Pure functions: no I/O, no store.

Keys: etcd keys are bytes, the store's are text. A key must be valid UTF-8 (every key
Kubernetes writes is); UTF-8 byte order equals code point order, so ranges and prefixes over
text keys select exactly what etcd would select over their bytes.
"""

from __future__ import annotations

from typing import Any

from ..storage import Event, EventType, KeyValue
from ..storage.txn import (
    Compare,
    CompareResult,
    CompareTarget,
    DeleteOp,
    DeleteOpResult,
    Op,
    OpResult,
    PutOp,
    PutOpResult,
    RangeOp,
    RangeOpResult,
    SortOrder,
    SortTarget,
    TxnOp,
    TxnResult,
)
from . import errors
from .errors import EtcdError
from .messages import pb


def text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EtcdError(errors.NOT_UTF8) from None


def key_of(raw: bytes) -> str:
    if not raw:
        raise EtcdError(errors.EMPTY_KEY)
    return text(raw)


# ---------------------------------------------------------------------------------- requests


def _enum(kind: type, value: int, error: tuple) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise EtcdError(error) from None


def range_op(req: Any) -> RangeOp:
    return RangeOp(
        key=key_of(req.key),
        range_end=text(req.range_end),
        limit=max(0, req.limit),
        revision=req.revision,
        sort_order=_enum(SortOrder, req.sort_order, errors.INVALID_SORT),
        sort_target=_enum(SortTarget, req.sort_target, errors.INVALID_SORT),
        keys_only=req.keys_only,
        count_only=req.count_only,
        min_mod_revision=req.min_mod_revision,
        max_mod_revision=req.max_mod_revision,
        min_create_revision=req.min_create_revision,
        max_create_revision=req.max_create_revision,
    )


def put_op(req: Any) -> PutOp:
    key = key_of(req.key)
    if req.ignore_value and req.value:
        raise EtcdError(errors.VALUE_PROVIDED)
    if req.ignore_lease and req.lease:
        raise EtcdError(errors.LEASE_PROVIDED)
    return PutOp(
        key=key,
        value=None if req.ignore_value else bytes(req.value),
        lease=None if req.ignore_lease else req.lease,
        prev_kv=req.prev_kv,
    )


def delete_op(req: Any) -> DeleteOp:
    return DeleteOp(key=key_of(req.key), range_end=text(req.range_end), prev_kv=req.prev_kv)


def compare(c: Any) -> Compare:
    target = _enum(CompareTarget, c.target, errors.INVALID_COMPARE)
    if target == CompareTarget.VALUE:
        operand: int | bytes = bytes(c.value)
    elif target == CompareTarget.VERSION:
        operand = c.version
    elif target == CompareTarget.CREATE:
        operand = c.create_revision
    elif target == CompareTarget.MOD:
        operand = c.mod_revision
    else:
        operand = c.lease
    result = _enum(CompareResult, c.result, errors.INVALID_COMPARE)
    return Compare(text(c.key), target, result, operand, text(c.range_end))


def request_op(op: Any) -> Op:
    which = op.WhichOneof("request")
    if which == "request_range":
        return range_op(op.request_range)
    if which == "request_put":
        return put_op(op.request_put)
    if which == "request_delete_range":
        return delete_op(op.request_delete_range)
    if which == "request_txn":
        return txn_op(op.request_txn)
    raise EtcdError((errors.EMPTY_KEY[0], "etcdserver: request is empty"))


def txn_op(req: Any) -> TxnOp:
    return TxnOp(
        compares=tuple(compare(c) for c in req.compare),
        success=tuple(request_op(op) for op in req.success),
        failure=tuple(request_op(op) for op in req.failure),
    )


# --------------------------------------------------------------------------------- responses


def kv_message(kv: KeyValue) -> Any:
    return pb.KeyValue(
        key=kv.key.encode(),
        create_revision=kv.create_revision,
        mod_revision=kv.mod_revision,
        version=kv.version,
        value=kv.value,
        lease=kv.lease,
    )


def event_message(event: Event, *, prev_kv: bool) -> Any:
    message = pb.Event(
        type=0 if event.type is EventType.PUT else 1,
        kv=kv_message(event.kv),
    )
    if prev_kv and event.prev_kv is not None:
        message.prev_kv.CopyFrom(kv_message(event.prev_kv))
    return message


def range_response(result: RangeOpResult, header: Any) -> Any:
    return pb.RangeResponse(
        header=header, kvs=[kv_message(kv) for kv in result.kvs], more=result.more,
        count=result.count,
    )


def put_response(result: PutOpResult, header: Any) -> Any:
    resp = pb.PutResponse(header=header)
    if result.prev_kv is not None:
        resp.prev_kv.CopyFrom(kv_message(result.prev_kv))
    return resp


def delete_response(result: DeleteOpResult, header: Any) -> Any:
    return pb.DeleteRangeResponse(
        header=header, deleted=result.deleted, prev_kvs=[kv_message(kv) for kv in result.prev_kvs]
    )


def txn_response(result: TxnResult, header: Any) -> Any:
    return pb.TxnResponse(
        header=header,
        succeeded=result.succeeded,
        responses=[response_op(r, header) for r in result.responses],
    )


def response_op(result: OpResult, header: Any) -> Any:
    if isinstance(result, RangeOpResult):
        return pb.ResponseOp(response_range=range_response(result, header))
    if isinstance(result, PutOpResult):
        return pb.ResponseOp(response_put=put_response(result, header))
    if isinstance(result, DeleteOpResult):
        return pb.ResponseOp(response_delete_range=delete_response(result, header))
    return pb.ResponseOp(response_txn=txn_response(result, header))
