"""Preemption end to end: a real API server over real sockets, the framework scheduler (default
profile, every in-tree plugin) on the modern queue, PriorityClasses made with the real kubectl.

A low-priority pod fills the only node; a high-priority pod arrives: the scheduler marks the
victim DisruptionTarget/PreemptionByScheduler, deletes it gracefully, records the Preempted
event and nominates the node for the preemptor; once the victim is gone (the test plays the
kubelet confirming the deletion) the AssignedPodDelete event requeues the preemptor and it is
bound there. A pod whose class says preemptionPolicy Never does not preempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS
from minikube_py.scheduler.framework.config.load import default_configuration
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.scheduler import Scheduler
from tests import polling
from tests.apiserver.conftest import start_api
from tests.e2e.kubectl_run import kubectl


@dataclass
class Cluster:
    url: str
    client: Client
    home: Path
    scheduler: Scheduler

    def kubectl(self, *args: str) -> str:
        return kubectl(self.url, self.home, *args).stdout


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    # the Priority admission plugin turns priorityClassName into spec.priority
    api, runner, store, session = await start_api(
        tmp_path, admission_control=("NamespaceLifecycle", "Priority"))
    client = Client(HTTPTransport(api.url))
    config = default_configuration()  # the default profile: every in-tree plugin
    assert [ref.name for ref in config.profiles[0].enabled("postFilter")] == ["DefaultPreemption"]
    config.pod_initial_backoff_seconds = config.pod_max_backoff_seconds = 1
    sched = Scheduler(Client(HTTPTransport(api.url)), config,
                      registry=build_registry(group=None))
    task = asyncio.create_task(sched.run())
    try:
        await client.create(NODES, {
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
        c = Cluster(api.url, client, tmp_path, sched)
        for name, value, policy in (("low", "10", "PreemptLowerPriority"),
                                    ("high", "1000", "PreemptLowerPriority"),
                                    ("high-polite", "1000", "Never")):
            await asyncio.to_thread(c.kubectl, "create", "priorityclass", name, f"--value={value}",
                                    f"--preemption-policy={policy}")
        yield c
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


def pod(name: str, priority_class: str, **spec) -> dict:
    return {"metadata": {"name": name},
            "spec": {"priorityClassName": priority_class, **spec, "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}}


async def eventually(check, timeout: float = 15.0):
    """tests.polling.eventually with these cluster tests' longer default wait."""
    return await polling.eventually(check, timeout, interval=0.05)


async def get(client: Client, name: str) -> dict | None:
    return await client.get_or_none(PODS, name, "default")


async def test_high_priority_pod_preempts_the_low_priority_pod(cluster: Cluster):
    c = cluster.client
    attempts = REGISTRY.get_sample_value("scheduler_preemption_attempts_total") or 0.0
    await c.create(PODS, pod("victim", "low"), "default")
    assert (await eventually(lambda: get(c, "victim")))["spec"]["priority"] == 10
    await eventually(lambda: _bound(c, "victim"))
    preemptor = await c.create(PODS, pod("preemptor", "high"), "default")
    assert preemptor["spec"]["priority"] == 1000

    async def victim_marked():
        victim = await get(c, "victim")
        return victim if victim and victim["metadata"].get("deletionTimestamp") else None

    victim = await eventually(victim_marked)
    [condition] = [x for x in victim["status"]["conditions"] if x["type"] == "DisruptionTarget"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod")

    async def nominated():
        current = await get(c, "preemptor")
        return (current.get("status") or {}).get("nominatedNodeName")

    assert await eventually(nominated) == "n1"
    # the explanation (/debug/scheduler/last) shows the preemption decision
    explained = cluster.scheduler.attempts["default/preemptor"].to_dict()
    assert explained["postFilter"]["nominatedNodeName"] == "n1"
    assert explained["preemption"] == {"potentialNodes": 1, "candidates": 1, "notCandidates": 0,
                                       "node": "n1", "numPDBViolations": 0,
                                       "victims": ["default/victim"]}

    async def preempted_event():
        events = (await c.list(EVENTS, "default"))["items"]
        return [e for e in events if e.get("reason") == "Preempted"
                and e["involvedObject"]["name"] == "victim"]

    [event] = await eventually(preempted_event)
    assert event["type"] == "Normal"
    assert event["message"] == f"Preempted by pod {preemptor['metadata']['uid']} on node n1"
    assert (REGISTRY.get_sample_value("scheduler_preemption_attempts_total") or 0) > attempts

    # the kubelet would confirm the graceful deletion; then the preemptor takes the node
    await c.delete(PODS, "victim", "default", grace_period_seconds=0)
    assert await eventually(lambda: _bound(c, "preemptor")) == "n1"
    described = await asyncio.to_thread(cluster.kubectl, "describe", "pod", "preemptor")
    assert "0/1 nodes are available: 1 Insufficient cpu." in described


async def test_preemption_policy_never_waits(cluster: Cluster):
    c = cluster.client
    await c.create(PODS, pod("holder", "low"), "default")
    await eventually(lambda: _bound(c, "holder"))
    polite = await c.create(PODS, pod("polite", "high-polite"), "default")
    assert polite["spec"]["preemptionPolicy"] == "Never"

    async def failed_message():
        current = await get(c, "polite")
        for condition in (current.get("status") or {}).get("conditions") or []:
            if condition["type"] == "PodScheduled" and condition.get("message"):
                return condition["message"]
        return None

    assert await eventually(failed_message) == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
        "preemptionPolicy=Never..")
    holder = await get(c, "holder")
    assert not holder["metadata"].get("deletionTimestamp")


async def _bound(c: Client, name: str) -> str:
    current = await get(c, name)
    return ((current or {}).get("spec") or {}).get("nodeName") or ""


async def test_a_nomination_preemption_cannot_honour_is_cleared(cluster: Cluster):
    """upstream: Preempt answers NewPostFilterResultWithNominatedNode("") when no node has
    victims, and the failure handler clears status.nominatedNodeName."""
    c = cluster.client
    await c.create(PODS, pod("holder", "high"), "default")
    await eventually(lambda: _bound(c, "holder"))
    peer = pod("peer", "high")
    peer["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    await c.create(PODS, peer, "default")  # gated: not tried while its status is set up
    await c.patch(PODS, "peer", {"status": {"nominatedNodeName": "n1"}}, "default",
                  subresource="status")
    current = await get(c, "peer")
    current["spec"]["schedulingGates"] = []
    await c.update(PODS, current)

    async def cleared():
        now = await get(c, "peer")
        conditions = (now.get("status") or {}).get("conditions") or []
        tried = any(x["type"] == "PodScheduled" and x.get("reason") == "Unschedulable"
                    for x in conditions)
        return tried and not (now.get("status") or {}).get("nominatedNodeName")

    assert await eventually(cleared)
    explained = cluster.scheduler.attempts["default/peer"].to_dict()
    assert explained["preemption"] == {"potentialNodes": 1, "candidates": 0, "notCandidates": 1}
    assert explained["message"].endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..")
