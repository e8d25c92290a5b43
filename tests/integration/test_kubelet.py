"""The simulated kubelet pool against a real API server: node registration and heartbeats, the
pod lifecycle, admission, completion and restarts, deadlines, graceful deletion, logs through
`pods/{name}/log`, the failure toggle, readiness gates and adoption after a restart."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from dataclasses import replace
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS
from minikube_py.kubelet import KubeletConfig, KubeletPool
from tests.apiserver.conftest import API, start_api

FAST = KubeletConfig(node_status_update_frequency=0.1, image_pull_seconds=0.05,
                     container_start_seconds=0.02, restart_backoff_seconds=0.1,
                     restart_backoff_max_seconds=0.2, max_termination_grace_seconds=0.1)


class Cluster:
    def __init__(self, api: API, client: Client, pool: KubeletPool) -> None:
        self.api, self.client, self.pool = api, client, pool

    async def pod(self, name: str, node: str | None = "n-0", *, containers: list | None = None,
                  annotations: dict | None = None, bind: bool = True, **spec: Any) -> dict:
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default",
                             "annotations": annotations or {}},
                "spec": {"containers": containers or [{"name": "web", "image": "nginx"}],
                         **spec}}
        created = await self.client.create(PODS, body)
        if node and bind:
            await self.client.bind("default", name, node)
        return created

    async def get(self, name: str) -> dict:
        return await self.client.get(PODS, name, "default")

    async def until(self, name: str, check: Callable[[dict], bool], timeout: float = 5) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                pod = await self.get(name)
            except StatusError:
                pod = {}
            if pod and check(pod):
                return pod
            if time.monotonic() > deadline:
                raise AssertionError(f"pod {name} never matched: {pod.get('status')}")
            await asyncio.sleep(0.02)

    async def gone(self, name: str, timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                await self.get(name)
            except StatusError as exc:
                assert exc.code == 404
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"pod {name} was not deleted")

    async def events(self, name: str) -> list[tuple[str, str, str]]:
        await asyncio.sleep(0.05)
        items = (await self.client.list(EVENTS, "default",
                                        field_selector=f"involvedObject.name={name}"))["items"]
        items.sort(key=lambda e: e["metadata"]["name"])
        return [(e["type"], e["reason"], e["message"]) for e in items]


def phase_is(phase: str) -> Callable[[dict], bool]:
    return lambda pod: (pod.get("status") or {}).get("phase") == phase


def condition(pod: dict, kind: str) -> dict:
    return next(c for c in pod["status"]["conditions"] if c["type"] == kind)


def container(pod: dict, name: str = "web") -> dict:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == name)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    pool = KubeletPool(client, port=0, log_interval=0.05)
    pool.add_nodes("n", 2, FAST)
    await pool.start()
    try:
        await pool.wait_ready(5)
        yield Cluster(api, client, pool)
    finally:
        await pool.stop()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_node_registers_with_upstream_fields_and_heartbeats(cluster: Cluster) -> None:
    node = await cluster.client.get(NODES, "n-1")
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "n-1"
    assert labels["kubernetes.io/os"] == "linux" and labels["beta.kubernetes.io/arch"] == "amd64"
    assert node["spec"]["podCIDR"] == "10.244.1.0/24"
    assert node["spec"]["podCIDRs"] == ["10.244.1.0/24"]
    status = node["status"]
    assert status["capacity"]["cpu"] == "4" and status["allocatable"]["pods"] == "110"
    assert status["capacity"]["ephemeral-storage"] == "100Gi"
    assert {"type": "InternalIP", "address": "127.0.0.1"} in status["addresses"]
    assert {"type": "Hostname", "address": "n-1"} in status["addresses"]
    assert status["daemonEndpoints"]["kubeletEndpoint"]["Port"] == cluster.pool.port
    info = status["nodeInfo"]
    assert info["kubeletVersion"] == FAST.kubelet_version
    assert info["containerRuntimeVersion"].startswith("minikube-py://")
    assert info["operatingSystem"] == "linux" and info["architecture"] == "amd64"
    assert info["machineID"] and info["bootID"] and info["systemUUID"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert [c["type"] for c in status["conditions"]][-1] == "Ready"
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Ready"]["reason"] == "KubeletReady"
    assert conditions["Ready"]["message"] == "kubelet is posting ready status"
    assert conditions["MemoryPressure"]["reason"] == "KubeletHasSufficientMemory"
    assert conditions["DiskPressure"]["status"] == "False"
    assert conditions["PIDPressure"]["reason"] == "KubeletHasSufficientPID"
    # status heartbeats (--node-heartbeat-mode=status, v1.0): the counter moves at the
    # configured frequency, lastHeartbeatTime (second precision) moves once a second has
    # passed, lastTransitionTime does not (lease mode: test_node_lease.py)
    kubelet = cluster.pool.add_node("s-0", replace(FAST, heartbeat_mode="status"))
    await cluster.pool.wait_ready(5)
    conditions = {c["type"]: c for c in
                  (await cluster.client.get(NODES, "s-0"))["status"]["conditions"]}
    beats = kubelet.heartbeats
    await asyncio.sleep(1.1)
    assert kubelet.heartbeats >= beats + 5
    later = {c["type"]: c for c in (await cluster.client.get(NODES, "s-0"))["status"]["conditions"]}
    assert later["Ready"]["lastHeartbeatTime"] > conditions["Ready"]["lastHeartbeatTime"]
    assert later["Ready"]["lastTransitionTime"] == conditions["Ready"]["lastTransitionTime"]
    reasons = [r for _, r, _ in await cluster.events("n-1")]
    assert {"Starting", "NodeHasSufficientMemory", "NodeReady"} <= set(reasons)


async def test_a_deleted_node_stays_deleted_until_its_kubelet_restarts(cluster: Cluster) -> None:
    kubelet = cluster.pool.kubelet("n-0")
    await cluster.client.delete(NODES, "n-0")
    await asyncio.sleep(0.5)  # five heartbeat periods: upstream registers once per run
    with pytest.raises(StatusError) as gone:
        await cluster.client.get(NODES, "n-0")
    assert gone.value.code == 404
    assert kubelet.node_deleted and not kubelet.ready
    await cluster.pool.stop_node("n-0")   # a kubelet restart registers it again
    await cluster.pool.start_node("n-0")
    node = await cluster.client.get(NODES, "n-0")
    assert node["spec"]["podCIDR"] == "10.244.0.0/24"
    assert condition(node, "Ready")["status"] == "True"


async def test_pod_goes_from_container_creating_to_running(cluster: Cluster) -> None:
    slow = cluster.pool.add_node("slow", KubeletConfig(image_pull_seconds=0.4,
                                                       container_start_seconds=0.1,
                                                       node_status_update_frequency=0.1))
    await cluster.pool.wait_ready(5)
    await cluster.pod("web", "slow")
    pending = await cluster.until("web", lambda p: "containerStatuses" in p["status"])
    assert pending["status"]["phase"] == "Pending"
    assert container(pending)["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert container(pending)["ready"] is False
    assert condition(pending, "Initialized")["status"] == "True"
    ready = condition(pending, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    assert ready["message"] == "containers with unready status: [web]"
    running = await cluster.until("web", phase_is("Running"))
    status = running["status"]
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(slow.pod_cidr)
    assert status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["hostIP"] == "127.0.0.1" and status["startTime"]
    web = container(running)
    assert web["ready"] is True and web["started"] is True and web["restartCount"] == 0
    assert web["image"] == "nginx:latest"
    assert web["imageID"].startswith("docker-pullable://nginx@sha256:")
    assert web["containerID"].startswith("containerd://")
    assert "startedAt" in web["state"]["running"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Initialized": "True", "Ready": "True", "ContainersReady": "True", "PodScheduled": "True"}
    assert status["qosClass"] == "BestEffort"
    writes = slow.status_writes  # steady state: heartbeats go on, the pod is not rewritten
    await asyncio.sleep(0.3)
    assert slow.status_writes == writes
    assert (await cluster.get("web"))["metadata"]["resourceVersion"] == \
        running["metadata"]["resourceVersion"]
    events = await cluster.events("web")
    reasons = [r for _, r, _ in events]
    assert reasons[-4:] == ["Pulling", "Pulled", "Created", "Started"]
    messages = dict((r, m) for _, r, m in events)
    assert messages["Pulling"] == 'Pulling image "nginx"'
    assert messages["Pulled"].startswith('Successfully pulled image "nginx" in ')
    assert messages["Created"] == "Created container web"
    assert messages["Started"] == "Started container web"
    # a second pod gets the next address, and the image is already present (IfNotPresent)
    await cluster.pod("web2", "slow", containers=[{"name": "web", "image": "nginx:1.19"}])
    first = await cluster.until("web2", phase_is("Running"))
    await cluster.pod("web3", "slow", containers=[{"name": "web", "image": "nginx:1.19"}])
    second = await cluster.until("web3", phase_is("Running"))
    assert len({status["podIP"], first["status"]["podIP"], second["status"]["podIP"]}) == 3
    assert ("Normal", "Pulled", 'Container image "nginx:1.19" already present on machine') in \
        await cluster.events("web3")


async def test_admission_rejects_what_does_not_fit(cluster: Cluster) -> None:
    cluster.pool.add_node("small", KubeletConfig(cpu="1", pods=3, image_pull_seconds=0.01,
                                                 container_start_seconds=0.01,
                                                 node_status_update_frequency=0.1))
    await cluster.pool.wait_ready(5)
    big = [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "600m"}}}]
    await cluster.pod("first", "small", containers=big)
    await cluster.until("first", phase_is("Running"))
    await cluster.pod("second", "small", containers=big)
    failed = await cluster.until("second", phase_is("Failed"))
    assert failed["status"]["reason"] == "OutOfcpu"
    assert failed["status"]["message"] == ("Pod Node didn't have enough resource: cpu, "
                                           "requested: 600, used: 600, capacity: 1000")
    assert ("Warning", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, "
            "used: 600, capacity: 1000") in await cluster.events("second")
    # pods: the failed pod does not count; two more fill the node, the next is OutOfpods
    await cluster.pod("a", "small")
    await cluster.pod("b", "small")
    await cluster.until("b", phase_is("Running"))
    await cluster.pod("c", "small")
    rejected = await cluster.until("c", phase_is("Failed"))
    assert rejected["status"]["reason"] == "OutOfpods"
    # host ports: NodePorts
    port = [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    await cluster.pod("p1", "n-1", containers=port)
    await cluster.until("p1", phase_is("Running"))
    await cluster.pod("p2", "n-1", containers=port)
    clash = await cluster.until("p2", phase_is("Failed"))
    assert (clash["status"]["reason"], clash["status"]["message"]) == (
        "NodePorts", "Pod Predicate NodePorts failed")


async def test_completion_with_restart_never(cluster: Cluster) -> None:
    await cluster.pod("ok", containers=[{"name": "web", "image": "busybox",
                                         "command": ["sleep", "0.2"]}], restartPolicy="Never")
    await cluster.pod("bad", containers=[{"name": "web", "image": "busybox",
                                          "command": ["sh", "-c", "sleep 0.1; exit 3"]}],
                      restartPolicy="Never")
    await cluster.until("ok", phase_is("Running"))
    done = await cluster.until("ok", phase_is("Succeeded"))
    terminated = container(done)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] and terminated["finishedAt"]
    assert container(done)["ready"] is False
    ready = condition(done, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    failed = await cluster.until("bad", phase_is("Failed"))
    terminated = container(failed)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    # a finished pod no longer holds its slot: deleting it is immediate
    await cluster.client.delete(PODS, "ok", "default")
    await cluster.gone("ok")


async def test_restart_policies_on_failure_and_always(cluster: Cluster) -> None:
    await cluster.pod("once", containers=[{"name": "web", "image": "busybox",
                                           "command": ["true"]}], restartPolicy="OnFailure")
    await cluster.pod("flaky", containers=[{"name": "web", "image": "busybox",
                                            "command": ["false"]}], restartPolicy="OnFailure")
    await cluster.pod("loop", containers=[{"name": "web", "image": "busybox",
                                           "args": ["sleep", "0.05"]}])
    done = await cluster.until("once", phase_is("Succeeded"))
    assert container(done)["restartCount"] == 0
    crashing = await cluster.until("flaky", lambda p: container(p)["restartCount"] >= 2
                                   if p["status"].get("containerStatuses") else False)
    assert crashing["status"]["phase"] == "Running"
    last = container(crashing)["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    looping = await cluster.until(
        "loop", lambda p: bool(p["status"].get("containerStatuses")) and
        (container(p)["state"].get("waiting") or {}).get("reason") == "CrashLoopBackOff")
    waiting = container(looping)["state"]["waiting"]
    assert waiting["message"].startswith("back-off ")
    assert "restarting failed container=web pod=loop_default(" in waiting["message"]
    assert container(looping)["lastState"]["terminated"]["reason"] == "Completed"
    await cluster.until("loop", lambda p: container(p)["restartCount"] >= 3)
    assert ("Warning", "BackOff", "Back-off restarting failed container") in \
        await cluster.events("loop")


async def test_exit_annotations_and_init_containers(cluster: Cluster) -> None:
    await cluster.pod("annotated", annotations={"minikube-py.io/exit-after": "100ms",
                                                "minikube-py.io/exit-code": "2"},
                      restartPolicy="Never")
    failed = await cluster.until("annotated", phase_is("Failed"))
    assert container(failed)["state"]["terminated"]["exitCode"] == 2
    await cluster.pod("init", initContainers=[{"name": "setup", "image": "busybox",
                                               "command": ["sleep", "0.2"]}])
    initializing = await cluster.until("init", lambda p: bool(
        p["status"].get("initContainerStatuses")))
    assert initializing["status"]["phase"] == "Pending"
    assert container(initializing)["state"]["waiting"]["reason"] == "PodInitializing"
    assert condition(initializing, "Initialized")["reason"] == "ContainersNotInitialized"
    running = await cluster.until("init", phase_is("Running"))
    setup = running["status"]["initContainerStatuses"][0]
    assert setup["state"]["terminated"]["reason"] == "Completed"
    assert condition(running, "Initialized")["status"] == "True"


async def test_active_deadline_fails_the_pod(cluster: Cluster) -> None:
    await cluster.pod("deadline", activeDeadlineSeconds=1)
    await cluster.until("deadline", phase_is("Running"))
    failed = await cluster.until("deadline", phase_is("Failed"), timeout=4)
    assert failed["status"]["reason"] == "DeadlineExceeded"
    assert failed["status"]["message"] == ("Pod was active on the node longer than the "
                                           "specified deadline")
    assert "terminated" in container(failed)["state"]
    assert ("Normal", "DeadlineExceeded",
            "Pod was active on the node longer than the specified deadline") in \
        await cluster.events("deadline")


async def test_graceful_deletion_removes_the_pod(cluster: Cluster) -> None:
    await cluster.pod("doomed")
    running = await cluster.until("doomed", phase_is("Running"))
    ip = running["status"]["podIP"]
    await cluster.client.delete(PODS, "doomed", "default")
    terminating = await cluster.get("doomed")
    assert terminating["metadata"]["deletionTimestamp"]  # graceful: the kubelet finishes it
    await cluster.gone("doomed")
    assert ("Normal", "Killing", "Stopping container web") in await cluster.events("doomed")
    # its address is free again
    await cluster.pod("next")
    again = await cluster.until("next", phase_is("Running"))
    assert again["status"]["podIP"] == ip


async def test_logs_through_the_api_server(cluster: Cluster) -> None:
    await cluster.pod("logger", containers=[{"name": "web", "image": "nginx"},
                                            {"name": "side", "image": "busybox"}])
    await cluster.until("logger", phase_is("Running"))
    await asyncio.sleep(0.15)
    base = "/api/v1/namespaces/default/pods/logger/log"
    code, text = await cluster.api.get(f"{base}?container=web")
    assert code == 200
    lines = text.splitlines()
    assert lines[0] == "container web of pod default/logger started"
    assert len(lines) >= 4
    code, text = await cluster.api.get(f"{base}?container=side&tailLines=1")
    assert code == 200 and len(text.splitlines()) == 1 and text.startswith("side: ")
    code, text = await cluster.api.get(f"{base}?container=web&limitBytes=10")
    assert code == 200 and len(text) == 10
    code, _ = await cluster.api.get(f"{base}?container=web&previous=true")
    assert code == 400
    code, _ = await cluster.api.get(base)  # two containers: one must be named
    assert code == 400
    seen = []
    timeout = aiohttp.ClientTimeout(total=3)
    async with cluster.api.session.get(f"{cluster.api.url}{base}?container=web&follow=true"
                                       f"&tailLines=1", timeout=timeout) as resp:
        assert resp.status == 200
        async for line in resp.content:
            seen.append(line.decode())
            if len(seen) == 3:
                break
    assert seen[1].startswith("web: heartbeat") and seen[2].startswith("web: heartbeat")


async def test_logs_of_a_restarted_container(cluster: Cluster) -> None:
    await cluster.pod("again", containers=[{"name": "web", "image": "busybox",
                                            "command": ["sh", "-c", "echo run; sleep 0.15"]}])
    await cluster.until("again", lambda p: bool(p["status"].get("containerStatuses")) and
                        container(p)["restartCount"] >= 1 and container(p)["ready"])
    code, text = await cluster.api.get(
        "/api/v1/namespaces/default/pods/again/log?previous=true")
    assert (code, text) == (200, "run\n")


async def test_stop_node_and_start_node(cluster: Cluster) -> None:
    pool = cluster.pool
    await cluster.pod("before", "n-1")
    await cluster.until("before", phase_is("Running"))
    await pool.stop_node("n-1")
    kubelet = pool.kubelet("n-1")
    await asyncio.sleep(0.2)  # a heartbeat already in flight at the stop may still land
    beats = kubelet.heartbeats
    # meanwhile: the node controller marks the node and its pods not ready; a pod is bound
    # and another one deleted
    await cluster.client.patch(NODES, "n-1", {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}}, patch_type="strategic",
        subresource="status")
    await cluster.client.patch(PODS, "before", {"status": {"conditions": [
        {"type": "Ready", "status": "False"}]}}, "default", patch_type="strategic",
        subresource="status")
    await cluster.pod("during", "n-1")
    await cluster.pod("deleted", "n-1")
    await cluster.client.delete(PODS, "deleted", "default", grace_period_seconds=0)
    await asyncio.sleep(0.4)
    assert kubelet.heartbeats == beats
    assert (await cluster.get("during"))["status"]["phase"] == "Pending"
    assert "containerStatuses" not in (await cluster.get("during"))["status"]
    node = await cluster.client.get(NODES, "n-1")
    assert condition(node, "Ready")["status"] == "Unknown"
    await pool.start_node("n-1")
    node = await cluster.client.get(NODES, "n-1")
    ready = condition(node, "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    back = await cluster.until("before", lambda p: condition(p, "Ready")["status"] == "True")
    assert back["status"]["phase"] == "Running"
    await cluster.until("during", phase_is("Running"))
    await asyncio.sleep(0.3)
    assert kubelet.heartbeats > beats
    assert "default/deleted" not in kubelet.workers.records


async def test_readiness_gate(cluster: Cluster) -> None:
    gate = "example.com/feature-1"
    await cluster.pod("gated", readinessGates=[{"conditionType": gate}])
    running = await cluster.until("gated", phase_is("Running"))
    await asyncio.sleep(0.1)
    running = await cluster.get("gated")
    ready = condition(running, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    assert ready["message"] == (f'corresponding condition of pod readiness gate "{gate}" '
                                f"does not exist.")
    assert condition(running, "ContainersReady")["status"] == "True"
    await cluster.client.patch(PODS, "gated", {"status": {"conditions": [
        {"type": gate, "status": "True"}]}}, "default", patch_type="strategic",
        subresource="status")
    opened = await cluster.until("gated", lambda p: condition(p, "Ready")["status"] == "True")
    assert condition(opened, gate)["status"] == "True"  # kept: the kubelet does not own it


async def test_http_endpoints(cluster: Cluster) -> None:
    await cluster.pod("listed", "n-1")
    await cluster.until("listed", phase_is("Running"))
    session, url = cluster.api.session, cluster.pool.url
    async with session.get(f"{url}/healthz") as resp:
        assert resp.status == 200 and await resp.text() == "ok"
    async with session.get(f"{url}/pods?node=n-1") as resp:
        body = await resp.json()
        assert body["kind"] == "PodList"
        assert [p["metadata"]["name"] for p in body["items"]] == ["listed"]
        assert body["items"][0]["status"]["phase"] == "Running"
    async with session.post(f"{url}/nodes/n-1/stop") as resp:
        assert resp.status == 200 and (await resp.json())["state"] == "stopped"
    async with session.get(f"{url}/nodes") as resp:
        states = {n["name"]: n["state"] for n in (await resp.json())["items"]}
        assert states == {"n-0": "running", "n-1": "stopped"}
    async with session.post(f"{url}/nodes/n-1/start") as resp:
        summary = await resp.json()
        assert summary["state"] == "running" and summary["ready"] is True
    async with session.post(f"{url}/nodes/nope/stop") as resp:
        assert resp.status == 404


async def test_pool_restart_adopts_running_pods(cluster: Cluster) -> None:
    await cluster.pod("kept")
    before = container(await cluster.until("kept", phase_is("Running")))
    await cluster.pool.stop()
    pool = KubeletPool(cluster.client, port=0)
    pool.add_nodes("n", 2, FAST)
    cluster.pool = pool  # the fixture stops this one
    await pool.start()
    await pool.wait_ready(5)
    await pool.wait_synced(5)
    await asyncio.sleep(0.3)
    after = container(await cluster.get("kept"))
    assert after["containerID"] == before["containerID"]
    assert after["state"] == before["state"] and after["restartCount"] == 0
    assert pool.log_span("default", "kept", "web", False) is not None
    # and the adopted pod is still deleted gracefully by the new pool
    await cluster.client.delete(PODS, "kept", "default")
    await cluster.gone("kept")


async def test_single_node_pool_watches_only_its_node(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    pool = KubeletPool(client, port=-1)
    pool.add_node("solo", FAST)
    try:
        await pool.start()
        await pool.wait_ready(5)
        assert pool._selector == "spec.nodeName=solo"
        cluster = Cluster(api, client, pool)
        await cluster.pod("mine", "solo")
        await cluster.until("mine", phase_is("Running"))
        await client.create(NODES, {"metadata": {"name": "other"}})
        await cluster.pod("theirs", "other")
        await asyncio.sleep(0.2)
        assert (await cluster.get("theirs"))["status"]["phase"] == "Pending"
    finally:
        await pool.stop()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_kubelet_command_runs_nodes_until_sigterm(tmp_path: Path) -> None:
    import signal
    import sys

    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    script = ("import argparse, sys\n"
              "from minikube_py.cli import kubelet\n"
              "p = argparse.ArgumentParser(); kubelet.register(p.add_subparsers(), [])\n"
              "a = p.parse_args(sys.argv[1:]); sys.exit(a.run(a))\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, "kubelet", "--master", api.url, "--hostname-override",
        "cli", "--nodes", "2", "--port", "0", "--node-status-update-frequency", "100ms",
        "--node-labels", "zone=a", "--register-with-taints", "gpu=yes:NoSchedule",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        cwd=str(Path(__file__).resolve().parents[2]))
    try:
        deadline = time.monotonic() + 10
        while True:
            names = {n["metadata"]["name"]: n for n in (await client.list(NODES))["items"]}
            if {"cli-0", "cli-1"} <= names.keys():
                break
            assert time.monotonic() < deadline, "the kubelet command registered no nodes"
            await asyncio.sleep(0.1)
        node = names["cli-1"]
        assert node["metadata"]["labels"]["zone"] == "a"
        assert node["spec"]["taints"] == [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
        assert node["spec"]["podCIDR"] == "10.244.1.0/24"
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()
