"""Taint-based eviction, as 1.31: a node that stops reporting is tainted
node.kubernetes.io/unreachable:NoExecute and each pod leaves when its toleration runs out — the
one DefaultTolerationSeconds gave it, its own, or never. And TaintNodesByCondition: a node's
conditions and cordon become NoSchedule taints, which the scheduling framework reads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from minikube_py.client import Client
from minikube_py.client.resources import EVENTS, NODES, PODS
from minikube_py.controllers.node_lifecycle import NodeLifecycleController
from minikube_py.controllers.taint_eviction import TaintEvictionController
from tests.integration.test_cluster_controllers import (
    Kubelet,
    api_client,
    eventually,
    pod_body,
    running,
)

NODE_OPTIONS = {"node_monitor_period": 0.05, "node_monitor_grace_period": 0.4,
                "node_startup_grace_period": 0.4}
UNREACHABLE = "node.kubernetes.io/unreachable"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    async with api_client(tmp_path, admission_control=("DefaultTolerationSeconds",),
                          default_unreachable_toleration_seconds=2) as c:
        yield c


def tolerating(name: str, **toleration) -> dict:
    body = pod_body(name, node="dead")
    body["spec"]["tolerations"] = [{"key": UNREACHABLE, "operator": "Exists",
                                    "effect": "NoExecute", **toleration}]
    return body


async def deleting(client: Client, name: str) -> bool:
    pod = await client.get(PODS, name, "default")
    return bool(pod["metadata"].get("deletionTimestamp"))


async def test_pods_leave_a_dead_node_when_their_tolerations_run_out(client: Client) -> None:
    await client.create(NODES, {"metadata": {"name": "dead"}})
    defaulted = await client.create(PODS, pod_body("defaulted", node="dead"))
    assert [(t["key"], t["tolerationSeconds"]) for t in defaulted["spec"]["tolerations"]] == [
        ("node.kubernetes.io/not-ready", 300), (UNREACHABLE, 2)]
    await client.create(PODS, tolerating("at-once", tolerationSeconds=0))
    await client.create(PODS, tolerating("forever"))
    kubelet = Kubelet(client, "dead")
    await kubelet.beat()
    try:
        async with running(client, NodeLifecycleController, TaintEvictionController,
                           **NODE_OPTIONS):
            await asyncio.sleep(0.2)
            assert not (await client.get(NODES, "dead"))["spec"].get("taints")
            kubelet.running.clear()  # the kubelet dies

            async def tainted():
                node = await client.get(NODES, "dead")
                return node["spec"].get("taints")
            taints = await eventually(tainted, 3)
            tainted_at = time.monotonic()
            # TaintNodesByCondition's NoSchedule taint keeps new pods off (the scheduling
            # framework reads taints, not conditions); the NoExecute one starts evictions
            assert sorted((t["key"], t["effect"]) for t in taints) == [
                (UNREACHABLE, "NoExecute"), (UNREACHABLE, "NoSchedule")]
            assert [t for t in taints if t["effect"] == "NoExecute"][0]["timeAdded"]
            assert "timeAdded" not in [t for t in taints if t["effect"] == "NoSchedule"][0]

            await eventually(lambda: deleting(client, "at-once"), 1)
            assert not await deleting(client, "defaulted")  # its 2 s are not over
            await eventually(lambda: deleting(client, "defaulted"), 4)
            assert time.monotonic() - tainted_at >= 1.8  # not before its tolerationSeconds
            pod = await client.get(PODS, "defaulted", "default")
            target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
            assert target and target[0]["reason"] == "DeletionByTaintManager"
            assert not await deleting(client, "forever")

            kubelet.running.set()  # back: the taint goes, the survivor stays

            async def untainted():
                node = await client.get(NODES, "dead")
                return not node["spec"].get("taints")
            await eventually(untainted, 3)
            assert not await deleting(client, "forever")
        events = (await client.list(EVENTS, "default"))["items"]
        evictions = sorted(e["involvedObject"]["name"] for e in events
                           if e["reason"] == "TaintManagerEviction")
        assert evictions == ["at-once", "defaulted"]  # once each
    finally:
        await kubelet.stop()


async def test_every_namespace_gets_the_root_ca_configmap(client: Client, tmp_path: Path) -> None:
    """root-ca-cert-publisher: the ConfigMap the kube-api-access volume mounts ca.crt from."""
    from minikube_py.client.resources import CONFIGMAPS, NAMESPACES
    from minikube_py.controllers.rootcacertpublisher import RootCACertPublisher

    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    await client.create(NAMESPACES, {"metadata": {"name": "team"}})
    async with running(client, RootCACertPublisher, root_ca_file=str(ca)):
        async def published(namespace: str = "team"):
            try:
                return await client.get(CONFIGMAPS, "kube-root-ca.crt", namespace)
            except Exception:  # noqa: BLE001 - not there yet
                return None
        cm = await eventually(published, 3)
        assert cm["data"] == {"ca.crt": ca.read_text()}
        assert await eventually(lambda: published("default"), 3)
        await client.delete(CONFIGMAPS, "kube-root-ca.crt", "team")  # it comes back
        await asyncio.sleep(0.05)
        assert (await eventually(published, 3))["data"] == {"ca.crt": ca.read_text()}


async def test_conditions_and_cordon_become_no_schedule_taints(client: Client) -> None:
    """upstream doNoScheduleTaintingPass: pressure conditions and spec.unschedulable are
    mirrored as NoSchedule taints (a user's own taints stay), and go when they clear."""
    await client.create(NODES, {"metadata": {"name": "busy"},
                                "spec": {"taints": [{"key": "team", "value": "a",
                                                     "effect": "NoSchedule"}]}})
    kubelet = Kubelet(client, "busy")
    await kubelet.beat()
    try:
        async with running(client, NodeLifecycleController, **NODE_OPTIONS):
            node = await client.get(NODES, "busy")
            node["spec"]["unschedulable"] = True
            await client.update(NODES, node)
            kubelet.conditions = [{"type": "MemoryPressure", "status": "True",
                                   "reason": "KubeletHasInsufficientMemory"}]

            async def keys() -> list[tuple[str, str]]:
                taints = (await client.get(NODES, "busy"))["spec"].get("taints") or []
                return sorted((t["key"], t["effect"]) for t in taints)
            wanted = [("node.kubernetes.io/memory-pressure", "NoSchedule"),
                      ("node.kubernetes.io/unschedulable", "NoSchedule"), ("team", "NoSchedule")]
            await eventually(lambda: _equals(keys(), wanted), 3)

            node = await client.get(NODES, "busy")
            node["spec"]["unschedulable"] = False
            await client.update(NODES, node)
            await eventually(lambda: _equals(keys(), [wanted[0], wanted[2]]), 3)
            kubelet.conditions = []
            await eventually(lambda: _equals(keys(), [wanted[2]]), 3)
    finally:
        await kubelet.stop()


async def _equals(value, wanted) -> bool:
    return await value == wanted
