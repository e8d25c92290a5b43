"""The store browser's reads: keys under a prefix as a tree, one key's value at a revision
with its diff against the key's previous revision, a key's retained history, compaction.

Kubernetes piece: what an operator does with `etcdctl get --prefix --keys-only /registry`,
`etcdctl get KEY --rev=N` and `etcdctl compact`, shaped for a page. Everything goes through
the Store contract (storage/interface.py), so it works on the embedded store and on a real
etcd alike, and never loads the whole store into one response: a tree level is read by
skip-scan — one `range(limit=1)` finds the next child, a second counts its keys (`remaining`),
and a continue token made at the next possible key jumps past the child's subtree — so a
level of `limit` children costs about 2 x limit one-key reads, whatever the number of keys
below. Each read is at the store's current revision (a continue token must name one; the
current one keeps the embedded store on its live index): while the cluster writes, the
counts of one level may come from neighbouring revisions.
"""

from __future__ import annotations

from typing import Any

from .. import offload
from ..api import errors
from ..storage import (
    CompactedError,
    Event,
    EventType,
    FutureRevisionError,
    KeyNotFoundError,
    KeyValue,
    Store,
    encode_continue,
    prefix_end,
)
from ..storage.history import collect_history
from ..storage.values import decode_value
from .diff import diff

Obj = dict[str, Any]

#: children per tree page by default, and at most
DEFAULT_CHILDREN = 100
MAX_CHILDREN = 500
#: history rows shown at most (the newest)
MAX_HISTORY = 200


def parse_revision(text: str | None, *, name: str = "revision") -> int:
    """A revision query parameter: empty = 0 (now), else a non-negative integer (400)."""
    if text is None or text == "":
        return 0
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise errors.bad_request(f"{name}: must be a non-negative integer, got {text!r}")
    return value


def parse_limit(text: str | None) -> int:
    if not text:
        return DEFAULT_CHILDREN
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_CHILDREN:
        raise errors.bad_request(f"limit: must be an integer from 1 to {MAX_CHILDREN}, "
                                 f"got {text!r}")
    return value


def check_key(key: str, *, name: str = "key") -> str:
    if not key.startswith("/"):
        raise errors.bad_request(f"{name}: must start with '/', got {key!r}")
    return key


def child_of(prefix: str, key: str) -> tuple[str, bool]:
    """The child of `prefix` that `key` lies under: (`name/`, True) for a directory, (`name`,
    False) for a key right below the prefix."""
    head, slash, _ = key[len(prefix):].partition("/")
    return (head + "/", True) if slash else (head, False)


def _past(prefix: str, child: str) -> str:
    """The first key after `child` and everything under it."""
    full = prefix + child
    return prefix_end(full) if child.endswith("/") else full + "\x00"


async def _first_from(store: Store, prefix: str, start: str) -> KeyValue | None:
    """The first key under `prefix` at or after `start`, at the current revision."""
    if start == prefix:
        page = await store.range(prefix, limit=1)
    else:
        revision = await store.current_revision()
        token = encode_continue(prefix=prefix, next_key=start, revision=revision)
        page = await store.range(prefix, limit=1, continue_token=token)
    return page.kvs[0] if page.kvs else None


def kv_meta(kv: KeyValue) -> Obj:
    return {"key": kv.key, "create_revision": kv.create_revision,
            "mod_revision": kv.mod_revision, "version": kv.version, "lease": kv.lease,
            "size": len(kv.value)}


async def tree(store: Store, prefix: str, *, limit: int = DEFAULT_CHILDREN,
               after: str = "") -> Obj:
    """One page of `prefix`'s children: directories with their key counts, keys with their
    revisions. `after`: the last child of the previous page (its `next`)."""
    check_key(prefix, name="prefix")
    if not prefix.endswith("/"):
        prefix += "/"
    cursor = _past(prefix, after) if after else prefix
    children: list[Obj] = []
    more = False
    while True:
        if prefix_end(prefix) and cursor >= prefix_end(prefix):
            break
        kv = await _first_from(store, prefix, cursor)
        if kv is None:
            break
        if len(children) >= limit:
            more = True
            break
        name, is_dir = child_of(prefix, kv.key)
        if is_dir:
            sub = await store.range(prefix + name, limit=1)
            children.append({"name": name, "key": prefix + name, "dir": True,
                             "count": len(sub.kvs) + sub.remaining})
        else:
            children.append({"name": name, "dir": False, "count": 1, **kv_meta(kv)})
        cursor = _past(prefix, name)
    return {"prefix": prefix, "children": children, "more": more,
            "next": children[-1]["name"] if more else "", **await revisions(store)}


async def revisions(store: Store) -> Obj:
    return {"revision": await store.current_revision(),
            "compact_revision": await store.compact_revision()}


def _value(kv: KeyValue | None) -> Obj | None:
    if kv is None:
        return None
    decoded = decode_value(kv.value)
    return {**kv_meta(kv), "encoding": "base64" if decoded.kind == "binary" else decoded.kind,
            "value": decoded.data}


