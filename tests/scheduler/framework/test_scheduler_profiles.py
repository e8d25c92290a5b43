"""The framework scheduler against a real API server over real sockets.

Two profiles picked by spec.schedulerName (pods for an unknown name stay untouched), the
SchedulingGates PreEnqueue gate lifted by an update, the out-of-tree example plugin loaded
through a real entry point (a dist-info on sys.path) acting in the decision, Permit Wait
allowed from another task through the handle, a rejected binding's SchedulerError condition,
/debug/scheduler/last's framework explanation and the upstream-named Prometheus metrics.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import REGISTRY, generate_latest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import EVENTS, NODES, PODS, SERVICES
from minikube_py.scheduler.framework.config.types import (
    PluginRef,
    Profile,
    SchedulerConfiguration,
)
from minikube_py.scheduler.framework.interface import Code, PostFilterResult, Status
from minikube_py.scheduler.framework.registry import ENTRY_POINT_GROUP, build_registry
from minikube_py.scheduler.scheduler import Scheduler
from minikube_py.scheduler.server import build_app
from tests import polling
from tests.apiserver.conftest import start_api
from tests.e2e.kubectl_run import kubectl

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "scheduler-plugin"


def node(name: str, pool: str) -> dict:
    return {"metadata": {"name": name, "labels": {"example.io/pool": pool}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, scheduler: str = "", pool: str = "", **spec) -> dict:
    body = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}],
                                                  **spec}}
    if scheduler:
        body["spec"]["schedulerName"] = scheduler
    if pool:
        body["metadata"]["annotations"] = {"example.io/pool": pool}
    return body


def profile(name: str, *extra: str, **points: list[str]) -> Profile:
    plugins = {"queueSort": ["PrioritySort"], "preEnqueue": ["SchedulingGates"],
               "filter": ["RequireNodeLabel"], "score": ["RequireNodeLabel"],
               "bind": ["DefaultBinder"], **points}
    return Profile(scheduler_name=name,
                   plugins={p: [PluginRef(n) for n in names] for p, names in plugins.items()})


@pytest.fixture
def entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the example plugin the way pip would record it: a dist-info whose
    entry_points.txt names the factory, both on sys.path."""
    site = tmp_path / "site"
    dist = site / "minikube_example_plugin-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: minikube-example-plugin\n"
                                   "Version: 0.1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nRequireNodeLabel = minikube_example_plugin:new\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield
    sys.modules.pop("minikube_example_plugin", None)


@dataclass
class Cluster:
    client: Client
    scheduler: Scheduler
    debug_url: str
    api_url: str


@pytest.fixture
async def cluster(tmp_path: Path, entry_point: None, request) -> AsyncIterator[Cluster]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    extra = getattr(request, "param", {})
    config = SchedulerConfiguration(
        profiles=[profile("default-scheduler", **extra.get("points", {})),
                  profile("pool-b-scheduler")],
        pod_initial_backoff_seconds=1, pod_max_backoff_seconds=1)
    sched = Scheduler(Client(HTTPTransport(api.url)), config,
                      registry=build_registry(extra.get("plugins")))
    task = asyncio.create_task(sched.run())
    debug = web.AppRunner(build_app(sched), access_log=None)
    await debug.setup()
    site = web.TCPSite(debug, "127.0.0.1", 0)
    await site.start()
    try:
        for name, pool in (("a1", "a"), ("a2", "a"), ("b1", "b")):
            await client.create(NODES, node(name, pool))
        yield Cluster(client, sched, f"http://127.0.0.1:{debug.addresses[0][1]}", api.url)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await debug.cleanup()
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def eventually(check, timeout: float = 15.0):
    """tests.polling.eventually with these cluster tests' longer default wait."""
    return await polling.eventually(check, timeout, interval=0.05)


async def node_of(client: Client, name: str) -> str:
    return (await client.get(PODS, name, "default"))["spec"].get("nodeName") or ""


