"""The Store contract (minikube_py/storage/interface.py), checked against every backend.

Every test runs once per backend (the `store` fixture in tests/conftest.py). Revisions are
compared relative to the revisions the test's own writes got, because the etcd backend shares
one server (and so one revision counter) across tests.
"""

from __future__ import annotations

import asyncio

import pytest

from minikube_py.storage import (
    MAX_VALUE_BYTES,
    CompactedError,
    ConflictError,
    EventType,
    FutureRevisionError,
    InvalidContinueError,
    KeyExistsError,
    KeyNotFoundError,
    LeaseNotFoundError,
    Store,
    UnavailableError,
    ValueTooLargeError,
)

P = "/registry/pods/"


async def next_events(watch, n: int, timeout: float = 5.0):
    """Collect exactly n events from a watch (failing on timeout)."""
    events = []
    async with asyncio.timeout(timeout):
        while len(events) < n:
            events.extend(await watch.next_batch())
    assert len(events) == n, events
    return events


# ----------------------------------------------------------------------------- basic KV


async def test_create_get_and_revisions(store: Store):
    before = await store.current_revision()
    kv = await store.create(P + "default/a", b"one")
    assert kv.key == P + "default/a" and kv.value == b"one"
    assert kv.create_revision == kv.mod_revision == before + 1
    assert kv.version == 1 and kv.lease == 0
    assert await store.get(P + "default/a") == kv
    assert await store.current_revision() == kv.mod_revision
    kv2 = await store.create(P + "default/b", b"two")
    assert kv2.mod_revision == kv.mod_revision + 1


async def test_create_existing_fails(store: Store):
    kv = await store.create("/k", b"v")
    with pytest.raises(KeyExistsError) as err:
        await store.create("/k", b"other")
    assert err.value.key == "/k"
    assert (await store.get("/k")) == kv


async def test_get_missing(store: Store):
    with pytest.raises(KeyNotFoundError):
        await store.get("/nope")


async def test_update_compare_and_swap(store: Store):
    kv = await store.create("/k", b"v1")
    kv2 = await store.update("/k", b"v2", expected_mod_revision=kv.mod_revision)
    assert kv2.value == b"v2" and kv2.version == 2
    assert kv2.create_revision == kv.create_revision and kv2.mod_revision > kv.mod_revision
    with pytest.raises(ConflictError) as err:
        await store.update("/k", b"stale", expected_mod_revision=kv.mod_revision)
    assert err.value.current == kv2
    assert (await store.get("/k")).value == b"v2"
    kv3 = await store.update("/k", b"v3", expected_mod_revision=None)
    assert kv3.version == 3
    with pytest.raises(KeyNotFoundError):
        await store.update("/missing", b"x", expected_mod_revision=None)
    with pytest.raises(KeyNotFoundError):
        await store.update("/missing", b"x", expected_mod_revision=5)


async def test_delete_compare_and_swap(store: Store):
    kv = await store.create("/k", b"v1")
    kv2 = await store.update("/k", b"v2", expected_mod_revision=kv.mod_revision)
    with pytest.raises(ConflictError) as err:
        await store.delete("/k", expected_mod_revision=kv.mod_revision)
    assert err.value.current == kv2
    deleted = await store.delete("/k", expected_mod_revision=kv2.mod_revision)
    assert deleted == kv2
    assert await store.current_revision() == kv2.mod_revision + 1
    with pytest.raises(KeyNotFoundError):
        await store.get("/k")
    with pytest.raises(KeyNotFoundError):
        await store.delete("/k")
    again = await store.create("/k", b"new")
    assert again.version == 1 and again.create_revision == again.mod_revision


async def test_value_size_limit(store: Store):
    ok = await store.create("/big", b"x" * (1024 * 1024))
    assert len(ok.value) == 1024 * 1024
    with pytest.raises(ValueTooLargeError) as err:
        await store.create("/too-big", b"x" * (MAX_VALUE_BYTES + 1))
    assert err.value.size == MAX_VALUE_BYTES + 1
    with pytest.raises(ValueTooLargeError):
        await store.update("/big", b"x" * (MAX_VALUE_BYTES + 1), expected_mod_revision=None)
    with pytest.raises(KeyNotFoundError):
        await store.get("/too-big")


# -------------------------------------------------------------------------------- range


async def test_range_prefix_order_and_limit(store: Store):
    for name in ["c", "a", "b", "d"]:
        await store.create(P + "ns1/" + name, name.encode())
    await store.create(P + "ns2/x", b"x")
    await store.create("/registry/podsx/other", b"not under the prefix")
    page = await store.range(P + "ns1/")
    assert [kv.key for kv in page.kvs] == [P + "ns1/" + n for n in "abcd"]
    assert not page.more and page.continue_token is None and page.remaining == 0
    assert page.revision == await store.current_revision()
    everything = await store.range(P)
    assert len(everything.kvs) == 5
    limited = await store.range(P, limit=2)
    assert [kv.key for kv in limited.kvs] == [P + "ns1/a", P + "ns1/b"]
    assert limited.more and limited.remaining == 3 and limited.continue_token


