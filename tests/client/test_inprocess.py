"""What the in-process transport promises beyond the shared client tests: the API server's
whole pipeline runs (router, filters, admission), objects are never shared between caller and
server, and a watch consumer that hangs up or stops reading is let go like a TCP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import CONFIGMAPS, PODS
from tests.apiserver.conftest import pod, start_api


@pytest.fixture
async def inprocess(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, watch_max_unsent_bytes=64 * 1024)
    client = Client(InProcessTransport(runner.app), field_manager="test")
    try:
        yield api.server, client
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


def _served(server, verb: str, resource: str) -> float:
    code = "201" if verb == "POST" else "200"
    return server.metrics.requests.labels(verb, "", resource, "", code)._value.get()


async def test_requests_pass_through_the_filter_chain_and_admission(inprocess):
    server, client = inprocess
    before = _served(server, "POST", "configmaps")
    await client.create(CONFIGMAPS, {"metadata": {"name": "a"}}, "default")
    assert _served(server, "POST", "configmaps") == before + 1  # counted by the filter chain
    with pytest.raises(StatusError) as info:  # NamespaceLifecycle admission
        await client.create(CONFIGMAPS, {"metadata": {"name": "a"}}, "missing")
    assert info.value.code == 404 and 'namespaces "missing" not found' in info.value.message
    with pytest.raises(StatusError) as info:  # validation
        await client.create(CONFIGMAPS, {"metadata": {"name": "Bad_Name"}}, "default")
    assert info.value.code == 422 and info.value.reason == "Invalid"


async def test_unknown_paths_and_raw_requests_get_the_same_answers_as_http(inprocess):
    server, client = inprocess
    resp = await client.transport.request("GET", "/api/v1/nosuchthings")
    assert resp.status == 404
    assert orjson.loads(resp.body)["kind"] == "Status"
    resp = await client.transport.request("GET", "/version")
    assert resp.status == 200 and orjson.loads(resp.body)["major"] == "1"
    resp = await client.transport.request(
        "POST", "/api/v1/namespaces/default/configmaps", body=b"{not json")
    assert resp.status == 400 and orjson.loads(resp.body)["reason"] == "BadRequest"


async def test_objects_are_never_aliased(inprocess):
    server, client = inprocess
    sent = {"metadata": {"name": "a", "labels": {"k": "v"}}, "data": {"x": "1"}}
    created = await client.create(CONFIGMAPS, sent, "default")
    sent["data"]["x"] = "changed by the caller"
    created["data"]["x"] = "changed too"
    stored = await client.get(CONFIGMAPS, "a", "default")
    assert stored["data"] == {"x": "1"}
    assert stored is not created


async def test_closing_a_watch_unregisters_it(inprocess):
    server, client = inprocess
    cacher = server.cachers["configmaps", ""]
    watch = client.watch(CONFIGMAPS, "default", allow_bookmarks=False)
    await client.create(CONFIGMAPS, {"metadata": {"name": "a"}}, "default")
    event = await anext(watch)
    assert event.type == "ADDED" and cacher.watcher_count == 1
    await watch.aclose()
    for _ in range(50):
        if cacher.watcher_count == 0:
            break
        await asyncio.sleep(0.02)
    assert cacher.watcher_count == 0


async def test_a_consumer_that_stops_reading_is_cut_off(inprocess):
    """64 KiB unread is this server's limit: the watch ends instead of buffering forever."""
    server, client = inprocess
    watch = client.watch(PODS, "default", allow_bookmarks=False)
    await client.create(PODS, pod("first"), "default")
    assert (await anext(watch)).object["metadata"]["name"] == "first"
    big = "x" * 4096
    for i in range(40):  # ~200 KiB of events nobody reads
        body = pod(f"p{i}")
        body["metadata"]["annotations"] = {"filler": big}
        await client.create(PODS, body, "default")
    received = [event async for event in watch]  # ends: the server closed the stream
    assert len(received) < 40
