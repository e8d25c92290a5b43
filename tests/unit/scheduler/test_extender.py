"""HTTPExtender against a small real extender: an aiohttp app on a loopback socket.

The test extender keeps nodes labelled gpu=true (the rest go to FailedNodes with a reason)
and scores a node by the number at the end of its name. Other routes misbehave on purpose:
an `Error` reply, a 500, a body that is not JSON, a reply slower than the client's timeout.
Every request body is recorded so the wire field names can be checked.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from aiohttp import web

from minikube_py.scheduler.extender import ExtenderError, HTTPExtender
from minikube_py.scheduler.factory import ExtenderConfig

Obj = dict[str, Any]


def node(name: str, **labels: str) -> Obj:
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": labels}}


POD: Obj = {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "img"}]}}
NODES = [node("node-1", gpu="true"), node("node-2"), node("node-3", gpu="true")]


# -- the test extender ------------------------------------------------------------------


@dataclass
class Extender:
    """A running test extender: its base URL, what it received, and a latch that lets the
    slow route finish so the server shuts down at once."""

    url: str
    received: list[tuple[str, str, Obj]] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)


EXTENDER = web.AppKey("extender", Extender)


async def _args(request: web.Request) -> Obj:
    args = orjson.loads(await request.read())
    request.app[EXTENDER].received.append(
        (request.path, request.headers.get("Content-Type", ""), args))
    return args


def _json(value: Any) -> web.Response:
    return web.Response(body=orjson.dumps(value), content_type="application/json")


async def gpu_filter(request: web.Request) -> web.Response:
    args = await _args(request)
    keep, failed = [], {}
    for item in args["Nodes"]["items"]:
        if item["metadata"].get("labels", {}).get("gpu") == "true":
            keep.append(item)
        else:
            failed[item["metadata"]["name"]] = "node has no GPU"
    return _json({"Nodes": {"items": keep}, "FailedNodes": failed, "Error": ""})


async def number_prioritize(request: web.Request) -> web.Response:
    args = await _args(request)
    return _json([{"Host": n["metadata"]["name"],
                   "Score": int(re.search(r"(\d+)$", n["metadata"]["name"]).group(1))}
                  for n in args["Nodes"]["items"]])


async def names_filter(request: web.Request) -> web.Response:
    """A v1.7 nodeCacheCapable-style answer with the versioned types' lowercase tags."""
    await _args(request)
    return _json({"nodenames": ["node-3"], "failedNodes": {"node-1": "busy"}})


async def lowercase_prioritize(request: web.Request) -> web.Response:
    await _args(request)
    return _json([{"host": "node-1", "score": 7}, {"host": "node-1", "score": 1}])


async def error_filter(request: web.Request) -> web.Response:
    await _args(request)
    return _json({"Error": "gpu inventory unavailable"})


async def status_500(request: web.Request) -> web.Response:
    await _args(request)
    return web.Response(status=500, text="internal boom")


async def not_json(request: web.Request) -> web.Response:
    await _args(request)
    return web.Response(text="<html>not json</html>", content_type="text/html")


async def bad_score(request: web.Request) -> web.Response:
    await _args(request)
    return _json([{"Host": "node-1", "Score": "high"}])


async def slow(request: web.Request) -> web.Response:
    await _args(request)
    try:
        await asyncio.wait_for(request.app[EXTENDER].release.wait(), 5)
    except TimeoutError:
        pass
    return _json([])


@pytest.fixture
async def extender() -> AsyncIterator[Extender]:
    app = web.Application()
    app.router.add_post("/api/filter", gpu_filter)
    app.router.add_post("/api/prioritize", number_prioritize)
    app.router.add_post("/api/names", names_filter)
    app.router.add_post("/api/lower", lowercase_prioritize)
    app.router.add_post("/api/error", error_filter)
    app.router.add_post("/api/fail", status_500)
    app.router.add_post("/api/html", not_json)
    app.router.add_post("/api/badscore", bad_score)
    app.router.add_post("/api/slow", slow)
    state = app[EXTENDER] = Extender("")  # before start: a started app's state is frozen
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    state.url = f"http://{host}:{port}/api"
    yield state
    state.release.set()
    await runner.cleanup()


