"""The scheduler behaviours the seeds describe that were missing (issue 20 item 9), over real
sockets: a Policy with serviceAffinity / serviceAntiAffinity schedules (its listers are the
scheduler's informers and cache); a rejected binding sets PodScheduled=False BindingRejected,
forgets the assumption and retries after backoff; an empty cluster answers ErrNoNodesAvailable;
stale backoff entries are garbage-collected."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS, SERVICES
from minikube_py.scheduler.factory import Algorithm, from_provider, load_policy
from minikube_py.scheduler.scheduler import Scheduler
from tests import polling
from tests.apiserver.conftest import start_api

VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
VAPB = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, labels: dict | None = None, **spec: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


async def eventually(check, timeout: float = 15.0):
    """tests.polling.eventually with these cluster tests' longer default wait."""
    return await polling.eventually(check, timeout, interval=0.05)


@asynccontextmanager
async def cluster(tmp_path: Path, algorithm: Algorithm, **api_options: Any
                  ) -> AsyncIterator[tuple[Any, Client, Scheduler]]:
    api, runner, store, session = await start_api(tmp_path, **api_options)
    client = Client(HTTPTransport(api.url))
    sched = Scheduler(Client(HTTPTransport(api.url)), algorithm, seed=1,
                      initial_backoff=0.1, max_backoff=0.2)
    task = asyncio.create_task(sched.run())
    try:
        yield api, client, sched
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def node_of(client: Client, name: str) -> str:
    async def bound() -> str:
        return (await client.get(PODS, name, "default"))["spec"].get("nodeName") or ""
    return await eventually(bound)


async def scheduled_condition(client: Client, name: str, reason: str) -> dict:
    async def condition() -> dict | None:
        got = await client.get(PODS, name, "default")
        for c in got["status"].get("conditions") or []:
            if c["type"] == "PodScheduled" and c.get("reason") == reason:
                return c
        return None
    return await eventually(condition)


async def failed_scheduling(client: Client, name: str) -> list[dict]:
    async def events() -> list[dict]:
        items = (await client.list(EVENTS, "default",
                                   field_selector="reason=FailedScheduling"))["items"]
        return [e for e in items if e["involvedObject"]["name"] == name]
    return await eventually(events)


async def test_policy_with_service_affinity_and_anti_affinity_schedules(tmp_path: Path):
    """The Policy is loaded as the command loads it (no listers at hand); serviceAffinity
    keeps the service's pods in the region of its first pod, serviceAntiAffinity spreads
    them over that region's zones."""
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({
        "kind": "Policy", "apiVersion": "v1",
        "predicates": [{"name": "PodFitsResources"},
                       {"name": "RegionAffinity",
                        "argument": {"serviceAffinity": {"labels": ["region"]}}}],
        "priorities": [{"name": "ZoneSpread", "weight": 1,
                        "argument": {"serviceAntiAffinity": {"label": "zone"}}}]}))
    algorithm = load_policy(policy)
    async with cluster(tmp_path, algorithm) as (_api, client, _sched):
        for name, region, zone in (("a1", "east", "e1"), ("a2", "east", "e2"),
                                   ("b1", "west", "w1"), ("b2", "west", "w2")):
            await client.create(NODES, node(name, region=region, zone=zone))
        await client.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                       "metadata": {"name": "web"},
                                       "spec": {"selector": {"app": "web"},
                                                "ports": [{"port": 80}]}}, "default")
        await client.create(PODS, pod("web-0", {"app": "web"}, nodeSelector={"region": "west"}),
                            "default")
        placed = [await node_of(client, "web-0")]
        for i in range(1, 4):
            await client.create(PODS, pod(f"web-{i}", {"app": "web"}), "default")
            placed.append(await node_of(client, f"web-{i}"))
        assert set(placed) <= {"b1", "b2"}, placed  # all in web-0's region
        assert placed[0] != placed[1]  # the second one goes to the other zone
        assert sorted(placed) == ["b1", "b1", "b2", "b2"]  # spread evenly
        # a pod of no service is free to go anywhere: both regions are used over 8 pods
        for i in range(8):
            await client.create(PODS, pod(f"free-{i}"), "default")
        free = {await node_of(client, f"free-{i}") for i in range(8)}
        assert free & {"a1", "a2"}


