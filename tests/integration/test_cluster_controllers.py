"""Endpoints, node lifecycle, namespace, garbage collector and service account controllers
against a real API server (in-process transport, short timings).

No kubelet runs here: the tests write what a kubelet would — node heartbeats
(PUT nodes/{n}/status) and pod status (PUT pods/{p}/status: phase, podIP, Ready).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from minikube_py.api import meta
from minikube_py.api.errors import StatusError
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.leaderelection import LEADER_ANNOTATION
from minikube_py.client.resources import (
    CONFIGMAPS,
    DEPLOYMENTS,
    ENDPOINTS,
    EVENTS,
    NAMESPACES,
    NODES,
    PODS,
    REPLICATION_CONTROLLERS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
)
from minikube_py.controllers.base import Controller, ControllerContext
from minikube_py.controllers.endpoints import EndpointsController
from minikube_py.controllers.garbagecollector import GarbageCollector
from minikube_py.controllers.namespace import NamespaceController
from minikube_py.controllers.node_lifecycle import NodeLifecycleController
from minikube_py.controllers.options import ControllerOptions
from minikube_py.controllers.serviceaccount import ServiceAccountsController
from tests.apiserver.conftest import start_api
from tests.polling import eventually  # noqa: F401 - re-exported to other suites

Obj = dict[str, Any]


@contextlib.asynccontextmanager
async def api_client(tmp_path: Path, **api_options: Any) -> AsyncIterator[Client]:
    """An in-process client of a real API server started with `api_options`."""
    _, runner, store, session = await start_api(tmp_path, **api_options)
    c = Client(InProcessTransport(runner.app))
    try:
        yield c
    finally:
        await c.close()
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    async with api_client(tmp_path) as c:
        yield c


@contextlib.asynccontextmanager
async def running(client: Client, *classes: type[Controller],
                  **options: Any) -> AsyncIterator[list[Controller]]:
    ctx = ControllerContext(client, InformerFactory(client), ControllerOptions(**options))
    controllers = [cls(ctx) for cls in classes]
    ctx.informers.start()
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        await ctx.informers.wait_for_sync(5)
        yield controllers
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await ctx.informers.stop()
        await ctx.close()
        for result in results:  # a controller that died is a failure, not a cancellation
            if not isinstance(result, asyncio.CancelledError):
                raise AssertionError(f"controller stopped: {result!r}")




async def get_or_none(client: Client, resource, name: str, namespace: str | None = None):
    try:
        return await client.get(resource, name, namespace)
    except StatusError as exc:
        if exc.code == 404:
            return None
        raise


def pod_body(name: str, labels: dict | None = None, *, node: str = "", ports: list | None = None,
             owners: list | None = None, namespace: str = "default") -> Obj:
    container: Obj = {"name": "c", "image": "nginx"}
    if ports:
        container["ports"] = ports
    spec: Obj = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    md: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owners:
        md["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


async def create_pod(client: Client, name: str, labels: dict | None = None, **kw: Any) -> Obj:
    return await client.create(PODS, pod_body(name, labels, **kw))


async def set_pod_status(client: Client, name: str, ip: str | None, ready: bool,
                         namespace: str = "default") -> Obj:
    """What the kubelet writes once the containers run."""
    pod = await client.get(PODS, name, namespace)
    status: Obj = {**pod["status"], "phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if ip:
        status["podIP"] = ip
    return await client.update_status(PODS, {**pod, "status": status})


def pod_ready(pod: Obj) -> str | None:
    for cond in pod["status"].get("conditions") or ():
        if cond["type"] == "Ready":
            return cond["status"]
    return None


# -- endpoints ---------------------------------------------------------------------------
def ips(subset: Obj, field: str = "addresses") -> list[str]:
    return [a["ip"] for a in subset.get(field) or ()]


async def test_endpoints_follow_pods_ready_not_ready_named_ports_and_deletion(client: Client):
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "web", "namespace": "default", "labels": {"tier": "front"}},
           "spec": {"selector": {"app": "web"},
                    "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                              {"name": "metrics", "port": 81, "targetPort": "metrics"}]}}
    named = [{"name": "metrics", "containerPort": 9090}]
    # leftovers from before the controller started: a lock must survive, a stale one not
    await client.create(ENDPOINTS, {"metadata": {"name": "kube-scheduler", "namespace": "default",
                                                 "annotations": {LEADER_ANNOTATION: "{}"}}})
    await client.create(ENDPOINTS, {"metadata": {"name": "stale", "namespace": "default"}})
    async with running(client, EndpointsController, concurrent_endpoint_syncs=2):
        await client.create(SERVICES, svc)
        await client.create(SERVICES, {"metadata": {"name": "manual", "namespace": "default"},
                                       "spec": {"ports": [{"port": 80}]}})
        await create_pod(client, "a", {"app": "web"}, ports=named, node="n1")
        await create_pod(client, "b", {"app": "web"}, ports=named)
        await create_pod(client, "c", {"app": "web"})           # no named port
        await create_pod(client, "d", {"app": "web"})           # never gets an IP
        await create_pod(client, "other", {"app": "db"})
        await set_pod_status(client, "a", "10.1.0.1", ready=True)
        await set_pod_status(client, "b", "10.1.0.2", ready=False)
        await set_pod_status(client, "c", "10.1.0.3", ready=True)
        await set_pod_status(client, "other", "10.1.0.9", ready=True)

        async def settled():
            ep = await get_or_none(client, ENDPOINTS, "web", "default")
            if ep is None or len(ep.get("subsets") or ()) != 2:
                return None
            return ep
        ep = await eventually(settled)
        assert ep["metadata"]["labels"] == {"tier": "front"}
        by_port = {tuple(p["port"] for p in s["ports"]): s for s in ep["subsets"]}
        # port 8080 (http): a and c ready, b not ready; 9090 (metrics) only where named
        assert set(by_port) == {(8080,), (9090,)}
        assert ips(by_port[(8080,)]) == ["10.1.0.1", "10.1.0.3"]
        assert ips(by_port[(8080,)], "notReadyAddresses") == ["10.1.0.2"]
        assert ips(by_port[(9090,)]) == ["10.1.0.1"]
        assert ips(by_port[(9090,)], "notReadyAddresses") == ["10.1.0.2"]
        assert by_port[(9090,)]["ports"] == [{"port": 9090, "protocol": "TCP", "name": "metrics"}]
        a = by_port[(8080,)]["addresses"][0]
        pod_a = await client.get(PODS, "a", "default")
        assert a["nodeName"] == "n1"
        assert a["targetRef"] == {"kind": "Pod", "namespace": "default", "name": "a",
                                  "uid": pod_a["metadata"]["uid"],
                                  "resourceVersion": pod_a["metadata"]["resourceVersion"]}
        # the stale endpoints went, the lock stayed, the selector-less service got nothing
        assert await eventually(lambda: _absent(client, ENDPOINTS, "stale", "default"))
        assert await get_or_none(client, ENDPOINTS, "kube-scheduler", "default") is not None
        assert await get_or_none(client, ENDPOINTS, "manual", "default") is None

        # b becomes ready: everything ready moves to `addresses`, one subset per port set
        await set_pod_status(client, "b", "10.1.0.2", ready=True)

        async def b_ready():
            ep = await client.get(ENDPOINTS, "web", "default")
            return all(not s.get("notReadyAddresses") for s in ep["subsets"]) and ep
        ep = await eventually(b_ready)
        by_port = {tuple(p["port"] for p in s["ports"]): s for s in ep["subsets"]}
        assert ips(by_port[(8080,)]) == ["10.1.0.1", "10.1.0.2", "10.1.0.3"]
        assert ips(by_port[(9090,)]) == ["10.1.0.1", "10.1.0.2"]

        # a pod deleted (a is on a node: it stays Terminating) and one relabelled drop out
        await client.delete(PODS, "a", "default")
        pod_c = await client.get(PODS, "c", "default")
        pod_c["metadata"]["labels"] = {"app": "gone"}
        await client.update(PODS, pod_c)

        async def shrunk():
            ep = await client.get(ENDPOINTS, "web", "default")
            return [ips(s) for s in ep["subsets"]] == [["10.1.0.2"]] and ep
        ep = await eventually(shrunk)
        assert [p["port"] for p in ep["subsets"][0]["ports"]] == [8080, 9090]

        # endpoints deleted by someone else come back
        await client.delete(ENDPOINTS, "web", "default")

        async def rewritten():
            ep = await get_or_none(client, ENDPOINTS, "web", "default")
            return ep and [ips(s) for s in ep.get("subsets") or ()] == [["10.1.0.2"]]
        await eventually(rewritten)

        # the service goes: its endpoints go with it
        await client.delete(SERVICES, "web", "default")
        assert await eventually(lambda: _absent(client, ENDPOINTS, "web", "default"))


async def _absent(client: Client, resource, name: str, namespace: str | None = None) -> bool:
    return await get_or_none(client, resource, name, namespace) is None


async def test_publish_not_ready_addresses_and_unchanged_endpoints_are_not_rewritten(
        client: Client):
    svc = {"metadata": {"name": "db", "namespace": "default"},
           "spec": {"selector": {"app": "db"}, "publishNotReadyAddresses": True,
                    "ports": [{"port": 5432}]}}
    async with running(client, EndpointsController):
        await client.create(SERVICES, svc)
        await create_pod(client, "db-0", {"app": "db"})
        await set_pod_status(client, "db-0", "10.2.0.1", ready=False)

        async def published():
            ep = await get_or_none(client, ENDPOINTS, "db", "default")
            return ep and ep.get("subsets") and ep
        ep = await eventually(published)
        assert ips(ep["subsets"][0]) == ["10.2.0.1"]
        assert ep["subsets"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]
        # an irrelevant pod change (an annotation) leaves the endpoints alone
        pod = await client.get(PODS, "db-0", "default")
        pod["metadata"]["annotations"] = {"note": "x"}
        await client.update(PODS, pod)
        await asyncio.sleep(0.2)
        again = await client.get(ENDPOINTS, "db", "default")
        assert again["metadata"]["resourceVersion"] == ep["metadata"]["resourceVersion"]


# -- node lifecycle ----------------------------------------------------------------------
NODE_OPTIONS = dict(node_monitor_period=0.05, node_monitor_grace_period=0.4,
                    node_startup_grace_period=0.4, pod_eviction_timeout=1.0,
                    deleting_pods_qps=100.0, deleting_pods_burst=10,
                    enable_taint_manager=False)  # v1.0 eviction (test_taint_eviction.py: 1.31)


class Kubelet:
    """Posts a node's heartbeat every 0.1 s (each with a new lastHeartbeatTime) until paused."""

    def __init__(self, client: Client, node: str) -> None:
        self.client, self.node = client, node
        self.beats = 0
        #: other conditions each heartbeat reports beside Ready (e.g. MemoryPressure)
        self.conditions: list[dict] = []
        self.running = asyncio.Event()
        self.running.set()
        self.task = asyncio.create_task(self._run())

    async def beat(self) -> None:
        self.beats += 1
        stamp = meta.rfc3339(1_700_000_000 + self.beats)  # a fake clock: only changes count
        await self.client.update_status(NODES, {
            "metadata": {"name": self.node},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": stamp,
                                       "lastTransitionTime": meta.rfc3339(1_700_000_000)},
                                      *self.conditions]}})

    async def _run(self) -> None:
        while True:
            await self.running.wait()
            await self.beat()
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def make_node_with_pods(client: Client, node: str, pods: int = 2) -> list[str]:
    await client.create(NODES, {"metadata": {"name": node}})
    names = []
    for i in range(pods):
        name = f"{node}-p{i}"
        await create_pod(client, name, node=node)
        await set_pod_status(client, name, f"10.9.{len(node)}.{i}", ready=True)
        names.append(name)
    return names