async def test_range_pages_read_one_snapshot(store: Store):
    keys = [f"{P}default/pod-{i:02d}" for i in range(7)]
    kvs = {k: await store.create(k, k.encode()) for k in keys}
    first = await store.range(P, limit=3)
    # Writes between pages must not show up in later pages.
    await store.update(keys[5], b"changed", expected_mod_revision=kvs[keys[5]].mod_revision)
    await store.delete(keys[6])
    await store.create(P + "default/pod-99", b"late")
    seen = list(first.kvs)
    token = first.continue_token
    while token:
        page = await store.range(P, limit=3, continue_token=token)
        assert page.revision == first.revision
        seen.extend(page.kvs)
        token = page.continue_token
    assert [kv.key for kv in seen] == keys
    assert [kv.value for kv in seen] == [k.encode() for k in keys]
    now = await store.range(P)
    assert [kv.key for kv in now.kvs] == keys[:6] + [P + "default/pod-99"]


async def test_range_and_get_at_past_revision(store: Store):
    a1 = await store.create(P + "a", b"1")
    b1 = await store.create(P + "b", b"1")
    a2 = await store.update(P + "a", b"2", expected_mod_revision=a1.mod_revision)
    await store.delete(P + "b")
    await store.create(P + "c", b"1")
    at_b1 = await store.range(P, revision=b1.mod_revision)
    assert at_b1.revision == b1.mod_revision
    assert [(kv.key, kv.value) for kv in at_b1.kvs] == [(P + "a", b"1"), (P + "b", b"1")]
    at_a2 = await store.range(P, revision=a2.mod_revision)
    assert [(kv.key, kv.value) for kv in at_a2.kvs] == [(P + "a", b"2"), (P + "b", b"1")]
    assert await store.get(P + "a", revision=a1.mod_revision) == a1
    assert await store.get(P + "b", revision=b1.mod_revision) == b1
    with pytest.raises(KeyNotFoundError):
        await store.get(P + "c", revision=a2.mod_revision)
    with pytest.raises(FutureRevisionError):
        await store.range(P, revision=await store.current_revision() + 10)


async def test_invalid_continue_token(store: Store):
    await store.create(P + "a", b"1")
    await store.create(P + "b", b"1")
    with pytest.raises(InvalidContinueError):
        await store.range(P, limit=1, continue_token="not-a-token!")
    page = await store.range(P, limit=1)
    with pytest.raises(InvalidContinueError):
        await store.range(P, limit=1, continue_token=page.continue_token, revision=1)


# --------------------------------------------------------------------------- compaction


async def test_compaction(store: Store):
    await store.create("/c/b", b"1")
    kv1 = await store.create("/c/a", b"1")
    kv2 = await store.update("/c/a", b"2", expected_mod_revision=kv1.mod_revision)
    page = await store.range("/c/", limit=1)  # keep a token from before the compaction
    kv3 = await store.update("/c/a", b"3", expected_mod_revision=kv2.mod_revision)
    await store.update("/c/a", b"4", expected_mod_revision=kv3.mod_revision)
    await store.compact(kv3.mod_revision)
    assert await store.compact_revision() == kv3.mod_revision
    with pytest.raises(CompactedError) as err:
        await store.get("/c/a", revision=kv2.mod_revision)
    assert err.value.compact_revision == kv3.mod_revision
    with pytest.raises(CompactedError):
        await store.range("/c/", revision=kv1.mod_revision)
    with pytest.raises(CompactedError):
        await store.range("/c/", limit=1, continue_token=page.continue_token)
    # The compaction point itself stays readable.
    at = await store.range("/c/", revision=kv3.mod_revision)
    assert [(kv.key, kv.value) for kv in at.kvs] == [("/c/a", b"3"), ("/c/b", b"1")]
    with pytest.raises(CompactedError):
        await store.compact(kv2.mod_revision)
    with pytest.raises(FutureRevisionError):
        await store.compact(await store.current_revision() + 100)


# -------------------------------------------------------------------------------- watch


async def test_watch_from_now_sees_changes_with_prev_values(store: Store):
    watch = await store.watch(P)
    kv = await store.create(P + "a", b"1")
    await store.create("/registry/nodes/n1", b"other prefix")
    kv2 = await store.update(P + "a", b"2", expected_mod_revision=kv.mod_revision)
    await store.delete(P + "a")
    events = await next_events(watch, 3)
    assert [e.type for e in events] == [EventType.PUT, EventType.PUT, EventType.DELETE]
    assert events[0].kv == kv and events[0].prev_kv is None
    assert events[1].kv == kv2 and events[1].prev_kv == kv
    assert events[2].kv.key == P + "a" and events[2].prev_kv == kv2
    assert events[2].revision == kv2.mod_revision + 1
    await watch.cancel()


