"""The one HTTP server of a kubelet pool (the kubelet's --port, 10250 by default).

Kubernetes v1.0 piece: pkg/kubelet/server.go — `/healthz`, `/pods` (the pods this kubelet
runs, as a PodList) and `/containerLogs/...` (logs.py). A pool serves every simulated node from
one port, so `/pods` takes `?node=` to pick one. Two additions that no upstream kubelet has,
for learning: `GET /nodes` (the simulated nodes and their state) and
`POST /nodes/{name}/stop` / `POST /nodes/{name}/start`, the failure toggle (a stopped node
stops posting status and handling pods, so the node controller's grace periods and evictions
can be watched). The resource metrics — `/metrics/resource` (Prometheus text, what
metrics-server scrapes) and `/stats/summary` — are upstream's, over the simulated usage of
usage.py; being per node, they take `?node=` too when the pool has more than one.

Secured (`Serving` with a TLS context and a KubeletAuth, see auth.py), the port is HTTPS and
every route goes through the authentication/authorization filter, as upstream's
InstallAuthFilter wraps every route of the kubelet server; without them it is plain HTTP and
open, as v1.0's kubelet was (the pool logs which at startup).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson
from aiohttp import web

from ..api import quantity
from . import resource_metrics
from .auth import KubeletAuth, middleware
from .logs import LogServer
from .streaming import StreamingServer

if TYPE_CHECKING:
    import ssl

    from .pool import KubeletPool


@dataclass(frozen=True)
class Serving:
    """How the kubelet port is served: --tls-cert-file/--tls-private-key-file (with
    --client-ca-file loaded for client certificates) as `ssl_context`, and the auth filter.
    The default — neither — is plain HTTP with no authentication."""

    ssl_context: "ssl.SSLContext | None" = None
    auth: KubeletAuth | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    @property
    def secured(self) -> bool:
        return self.ssl_context is not None and self.auth is not None and not self.auth.open


def _json(data: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def build_app(pool: KubeletPool, *, log_interval: float = 1.0,
              auth: KubeletAuth | None = None) -> web.Application:
    """The kubelet's routes; with `auth`, behind the authentication/authorization filter."""
    logs = LogServer(pool.log_span, interval=log_interval)

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def pods(request: web.Request) -> web.Response:
        node = request.query.get("node")
        if node is not None and node not in pool.kubelets:
            return _json({"message": f"no simulated node {node!r}"}, 404)
        return _json({"kind": "PodList", "apiVersion": "v1", "metadata": {},
                      "items": pool.pods(node)})

    async def nodes(request: web.Request) -> web.Response:
        return _json({"items": [k.summary() for k in pool.kubelets.values()]})

    async def metrics(request: web.Request) -> web.Response:
        """The process's Prometheus metrics (upstream's kubelet serves /metrics on this port
        too): here the event-loop watchdog's minikube_py_event_loop_*."""
        from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

        return web.Response(body=generate_latest(REGISTRY),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    def _node_of(request: web.Request) -> str | web.Response:
        """The simulated node a per-node endpoint is about: `?node=`, or the pool's only one
        (a pool serves many nodes from one port, upstream's kubelet one)."""
        node = request.query.get("node")
        if node is None and len(pool.kubelets) == 1:
            return next(iter(pool.kubelets))
        if node is None:
            return _json({"message": "this kubelet pool serves several nodes: "
                                     "pick one with ?node=NAME"}, 400)
        if node not in pool.kubelets:
            return _json({"message": f"no simulated node {node!r}"}, 404)
        return node

    async def metrics_resource(request: web.Request) -> web.Response:
        node = _node_of(request)
        if isinstance(node, web.Response):
            return node
        now = round(time.time(), 3)  # the samples' millisecond timestamps are exact
        return web.Response(text=resource_metrics.prometheus_text(pool.usage(node, now), now),
                            content_type="text/plain", charset="utf-8",
                            headers={"X-Content-Type-Options": "nosniff"})

    async def stats_summary(request: web.Request) -> web.Response:
        node = _node_of(request)
        if isinstance(node, web.Response):
            return node
        now = round(time.time(), 3)  # the samples' millisecond timestamps are exact
        memory = int(quantity.parse_quantity(str(pool.kubelet(node).config.memory)))
        return _json(resource_metrics.summary(node, pool.usage(node, now), now, memory))

    async def toggle(request: web.Request) -> web.Response:
        name, action = request.match_info["name"], request.match_info["action"]
        if name not in pool.kubelets:
            return _json({"message": f"no simulated node {name!r}"}, 404)
        if action == "stop":
            await pool.stop_node(name)
        else:
            await pool.start_node(name)
        return _json(pool.kubelet(name).summary())

    app = web.Application(middlewares=[middleware(auth)] if auth and not auth.open else [])
    streaming = StreamingServer(pool, log_interval=log_interval)  # exec, attach, portForward
    app.add_routes(logs.routes() + streaming.routes() + [
        web.get("/healthz", healthz),
        web.get("/pods", pods),
        web.get("/nodes", nodes),
        web.get("/metrics", metrics),
        web.get("/metrics/resource", metrics_resource),
        web.get("/stats/summary", stats_summary),
        web.post(r"/nodes/{name}/{action:stop|start}", toggle),
    ])
    return app