async def node_events(client: Client, node: str) -> list[str]:
    items = (await client.list(EVENTS, "default")).get("items") or []
    return [e["reason"] for e in items if e["involvedObject"].get("name") == node]


async def test_silent_node_goes_unknown_pods_not_ready_then_evicted(client: Client):
    healthy_pods = await make_node_with_pods(client, "healthy")
    silent_pods = await make_node_with_pods(client, "silent")
    healthy, silent = Kubelet(client, "healthy"), Kubelet(client, "silent")
    await healthy.beat()
    await silent.beat()
    try:
        async with running(client, NodeLifecycleController, **NODE_OPTIONS):
            await asyncio.sleep(0.2)
            silent.running.clear()  # the kubelet dies

            async def unknown():
                node = await client.get(NODES, "silent")
                ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
                return ready["status"] == "Unknown" and node
            node = await eventually(unknown, 3)
            ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            assert ready["reason"] == "NodeStatusUnknown"
            assert ready["message"] == "Kubelet stopped posting node status."
            assert ready["lastHeartbeatTime"] == meta.rfc3339(1_700_000_000 + silent.beats)
            others = {c["type"]: c["status"] for c in node["status"]["conditions"]}
            assert others == {"Ready": "Unknown", "MemoryPressure": "Unknown",
                              "DiskPressure": "Unknown", "PIDPressure": "Unknown"}

            async def pods_not_ready():
                pods = [await client.get(PODS, p, "default") for p in silent_pods]
                return all(pod_ready(p) == "False" for p in pods)
            await eventually(pods_not_ready, 2)

            async def evicted():
                pods = [await client.get(PODS, p, "default") for p in silent_pods]
                return all(p["metadata"].get("deletionTimestamp") for p in pods)
            await eventually(evicted, 3)
            # the healthy node and its pods were left alone
            node = await client.get(NODES, "healthy")
            assert [c["status"] for c in node["status"]["conditions"]] == ["True"]
            for name in healthy_pods:
                pod = await client.get(PODS, name, "default")
                assert pod_ready(pod) == "True" and not pod["metadata"].get("deletionTimestamp")
            await asyncio.sleep(0.1)
        reasons = await node_events(client, "silent")
        assert {"RegisteredNode", "NodeNotReady", "DeletingAllPods"} <= set(reasons)
        assert reasons.count("DeletingAllPods") == 1  # once per outage
        assert "NodeNotReady" not in await node_events(client, "healthy")
    finally:
        await healthy.stop()
        await silent.stop()