async def test_profiles_by_scheduler_name_and_the_entry_point_plugin(cluster: Cluster):
    c = cluster.client
    await c.create(PODS, pod("in-a", pool="a"), "default")
    await c.create(PODS, pod("in-b", scheduler="pool-b-scheduler", pool="b"), "default")
    await c.create(PODS, pod("stranger", scheduler="someone-else"), "default")
    assert (await eventually(lambda: node_of(c, "in-a"))).startswith("a")
    assert await eventually(lambda: node_of(c, "in-b")) == "b1"
    # the example plugin's Score spreads: the next pool-a pod goes to the other, emptier node
    first = await node_of(c, "in-a")
    await c.create(PODS, pod("in-a-2", pool="a"), "default")
    second = await eventually(lambda: node_of(c, "in-a-2"))
    assert {first, second} == {"a1", "a2"}
    await asyncio.sleep(0.5)
    assert await node_of(c, "stranger") == ""  # no profile of ours: never attempted
    assert "default/stranger" not in cluster.scheduler.attempts

    async with aiohttp.ClientSession() as http, \
            http.get(f"{cluster.debug_url}/debug/scheduler/last",
                     params={"pod": "default/in-a-2"}) as response:
        assert response.status == 200
        explained = await response.json()
    assert explained["profile"] == "default-scheduler" and explained["result"] == "scheduled"
    assert explained["filters"] == {"b1": [{"plugin": "RequireNodeLabel",
                                            "code": "Unschedulable",
                                            "reasons": ["node(s) are in another pool"]}]}
    parts = explained["pluginScores"]
    assert parts[second]["RequireNodeLabel"] == {"score": 100, "weight": 1, "weighted": 100}
    assert parts[first]["RequireNodeLabel"]["score"] == 0
    assert {"PreFilter", "Filter", "Score", "Reserve", "Permit", "Bind"} <= \
        set(explained["extensionPoints"])

    text = generate_latest(REGISTRY).decode()
    assert ('scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",'
            'profile="pool-b-scheduler",status="Success"}') in text
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}' \
        in text


async def test_unschedulable_pod_gets_upstreams_fit_error(cluster: Cluster, tmp_path: Path):
    c = cluster.client
    await c.create(PODS, pod("lost", pool="zzz"), "default")

    async def failed():
        events = (await c.list(EVENTS, "default", field_selector="reason=FailedScheduling"))
        return [e for e in events["items"] if e["involvedObject"]["name"] == "lost"]

    [event, *_] = await eventually(failed)
    assert event["message"] == "0/3 nodes are available: 3 node(s) are in another pool."

    async def condition():
        got = await c.get(PODS, "lost", "default")
        return next((x for x in got["status"].get("conditions") or []
                     if x["type"] == "PodScheduled"), None)

    cond = await eventually(condition)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == event["message"]
    # what a user sees: kubectl describe (in a thread: the API server shares this loop)
    described = await asyncio.to_thread(kubectl, cluster.api_url, tmp_path, "describe", "pod",
                                        "lost", "-n", "default")
    assert "FailedScheduling" in described.stdout
    assert "0/3 nodes are available: 3 node(s) are in another pool." in described.stdout


async def test_scheduling_gates_hold_the_pod_until_removed(cluster: Cluster):
    c = cluster.client
    await c.create(PODS, pod("gated", pool="a", schedulingGates=[{"name": "example.io/wait"}]),
                   "default")
    await asyncio.sleep(0.5)
    assert await node_of(c, "gated") == ""
    assert "default/gated" not in cluster.scheduler.attempts
    await c.patch(PODS, "gated", {"spec": {"schedulingGates": None}}, "default")
    assert (await eventually(lambda: node_of(c, "gated"))).startswith("a")


class Gate:
    """A Permit plugin that parks every pod until someone allows it through the handle."""

    name = "Gate"

    def permit(self, state, pod, node):
        return Status.of(Code.WAIT), 30.0


class Refuse:
    """A binder that refuses, then hands over (Skip) to DefaultBinder when told."""

    name = "Refuse"
    skip = False

    async def bind(self, state, pod, node):
        return Status.of(Code.SKIP) if Refuse.skip else Status.error("no binding today")


