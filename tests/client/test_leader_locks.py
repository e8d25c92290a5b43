"""Leader election with every lock type against a real API server: two candidates contend, a
holder renews, a dead holder is replaced once its lease has expired by the other's clock, a
released lock is taken at once, and the record sits where upstream puts it (Lease spec or the
leader annotation of an Endpoints/ConfigMap, or both for the migration locks)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.leaderelection import LeaderElector
from minikube_py.client.resourcelock import LEADER_ANNOTATION, LOCK_TYPES
from minikube_py.client.resources import CONFIGMAPS, ENDPOINTS, LEASES
from tests.apiserver.conftest import start_api


@pytest.fixture
async def client(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    try:
        yield client
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


class Clock:
    """A clock the test moves, so expiry needs no sleeping."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def stored_records(client: Client, lock_type: str) -> dict[str, dict]:
    """The record(s) as stored: by where they live."""
    out = {}
    if "leases" in lock_type:
        lease = await client.get(LEASES, "kube-scheduler", "kube-system")
        out["lease"] = lease["spec"]
    for kind, resource in (("endpoints", ENDPOINTS), ("configmaps", CONFIGMAPS)):
        if lock_type.startswith(kind):
            obj = await client.get(resource, "kube-scheduler", "kube-system")
            out[kind] = orjson.loads(obj["metadata"]["annotations"][LEADER_ANNOTATION])
    return out


@pytest.mark.parametrize("lock_type", LOCK_TYPES)
async def test_two_candidates_contend_and_the_second_takes_over_after_expiry(
        client: Client, lock_type: str) -> None:
    clock = Clock()
    kw = {"name": "kube-scheduler", "lock_type": lock_type, "lease_duration": 15.0, "clock": clock}
    a = LeaderElector(client, identity="a", **kw)
    b = LeaderElector(client, identity="b", **kw)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()  # a holds an unexpired lease
    clock.now += 10
    assert await a.try_acquire_or_renew()      # a renews (fast path)
    clock.now += 10                            # b saw the record change 10 s ago: still valid
    assert not await b.try_acquire_or_renew()
    records = await stored_records(client, lock_type)
    assert len(records) == (2 if lock_type.endswith("leases") and lock_type != "leases" else 1)
    for where, record in records.items():
        holder = record["holderIdentity"]
        assert holder == "a", (where, record)
        assert record["leaseDurationSeconds"] == 15
    # a dies; 15 s after b last saw the record change, b takes over
    clock.now += 16
    assert await b.try_acquire_or_renew()
    assert b.is_leader
    records = await stored_records(client, lock_type)
    for where, record in records.items():
        assert record["holderIdentity"] == "b", (where, record)
        transitions = record.get("leaseTransitions", record.get("leaderTransitions"))
        assert transitions == 1, (where, record)
    # the old leader comes back: its fast path hits a conflict, then it sees b's valid lease
    assert not await a.try_acquire_or_renew()
    assert not a.is_leader


@pytest.mark.parametrize("lock_type", ["leases", "endpoints"])
async def test_release_lets_the_other_candidate_in_at_once(client: Client,
                                                           lock_type: str) -> None:
    clock = Clock()
    kw = {"name": "kube-scheduler", "lock_type": lock_type, "lease_duration": 15.0, "clock": clock}
    a = LeaderElector(client, identity="a", **kw)
    b = LeaderElector(client, identity="b", **kw)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    assert await a.release()
    clock.now += 1.5  # the released record's 1 s lease, by b's observation of the change
    assert await b.try_acquire_or_renew()


async def test_migration_lock_and_old_lock_exclude_each_other(client: Client) -> None:
    """endpointsleases writes both objects, so a candidate still on `endpoints` (an old
    component) sees its leader, and the other way round."""
    clock = Clock()
    kw = {"name": "kube-scheduler", "lease_duration": 15.0, "clock": clock}
    new = LeaderElector(client, identity="new", lock_type="endpointsleases", **kw)
    old = LeaderElector(client, identity="old", lock_type="endpoints", **kw)
    leases_only = LeaderElector(client, identity="lease-only", lock_type="leases", **kw)
    assert await new.try_acquire_or_renew()
    assert not await old.try_acquire_or_renew()
    assert not await leases_only.try_acquire_or_renew()


async def test_run_leads_then_a_standby_takes_over_when_the_leader_stops(
        client: Client) -> None:
    kw = {"name": "kube-scheduler", "lease_duration": 1.0, "renew_deadline": 0.6,
          "retry_period": 0.1}
    a = LeaderElector(client, identity="a", **kw)
    b = LeaderElector(client, identity="b", **kw)
    a_leads, b_leads = asyncio.Event(), asyncio.Event()

    async def lead(event: asyncio.Event) -> None:
        event.set()
        await asyncio.sleep(3600)

    task_a = asyncio.create_task(a.run(lambda: lead(a_leads)))
    await asyncio.wait_for(a_leads.wait(), 5)
    task_b = asyncio.create_task(b.run(lambda: lead(b_leads)))
    await asyncio.sleep(0.5)
    assert not b_leads.is_set()  # a renews every 0.1 s
    task_a.cancel()  # a dies without releasing
    await asyncio.gather(task_a, return_exceptions=True)
    await asyncio.wait_for(b_leads.wait(), 5)
    lease = await client.get(LEASES, "kube-scheduler", "kube-system")
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    task_b.cancel()
    await asyncio.gather(task_b, return_exceptions=True)
