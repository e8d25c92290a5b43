"""The scheduler's HTTP endpoints on --port (10251): /healthz, /metrics, /configz, and *why*.

Kubernetes v1.0 piece: plugin/cmd/kube-scheduler/app/server.go (healthz and Prometheus on
10251, which the API server's componentstatuses probes). Added for learners:
`/debug/scheduler/last?pod=ns/name` returns the pod's last attempt — per node the predicate
reasons it failed, per feasible node its weighted score, the node chosen and how long it took.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from .. import configz
from .scheduler import Scheduler

SCHEDULER_KEY = web.AppKey("scheduler", Scheduler)


async def healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def metrics(request: web.Request) -> web.Response:
    return web.Response(body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def last_attempt(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER_KEY]
    key = request.query.get("pod", "")
    if not key:
        names = list(scheduler.attempts)[-50:]
        return web.json_response({"recent": names}, dumps=lambda o: orjson.dumps(o).decode())
    attempt = scheduler.attempts.get(key if "/" in key else f"default/{key}")
    if attempt is None:
        raise web.HTTPNotFound(text=f"no scheduling attempt recorded for pod {key}\n")
    return web.Response(body=orjson.dumps(attempt.to_dict(), option=orjson.OPT_INDENT_2),
                        content_type="application/json")


def build_app(scheduler: Scheduler, config: dict[str, Any] | None = None) -> web.Application:
    """`config`: the effective KubeSchedulerConfiguration, served at /configz."""
    app = web.Application()
    app[SCHEDULER_KEY] = scheduler
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/debug/scheduler/last", last_attempt)
    configz.install(app, config)
    return app