@pytest.mark.parametrize("cluster", [{
    "plugins": {"Gate": lambda args, handle: Gate(), "Refuse": lambda args, handle: Refuse()},
    "points": {"permit": ["Gate"], "bind": ["Refuse", "DefaultBinder"]},
}], indirect=True)
async def test_permit_wait_allow_and_binder_chain(cluster: Cluster):
    c = cluster.client
    sched = cluster.scheduler
    framework = sched.framework.framework_for("default-scheduler")
    created = await c.create(PODS, pod("parked", pool="a"), "default")
    uid = created["metadata"]["uid"]

    async def parked():
        return framework.handle.get_waiting_pod(uid)

    waiting = await eventually(parked)
    assert waiting.pending_plugins() == ["Gate"]
    assert await node_of(c, "parked") == ""
    waiting.allow("Gate")  # Refuse answers an Error: the binding cycle fails

    async def refused():
        got = await c.get(PODS, "parked", "default")
        return next((x for x in got["status"].get("conditions") or []
                     if x["type"] == "PodScheduled" and x["reason"] == "SchedulerError"), None)

    cond = await eventually(refused)
    assert cond["message"] == 'running Bind plugin "Refuse": no binding today'
    assert sched.attempts["default/parked"].result == "bind-failed"
    assert not sched.cache.is_assumed(created)  # the assumption was forgotten
    Refuse.skip = True  # the retry parks again; allowed, Refuse skips, DefaultBinder binds
    try:
        waiting = await eventually(parked)
        waiting.allow("Gate")
        assert (await eventually(lambda: node_of(c, "parked"))).startswith("a")
    finally:
        Refuse.skip = False


class NeedsService:
    """Filter reading the cluster through the handle's informers: a pod annotated
    `example.io/service: NAME` fits only once that Service exists in its namespace."""

    name = "NeedsService"

    def __init__(self, handle) -> None:
        self.services = handle.informers.informer(SERVICES)

    def filter(self, state, pod, nodes, candidates):
        md = pod.pod["metadata"]
        wanted = (md.get("annotations") or {}).get("example.io/service")
        if not wanted or self.services.indexer.get(f"{md['namespace']}/{wanted}") is not None:
            return []
        return [(Status.unschedulable(f"service {wanted} does not exist"), nodes.everywhere())]


@pytest.mark.parametrize("cluster", [{
    "plugins": {"NeedsService": lambda args, handle: NeedsService(handle)},
    "points": {"filter": ["RequireNodeLabel", "NeedsService"]},
}], indirect=True)
async def test_plugins_read_the_cluster_through_the_handles_informers(cluster: Cluster):
    c = cluster.client
    body = pod("needy", pool="a")
    body["metadata"]["annotations"]["example.io/service"] = "backend"
    await c.create(PODS, body, "default")

    async def failed():
        attempt = cluster.scheduler.attempts.get("default/needy")
        return attempt if attempt is not None and attempt.result == "unschedulable" else None

    attempt = await eventually(failed)
    assert attempt.message == "0/3 nodes are available: 1 node(s) are in another pool, " \
        "2 service backend does not exist."
    await c.create(SERVICES, {"metadata": {"name": "backend"},
                              "spec": {"ports": [{"port": 80}]}}, "default")
    assert (await eventually(lambda: node_of(c, "needy"))).startswith("a")


class Nominate:
    """A PostFilter that nominates node a1 (as preemption would, after evicting victims)."""

    name = "Nominate"

    async def post_filter(self, state, pod, diagnosis):
        return PostFilterResult("a1"), Status.unschedulable("preemption: would evict 1 pod")