async def test_node_that_recovers_in_time_keeps_its_pods(client: Client):
    pods = await make_node_with_pods(client, "flaky")
    kubelet = Kubelet(client, "flaky")
    await kubelet.beat()
    try:
        async with running(client, NodeLifecycleController, **NODE_OPTIONS):
            await asyncio.sleep(0.2)
            kubelet.running.clear()

            async def unknown():
                node = await client.get(NODES, "flaky")
                return node["status"]["conditions"][0]["status"] == "Unknown"
            await eventually(unknown, 3)
            kubelet.running.set()  # back well before the 1 s eviction timeout

            async def ready():
                node = await client.get(NODES, "flaky")
                return node["status"]["conditions"][0]["status"] == "True"
            await eventually(ready, 2)
            await asyncio.sleep(1.2)  # past the moment it would have been evicted
            for name in pods:
                pod = await client.get(PODS, name, "default")
                assert not pod["metadata"].get("deletionTimestamp")
    finally:
        await kubelet.stop()


async def test_node_that_never_posted_status_and_pods_on_missing_nodes(client: Client):
    await client.create(NODES, {"metadata": {"name": "mute"}})
    await create_pod(client, "lost", node="no-such-node")
    async with running(client, NodeLifecycleController, **NODE_OPTIONS):
        async def never_updated():
            node = await client.get(NODES, "mute")
            conds = {c["type"]: c for c in (node.get("status") or {}).get("conditions") or ()}
            return conds.get("Ready", {}).get("reason") == "NodeStatusNeverUpdated" and conds
        conds = await eventually(never_updated, 3)
        assert conds["Ready"]["status"] == "Unknown"
        assert conds["Ready"]["message"] == "Kubelet never posted node status."
        # a pod bound to a node that does not exist is deleted for good (pod GC)
        assert await eventually(lambda: _absent(client, PODS, "lost", "default"), 3)


