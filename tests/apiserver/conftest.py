"""An in-process API server on a real loopback socket, with a small async HTTP helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import orjson
import pytest
from aiohttp import web

from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.storage import EmbeddedStore


class API:
    """`await api.get(path)` -> (status, parsed JSON or text); raw access via `session`."""

    def __init__(self, session: aiohttp.ClientSession, url: str, server: APIServer) -> None:
        self.session = session
        self.url = url
        self.server = server

    async def call(self, method: str, path: str, body: Any = None, *,
                   content_type: str = "application/json", headers: dict | None = None,
                   raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (orjson.dumps(body) if body is not None else None)
        hdrs = {"Content-Type": content_type} if data is not None else {}
        hdrs.update(headers or {})
        async with self.session.request(method, self.url + path, data=data, headers=hdrs) as resp:
            text = await resp.read()
            try:
                return resp.status, orjson.loads(text)
            except orjson.JSONDecodeError:
                return resp.status, text.decode()

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.call("POST", path, body, **kw)

    async def put(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.call("PUT", path, body, **kw)

    async def patch(self, path: str, body: Any, content_type: str = "application/merge-patch+json",
                    **kw: Any) -> tuple[int, Any]:
        return await self.call("PATCH", path, body, content_type=content_type, **kw)

    async def delete(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.call("DELETE", path, body, **kw)

    async def watch_lines(self, path: str, count: int, timeout: float = 5) -> list[dict]:
        """The first `count` events of a watch on `path`."""
        events = []
        async with self.session.get(self.url + path, timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
            assert resp.status == 200
            async for line in resp.content:
                if line.strip():
                    events.append(orjson.loads(line))
                if len(events) >= count:
                    break
        return events


def pod(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def start_api(tmp_path: Path, **options: Any) -> tuple[API, web.AppRunner, EmbeddedStore, aiohttp.ClientSession]:
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    opts = {"scheduler_health_url": "http://127.0.0.1:1/healthz",
            "controller_manager_health_url": "http://127.0.0.1:1/healthz", **options}
    server = APIServer(store, APIServerOptions(**opts))
    runner = server.make_runner()
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    session = aiohttp.ClientSession()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    return API(session, url, server), runner, store, session


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[API]:
    client, runner, store, session = await start_api(tmp_path)
    try:
        yield client
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
