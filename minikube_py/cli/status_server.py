"""The HTTP endpoints `start` serves before the API server exists: /healthz, /metrics, /version.

Kubernetes v1.0 piece: the health and metrics handlers every v1.0 component mounts
(pkg/healthz — 200 "ok" or 500 with the failing check —, the Prometheus handler at /metrics,
and /version). When the API server lands it serves these itself; until then `start` serves
them so the process can be probed and scraped.
"""

from __future__ import annotations

import asyncio
import platform

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from .. import __version__
from ..storage import Store

#: A store that does not answer within this is unhealthy (etcd's own request timeout is 5 s).
HEALTH_TIMEOUT_SECONDS = 5.0

STORE_KEY = web.AppKey("store", Store)
BACKEND_KEY = web.AppKey("backend", str)


async def healthz(request: web.Request) -> web.Response:
    """200 "ok" when the store answers current_revision, else 503 naming the error."""
    store = request.app[STORE_KEY]
    try:
        await asyncio.wait_for(store.current_revision(), HEALTH_TIMEOUT_SECONDS)
    except asyncio.TimeoutError:
        return web.Response(status=503, text=f"storage: no answer within {HEALTH_TIMEOUT_SECONDS:g}s")
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return web.Response(status=503, text=f"storage: {exc}")
    return web.Response(text="ok")


async def metrics(request: web.Request) -> web.Response:
    return web.Response(body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def version(request: web.Request) -> web.Response:
    body = {
        "minikube_py": __version__,
        "python": platform.python_version(),
        "platform": f"{platform.system().lower()}/{platform.machine()}",
        "storage": request.app[BACKEND_KEY],
    }
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def build_app(store: Store, *, backend: str) -> web.Application:
    app = web.Application()
    app[STORE_KEY] = store
    app[BACKEND_KEY] = backend
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/version", version)
    return app
