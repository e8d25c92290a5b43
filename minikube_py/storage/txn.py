"""Transactions in the Store contract: etcd's Txn as plain data (compares, then one branch of ops).

Kubernetes piece: what kube-apiserver's etcd3 storage sends (staging/.../storage/etcd3/store.go:
`Txn(If(ModRevision(key) == rv)).Then(OpPut).Else(OpGet)`), and etcd's own request shapes
(api/etcdserverpb RangeRequest, PutRequest, DeleteRangeRequest, Compare, TxnRequest). The
single-key calls of `Store` (create/update/delete) cover what our API server needs; serving the
etcd v3 protocol (minikube_py/etcdserver) needs the general form: ranges over [key, range_end),
reads at a revision with sort and filters, several writes at one revision, nested branches.

These are value types only: `TxnStore.txn` (interface.py) runs them, the embedded store through
txn_eval.py. Enum values are etcd's protobuf numbers, so the gRPC layer passes them through.

Key ranges follow etcd: `range_end == ""` means the single key `key`; `"\\0"` means every key
>= `key`; anything else is the half-open range [key, range_end).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from .kv import KeyValue

#: etcd's --max-txn-ops default: more compares or ops in one branch is refused.
MAX_TXN_OPS = 128
#: Our own bound, which etcd does not have: compares and ops of all nested branches together.
#: The duplicate-key check compares puts with range deletions and runs on the event loop every
#: component shares, so nesting must not multiply it without limit (kube-apiserver sends 1-3).
MAX_TXN_TOTAL_OPS = 1024


class SortOrder(enum.IntEnum):
    NONE = 0
    ASCEND = 1
    DESCEND = 2


class SortTarget(enum.IntEnum):
    KEY = 0
    VERSION = 1
    CREATE = 2
    MOD = 3
    VALUE = 4


class CompareResult(enum.IntEnum):
    EQUAL = 0
    GREATER = 1
    LESS = 2
    NOT_EQUAL = 3


class CompareTarget(enum.IntEnum):
    VERSION = 0
    CREATE = 1
    MOD = 2
    VALUE = 3
    LEASE = 4


class Compare(NamedTuple):
    """`target(key) <result> operand`, for one key or every key of a range (etcd 3.5)."""

    key: str
    target: CompareTarget
    result: CompareResult
    operand: int | bytes
    range_end: str = ""


class RangeOp(NamedTuple):
    """etcd's RangeRequest. `revision` 0 reads the newest state (including earlier writes of
    the same transaction). `count` in the result counts every key of the range, before the
    min/max filters and the limit, as etcd does."""

    key: str
    range_end: str = ""
    limit: int = 0
    revision: int = 0
    sort_order: SortOrder = SortOrder.NONE
    sort_target: SortTarget = SortTarget.KEY
    keys_only: bool = False
    count_only: bool = False
    min_mod_revision: int = 0
    max_mod_revision: int = 0
    min_create_revision: int = 0
    max_create_revision: int = 0


class PutOp(NamedTuple):
    """etcd's PutRequest. `value=None` keeps the current value (ignore_value), `lease=None`
    the current lease (ignore_lease); both need the key to exist."""

    key: str
    value: bytes | None
    lease: int | None = 0
    prev_kv: bool = False


class DeleteOp(NamedTuple):
    """etcd's DeleteRangeRequest."""

    key: str
    range_end: str = ""
    prev_kv: bool = False


class TxnOp(NamedTuple):
    """etcd's TxnRequest: if every compare holds, run `success`, else `failure`."""

    compares: tuple[Compare, ...] = ()
    success: tuple[Op, ...] = ()
    failure: tuple[Op, ...] = ()


Op = RangeOp | PutOp | DeleteOp | TxnOp


class RangeOpResult(NamedTuple):
    kvs: list[KeyValue]
    more: bool
    count: int


class PutOpResult(NamedTuple):
    prev_kv: KeyValue | None


class DeleteOpResult(NamedTuple):
    deleted: int
    prev_kvs: list[KeyValue]


class TxnResult(NamedTuple):
    """The branch taken, one result per op of it, and the store revision after the txn (the
    revision its writes got, or the unchanged revision of a read-only txn)."""

    succeeded: bool
    responses: list[OpResult]
    revision: int


OpResult = RangeOpResult | PutOpResult | DeleteOpResult | TxnResult


def has_writes(txn: TxnOp) -> bool:
    """Whether any branch (nested ones included) could write."""
    for op in (*txn.success, *txn.failure):
        if isinstance(op, (PutOp, DeleteOp)) or (isinstance(op, TxnOp) and has_writes(op)):
            return True
    return False
