"""Container logs: deterministic synthetic lines, served on the kubelet port.

Kubernetes v1.0 piece: pkg/kubelet/server.go's `/containerLogs/{namespace}/{pod}/{container}`
handler (query `follow`, `tailLines`, `timestamps`, `previous`, `limitBytes`), which the API
server proxies for `pods/{name}/log` (pkg/registry/pod/etcd LogREST). No container runs, so the
log is generated: the same pod and container always produce the same lines, one per
`interval` seconds since the container started, so `kubectl logs` is testable and `-f` streams.
One server answers for every simulated node (one port, like a kubelet's 10250).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Callable

from aiohttp import web

LINES_AT_START = 3
DEFAULT_INTERVAL = 1.0


def log_line(namespace: str, pod: str, container: str, n: int) -> str:
    """Line `n` (0-based) of a container's log; stable across calls and processes."""
    if n == 0:
        return f"container {container} of pod {namespace}/{pod} started"
    if n == 1:
        return f"{container}: listening (simulated by minikube_py; no process runs)"
    return f"{container}: heartbeat {n - 1}"


def lines_until(started: float, now: float, interval: float) -> int:
    """How many lines exist at `now` for a container started at `started`."""
    if now < started:
        return 0
    return LINES_AT_START + int((now - started) / interval)


def render(namespace: str, pod: str, container: str, start: int, stop: int, started: float,
           interval: float, timestamps: bool) -> bytes:
    out = []
    for n in range(start, stop):
        line = log_line(namespace, pod, container, n)
        if timestamps:
            at = started + max(0, n - LINES_AT_START + 1) * interval
            stamp = datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            line = f"{stamp} {line}"
        out.append(line + "\n")
    return "".join(out).encode()


class LogServer:
    """The kubelet's log endpoint. `started_at(ns, pod, container)` tells when a container
    started (None = unknown container: 404); the fake kubelet provides it."""

    def __init__(self, started_at: Callable[[str, str, str], float | None], *,
                 interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.time) -> None:
        self.started_at = started_at
        self.interval = interval
        self.clock = clock

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/containerLogs/{namespace}/{pod}/{container}", self.container_logs)]

    async def container_logs(self, request: web.Request) -> web.StreamResponse:
        ns, pod, container = (request.match_info[k] for k in ("namespace", "pod", "container"))
        started = self.started_at(ns, pod, container)
        if started is None:
            raise web.HTTPNotFound(text=f'container "{container}" in pod "{pod}" is not known '
                                        f"to this kubelet")
        query = request.query
        try:
            tail = int(query["tailLines"]) if query.get("tailLines") else None
        except ValueError:
            raise web.HTTPBadRequest(text="tailLines must be an integer") from None
        timestamps = query.get("timestamps") in ("true", "1")
        follow = query.get("follow") in ("true", "1")
        total = lines_until(started, self.clock(), self.interval)
        first = max(0, total - tail) if tail is not None else 0
        body = render(ns, pod, container, first, total, started, self.interval, timestamps)
        if not follow:
            return web.Response(body=body, content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        await response.write(body)
        sent = total
        while True:  # follow: one more line per interval until the client goes away
            await asyncio.sleep(self.interval)
            if self.started_at(ns, pod, container) is None:
                return response  # the container is gone: end the stream like the kubelet
            now_total = lines_until(started, self.clock(), self.interval)
            if now_total > sent:
                await response.write(render(ns, pod, container, sent, now_total, started,
                                            self.interval, timestamps))
                sent = now_total
