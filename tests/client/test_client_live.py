"""The REST client, reflector and informer against a real API server, over both transports:
HTTP on a loopback socket, and in-process through the same handler pipeline."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from minikube_py.api.errors import StatusError
from minikube_py.client import Client, HTTPTransport, InProcessTransport
from minikube_py.client.cache import Informer
from minikube_py.client.resources import CONFIGMAPS, NODES, PODS
from tests.apiserver.conftest import pod, start_api


@pytest.fixture(params=["http", "in-process"])
async def cluster(request, tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, watch_cache_size=4)
    transport = (HTTPTransport(api.url) if request.param == "http"
                 else InProcessTransport(runner.app))
    client = Client(transport, field_manager="test")
    try:
        yield api, client
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_crud_and_errors(cluster):
    api, client = cluster
    created = await client.create(PODS, pod("web"), "default")
    assert created["status"]["phase"] == "Pending"
    got = await client.get(PODS, "web", "default")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    patched = await client.patch(PODS, "web", {"metadata": {"labels": {"x": "y"}}}, "default")
    assert patched["metadata"]["labels"]["x"] == "y"
    with pytest.raises(StatusError) as info:
        await client.update(PODS, got)  # stale resourceVersion
    assert info.value.code == 409 and info.value.reason == "Conflict"
    await client.bind("default", "web", "node-1")
    with pytest.raises(StatusError) as info:
        await client.bind("default", "web", "node-2")
    assert info.value.code == 409
    listed = await client.list(PODS, "default", field_selector="spec.nodeName=node-1")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["web"]
    await client.delete(PODS, "web", "default", grace_period_seconds=0)
    with pytest.raises(StatusError) as info:
        await client.get(PODS, "web", "default")
    assert info.value.code == 404


async def test_watch_yields_events_in_order(cluster):
    api, client = cluster
    listed = await client.list(CONFIGMAPS, "default")
    rv = listed["metadata"]["resourceVersion"]
    await client.create(CONFIGMAPS, {"metadata": {"name": "a"}, "data": {"k": "1"}}, "default")
    await client.patch(CONFIGMAPS, "a", {"data": {"k": "2"}}, "default")
    await client.delete(CONFIGMAPS, "a", "default")
    seen = []
    async for event in client.watch(CONFIGMAPS, "default", resource_version=rv,
                                    timeout_seconds=5, allow_bookmarks=False):
        seen.append((event.type, event.object["data"]["k"]))
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "2")]


async def test_informer_tracks_adds_updates_deletes_with_an_index(cluster):
    api, client = cluster
    events = []
    informer = Informer(client, PODS, indexers={
        "node": lambda p: [p["spec"].get("nodeName")] if p["spec"].get("nodeName") else []})
    informer.add_event_handler(
        on_add=lambda o: events.append(("add", o["metadata"]["name"])),
        on_update=lambda old, new: events.append(("update", new["metadata"]["name"])),
        on_delete=lambda o: events.append(("delete", o["metadata"]["name"])))
    await client.create(PODS, pod("before"), "default")
    informer.start()
    try:
        await informer.wait_for_sync(5)
        await client.create(PODS, pod("after"), "default")
        await client.bind("default", "after", "n1")
        await client.delete(PODS, "before", "default")
        for _ in range(50):
            if len(events) >= 4:
                break
            await asyncio.sleep(0.05)
        assert events == [("add", "before"), ("add", "after"), ("update", "after"),
                          ("delete", "before")]
        assert [p["metadata"]["name"] for p in informer.indexer.by_index("node", "n1")] == ["after"]
    finally:
        await informer.stop()


async def test_reflector_relists_after_410(cluster, monkeypatch):
    """The list's resourceVersion is compacted away before the watch starts: the watch gets
    410 Expired, and the reflector re-lists instead of giving up or backing off."""
    api, client = cluster
    store = api.server.store
    real_list = client.list
    calls = []

    async def list_then_compact(*args, **kwargs):
        result = await real_list(*args, **kwargs)
        calls.append(result["metadata"]["resourceVersion"])
        if len(calls) == 1:  # only the first time: churn past the watch cache, then compact
            for i in range(6):
                await client.create(NODES, {"metadata": {"name": f"n{i}"}})
            await store.compact(await store.current_revision())
        return result

    monkeypatch.setattr(client, "list", list_then_compact)
    informer = Informer(client, NODES)
    with capture_logs() as logs:
        informer.start()
        for _ in range(100):
            if informer.reflector.relists >= 2 and len(informer.indexer) == 6:
                break
            await asyncio.sleep(0.05)
    try:
        assert informer.reflector.relists >= 2
        assert any(e["event"] == "watch expired, re-listing" for e in logs)
        assert not any(e["log_level"] == "warning" for e in logs)  # no backoff path taken
        assert sorted(informer.indexer.keys()) == [f"n{i}" for i in range(6)]
    finally:
        await informer.stop()


def test_kubeconfig_loading(tmp_path: Path):
    cfg = tmp_path / "config"
    cfg.write_text("""apiVersion: v1
kind: Config
clusters: [{name: mini, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
contexts: [{name: mini, context: {cluster: mini, user: admin}}]
current-context: mini
users: [{name: admin, user: {token: secret}}]
""")
    transport = HTTPTransport.from_kubeconfig(cfg)
    assert transport.base_url == "https://127.0.0.1:6443"
    assert transport.headers["Authorization"] == "Bearer secret"
    with pytest.raises(ValueError, match="no context named 'nope'"):
        HTTPTransport.from_kubeconfig(cfg, context="nope")