async def test_rejected_binding_sets_binding_rejected_and_retries(tmp_path: Path):
    """A ValidatingAdmissionPolicy refuses bindings to node-1 (422): the event says
    "Binding rejected: ...", PodScheduled=False has reason BindingRejected, the assumed pod
    is forgotten and the pod is retried after its backoff; once the policy is gone it binds."""
    async with cluster(tmp_path, from_provider("DefaultProvider"),
                       admission_control=("NamespaceLifecycle", "ValidatingAdmissionPolicy")
                       ) as (api, client, _sched):
        status, body = await api.post(VAP, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "no-node-1"},
            "spec": {"matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["pods/binding"]}]},
                "validations": [{"expression": "object.target.name != 'node-1'",
                                 "message": "node-1 is closed"}]}})
        assert status == 201, body
        status, body = await api.post(VAPB, {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-node-1"},
            "spec": {"policyName": "no-node-1", "validationActions": ["Deny"]}})
        assert status == 201, body
        await client.create(NODES, node("node-1"))
        await client.create(PODS, pod("web"), "default")

        condition = await scheduled_condition(client, "web", "BindingRejected")
        assert condition["status"] == "False"
        assert condition["message"].startswith("Binding rejected: ")
        assert "node-1 is closed" in condition["message"]
        events = await failed_scheduling(client, "web")
        assert events[0]["type"] == "Warning"
        assert events[0]["message"] == condition["message"]

        async def retried() -> bool:  # backoff 0.1 s doubling to 0.2 s: several attempts
            evs = await failed_scheduling(client, "web")
            return sum(e.get("count", 1) for e in evs) >= 3
        await eventually(retried)
        # retried at all means the assumption was forgotten (an assumed pod is skipped)
        assert not (await client.get(PODS, "web", "default"))["spec"].get("nodeName")

        assert (await api.call("DELETE", f"{VAPB}/no-node-1"))[0] == 200
        assert await node_of(client, "web") == "node-1"


async def test_no_nodes_is_err_no_nodes_available(tmp_path: Path):
    async with cluster(tmp_path, from_provider("DefaultProvider")) as (_api, client, sched):
        await client.create(PODS, pod("lonely"), "default")
        condition = await scheduled_condition(client, "lonely", "Unschedulable")
        assert condition["message"] == "no nodes available to schedule pods"
        events = await failed_scheduling(client, "lonely")
        assert events[0]["message"] == "no nodes available to schedule pods"
        assert sched.attempts["default/lonely"].result == "unschedulable"
        await client.create(NODES, node("node-1"))  # a node arriving retries the pod
        assert await node_of(client, "lonely") == "node-1"


async def test_stale_backoff_entries_are_garbage_collected(tmp_path: Path):
    """upstream podBackoff.gc: entries idle past the maximum go (here: max backoff 0.2 s,
    so an entry whose wait ended more than 0.4 s ago is dropped at the next pass)."""
    async with cluster(tmp_path, from_provider("DefaultProvider")) as (_api, _client, sched):
        async def started() -> bool:
            return sched.queue is not None
        await eventually(started)
        assert sched.queue is not None
        sched.queue.backoff.bump("default/gone")  # a pod that failed once, then vanished
        assert "default/gone" in sched.queue.backoff.entries

        async def collected() -> bool:
            assert sched.queue is not None
            return "default/gone" not in sched.queue.backoff.entries
        await eventually(collected, timeout=5)


def test_scheduler_command_starts_with_a_service_affinity_policy(tmp_path: Path):
    """The reported symptom: `minikube-py scheduler --policy-config-file` with serviceAffinity
    stopped at start ("serviceAffinity needs listers"); now it schedules."""
    import subprocess
    import sys
    import time
    import urllib.request

    from tests.apiserver_thread import ServerThread

    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"kind": "Policy", "apiVersion": "v1", "predicates": [
        {"name": "PodFitsResources"},
        {"name": "RegionAffinity", "argument": {"serviceAffinity": {"labels": ["region"]}}}]}))
    server = ServerThread(tmp_path / "data").start()
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", "scheduler", "--master", server.url,
         "--port", "0", "--policy-config-file", str(policy)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2])

    def call(method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            server.url + path, method=method, data=json.dumps(body).encode() if body else None,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as resp:
            return json.loads(resp.read())

    try:
        call("POST", "/api/v1/nodes", node("node-1", region="east"))
        call("POST", "/api/v1/namespaces/default/pods", pod("web"))
        deadline = time.monotonic() + 30
        bound = ""
        while not bound and time.monotonic() < deadline and proc.poll() is None:
            bound = call("GET", "/api/v1/namespaces/default/pods/web")["spec"].get("nodeName")
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()[1]
        assert bound == "node-1"
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        server.stop()
