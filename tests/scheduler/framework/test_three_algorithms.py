"""One workload, three algorithms, three placements: how the scheduler's design evolved.

The same three nodes and the same pod go to v1.0's algorithm (V1.0Provider), v1.5's
(DefaultProvider) and the 1.31 framework's default profile, each a real Scheduler against a
real API server, and each puts the pod where its scoring says:

- node `a` is the emptiest but carries a PreferNoSchedule taint; v1.0 knows nothing of taints
  and its LeastRequestedPriority picks the emptiest node: **a**;
- v1.5 adds TaintTolerationPriority (a scores 0 of 10) and BalancedResourceAllocation; between
  b and c, LeastRequested prefers the emptier **c**;
- the framework scores LeastAllocated on 0-100 and adds ImageLocality: `b` already has the
  pod's 3 GB image, which outweighs c's lighter load: **b**.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import NODES, PODS
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.framework.config.load import default_configuration
from minikube_py.scheduler.scheduler import Scheduler
from tests.apiserver.conftest import start_api

IMAGE = "registry.example/big-model:1"


def node(name: str, *, taint: bool = False, has_image: bool = False) -> dict:
    status = {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"},
              "capacity": {"cpu": "4", "memory": "4Gi", "pods": "110"},
              "conditions": [{"type": "Ready", "status": "True"}]}
    if has_image:
        status["images"] = [{"names": [IMAGE], "sizeBytes": 3_000_000_000}]
    spec = {"taints": [{"key": "maintenance", "effect": "PreferNoSchedule"}]} if taint else {}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": spec, "status": status}


def pod(name: str, cpu: str, memory: str, node_name: str = "", image: str = "busybox") -> dict:
    spec = {"containers": [{"name": "c", "image": image,
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name}, "spec": spec}


ALGORITHMS = {
    "V1.0Provider": (lambda: from_provider("V1.0Provider"), "a"),
    "DefaultProvider (v1.5)": (lambda: from_provider("DefaultProvider"), "c"),
    "framework default profile (1.31)": (default_configuration, "b"),
}


@pytest.fixture
async def client(tmp_path) -> AsyncIterator[Client]:
    api, runner, store, session = await start_api(tmp_path)
    c = Client(HTTPTransport(api.url))
    try:
        await c.create(NODES, node("a", taint=True))
        await c.create(NODES, node("b", has_image=True))
        await c.create(NODES, node("c"))
        # what already runs: b 1.5 CPU / 1.5 GiB, c 1 CPU / 1 GiB (cpu and memory in step, so
        # balanced allocation scores every node alike)
        await c.create(PODS, pod("on-b", "1500m", "1536Mi", "b"), "default")
        await c.create(PODS, pod("on-c", "1", "1Gi", "c"), "default")
        yield c
    finally:
        await c.close()
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
async def test_each_algorithm_places_the_same_pod_where_its_scores_say(client: Client,
                                                                      algorithm: str) -> None:
    build, expected = ALGORITHMS[algorithm]
    scheduler = Scheduler(Client(client.transport), build())
    task = asyncio.create_task(scheduler.run())
    try:
        await client.create(PODS, pod("newcomer", "1", "1Gi", image=IMAGE), "default")
        for _ in range(150):
            placed = (await client.get(PODS, "newcomer", "default"))["spec"].get("nodeName")
            if placed:
                break
            await asyncio.sleep(0.1)
        assert placed == expected, scheduler.attempts.get("default/newcomer")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