@pytest.mark.parametrize("cluster", [{
    "plugins": {"NeedsService": lambda args, handle: NeedsService(handle),
                "Nominate": lambda args, handle: Nominate()},
    "points": {"filter": ["RequireNodeLabel", "NeedsService"], "postFilter": ["Nominate"]},
}], indirect=True)
async def test_post_filter_nomination_is_written_and_tried_first(cluster: Cluster):
    c = cluster.client
    body = pod("nominee", pool="a")
    body["metadata"]["annotations"]["example.io/service"] = "db"
    await c.create(PODS, body, "default")

    async def nominated():
        got = await c.get(PODS, "nominee", "default")
        return got if (got.get("status") or {}).get("nominatedNodeName") else None

    got = await eventually(nominated)
    assert got["status"]["nominatedNodeName"] == "a1"
    condition = next(x for x in got["status"]["conditions"] if x["type"] == "PodScheduled")
    assert condition["message"] == ("0/3 nodes are available: 1 node(s) are in another pool, "
                                    "2 service db does not exist. "
                                    "preemption: would evict 1 pod.")
    explained = cluster.scheduler.attempts["default/nominee"].to_dict()
    assert explained["postFilter"] == {"plugin": "Nominate", "code": "Unschedulable",
                                       "reasons": ["preemption: would evict 1 pod"],
                                       "nominatedNodeName": "a1"}
    # a1 and a2 tie (both empty); the first tie-break of this scheduler would take a2, but
    # the nominated node is evaluated first and wins as soon as it fits
    await c.create(SERVICES, {"metadata": {"name": "db"}, "spec": {"ports": [{"port": 80}]}},
                   "default")
    assert await eventually(lambda: node_of(c, "nominee")) == "a1"


class Quota:
    """Reserve: the first pod reserved is refused (a quota plugin's Reserve); unreserve
    calls are recorded."""

    name = "Quota"
    refused: ClassVar[list[str]] = []
    unreserved: ClassVar[list[str]] = []

    def reserve(self, state, pod, node):
        if not Quota.refused:
            Quota.refused.append(pod["metadata"]["name"])
            return Status.unschedulable("quota exceeded")
        return None

    def unreserve(self, state, pod, node):
        Quota.unreserved.append(pod["metadata"]["name"])


@pytest.mark.parametrize("cluster", [{
    "plugins": {"Quota": lambda args, handle: Quota(), "Gate": lambda args, handle: Gate()},
    "points": {"reserve": ["Quota"], "permit": ["Gate"]},
}], indirect=True)
async def test_reserve_and_permit_rejections_read_as_one_node_fit_errors(cluster: Cluster):
    c = cluster.client
    Quota.refused.clear()
    Quota.unreserved.clear()
    created = await c.create(PODS, pod("quota", pool="b"), "default")

    async def failed_events():
        events = (await c.list(EVENTS, "default", field_selector="reason=FailedScheduling"))
        return [e["message"] for e in events["items"]
                if e["involvedObject"]["name"] == "quota"]

    # Reserve refused: unreserve ran, the assumption is gone, the text is upstream's FitError
    assert (await eventually(failed_events))[0] == \
        "0/1 nodes are available: 1 quota exceeded."
    assert Quota.unreserved[:1] == ["quota"]
    assert not cluster.scheduler.cache.is_assumed(created)
    # the retry is reserved and parks at Permit; another plugin rejects it through the handle
    framework = cluster.scheduler.framework.framework_for("default-scheduler")

    async def parked():
        return framework.handle.get_waiting_pod(created["metadata"]["uid"])

    (await eventually(parked)).reject("Coscheduling", "gang incomplete")

    async def two_failures():
        messages = await failed_events()
        return messages if len(messages) >= 2 else None

    messages = await eventually(two_failures)
    assert "0/1 nodes are available: 1 gang incomplete." in messages


async def test_a_configuration_handed_over_after_construction(tmp_path: Path, entry_point: None):
    """The CLI builds the scheduler from its flags, then hands a loaded --config over."""
    from minikube_py.scheduler.factory import from_provider

    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    sched = Scheduler(Client(HTTPTransport(api.url)), from_provider("DefaultProvider"))
    config = SchedulerConfiguration(profiles=[profile("late-scheduler")],
                                    pod_initial_backoff_seconds=2, pod_max_backoff_seconds=4)
    sched.use_configuration(config)
    assert sched.configuration is config and sched._backoff == (2.0, 4.0)
    task = asyncio.create_task(sched.run())
    try:
        with pytest.raises(RuntimeError, match="set before it runs"):
            await asyncio.sleep(0.2)
            sched.use_configuration(None)
        await client.create(NODES, node("a1", "a"))
        await client.create(PODS, pod("late", scheduler="late-scheduler", pool="a"), "default")
        assert await eventually(lambda: node_of(client, "late")) == "a1"
        assert sched.attempts["default/late"].to_dict()["profile"] == "late-scheduler"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await sched.client.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()