# -- namespace ---------------------------------------------------------------------------
async def test_namespace_deletion_empties_it_then_it_disappears(client: Client):
    await client.create(NAMESPACES, {"metadata": {"name": "doomed"}})
    await client.create(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": "doomed"}})
    await client.create(SECRETS, {"metadata": {"name": "s", "namespace": "doomed"}})
    await client.create(SERVICEACCOUNTS, {"metadata": {"name": "sa", "namespace": "doomed"}})
    await client.create(SERVICES, {"metadata": {"name": "svc", "namespace": "doomed"},
                                   "spec": {"ports": [{"port": 80}]}})
    await create_pod(client, "p", namespace="doomed")
    await client.create(REPLICATION_CONTROLLERS, {
        "metadata": {"name": "rc", "namespace": "doomed"},
        "spec": {"replicas": 0, "selector": {"app": "x"},
                 "template": {"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    await client.create(DEPLOYMENTS, {
        "metadata": {"name": "d", "namespace": "doomed"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "y"}},
                 "template": {"metadata": {"labels": {"app": "y"}},
                              "spec": {"containers": [{"name": "c", "image": "y"}]}}}})
    await client.create(NAMESPACES, {"metadata": {"name": "kept"}})
    await client.create(CONFIGMAPS, {"metadata": {"name": "cm", "namespace": "kept"}})
    async with running(client, NamespaceController):
        await client.delete(NAMESPACES, "doomed")
        assert await eventually(lambda: _absent(client, NAMESPACES, "doomed"), 5)
    for resource in (CONFIGMAPS, SECRETS, SERVICEACCOUNTS, SERVICES, PODS,
                     REPLICATION_CONTROLLERS, DEPLOYMENTS):
        assert (await client.list(resource, "doomed"))["items"] == [], resource.plural
    assert await get_or_none(client, CONFIGMAPS, "cm", "kept") is not None
    assert (await client.get(NAMESPACES, "kept"))["status"]["phase"] == "Active"


# -- garbage collector -------------------------------------------------------------------
async def make_rc_with_pods(client: Client, name: str, pods: int = 3) -> tuple[Obj, list[str]]:
    rc = await client.create(REPLICATION_CONTROLLERS, {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": pods, "selector": {"app": name},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    ref = owner_ref(rc)
    names = [f"{name}-{i}" for i in range(pods)]
    for pod in names:
        await create_pod(client, pod, {"app": name}, owners=[ref])
    return rc, names


def owner_ref(owner: Obj, controller: bool = True) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "controller": controller, "blockOwnerDeletion": True}


async def all_absent(client: Client, pods: list[str]) -> bool:
    return all([await _absent(client, PODS, p, "default") for p in pods])


async def test_gc_background_deletes_dependents_of_a_deleted_owner(client: Client):
    # a dependent whose owner never existed (or went while the collector was down)
    await create_pod(client, "stray", owners=[{"apiVersion": "v1", "kind": "ReplicationController",
                                                "name": "ghost", "uid": "0000-ghost"}])
    async with running(client, GarbageCollector, concurrent_gc_syncs=4):
        assert await eventually(lambda: _absent(client, PODS, "stray", "default"))
        rc, pods = await make_rc_with_pods(client, "bg")
        cm = await client.create(CONFIGMAPS, {"metadata": {"name": "keeper",
                                                           "namespace": "default"}})
        # two owners: losing one only drops that reference
        await create_pod(client, "shared", owners=[owner_ref(rc), owner_ref(cm, controller=False)])
        await asyncio.sleep(0.2)
        assert not await _absent(client, PODS, "bg-0", "default")  # owner alive: kept
        await client.delete(REPLICATION_CONTROLLERS, "bg", "default")
        assert await eventually(lambda: all_absent(client, pods))

        async def one_owner_left():
            pod = await client.get(PODS, "shared", "default")
            return [r["name"] for r in pod["metadata"].get("ownerReferences") or ()] == ["keeper"]
        await eventually(one_owner_left)
        assert not await _absent(client, PODS, "shared", "default")


async def test_gc_foreground_deletes_dependents_before_the_owner(client: Client):
    async with running(client, GarbageCollector):
        rc, pods = await make_rc_with_pods(client, "fg")
        await asyncio.sleep(0.1)
        owner = await client.delete(REPLICATION_CONTROLLERS, "fg", "default",
                                    propagation_policy="Foreground")
        # the API server keeps the owner, waiting, until the collector is done with it
        assert owner["metadata"]["deletionTimestamp"]
        assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert await eventually(lambda: _absent(client, REPLICATION_CONTROLLERS, "fg", "default"))
        assert await all_absent(client, pods)


async def test_gc_orphan_keeps_dependents_without_the_reference(client: Client):
    async with running(client, GarbageCollector):
        rc, pods = await make_rc_with_pods(client, "orph")
        await asyncio.sleep(0.1)
        owner = await client.delete(REPLICATION_CONTROLLERS, "orph", "default",
                                    propagation_policy="Orphan")
        assert owner["metadata"]["finalizers"] == ["orphan"]
        assert await eventually(lambda: _absent(client, REPLICATION_CONTROLLERS, "orph",
                                                "default"))
        for name in pods:
            pod = await client.get(PODS, name, "default")
            assert not pod["metadata"].get("ownerReferences")
        await asyncio.sleep(0.2)  # and nothing collects them afterwards
        assert all([not await _absent(client, PODS, p, "default") for p in pods])


# -- service accounts --------------------------------------------------------------------
async def test_default_service_account_created_and_recreated(client: Client):
    async with running(client, ServiceAccountsController):
        for ns in ("default", "kube-system"):
            assert await eventually(lambda ns=ns: get_or_none(client, SERVICEACCOUNTS,
                                                              "default", ns))
        await client.create(NAMESPACES, {"metadata": {"name": "team"}})
        first = await eventually(lambda: get_or_none(client, SERVICEACCOUNTS, "default", "team"))
        await client.delete(SERVICEACCOUNTS, "default", "team")

        async def recreated():
            sa = await get_or_none(client, SERVICEACCOUNTS, "default", "team")
            return sa and sa["metadata"]["uid"] != first["metadata"]["uid"]
        await eventually(recreated)
        # a Terminating namespace (no namespace controller here) gets none back
        await client.delete(NAMESPACES, "team")
        await client.delete(SERVICEACCOUNTS, "default", "team")
        await asyncio.sleep(0.3)
        assert await get_or_none(client, SERVICEACCOUNTS, "default", "team") is None
