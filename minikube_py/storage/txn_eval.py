"""Running a transaction (storage/txn.py) against the embedded store's MVCCState.

etcd piece: etcdserver/apply.go (`applyTxn`, `compareToPath`, `applyCompare`, `Range` with its
sort and filters) and etcdserver/api/v3rpc/key.go (`checkTxnReqs`, `checkIntervals`). Pure and
synchronous — no await anywhere — so a transaction is atomic on the event loop: nothing else
runs between its compares and its last write.

Three phases, as etcd's applier:
1. *path*: every compare along the way (nested transactions too) is evaluated against the
   state before any write, so a nested compare never sees the outer transaction's writes;
2. *check*: along that path, refuse what must fail before anything changes (a compacted or
   future read revision, a lease that does not exist, ignore_value on a missing key, a value
   over the size limit), so a transaction never half-applies;
3. *execute*: ops in order; every write of the transaction takes the same revision (the next
   one) through `MVCCState.apply`, and a read after a write sees it.
The caller (EmbeddedStore.txn) makes the collected write records durable as one WAL record.
"""

from __future__ import annotations

from collections.abc import Iterator

from .errors import (
    MAX_VALUE_BYTES,
    CompactedError,
    FutureRevisionError,
    InvalidTxnError,
    KeyNotFoundError,
    LeaseNotFoundError,
    ValueTooLargeError,
)
from .kv import KeyValue
from .mvcc import DELETE, PUT, MVCCState
from .txn import (
    MAX_TXN_OPS,
    MAX_TXN_TOTAL_OPS,
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


def bounds(key: str, range_end: str) -> tuple[str, str | None, bool]:
    """(start, end or None for unbounded, single-key?) of an etcd key range."""
    if range_end == "":
        return key, None, True
    if range_end == "\0":
        return key, None, False
    return key, range_end, False


def in_range(candidate: str, key: str, range_end: str) -> bool:
    start, end, single = bounds(key, range_end)
    if single:
        return candidate == key
    return candidate >= start and (end is None or candidate < end)


# ----------------------------------------------------------------------------- validation


def validate(txn: TxnOp) -> None:
    """etcd's checkTxnReqs: op counts per branch (and in all, MAX_TXN_TOTAL_OPS) and no key
    written twice on one path."""
    if _count(txn, MAX_TXN_TOTAL_OPS) > MAX_TXN_TOTAL_OPS:
        raise InvalidTxnError(InvalidTxnError.TOO_MANY_OPS)
    _validate(txn)


def _count(txn: TxnOp, budget: int) -> int:
    """Compares and ops of `txn` and its nested txns; stops counting past `budget`."""
    total = len(txn.compares) + len(txn.success) + len(txn.failure)
    for op in (*txn.success, *txn.failure):
        if total > budget:
            break
        if isinstance(op, TxnOp):
            total += _count(op, budget - total)
    return total


def _validate(txn: TxnOp) -> None:
    if max(len(txn.compares), len(txn.success), len(txn.failure)) > MAX_TXN_OPS:
        raise InvalidTxnError(InvalidTxnError.TOO_MANY_OPS)
    for branch in (txn.success, txn.failure):
        for op in branch:
            if isinstance(op, TxnOp):
                _validate(op)
        _check_intervals(branch)


def _check_intervals(ops: tuple[Op, ...]) -> tuple[set[str], list[tuple[str, str]]]:
    dels = [(op.key, op.range_end) for op in ops if isinstance(op, DeleteOp)]

    def deleted(key: str) -> bool:
        return any(in_range(key, k, end) for k, end in dels)

    puts: set[str] = set()
    for op in ops:
        if not isinstance(op, TxnOp):
            continue
        puts_then, dels_then = _check_intervals(op.success)
        puts_else, dels_else = _check_intervals(op.failure)
        for key in puts_then:
            if key in puts or deleted(key):
                raise InvalidTxnError(InvalidTxnError.DUPLICATE_KEY)
            puts.add(key)
        for key in puts_else:
            if (key in puts and key not in puts_then) or deleted(key):
                raise InvalidTxnError(InvalidTxnError.DUPLICATE_KEY)
            puts.add(key)
        dels.extend(dels_then)
        dels.extend(dels_else)
    for op in ops:
        if isinstance(op, PutOp):
            if op.key in puts or deleted(op.key):
                raise InvalidTxnError(InvalidTxnError.DUPLICATE_KEY)
            puts.add(op.key)
    return puts, dels


# -------------------------------------------------------------------------------- compares


def compares_hold(state: MVCCState, compares: tuple[Compare, ...]) -> bool:
    return all(_compare(state, c) for c in compares)


def _compare(state: MVCCState, c: Compare) -> bool:
    kvs = list(_current_kvs(state, c.key, c.range_end))
    if not kvs:
        if c.target == CompareTarget.VALUE:
            return False  # etcd: a value compare on a missing key never holds
        return _compare_kv(c, None)
    return all(_compare_kv(c, kv) for kv in kvs)


def _compare_kv(c: Compare, kv: KeyValue | None) -> bool:
    target = c.target
    if target == CompareTarget.VALUE:
        left: int | bytes = kv.value if kv else b""
        right = c.operand if isinstance(c.operand, bytes) else b""
    else:
        if kv is None:
            left = 0
        elif target == CompareTarget.VERSION:
            left = kv.version
        elif target == CompareTarget.CREATE:
            left = kv.create_revision
        elif target == CompareTarget.MOD:
            left = kv.mod_revision
        else:
            left = kv.lease
        right = c.operand if isinstance(c.operand, int) else 0
    if c.result == CompareResult.EQUAL:
        return left == right
    if c.result == CompareResult.NOT_EQUAL:
        return left != right
    if c.result == CompareResult.GREATER:
        return left > right
    return left < right


def _current_kvs(state: MVCCState, key: str, range_end: str) -> Iterator[KeyValue]:
    start, end, single = bounds(key, range_end)
    if single:
        kv = state.live.get(key)
        if kv is not None:
            yield kv
        return
    yield from state.keys_between(start, end, state.revision)


def path(state: MVCCState, txn: TxnOp) -> list[bool]:
    """etcd's compareToPath: the branch taken by this txn and every nested one on the way."""
    taken = compares_hold(state, txn.compares)
    result = [taken]
    for op in txn.success if taken else txn.failure:
        if isinstance(op, TxnOp):
            result.extend(path(state, op))
    return result


# ----------------------------------------------------------------------------------- check


def check(state: MVCCState, txn: TxnOp, taken: Iterator[bool]) -> None:
    """Raise now what would fail half-way (see the module docstring, phase 2)."""
    for op in txn.success if next(taken) else txn.failure:
        if isinstance(op, RangeOp):
            read_revision(state, op.revision)
        elif isinstance(op, PutOp):
            check_put(state, op)
        elif isinstance(op, TxnOp):
            check(state, op, taken)


def check_put(state: MVCCState, op: PutOp) -> None:
    if op.value is not None and len(op.value) > MAX_VALUE_BYTES:
        raise ValueTooLargeError(op.key, len(op.value))
    if (op.value is None or op.lease is None) and op.key not in state.live:
        raise KeyNotFoundError(op.key)
    if op.lease and op.lease not in state.leases:
        raise LeaseNotFoundError(op.lease)


def read_revision(state: MVCCState, revision: int) -> int:
    if revision <= 0:
        return state.revision
    if revision < state.compact_revision:
        raise CompactedError(revision, state.compact_revision)
    if revision > state.revision:
        raise FutureRevisionError(revision, state.revision)
    return revision


# --------------------------------------------------------------------------------- execute


class Execution:
    """One transaction's execution: the revision its writes take and the records they made."""

    def __init__(self, state: MVCCState) -> None:
        self.state = state
        self.write_revision = state.revision + 1
        self.records: list[tuple] = []

    def run(self, txn: TxnOp, taken: Iterator[bool]) -> TxnResult:
        succeeded = next(taken)
        responses: list[OpResult] = []
        for op in txn.success if succeeded else txn.failure:
            if isinstance(op, RangeOp):
                responses.append(range_read(self.state, op))
            elif isinstance(op, PutOp):
                responses.append(self._put(op))
            elif isinstance(op, DeleteOp):
                responses.append(self._delete(op))
            else:
                responses.append(self.run(op, taken))
        return TxnResult(succeeded, responses, self.state.revision)

    def _apply(self, record: tuple) -> None:
        self.state.apply(record)
        self.records.append(record)

    def _put(self, op: PutOp) -> PutOpResult:
        prev = self.state.live.get(op.key)
        value = prev.value if op.value is None else op.value
        lease = prev.lease if op.lease is None else op.lease
        self._apply((PUT, self.write_revision, op.key, value, lease))
        return PutOpResult(prev if op.prev_kv else None)

    def _delete(self, op: DeleteOp) -> DeleteOpResult:
        doomed = list(_current_kvs(self.state, op.key, op.range_end))
        for kv in doomed:
            self._apply((DELETE, self.write_revision, kv.key))
        return DeleteOpResult(len(doomed), doomed if op.prev_kv else [])


def run(state: MVCCState, txn: TxnOp) -> tuple[TxnResult, list[tuple]]:
    """Validate, check and execute `txn`; returns its result and the write records applied
    (all at one revision; empty for a read-only or no-op transaction)."""
    if not txn.compares and not txn.failure and len(txn.success) == 1 \
            and not isinstance(txn.success[0], TxnOp):
        taken = [True]  # a plain Range/Put/DeleteRange: nothing to validate or compare
    else:
        validate(txn)
        taken = path(state, txn)
    check(state, txn, iter(taken))
    execution = Execution(state)
    result = execution.run(txn, iter(taken))
    return result, execution.records


# ----------------------------------------------------------------------------------- range


_SORT_KEYS = {
    SortTarget.KEY: lambda kv: kv.key,
    SortTarget.VERSION: lambda kv: kv.version,
    SortTarget.CREATE: lambda kv: kv.create_revision,
    SortTarget.MOD: lambda kv: kv.mod_revision,
    SortTarget.VALUE: lambda kv: kv.value,
}


def range_read(state: MVCCState, op: RangeOp) -> RangeOpResult:
    """etcd's applierV3backend.Range: read, count, filter, sort, limit, strip."""
    revision = read_revision(state, op.revision)
    start, end, single = bounds(op.key, op.range_end)
    filtered = bool(op.min_mod_revision or op.max_mod_revision
                    or op.min_create_revision or op.max_create_revision)
    sort_order = op.sort_order
    if sort_order == SortOrder.NONE and op.sort_target != SortTarget.KEY:
        sort_order = SortOrder.ASCEND
    needs_sort = sort_order != SortOrder.NONE and not (
        op.sort_target == SortTarget.KEY and sort_order == SortOrder.ASCEND)
    if single:
        kv = state.value_at(op.key, revision)
        kvs = [kv] if kv is not None else []
        count = len(kvs)
    elif revision == state.revision and not filtered and not needs_sort:
        count = state.count_between(start, end)
        if op.count_only:
            return RangeOpResult([], False, count)
        take = op.limit + 1 if op.limit else 0
        kvs = _live_slice(state, start, end, take)
    else:
        kvs = list(state.keys_between(start, end, revision))
        count = len(kvs)
    if op.count_only:
        return RangeOpResult([], False, count)
    if filtered:
        kvs = [kv for kv in kvs if _passes(op, kv)]
    if needs_sort:
        kvs.sort(key=_SORT_KEYS[op.sort_target], reverse=sort_order == SortOrder.DESCEND)
    more = False
    if op.limit and len(kvs) > op.limit:
        kvs = kvs[: op.limit]
        more = True
    if op.keys_only:
        kvs = [kv._replace(value=b"") for kv in kvs]
    return RangeOpResult(kvs, more, count)


def _live_slice(state: MVCCState, start: str, end: str | None, take: int) -> list[KeyValue]:
    live = state.live
    lo = live.bisect_left(start)
    hi = live.bisect_left(end) if end is not None else len(live)
    stop = hi if not take else min(hi, lo + take)
    return [live[key] for key in live.islice(lo, stop)]


def _passes(op: RangeOp, kv: KeyValue) -> bool:
    return not (
        (op.min_mod_revision and kv.mod_revision < op.min_mod_revision)
        or (op.max_mod_revision and kv.mod_revision > op.max_mod_revision)
        or (op.min_create_revision and kv.create_revision < op.min_create_revision)
        or (op.max_create_revision and kv.create_revision > op.max_create_revision)
    )
