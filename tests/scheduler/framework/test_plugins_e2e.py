"""The in-tree plugins in a running framework scheduler, against a real API server.

The configuration's default profile (upstream 1.31's default plugins and args) schedules the
kubernetes.io topology-spread example onto zone B, and an impossible pod gets upstream's
FailedScheduling message built from the plugins' reasons — as `kubectl describe` shows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS
from minikube_py.scheduler.framework.config.load import default_configuration
from minikube_py.scheduler.framework.config.types import SchedulerConfiguration
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.scheduler import Scheduler
from tests import polling
from tests.apiserver.conftest import start_api
from tests.e2e.kubectl_run import kubectl

ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str, **extra) -> dict:
    labels = {"kubernetes.io/hostname": name, ZONE: zone, **extra.pop("labels", {})}
    return {"metadata": {"name": name, "labels": labels}, "spec": extra,
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, labels: dict | None = None, **spec) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


@dataclass
class Cluster:
    client: Client
    api_url: str


def default_profile_config() -> SchedulerConfiguration:
    config = default_configuration()
    registry = build_registry()
    for profile in config.profiles:  # plugins of branches not merged yet are left out
        profile.plugins = {point: [r for r in refs if r.name in registry]
                           for point, refs in profile.plugins.items()}
    config.pod_initial_backoff_seconds = config.pod_max_backoff_seconds = 1
    return config


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    sched = Scheduler(Client(HTTPTransport(api.url)), default_profile_config())
    try:
        for name, zone in (("node1", "zoneA"), ("node2", "zoneA"), ("node3", "zoneB")):
            await client.create(NODES, node(name, zone))
        await client.create(NODES, node("node4", "zoneB", labels={"disk": "ssd"}, taints=[
            {"key": "dedicated", "value": "db", "effect": "NoSchedule"}]))
        for name in ("node1", "node2", "node3"):  # running pods, bound as the kubelet sees them
            await client.create(PODS, pod(f"p-{name}", {"foo": "bar"}, nodeName=name), "default")
        task = asyncio.create_task(sched.run())
        try:
            yield Cluster(client, api.url)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    finally:
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def eventually(check, timeout: float = 15.0):
    """tests.polling.eventually with these cluster tests' longer default wait."""
    return await polling.eventually(check, timeout, interval=0.05)


async def test_topology_spread_example_lands_in_zone_b(cluster: Cluster):
    c = cluster.client
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"foo": "bar"}}}
    await c.create(PODS, pod("mypod", {"foo": "bar"}, topologySpreadConstraints=[spread]),
                   "default")

    async def bound() -> str:
        return (await c.get(PODS, "mypod", "default"))["spec"].get("nodeName") or ""

    # zoneA holds 2, zoneB 1: only zoneB keeps the skew at 1; node4's taint leaves node3
    assert await eventually(bound) == "node3"


async def test_failed_scheduling_message_from_the_plugins_reasons(cluster: Cluster,
                                                                   tmp_path: Path):
    c = cluster.client
    await c.create(PODS, pod("picky", nodeSelector={"disk": "ssd"}), "default")

    async def failed():
        events = await c.list(EVENTS, "default", field_selector="reason=FailedScheduling")
        return [e for e in events["items"] if e["involvedObject"]["name"] == "picky"]

    [event, *_] = await eventually(failed)
    expected = ("0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, "
                "3 node(s) didn't match Pod's node affinity/selector.")
    assert event["message"].startswith(expected)
    described = await asyncio.to_thread(kubectl, cluster.api_url, tmp_path, "describe", "pod",
                                        "picky", "-n", "default")
    assert expected in described.stdout
