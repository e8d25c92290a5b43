"""API server + scheduler(s) over real sockets: 20 mixed nodes, 500 pods.

Every feasible pod ends bound to a node that fits it; infeasible pods get FailedScheduling
events with the right reasons and PodScheduled=False; no node is over-committed; two
schedulers racing on the same pods never bind one pod twice.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS
from minikube_py.scheduler.factory import from_policy, from_provider
from minikube_py.scheduler.nodeinfo import pod_requests
from minikube_py.scheduler.scheduler import Scheduler
from tests.apiserver.conftest import start_api


def node(i: int) -> dict:
    big = i % 4 == 0
    labels = {"kubernetes.io/hostname": f"node-{i}", "disk": "ssd" if i % 2 else "hdd",
              "zone": f"z{i % 3}"}
    spec: dict = {}
    if i % 5 == 4:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": labels},
            "spec": spec,
            # 16 usable nodes: 4 x 32 + 12 x 8 = 224 cpus for 500 pods of 100-500m
            "status": {"capacity": {"cpu": "32" if big else "8", "memory": "64Gi" if big else "16Gi",
                                    "pods": "110"},
                       "allocatable": {"cpu": "32" if big else "8",
                                       "memory": "64Gi" if big else "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(i: int, rng: random.Random) -> dict:
    cpu = rng.choice(["100m", "250m", "500m"])
    container: dict = {"name": "c", "image": "nginx",
                       "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}
    spec: dict = {"containers": [container]}
    if i % 3 == 0:
        spec["nodeSelector"] = {"disk": "ssd"}
    if i % 10 == 0:
        # 50 pods over 10 host ports: 5 per port, so every one fits somewhere
        container["ports"] = [{"containerPort": 80, "hostPort": 8000 + (i // 10) % 10}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": f"a{i % 7}"}},
            "spec": spec}


INFEASIBLE = [
    ("huge", {"containers": [{"name": "c", "image": "x",
                              "resources": {"requests": {"cpu": "640"}}}]}, "Insufficient cpu"),
    ("nowhere", {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"disk": "nvme"}},
     "node(s) didn't match node selector"),
]


async def wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.2)


@pytest.mark.slow
async def test_500_pods_onto_20_nodes_with_two_racing_schedulers(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    schedulers = []
    tasks = []
    try:
        for i in range(20):
            await client.create(NODES, node(i))
        algorithm = from_policy({"predicates": [{"name": n} for n in (
            "PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName",
            "PodToleratesNodeTaints")], "priorities": [
            {"name": "LeastRequestedPriority", "weight": 1},
            {"name": "BalancedResourceAllocation", "weight": 1},
            {"name": "SelectorSpreadPriority", "weight": 1}]})
        for seed in (1, 2):  # two schedulers of the same name race for every pod
            sched = Scheduler(Client(HTTPTransport(api.url)), algorithm, seed=seed,
                              initial_backoff=0.2, max_backoff=1.0)
            schedulers.append(sched)
            tasks.append(asyncio.create_task(sched.run()))
        rng = random.Random(7)
        sem = asyncio.Semaphore(32)

        async def create(body: dict) -> None:
            async with sem:
                await client.create(PODS, body, "default")

        await asyncio.gather(*(create(pod(i, rng)) for i in range(500)))
        for name, spec, _ in INFEASIBLE:
            await client.create(PODS, {"metadata": {"name": name}, "spec": spec}, "default")

        async def all_feasible_bound() -> bool:
            pods = (await client.list(PODS, "default"))["items"]
            return sum(1 for p in pods if p["spec"].get("nodeName")) == 500

        await wait_for(all_feasible_bound, 90)
        nodes = {n["metadata"]["name"]: n for n in (await client.list(NODES))["items"]}
        pods = (await client.list(PODS, "default"))["items"]
        used: dict[str, list[int]] = {n: [0, 0] for n in nodes}
        ports: dict[str, list[int]] = {n: [] for n in nodes}
        for p in pods:
            name = p["metadata"]["name"]
            where = p["spec"].get("nodeName")
            if name in ("huge", "nowhere"):
                assert not where
                continue
            target = nodes[where]
            labels = target["metadata"]["labels"]
            assert all(labels.get(k) == v for k, v in (p["spec"].get("nodeSelector") or {}).items())
            assert not target["spec"].get("taints"), f"{name} landed on tainted {where}"
            req = pod_requests(p)
            used[where][0] += req.milli_cpu
            used[where][1] += req.memory
            ports[where] += [c["hostPort"] for c in p["spec"]["containers"][0].get("ports", [])]
        for name, (cpu, memory) in used.items():
            cap = nodes[name]["status"]["allocatable"]
            assert cpu <= int(cap["cpu"]) * 1000, f"{name} over-committed on cpu"
            assert len(ports[name]) == len(set(ports[name])), f"{name} has a host-port clash"

        # exactly one successful binding per pod across both schedulers
        events = (await client.list(EVENTS, "default"))["items"]
        scheduled = [e for e in events if e["reason"] == "Scheduled"]
        assert sorted(e["involvedObject"]["name"] for e in scheduled) == sorted(
            p["metadata"]["name"] for p in pods if p["spec"].get("nodeName"))

        async def failed_events_written() -> bool:
            evs = (await client.list(EVENTS, "default", field_selector="reason=FailedScheduling"))
            return {e["involvedObject"]["name"] for e in evs["items"]} >= {"huge", "nowhere"}

        await wait_for(failed_events_written, 20)
        evs = (await client.list(EVENTS, "default", field_selector="reason=FailedScheduling"))["items"]
        for name, _, reason in INFEASIBLE:
            message = next(e["message"] for e in evs if e["involvedObject"]["name"] == name)
            assert message.startswith("0/20 nodes are available: ") and reason in message
            got = await client.get(PODS, name, "default")
            condition = next(c for c in got["status"]["conditions"] if c["type"] == "PodScheduled")
            assert condition["status"] == "False" and condition["reason"] == "Unschedulable"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sched in schedulers:
            await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_default_provider_schedules_a_pod(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    sched = Scheduler(Client(HTTPTransport(api.url)), from_provider("DefaultProvider"))
    task = asyncio.create_task(sched.run())
    try:
        await client.create(NODES, node(1))
        await client.create(PODS, {"metadata": {"name": "web"},
                                   "spec": {"containers": [{"name": "c", "image": "x"}]}}, "default")

        async def bound() -> bool:
            return bool((await client.get(PODS, "web", "default"))["spec"].get("nodeName"))

        await wait_for(bound, 20)
        got = await client.get(PODS, "web", "default")
        assert got["spec"]["nodeName"] == "node-1"
        assert any(c["type"] == "PodScheduled" and c["status"] == "True"
                   for c in got["status"]["conditions"])
        attempt = sched.attempts["default/web"]
        assert attempt.result == "scheduled" and attempt.node == "node-1"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()