async def test_watch_from_past_revision_replays_history(store: Store):
    kv1 = await store.create(P + "a", b"1")
    kv2 = await store.create(P + "b", b"1")
    watch = await store.watch(P, start_revision=kv1.mod_revision)
    kv3 = await store.update(P + "a", b"2", expected_mod_revision=kv1.mod_revision)
    events = await next_events(watch, 3)
    assert [e.kv for e in events] == [kv1, kv2, kv3]
    assert [e.revision for e in events] == sorted(e.revision for e in events)
    await watch.cancel()


async def test_watch_every_watcher_gets_every_event_in_order(store: Store):
    watches = [await store.watch(P) for _ in range(5)]
    kvs = await asyncio.gather(*(store.create(f"{P}k{i:03d}", b"v") for i in range(50)))
    expected = sorted(kv.mod_revision for kv in kvs)
    for watch in watches:
        events = await next_events(watch, 50)
        assert [e.revision for e in events] == expected
        await watch.cancel()


async def test_watch_from_compacted_revision_fails(store: Store):
    kv1 = await store.create("/w/a", b"1")
    await store.update("/w/a", b"2", expected_mod_revision=kv1.mod_revision)
    kv3 = await store.update("/w/a", b"3", expected_mod_revision=None)
    await store.compact(kv3.mod_revision)
    with pytest.raises(CompactedError) as err:
        watch = await store.watch("/w/", start_revision=kv1.mod_revision)
        await asyncio.wait_for(watch.next_batch(), 5)
    assert err.value.compact_revision == kv3.mod_revision


async def test_watch_cancel_ends_iteration(store: Store):
    watch = await store.watch(P)
    await store.create(P + "a", b"1")

    async def consume():
        return [event async for event in watch]

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    await watch.cancel()
    events = await asyncio.wait_for(consumer, 5)
    assert [e.kv.key for e in events] in ([P + "a"], [])
    await watch.cancel()  # idempotent


# ------------------------------------------------------------------------------- leases


async def test_lease_attach_info_keepalive_revoke(store: Store):
    lease = await store.grant_lease(30)
    a = await store.create("/l/a", b"1", lease=lease)
    await store.create("/l/b", b"1", lease=lease)
    assert a.lease == lease
    info = await store.lease_info(lease)
    assert info.id == lease and info.ttl == 30 and 0 < info.remaining <= 30
    assert set(info.keys) == {"/l/a", "/l/b"}
    assert await store.keep_alive(lease) == 30
    watch = await store.watch("/l/")
    await store.revoke_lease(lease)
    events = await next_events(watch, 2)
    assert {e.type for e in events} == {EventType.DELETE}
    assert {e.kv.key for e in events} == {"/l/a", "/l/b"}
    assert events[0].revision == events[1].revision, "one revocation is one revision"
    assert (await store.range("/l/")).kvs == []
    with pytest.raises(LeaseNotFoundError):
        await store.lease_info(lease)
    with pytest.raises(LeaseNotFoundError):
        await store.keep_alive(lease)
    with pytest.raises(LeaseNotFoundError):
        await store.revoke_lease(lease)
    await watch.cancel()


async def test_lease_unknown_on_write(store: Store):
    with pytest.raises(LeaseNotFoundError):
        await store.create("/l/x", b"1", lease=987654321)
    with pytest.raises(KeyNotFoundError):
        await store.get("/l/x")


async def test_update_moves_key_between_leases(store: Store):
    first = await store.grant_lease(30)
    second = await store.grant_lease(30)
    kv = await store.create("/l/k", b"1", lease=first)
    await store.update("/l/k", b"2", expected_mod_revision=kv.mod_revision, lease=second)
    assert (await store.lease_info(first)).keys == ()
    assert (await store.lease_info(second)).keys == ("/l/k",)
    await store.revoke_lease(first)
    assert (await store.get("/l/k")).value == b"2"
    await store.revoke_lease(second)
    with pytest.raises(KeyNotFoundError):
        await store.get("/l/k")


@pytest.mark.slow
async def test_lease_expiry_deletes_keys_with_events(store: Store):
    lease = await store.grant_lease(2)
    await store.create("/exp/a", b"1", lease=lease)
    watch = await store.watch("/exp/")
    events = await next_events(watch, 1, timeout=10)
    assert events[0].type is EventType.DELETE and events[0].prev_kv.value == b"1"
    with pytest.raises(KeyNotFoundError):
        await store.get("/exp/a")
    with pytest.raises(LeaseNotFoundError):
        await store.lease_info(lease)
    await watch.cancel()


# ------------------------------------------------------------------------------- closed


async def test_closed_store_is_unavailable(store: Store):
    await store.create("/k", b"v")
    await store.close()
    with pytest.raises(UnavailableError):
        await store.get("/k")
    with pytest.raises(UnavailableError):
        await store.create("/k2", b"v")