@pytest.fixture
async def make(extender: Extender) -> AsyncIterator:
    """Build HTTPExtenders against the test extender and close them all afterwards."""
    made: list[HTTPExtender] = []

    def build(filter_verb: str = "", prioritize_verb: str = "", **kw: Any) -> HTTPExtender:
        kw.setdefault("url_prefix", extender.url)
        made.append(HTTPExtender(ExtenderConfig(filter_verb=filter_verb,
                                                prioritize_verb=prioritize_verb, **kw)))
        return made[-1]

    yield build
    for ext in made:
        await ext.close()


# -- results ----------------------------------------------------------------------------


async def test_filter_keeps_fitting_nodes_and_reports_the_rest(make) -> None:
    fits, failed = await make("filter").filter(POD, NODES)
    assert fits == ["node-1", "node-3"]
    assert failed == {"node-2": "node has no GPU"}


async def test_prioritize_returns_raw_scores(make) -> None:
    ext = make(prioritize_verb="prioritize", weight=3)
    assert ext.weight == 3
    assert await ext.prioritize(POD, NODES) == {"node-1": 1, "node-2": 2, "node-3": 3}


async def test_request_body_uses_upstream_field_names(make, extender: Extender) -> None:
    ext = make("filter", "prioritize")
    await ext.filter(POD, NODES[:2])
    await ext.prioritize(POD, NODES[2:])
    (path1, ctype1, args1), (path2, _, args2) = extender.received
    assert (path1, path2) == ("/api/filter", "/api/prioritize")
    assert ctype1 == "application/json"
    assert set(args1) == {"Pod", "Nodes"}
    assert args1["Pod"] == POD
    assert args1["Nodes"] == {"items": NODES[:2]}
    assert args2 == {"Pod": POD, "Nodes": {"items": NODES[2:]}}


async def test_no_verbs_pass_everything_without_calling(make, extender: Extender) -> None:
    ext = make()
    assert await ext.filter(POD, NODES) == (["node-1", "node-2", "node-3"], {})
    assert await ext.prioritize(POD, NODES) == {}
    assert extender.received == []


async def test_trailing_slash_in_prefix_is_trimmed(make, extender: Extender) -> None:
    await make("filter", url_prefix=extender.url + "/").filter(POD, NODES)
    assert extender.received[0][0] == "/api/filter"


async def test_case_insensitive_reply_and_node_names(make) -> None:
    """Go's Unmarshal ignores key case, so lowercase-tagged replies work; NodeNames (v1.7)
    stands in for Nodes; a host listed twice is summed like upstream's combinedScores."""
    ext = make("names", "lower")
    assert await ext.filter(POD, NODES) == (["node-3"], {"node-1": "busy"})
    assert await ext.prioritize(POD, NODES) == {"node-1": 8}


# -- failures ---------------------------------------------------------------------------


async def test_error_field_fails_the_call(make, extender: Extender) -> None:
    with pytest.raises(ExtenderError) as err:
        await make("error").filter(POD, NODES)
    assert f"{extender.url}/error" in str(err.value)
    assert "gpu inventory unavailable" in str(err.value)


@pytest.mark.parametrize("method", ["filter", "prioritize"])
async def test_non_200_fails_the_call(make, extender: Extender, method: str) -> None:
    ext = make("fail", "fail")
    with pytest.raises(ExtenderError) as err:
        await getattr(ext, method)(POD, NODES)
    assert f"{extender.url}/fail" in str(err.value)
    assert "code 500" in str(err.value) and "internal boom" in str(err.value)


