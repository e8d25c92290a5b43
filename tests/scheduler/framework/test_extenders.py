"""HTTP extenders on the framework path: a real extender on a loopback socket.

The extender keeps odd-numbered nodes (the others fail with "even node") and scores a node by
its number; upstream scales extender scores by weight x (MaxNodeScore / MaxExtenderPriority).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
from aiohttp import web

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.extender import HTTPExtender
from minikube_py.scheduler.factory import ExtenderConfig
from minikube_py.scheduler.framework.config.types import PluginRef, Profile
from minikube_py.scheduler.framework.explain import FrameworkExplanation
from minikube_py.scheduler.framework.handle import FrameworkHandle
from minikube_py.scheduler.framework.interface import CycleState, StatusError
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.framework.runtime import Framework
from minikube_py.scheduler.framework.schedule_one import FitError, PodScheduler
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build


def _number(item: dict) -> int:
    return int(item["metadata"]["name"][1:])


async def odd_filter(request: web.Request) -> web.Response:
    items = orjson.loads(await request.read())["Nodes"]["items"]
    return web.json_response({
        "Nodes": {"items": [n for n in items if _number(n) % 2]},
        "FailedNodes": {n["metadata"]["name"]: "even node" for n in items if not _number(n) % 2},
        "Error": ""})


async def by_number(request: web.Request) -> web.Response:
    items = orjson.loads(await request.read())["Nodes"]["items"]
    return web.json_response([{"Host": n["metadata"]["name"], "Score": _number(n)}
                              for n in items])


async def broken(request: web.Request) -> web.Response:
    return web.json_response({"Error": "backend down"})


@pytest.fixture
async def extender_url() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/filter", odd_filter)
    app.router.add_post("/prioritize", by_number)
    app.router.add_post("/broken", broken)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def node(name: str) -> NodeInfo:
    return NodeInfo({"metadata": {"name": name},
                     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


POD = {"metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x"}]}}


def framework() -> tuple[Framework, FrameworkHandle]:
    profile = Profile(plugins={"queueSort": [PluginRef("PrioritySort")],
                               "bind": [PluginRef("DefaultBinder")]})
    handle = FrameworkHandle()
    return Framework(profile, build_registry(group=None), handle), handle


async def test_extenders_filter_and_score_after_the_plugins(extender_url: str):
    extender = HTTPExtender(ExtenderConfig(extender_url, "filter", "prioritize", weight=2))
    fw, handle = framework()
    table = build([node("n1"), node("n2"), node("n3")])
    try:
        decision = await PodScheduler(extenders=[extender]).schedule_pod(
            fw, handle, CycleState(), PodMeta.of(POD), table)
    finally:
        await extender.close()
    assert decision.node == "n3" and decision.feasible == 2
    explained = FrameworkExplanation("default-scheduler", table.names, decision.diagnosis,
                                     decision).to_dict()
    assert explained["extenderScores"] == {"n1": 20, "n3": 60}  # score x 2 x (100 / 10)
    assert explained["filters"] == {"n2": [{"plugin": "", "code": "Unschedulable",
                                            "reasons": ["even node"]}]}


async def test_an_extender_rejecting_every_node_is_a_fit_error(extender_url: str):
    extender = HTTPExtender(ExtenderConfig(extender_url, "filter", weight=1))
    fw, handle = framework()
    try:
        with pytest.raises(FitError) as info:
            await PodScheduler(extenders=[extender]).schedule_pod(
                fw, handle, CycleState(), PodMeta.of(POD), build([node("n2"), node("n4")]))
    finally:
        await extender.close()
    assert info.value.message() == "0/2 nodes are available: 2 even node."


async def test_a_failing_extender_filter_errors_the_attempt(extender_url: str):
    extender = HTTPExtender(ExtenderConfig(extender_url, "broken", weight=1))
    fw, handle = framework()
    try:
        with pytest.raises(StatusError) as info:
            await PodScheduler(extenders=[extender]).schedule_pod(
                fw, handle, CycleState(), PodMeta.of(POD), build([node("n1")]))
    finally:
        await extender.close()
    assert info.value.status.message() == (f"failed broken with extender at URL "
                                           f"{extender_url}/broken: extender error: backend down")