async def _get(store: Store, key: str, revision: int) -> KeyValue | None:
    """The key at `revision`, None when it did not exist then; compacted -> 410, future ->
    400 Statuses."""
    if revision < 0:
        return None
    try:
        return await store.get(key, revision=revision)
    except KeyNotFoundError:
        return None
    except CompactedError as exc:
        raise errors.gone_expired(f"revision {revision} of {key} is compacted: {exc}") from None
    except FutureRevisionError as exc:
        raise errors.bad_request(f"revision: {exc}") from None


async def key_at(store: Store, key: str, revision: int = 0) -> Obj:
    """The key's value at `revision` (0 = now) and its previous value (the write before),
    with the diff between them. A revision at which the key was deleted shows the deletion
    (value None, previous the deleted value). 404 when the key exists at neither."""
    check_key(key)
    kv = await _get(store, key, revision)
    previous: KeyValue | None = None
    deleted = False
    if kv is not None:
        if kv.version > 1:
            try:
                previous = await _get(store, key, kv.mod_revision - 1)
            except errors.StatusError:  # the previous write is compacted: no diff
                previous = None
    elif revision:
        try:
            previous = await _get(store, key, revision - 1)
        except errors.StatusError:
            previous = None
        deleted = previous is not None
    if kv is None and previous is None:
        raise errors.StatusError(404, "NotFound", f'key "{key}" not found'
                                 + (f" at revision {revision}" if revision else ""),
                                 {"name": key, "kind": "key"})
    return {"key": key, "revision": revision, "deleted": deleted, "current": _value(kv),
            "previous": _value(previous),
            "diff": await offload.run(_diff, previous, kv, weight=_size(previous, kv)),
            **await revisions(store)}


def _size(*kvs: KeyValue | None) -> int:
    """Bytes a diff walks (decoding and diffing a value costs about its size in work)."""
    return sum(len(kv.value) for kv in kvs if kv is not None)


def _diff(old: KeyValue | None, new: KeyValue | None) -> Obj:
    before = decode_value(old.value).data if old is not None else None
    after = decode_value(new.value).data if new is not None else None
    return diff(before, after,
                old_name=f"revision {old.mod_revision}" if old is not None else "(none)",
                new_name=f"revision {new.mod_revision}" if new is not None else "(deleted)")


def history_rows(events: list[Event], *, carried: KeyValue | None = None,
                 diffs: bool = True) -> list[Obj]:
    """One row per retained write, newest first, each with its diff against the write before
    (the watch event's previous value; None with `diffs=False`). `carried`: the live value
    written before the retained history (shown first, without a diff)."""
    rows: list[Obj] = []
    if carried is not None:
        rows.append({"type": "PUT", "revision": carried.mod_revision, "before_history": True,
                     **kv_meta(carried), "diff": None})
    for event in events:
        kv = event.kv if event.type is EventType.PUT else None
        rows.append({"type": event.type.value, "revision": event.revision,
                     "before_history": False, **kv_meta(event.kv),
                     "diff": _diff(event.prev_kv, kv) if diffs else None})
    rows.reverse()
    return rows[:MAX_HISTORY]


async def key_history(store: Store, key: str, *, diffs: bool = True) -> Obj:
    """Every retained revision of the key (storage/history.py), 404 when it has none;
    `diffs=False`: the rows without their diffs (the journey lists revisions only)."""
    check_key(key)
    found = await collect_history(store, key)
    carried = found.live if found.live is not None and not any(
        e.revision == found.live.mod_revision for e in found.events) else None
    if not found.events and carried is None:
        raise errors.StatusError(404, "NotFound", f'key "{key}" not found'
                                 + (f" (history is kept from revision {found.start})"
                                    if found.start > 1 else ""),
                                 {"name": key, "kind": "key"})
    return {"key": key, "history_from_revision": found.start,
            "rows": await offload.run(history_rows, found.events, carried=carried, diffs=diffs,
                                      weight=sum(_size(e.kv, e.prev_kv) for e in found.events)
                                      if diffs else 0),
            **await revisions(store)}


async def compact(store: Store, revision: int = 0) -> Obj:
    """Compact history up to `revision` (0 = the current revision), as `etcdctl compact` and
    `minikube-py storage compact`; 400 when that is already compacted or in the future."""
    current = await store.current_revision()
    before = await store.compact_revision()
    target = revision or current
    if target <= before:
        raise errors.bad_request(f"revision: history is already compacted to revision {before}")
    if target > current:
        raise errors.bad_request(f"revision: {target} is a future revision "
                                 f"(current revision is {current})")
    try:
        await store.compact(target)
    except CompactedError as exc:
        raise errors.bad_request(f"revision: history is already compacted to revision "
                                 f"{exc.compact_revision}") from None
    return {"compacted": target, "was": before, **await revisions(store)}
