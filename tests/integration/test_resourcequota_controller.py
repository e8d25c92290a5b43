"""The resourcequota controller against a real API server: usage recalculated from the
objects, replenished when a pod finishes or an object goes away, and corrected when it
drifted (here: the server runs without the ResourceQuota admission plugin, so nothing but the
controller writes status.used)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import CONFIGMAPS, NAMESPACES, PODS, RESOURCE_QUOTAS, SERVICES
from minikube_py.controllers.resourcequota import ResourceQuotaController
from tests.apiserver.conftest import start_api
from tests.integration.test_cluster_controllers import eventually, pod_body, running

NS = "team"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    _, runner, store, session = await start_api(tmp_path, admission_control=())
    c = Client(InProcessTransport(runner.app))
    try:
        await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": NS}})
        yield c
    finally:
        await c.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def used(client: Client) -> dict:
    quota = await client.get(RESOURCE_QUOTAS, "q", NS)
    return (quota.get("status") or {}).get("used") or {}


async def test_usage_is_recalculated_and_replenished(client: Client) -> None:
    for name in ("a", "b"):
        body = pod_body(name, namespace=NS)
        body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "250m"}}
        await client.create(PODS, body, NS)
    await client.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                   "metadata": {"name": "web", "namespace": NS},
                                   "spec": {"ports": [{"port": 80}], "selector": {"a": "b"}}}, NS)
    await client.create(RESOURCE_QUOTAS, {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"pods": "10", "requests.cpu": "2", "services": "3",
                          "services.nodeports": "2", "count/configmaps": "4"}}}, NS)
    # the period is long: everything below is the event-driven part
    async with running(client, ResourceQuotaController, resource_quota_sync_period=3600):
        async def initial() -> bool:
            """a new quota is synced at once"""
            return await used(client) == {"pods": "2", "requests.cpu": "500m", "services": "1",
                                          "services.nodeports": "0", "count/configmaps": "0"}
        await eventually(initial)

        await client.delete(PODS, "a", NS, grace_period_seconds=0)

        async def replenished() -> bool:
            """a deleted pod frees its usage"""
            u = await used(client)
            return u["pods"] == "1" and u["requests.cpu"] == "250m"
        await eventually(replenished)

        pod = await client.get(PODS, "b", NS)
        pod["status"]["phase"] = "Succeeded"
        await client.update_status(PODS, pod)

        async def finished() -> bool:
            """a pod that finished counts no more"""
            return (await used(client))["pods"] == "0"
        await eventually(finished)

        svc = await client.get(SERVICES, "web", NS)
        svc["spec"]["type"] = "NodePort"
        await client.update(SERVICES, svc)

        async def node_port() -> bool:
            """a service that became a NodePort counts its node port"""
            return (await used(client))["services.nodeports"] == "1"
        await eventually(node_port)


async def test_the_periodic_resync_corrects_drift(client: Client) -> None:
    await client.create(RESOURCE_QUOTAS, {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"count/configmaps": "4"}}}, NS)
    async with running(client, ResourceQuotaController, resource_quota_sync_period=0.1):
        async def synced() -> bool:
            """first sync"""
            return await used(client) == {"count/configmaps": "0"}
        await eventually(synced)
        # nothing watched changes when a configmap is created: only the resync sees it
        await client.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "c", "namespace": NS}}, NS)

        async def resynced() -> bool:
            """the periodic resync counts it"""
            return await used(client) == {"count/configmaps": "1"}
        await eventually(resynced)


async def test_quotas_count_themselves(tmp_path: Path) -> None:
    """`resourcequotas` / `count/resourcequotas`: accepted (was 422), charged by admission when
    another quota is created, recalculated by the controller, released when one goes away."""
    _, runner, store, session = await start_api(tmp_path, admission_control=("ResourceQuota",))
    c = Client(InProcessTransport(runner.app))
    try:
        await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": NS}})

        def quota(name: str, hard: dict) -> dict:
            return {"apiVersion": "v1", "kind": "ResourceQuota",
                    "metadata": {"name": name, "namespace": NS}, "spec": {"hard": hard}}

        await c.create(RESOURCE_QUOTAS, quota("q", {"resourcequotas": "2",
                                                    "count/resourcequotas": "2"}), NS)
        async with running(c, ResourceQuotaController, resource_quota_sync_period=3600):
            async def itself() -> bool:
                """the quota counts itself"""
                return await used(c) == {"resourcequotas": "1", "count/resourcequotas": "1"}
            await eventually(itself)
            await c.create(RESOURCE_QUOTAS, quota("other", {"pods": "1"}), NS)
            assert await used(c) == {"resourcequotas": "2", "count/resourcequotas": "2"}
            with pytest.raises(StatusError) as exc:
                await c.create(RESOURCE_QUOTAS, quota("third", {"pods": "1"}), NS)
            assert exc.value.code == 403
            assert exc.value.status()["message"] == (
                'resourcequotas "third" is forbidden: exceeded quota: q, requested: '
                "count/resourcequotas=1,resourcequotas=1, used: "
                "count/resourcequotas=2,resourcequotas=2, limited: "
                "count/resourcequotas=2,resourcequotas=2")
            await c.delete(RESOURCE_QUOTAS, "other", NS)

            async def released() -> bool:
                """a deleted quota frees its count"""
                return await used(c) == {"resourcequotas": "1", "count/resourcequotas": "1"}
            await eventually(released)
    finally:
        await c.close()
        await session.close()
        await runner.cleanup()
        await store.close()
