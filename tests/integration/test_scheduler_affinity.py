"""A real API server + the scheduler (and the replication manager), no kubelets: Ready nodes
are created directly.

- An RC whose pods carry required anti-affinity on kubernetes.io/hostname gets one replica
  per node; the replicas left over stay Pending with `FailedScheduling` naming the reason
  and PodScheduled=False.
- A pod whose claim is bound to a PV in another zone stays Pending with
  "node(s) had no available volume zone"; a pod whose claim is unbound with "pod has unbound
  immediate PersistentVolumeClaims"; a pod whose PV is in the node's zone is bound.

The scheduler runs on the shared InformerFactory, as `minikube-py start` wires it, so its
PV/PVC informers come from the same factory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import (
    EVENTS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    REPLICATION_CONTROLLERS,
)
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.replication import ReplicationManager
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.scheduler import Scheduler
from tests.apiserver.conftest import start_api
from tests.integration.test_cluster_controllers import eventually

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"
ZONE = "failure-domain.beta.kubernetes.io/zone"


def node(name: str, zone: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, nodes: list[Obj], *, controllers: bool = False
                  ) -> AsyncIterator[tuple[Client, str]]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    component_client = Client(HTTPTransport(api.url))
    informers = InformerFactory(component_client)
    ctx = ControllerContext(component_client, informers)
    managers = [ReplicationManager(ctx)] if controllers else []
    scheduler = Scheduler(component_client, from_provider("DefaultProvider"), informers=informers,
                          initial_backoff=0.2, max_backoff=1.0)
    for n in nodes:
        await client.create(NODES, n)
    tasks = [asyncio.create_task(scheduler.run()), *(asyncio.create_task(m.run()) for m in managers)]
    informers.start()
    try:
        yield client, api.url
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await informers.stop()
        await ctx.close()
        await component_client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def failed_scheduling(client: Client, pod: str) -> list[str]:
    events = (await client.list(EVENTS, "default"))["items"]
    return [e["message"] for e in events if e["reason"] == "FailedScheduling"
            and e["involvedObject"]["name"] == pod]


def unschedulable_condition(pod: Obj) -> Obj | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or ()
                 if c["type"] == "PodScheduled" and c["status"] == "False"), None)


async def test_required_anti_affinity_spreads_replicas_one_per_node(tmp_path: Path) -> None:
    nodes = [node(f"node-{i}", f"z{i % 2}") for i in range(3)]
    async with cluster(tmp_path, nodes, controllers=True) as (client, _url):
        labels = {"app": "web"}
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": HOST}]}}
        await client.create(REPLICATION_CONTROLLERS, {
            "apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": "web"},
            "spec": {"replicas": 5, "selector": labels, "template": {
                "metadata": {"labels": labels},
                "spec": {"affinity": anti, "containers": [{"name": "c", "image": "nginx"}]}}}},
            "default")

        async def settled() -> list[Obj] | None:
            """5 replicas, 3 bound, 2 marked unschedulable"""
            pods = (await client.list(PODS, "default"))["items"]
            bound = [p for p in pods if p["spec"].get("nodeName")]
            pending = [p for p in pods if unschedulable_condition(p)]
            return pods if len(pods) == 5 and len(bound) == 3 and len(pending) == 2 else None

        pods = await eventually(settled, 15)
        hosts = sorted(p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName"))
        assert hosts == ["node-0", "node-1", "node-2"]  # one per node
        reason = ("0/3 nodes are available: 3 node(s) didn't match pod affinity/anti-affinity, "
                  "3 node(s) didn't satisfy existing pods anti-affinity rules.")
        for p in pods:
            if not p["spec"].get("nodeName"):
                assert unschedulable_condition(p)["message"] == reason
                name = p["metadata"]["name"]

                async def event(name: str = name) -> list[str]:
                    """FailedScheduling event recorded"""
                    return await failed_scheduling(client, name)

                assert reason in await eventually(event, 15)


async def test_zone_mismatched_volume_keeps_its_pod_pending(tmp_path: Path) -> None:
    async with cluster(tmp_path, [node("node-a", "a")]) as (client, url):
        for name, zone in (("pv-b", "b"), ("pv-a", "a")):
            await client.create(PERSISTENT_VOLUMES, {
                "apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": {ZONE: zone}},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                         "persistentVolumeReclaimPolicy": "Retain",
                         "gcePersistentDisk": {"pdName": f"disk-{zone}"}}})
        for claim, volume in (("data-b", "pv-b"), ("data-a", "pv-a"), ("loose", None)):
            spec: Obj = {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}}
            if volume:
                spec["volumeName"] = volume
            await client.create(PERSISTENT_VOLUME_CLAIMS, {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim}, "spec": spec}, "default")
        for pod, claim in (("wrong-zone", "data-b"), ("unbound", "loose"), ("right-zone", "data-a")):
            await client.create(PODS, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod},
                "spec": {"containers": [{"name": "c", "image": "x"}],
                         "volumes": [{"name": "data",
                                      "persistentVolumeClaim": {"claimName": claim}}]}},
                "default")

        async def bound() -> bool:
            """right-zone bound"""
            return bool((await client.get(PODS, "right-zone", "default"))["spec"].get("nodeName"))

        await eventually(bound, 15)
        expected = {
            "wrong-zone": "0/1 nodes are available: 1 node(s) had no available volume zone.",
            "unbound": "0/1 nodes are available: 1 pod has unbound immediate "
                       "PersistentVolumeClaims.",
        }
        for pod, message in expected.items():
            async def reported(pod: str = pod) -> list[str]:
                """FailedScheduling recorded"""
                return await failed_scheduling(client, pod)

            assert message in await eventually(reported, 15)
            got = await client.get(PODS, pod, "default")
            assert not got["spec"].get("nodeName")
            assert unschedulable_condition(got)["message"] == message
