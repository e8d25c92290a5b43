"""Watch: resume, synthetic ADDED, selector transitions, bookmarks, timeouts, slow watchers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import orjson

from tests.apiserver.conftest import API, pod, start_api

PODS = "/api/v1/namespaces/default/pods"


async def test_resume_from_resource_version_sees_only_later_changes(api: API):
    _, a = await api.post(PODS, pod("a"))
    rv = a["metadata"]["resourceVersion"]
    await api.post(PODS, pod("b"))
    await api.delete(f"{PODS}/a")
    events = await api.watch_lines(f"{PODS}?watch=true&resourceVersion={rv}", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"), ("DELETED", "a")]
    assert int(events[1]["object"]["metadata"]["resourceVersion"]) > int(rv)


async def test_rv_zero_single_object_watch_starts_with_synthetic_added(api: API):
    await api.post(PODS, pod("web"))
    await api.post(PODS, pod("other"))

    async def change() -> None:
        await asyncio.sleep(0.2)
        await api.patch(f"{PODS}/other", {"metadata": {"labels": {"x": "1"}}})
        await api.patch(f"{PODS}/web", {"metadata": {"labels": {"x": "1"}}})

    task = asyncio.create_task(change())
    events = await api.watch_lines(
        f"{PODS}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dweb", 2)
    await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "web"), ("MODIFIED", "web")]


async def test_label_selector_transitions_become_added_and_deleted(api: API):
    _, created = await api.post(PODS, pod("p", tier="back"))
    rv = created["metadata"]["resourceVersion"]
    await api.patch(f"{PODS}/p", {"metadata": {"labels": {"tier": "front"}}})
    await api.patch(f"{PODS}/p", {"metadata": {"labels": {"tier": "back"}}})
    events = await api.watch_lines(
        f"{PODS}?watch=true&resourceVersion={rv}&labelSelector=tier%3Dfront", 2)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert events[1]["object"]["metadata"]["labels"]["tier"] == "front"  # last matching state


async def test_node_name_watchers_get_only_their_pods(api: API):
    for name in ("x", "y"):
        await api.post(PODS, pod(name))
    _, start = await api.get(PODS)
    rv = start["metadata"]["resourceVersion"]
    for name, node in (("x", "n1"), ("y", "n2")):
        await api.post(f"{PODS}/{name}/binding", {"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": name}, "target": {"kind": "Node", "name": node}})
    n2 = await api.watch_lines(f"/api/v1/pods?watch=1&resourceVersion={rv}"
                               f"&fieldSelector=spec.nodeName%3Dn2", 1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in n2] == [("ADDED", "y")]
    unbound = await api.watch_lines(f"/api/v1/pods?watch=1&resourceVersion={rv}"
                                    f"&fieldSelector=spec.nodeName%3D", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in unbound] == [
        ("DELETED", "x"), ("DELETED", "y")]
    cacher = api.server.cachers["pods", ""]
    for _ in range(80):  # a closed stream is noticed within the 5 s liveness check
        if not cacher.index:
            break
        await asyncio.sleep(0.1)
    assert not cacher.index  # watchers unregistered when their streams closed


async def test_bookmarks_and_timeout_seconds(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, bookmark_interval=0.2)
    try:
        await api.post(PODS, pod("a"))
        async with session.get(api.url + f"{PODS}?watch=true&resourceVersion=0"
                               "&allowWatchBookmarks=true&timeoutSeconds=1") as resp:
            body = await asyncio.wait_for(resp.read(), 5)  # ends by itself after 1 s
        events = [orjson.loads(line) for line in body.splitlines() if line]
        assert events[0]["type"] == "ADDED"
        bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
        assert bookmarks and bookmarks[0]["object"]["metadata"]["resourceVersion"].isdigit()
        assert set(bookmarks[0]["object"]["metadata"]) == {"resourceVersion"}
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_slow_watcher_is_closed_not_buffered(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, watch_buffer_events=5,
                                                  watch_max_unsent_bytes=1 << 20)
    try:
        _, start = await api.get(PODS)
        rv = start["metadata"]["resourceVersion"]
        reader, writer = await asyncio.open_connection("127.0.0.1", int(api.url.rsplit(":", 1)[1]))
        writer.write(f"GET {PODS}?watch=true&resourceVersion={rv} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        await writer.drain()
        await asyncio.sleep(0.2)
        cacher = api.server.cachers["pods", ""]
        watcher = next(iter(cacher.plain["default"]))  # no selectors: the shared fast path
        # the client reads nothing; the server's buffer for it overflows and it is closed
        # enough bytes to fill the kernel's socket buffers, so the server's writes block
        for i in range(200):
            await api.post(PODS, {**pod(f"p{i}"), "spec": {"containers": [
                {"name": "c", "image": "x" * 100_000}]}})
            if watcher.closed:
                break
        await asyncio.sleep(0.3)
        assert watcher.closed and len(watcher.buffer) <= 5  # closed, not buffered without end
        writer.close()
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_table_watch_wraps_rows(api: API):
    _, created = await api.post(PODS, pod("t"))
    rv = int(created["metadata"]["resourceVersion"]) - 1
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    async with api.session.get(api.url + f"{PODS}?watch=true&resourceVersion={rv}",
                               headers={"Accept": accept},
                               timeout=aiohttp.ClientTimeout(total=5)) as resp:
        line = await resp.content.readline()
    event = orjson.loads(line)
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][:3] == ["t", "0/1", "Pending"]
