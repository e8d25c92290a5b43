"""The one HTTP server of a kubelet pool (the kubelet's --port, 10250 by default).

Kubernetes v1.0 piece: pkg/kubelet/server.go — `/healthz`, `/pods` (the pods this kubelet
runs, as a PodList) and `/containerLogs/...` (logs.py). A pool serves every simulated node from
one port, so `/pods` takes `?node=` to pick one. Two additions that no upstream kubelet has,
for learning: `GET /nodes` (the simulated nodes and their state) and
`POST /nodes/{name}/stop` / `POST /nodes/{name}/start`, the failure toggle (a stopped node
stops posting status and handling pods, so the node controller's grace periods and evictions
can be watched).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from aiohttp import web

from .logs import LogServer
from .streaming import StreamingServer

if TYPE_CHECKING:
    from .pool import KubeletPool


def _json(data: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def build_app(pool: KubeletPool, *, log_interval: float = 1.0) -> web.Application:
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

    async def toggle(request: web.Request) -> web.Response:
        name, action = request.match_info["name"], request.match_info["action"]
        if name not in pool.kubelets:
            return _json({"message": f"no simulated node {name!r}"}, 404)
        if action == "stop":
            await pool.stop_node(name)
        else:
            await pool.start_node(name)
        return _json(pool.kubelet(name).summary())

    app = web.Application()
    streaming = StreamingServer(pool, log_interval=log_interval)  # exec, attach, portForward
    app.add_routes(logs.routes() + streaming.routes() + [
        web.get("/healthz", healthz),
        web.get("/pods", pods),
        web.get("/nodes", nodes),
        web.post(r"/nodes/{name}/{action:stop|start}", toggle),
    ])
    return app
