"""Event recorder aggregation and leader election, against a real API server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.leaderelection import LeaderElector
from minikube_py.client.record import EventRecorder
from minikube_py.client.resources import ENDPOINTS, EVENTS, PODS
from tests.apiserver.conftest import pod, start_api


@pytest.fixture
async def cluster(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    try:
        yield api, client
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_repeated_events_are_aggregated(cluster):
    api, client = cluster
    target = await client.create(PODS, pod("web"), "default")
    recorder = EventRecorder(client, "default-scheduler")
    for _ in range(3):
        recorder.event(target, "Warning", "FailedScheduling", "0/3 nodes are available")
        await recorder.flush()
    recorder.event(target, "Normal", "Scheduled", "Successfully assigned default/web to n1")
    await recorder.flush()
    events = (await client.list(EVENTS, "default",
                                field_selector="involvedObject.name=web"))["items"]
    by_reason = {e["reason"]: e for e in events}
    assert set(by_reason) == {"FailedScheduling", "Scheduled"}
    failed = by_reason["FailedScheduling"]
    assert failed["count"] == 3 and failed["source"]["component"] == "default-scheduler"
    assert failed["involvedObject"]["uid"] == target["metadata"]["uid"]
    assert by_reason["Scheduled"]["count"] == 1


async def test_only_one_candidate_leads_and_a_dead_leader_is_replaced(cluster):
    api, client = cluster
    kw = dict(name="kube-scheduler", lease_duration=1.0, renew_deadline=0.6, retry_period=0.1,
              lock_type="endpoints")  # v1.3's lock (test_leader_locks.py: every lock type)
    a = LeaderElector(client, identity="a", **kw)
    b = LeaderElector(client, identity="b", **kw)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()  # a holds an unexpired lease
    assert await a.try_acquire_or_renew()      # renewal by the holder
    leading = asyncio.Event()

    async def lead() -> None:
        leading.set()
        await asyncio.sleep(3600)

    # a stops renewing (it "died"); b takes over once the lease it observed has expired
    task = asyncio.create_task(b.run(lead))
    await asyncio.wait_for(leading.wait(), 5)
    assert b.is_leader
    lock = await client.get(ENDPOINTS,
                            "kube-scheduler", "kube-system")
    record = lock["metadata"]["annotations"]["control-plane.alpha.kubernetes.io/leader"]
    assert '"holderIdentity":"b"' in record and '"leaderTransitions":1' in record
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