@pytest.mark.parametrize("method", ["filter", "prioritize"])
async def test_invalid_json_fails_the_call(make, extender: Extender, method: str) -> None:
    ext = make("html", "html")
    with pytest.raises(ExtenderError) as err:
        await getattr(ext, method)(POD, NODES)
    assert f"{extender.url}/html" in str(err.value)
    assert "invalid JSON" in str(err.value)


async def test_wrong_shapes_fail_the_call(make) -> None:
    with pytest.raises(ExtenderError, match="integer Score"):
        await make(prioritize_verb="badscore").prioritize(POD, NODES)
    with pytest.raises(ExtenderError, match="ExtenderFilterResult"):
        await make("prioritize").filter(POD, NODES)  # a list where an object belongs


async def test_timeout_fails_the_call(make, extender: Extender) -> None:
    ext = make("slow", "slow", http_timeout=0.2)
    loop = asyncio.get_running_loop()
    for method in (ext.filter, ext.prioritize):
        start = loop.time()
        with pytest.raises(ExtenderError) as err:
            await method(POD, NODES)
        assert loop.time() - start < 1.5
        assert f"{extender.url}/slow" in str(err.value) and "timed out" in str(err.value)


async def test_connection_refused_fails_the_call(make) -> None:
    with socket.socket() as sock:  # a port that nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ExtenderError) as err:
        await make("filter", url_prefix=url).filter(POD, NODES)
    assert f"{url}/filter" in str(err.value)


async def test_session_is_reused_and_close_is_idempotent(make) -> None:
    ext = make("filter")
    await ext.close()  # never opened: nothing to do
    await ext.filter(POD, NODES)
    session = ext._session
    await ext.filter(POD, NODES)
    assert ext._session is session
    await ext.close()
    await ext.close()
    assert session is not None and session.closed
    assert (await ext.filter(POD, NODES))[0] == ["node-1", "node-3"]  # reopens after close


# -- in the generic scheduler, configured from a Policy ------------------------------------


def _sized(name: str, **labels: str) -> Obj:
    n = node(name, **labels)
    n["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    return n


async def test_policy_extenders_filter_and_score_in_the_generic_scheduler(
        extender: Extender) -> None:
    """v1.5 order: predicates, then the extender's filter (its FailedNodes reasons count in
    the FitError), then priorities plus extender score * weight."""
    from minikube_py.scheduler.factory import from_policy
    from minikube_py.scheduler.generic_scheduler import FitError, GenericScheduler
    from minikube_py.scheduler.nodeinfo import NodeInfo
    from minikube_py.scheduler.nodetable import build

    algorithm = from_policy({
        "kind": "Policy", "apiVersion": "v1",
        "predicates": [{"name": "PodFitsResources"}],
        "priorities": [{"name": "LeastRequestedPriority", "weight": 1}],
        "extenders": [{"urlPrefix": extender.url, "filterVerb": "filter",
                       "prioritizeVerb": "prioritize", "weight": 5}]})
    extenders = [HTTPExtender(config) for config in algorithm.extenders]
    scheduler = GenericScheduler(algorithm.predicates, algorithm.priorities, extenders=extenders)
    try:
        table = build([NodeInfo(_sized("node-1", gpu="true")), NodeInfo(_sized("node-2")),
                       NodeInfo(_sized("node-3", gpu="true"))])
        result = await scheduler.schedule(POD, table)
        assert result.node == "node-3"  # equal LeastRequested; extender 3*5 beats 1*5
        assert result.scores == {"node-1": 9 + 5, "node-3": 9 + 15}  # 100m/200MB defaults
        assert result.failed == {"node-2": ["node has no GPU"]}

        no_gpu = build([NodeInfo(_sized("node-2")), NodeInfo(_sized("node-4"))])
        with pytest.raises(FitError) as info:
            await scheduler.schedule(POD, no_gpu)
        assert str(info.value) == "0/2 nodes are available: 2 node has no GPU."
    finally:
        for ext in extenders:
            await ext.close()
