"""A real HTTPS webhook server for tests: admission, conversion and aggregated-API backends.

It runs aiohttp in its own thread and loop (like tests/apiserver_thread.py), on 127.0.0.1
port 0, with a serving certificate from a private CA whose names include the service name
`<name>.<namespace>.svc` the API server will verify. Tests give it handlers per path:
`handler(request_json) -> response_json`, or raw aiohttp handlers for proxy tests.
`publish(api_url)` creates the Service that routes a `service` client config here.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from minikube_py.apiserver.certs import ensure_serving_cert, server_ssl_context

JsonHandler = Callable[[dict[str, Any]], dict[str, Any]]


class WebhookServer:
    def __init__(self, cert_dir: Path, *, name: str = "webhook", namespace: str = "default",
                 client_ca: Path | None = None) -> None:
        self.name, self.namespace = name, namespace
        self.cert, self.key, self.ca = ensure_serving_cert(
            cert_dir, ["127.0.0.1", f"{name}.{namespace}.svc", "localhost"])
        self.client_ca = client_ca
        self.routes: dict[str, Callable[[web.Request], Awaitable[web.StreamResponse]]] = {}
        self.requests: list[tuple[str, dict[str, Any] | None, dict[str, str]]] = []
        self.delay = 0.0  # seconds each answer waits (a slow webhook)
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="webhook-server", daemon=True)

    # -- handlers -------------------------------------------------------------------------
    def json(self, path: str, handler: JsonHandler) -> None:
        """Answer POSTs to `path` with `handler(body)` as JSON."""
        async def respond(request: web.Request) -> web.Response:
            body = await request.json()
            self.requests.append((request.path, body, dict(request.headers)))
            if self.delay:
                await asyncio.sleep(self.delay)
            return web.json_response(handler(body))
        self.routes[path] = respond

    def raw(self, path: str, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
        self.routes[path] = handler

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        handler = self.routes.get(request.path)
        if handler is None:
            for prefix, candidate in self.routes.items():
                if prefix.endswith("*") and request.path.startswith(prefix[:-1]):
                    handler = candidate
                    break
        if handler is None:
            return web.Response(status=404, text="no handler")
        return await handler(request)

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_bundle(self) -> str:
        """The CA that signed the serving certificate, base64 as `caBundle` takes it."""
        return base64.b64encode(Path(self.ca).read_bytes()).decode()

    def start(self) -> WebhookServer:
        self._thread.start()
        if not self._ready.wait(15):
            raise RuntimeError("webhook server did not start")
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(
            Path(self.cert), Path(self.key), self.client_ca))
        await site.start()
        self.port = runner.addresses[0][1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    # -- routing a `service` reference here -----------------------------------------------
    def publish(self, api_url: str) -> int:
        """Create the Service `name` routing a `service` client config here; returns the port
        the config must name. Upstream rejects loopback Endpoints addresses, so the route is
        an ExternalName service to `localhost` whose port is this server's (ExternalName
        resolves to `externalName:port`; the certificate is still checked for
        `<name>.<namespace>.svc`)."""
        _post(f"{api_url}/api/v1/namespaces/{self.namespace}/services", {
            "metadata": {"name": self.name},
            "spec": {"type": "ExternalName", "externalName": "localhost",
                     "ports": [{"name": "https", "port": self.port}]}})
        return self.port


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
