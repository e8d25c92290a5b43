"""Node heartbeats through Leases (1.17+), against a real API server with the real kubelet
pool and node lifecycle controller: each kubelet renews kube-node-lease/<node> (owned by its
Node, holder = node name, 40 s), posts its status only on change or every report period, and
the node lifecycle controller takes a renewed lease as a heartbeat — a node whose status is
stale but whose lease is fresh stays Ready, one whose lease stops goes Unknown. Status mode
(v1.0) keeps posting full status and writes no lease."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from minikube_py.api import meta
from minikube_py.client import Client
from minikube_py.client.resources import LEASES, NODES
from minikube_py.controllers.node_lifecycle import NodeLifecycleController
from minikube_py.kubelet import KubeletConfig, KubeletPool
from tests.integration.test_cluster_controllers import api_client, running
from tests.polling import eventually

#: lease renewed every 0.1 s, status computed every 0.1 s but posted only every 60 s
LEASE = KubeletConfig(node_status_update_frequency=0.1, node_lease_renew_interval=0.1,
                      node_status_report_frequency=60.0, image_pull_seconds=0.01,
                      container_start_seconds=0.01, record_events=False)
STATUS = replace(LEASE, heartbeat_mode="status")
#: a grace period of 15 renewals; the status of a lease-mode node gets older than that, a
#: status-mode node's lastHeartbeatTime (whole seconds) moves every second
NODE_OPTIONS = {"node_monitor_period": 0.05, "node_monitor_grace_period": 1.5,
                "node_startup_grace_period": 1.5, "enable_taint_manager": False}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    async with api_client(tmp_path) as c:
        yield c


@pytest.fixture
async def pool(client: Client) -> AsyncIterator[KubeletPool]:
    pool = KubeletPool(client, port=-1)
    pool.add_nodes("l", 2, LEASE)
    pool.add_node("s-0", STATUS)
    await pool.start()
    await pool.wait_ready(5)
    try:
        yield pool
    finally:
        await pool.stop()


def ready_of(node: dict) -> dict:
    return next(c for c in node["status"]["conditions"] if c["type"] == "Ready")


async def test_each_lease_mode_node_renews_its_lease(client: Client, pool: KubeletPool) -> None:
    async def leases() -> dict | None:
        items = (await client.list(LEASES, "kube-node-lease"))["items"]
        return {i["metadata"]["name"]: i for i in items} if len(items) == 2 else None

    by_name = await eventually(leases)
    assert set(by_name) == {"l-0", "l-1"}  # none for the status-mode node
    node = await client.get(NODES, "l-0")
    lease = by_name["l-0"]
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "l-0", "uid": node["metadata"]["uid"]}]
    assert lease["spec"]["holderIdentity"] == "l-0"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    first = meta.parse_rfc3339(lease["spec"]["renewTime"])
    kubelet = pool.kubelet("l-0")
    renewals, posts = kubelet.lease_renewals, kubelet.heartbeats
    await asyncio.sleep(0.6)
    assert kubelet.lease_renewals >= renewals + 3
    later = await client.get(LEASES, "l-0", "kube-node-lease")
    assert meta.parse_rfc3339(later["spec"]["renewTime"]) > first
    # the status is not re-posted while nothing changed (report frequency 60 s)...
    assert kubelet.heartbeats == posts
    # ...while the status-mode node posts it every period
    status_node = pool.kubelet("s-0")
    assert status_node.heartbeats >= 3 and status_node.lease_renewals == 0


async def test_a_changed_status_is_posted_at_once(client: Client, pool: KubeletPool) -> None:
    """Someone else wrote the kubelet's conditions: the next status check writes them back,
    without waiting for the report frequency (upstream tryUpdateNodeStatus)."""
    kubelet = pool.kubelet("l-1")
    await client.patch(NODES, "l-1", {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}}, patch_type="strategic",
        subresource="status")

    async def healed() -> bool:
        return ready_of(await client.get(NODES, "l-1"))["status"] == "True"

    assert await eventually(healed)

    async def counted() -> bool:  # the PATCH has returned to the kubelet too
        return kubelet.heartbeats >= 2

    assert await eventually(counted)
    assert kubelet.heartbeats <= 3  # one post for the change (plus one racing the GET), no more


async def test_node_lifecycle_reads_health_from_leases(client: Client,
                                                       pool: KubeletPool) -> None:
    before = {name: ready_of(await client.get(NODES, name)) for name in ("l-0", "l-1", "s-0")}
    posts = {name: pool.kubelet(name).heartbeats for name in ("l-0", "l-1")}
    async with running(client, NodeLifecycleController, **NODE_OPTIONS):
        # more than a grace period: the lease-mode nodes' status is stale, their leases
        # fresh; never marked Unknown (the kubelet would post its status back at once, so
        # the Ready transition time and the status posts tell)
        await asyncio.sleep(2.0)
        for name in ("l-0", "l-1", "s-0"):
            ready = ready_of(await client.get(NODES, name))
            assert ready["status"] == "True", name
            assert ready["lastTransitionTime"] == before[name]["lastTransitionTime"], name
        assert {name: pool.kubelet(name).heartbeats for name in ("l-0", "l-1")} == posts
        # l-0's kubelet stops: no more renewals; the node goes Unknown after the grace period
        await pool.stop_node("l-0")

        async def unknown() -> dict | None:
            ready = ready_of(await client.get(NODES, "l-0"))
            return ready if ready["status"] == "Unknown" else None

        ready = await eventually(unknown)
        assert ready["reason"] == "NodeStatusUnknown"
        assert ready["message"] == "Kubelet stopped posting node status."
        assert ready_of(await client.get(NODES, "l-1"))["status"] == "True"
        assert ready_of(await client.get(NODES, "s-0"))["status"] == "True"
        # it comes back: Ready again (the kubelet posts its status on start)
        await pool.start_node("l-0")
        await asyncio.sleep(0.8)
        assert ready_of(await client.get(NODES, "l-0"))["status"] == "True"
