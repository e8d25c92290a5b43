"""Reads over an MVCCState: get and paged range, now or at a past revision.

Kubernetes v1.0 piece: the read half of etcd's kvstore (mvcc/kvstore_txn.go rangeKeys). Pure
functions shared by the two stores that hold an MVCCState — EmbeddedStore (the writer) and
ReadOnlyStore (the inspector following a held data dir) — so both answer reads identically.
"""

from __future__ import annotations

from .continuation import decode_continue, encode_continue
from .errors import (
    CompactedError,
    FutureRevisionError,
    InvalidContinueError,
    KeyNotFoundError,
)
from .kv import KeyValue, RangeResult, prefix_end
from .mvcc import MVCCState


def check_revision(state: MVCCState, revision: int) -> int:
    """`revision` if it is retained; CompactedError or FutureRevisionError otherwise."""
    if revision < state.compact_revision:
        raise CompactedError(revision, state.compact_revision)
    if revision > state.revision:
        raise FutureRevisionError(revision, state.revision)
    return revision


def get(state: MVCCState, key: str, revision: int = 0) -> KeyValue:
    kv = state.value_at(key, check_revision(state, revision)) if revision else state.live.get(key)
    if kv is None:
        raise KeyNotFoundError(key)
    return kv


def range_keys(
    state: MVCCState,
    prefix: str,
    *,
    limit: int = 0,
    continue_token: str | None = None,
    revision: int = 0,
) -> RangeResult:
    """One page of keys under `prefix` (see Store.range)."""
    if limit < 0:
        raise ValueError("limit must not be negative")
    start, end = prefix, prefix_end(prefix) or None
    if continue_token:
        start, token_revision = decode_continue(continue_token, prefix=prefix)
        if revision and revision != token_revision:
            raise InvalidContinueError(f"continue token is for revision {token_revision}, not {revision}")
        revision = token_revision
    read_revision = check_revision(state, revision) if revision else state.revision
    if read_revision == state.revision:
        kvs, remaining = _range_live(state, start, end, limit)
    else:
        kvs, remaining = _range_past(state, start, end, limit, read_revision)
    token = None
    if remaining:
        token = encode_continue(prefix=prefix, next_key=kvs[-1].key + "\x00", revision=read_revision)
    return RangeResult(kvs, read_revision, bool(remaining), token, remaining)


def _range_live(state: MVCCState, start: str, end: str | None, limit: int) -> tuple[list[KeyValue], int]:
    """Current values: a slice of the sorted live index, and the rest counted by bisection."""
    live = state.live
    lo = live.bisect_left(start)
    hi = live.bisect_left(end) if end is not None else len(live)
    stop = hi if not limit else min(hi, lo + limit)
    return [live[key] for key in live.islice(lo, stop)], max(0, hi - stop)


def _range_past(
    state: MVCCState, start: str, end: str | None, limit: int, revision: int
) -> tuple[list[KeyValue], int]:
    kvs: list[KeyValue] = []
    remaining = 0
    for kv in state.keys_between(start, end, revision):
        if limit and len(kvs) >= limit:
            remaining += 1
        else:
            kvs.append(kv)
    return kvs, remaining
