"""Container logs: deterministic synthetic lines, served on the kubelet port.

Kubernetes v1.0 piece: pkg/kubelet/server.go's `/containerLogs/{namespace}/{pod}/{container}`
handler (query `follow`, `tailLines`, `timestamps`, `previous`, `limitBytes`, `sinceSeconds`),
which the API server proxies for `pods/{name}/log` (pkg/registry/pod/etcd LogREST). No
container runs, so the log is generated: the same pod and container always produce the same
lines, one per `interval` seconds since the container instance started, so `kubectl logs` is
testable and `-f` streams. A restarted container starts a new log (its instance started later);
`previous` shows the instance before. A finished instance's log stops at its finish time, and a
followed log ends when its instance ends. One server answers for every simulated node. A
follower that leaves is normal (Ctrl-C on `kubectl logs -f`): one debug line.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Callable

import structlog
from aiohttp import web

from ..api.params import parse_bool

log = structlog.get_logger(component="kubelet")

LINES_AT_START = 3
DEFAULT_INTERVAL = 1.0

#: (started, finished or None while running), epoch seconds, of one container instance
LogSpan = tuple[float, "float | None"]
#: (namespace, pod, container, previous) -> the instance's span, None if there is none
LogSource = Callable[[str, str, str, bool], "LogSpan | None"]


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


def line_time(started: float, n: int, interval: float) -> float:
    return started + max(0, n - LINES_AT_START + 1) * interval


def render(namespace: str, pod: str, container: str, start: int, stop: int, started: float,
           interval: float, timestamps: bool) -> bytes:
    out = []
    for n in range(start, stop):
        line = log_line(namespace, pod, container, n)
        if timestamps:
            stamp = datetime.fromtimestamp(line_time(started, n, interval),
                                           timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            line = f"{stamp} {line}"
        out.append(line + "\n")
    return "".join(out).encode()


def _int_query(query: dict, name: str) -> int | None:
    raw = query.get(name)
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be an integer") from None
    if value < 0:
        raise web.HTTPBadRequest(text=f"{name} must be non-negative")
    return value


class LogServer:
    """The kubelet's log endpoint over a LogSource (the pool's view of its containers)."""

    def __init__(self, source: LogSource, *, interval: float = DEFAULT_INTERVAL,
                 clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.interval = interval
        self.clock = clock

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/containerLogs/{namespace}/{pod}/{container}", self.container_logs)]

    def _first_line(self, started: float, total: int, tail: int | None,
                    since: int | None) -> int:
        first = max(0, total - tail) if tail is not None else 0
        if since is not None:
            cutoff = self.clock() - since
            while first < total and line_time(started, first, self.interval) < cutoff:
                first += 1
        return first

    async def container_logs(self, request: web.Request) -> web.StreamResponse:
        ns, pod, container = (request.match_info[k] for k in ("namespace", "pod", "container"))
        query = request.query
        previous = parse_bool(query.get("previous"))
        span = self.source(ns, pod, container, previous)
        if span is None:
            if previous:
                raise web.HTTPBadRequest(text=f'previous terminated container "{container}" in '
                                              f'pod "{pod}" not found')
            raise web.HTTPNotFound(text=f'container "{container}" in pod "{pod}" is not known '
                                        f"to this kubelet")
        started, finished = span
        tail = _int_query(query, "tailLines")
        limit = _int_query(query, "limitBytes")
        since = _int_query(query, "sinceSeconds")
        timestamps = parse_bool(query.get("timestamps"))
        follow = parse_bool(query.get("follow")) and not previous
        end = finished if finished is not None else self.clock()
        total = lines_until(started, end, self.interval)
        first = self._first_line(started, total, tail, since)
        body = render(ns, pod, container, first, total, started, self.interval, timestamps)
        if limit is not None:
            body = body[:limit]
        if not follow or finished is not None or (limit is not None and len(body) >= limit):
            return web.Response(body=body, content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        try:
            await response.write(body)
            await self._follow(response, ns, pod, container, started, total, len(body), limit,
                               timestamps)
        except ConnectionError as exc:
            # the reader left (`kubectl logs -f` stopped, so the API server dropped its
            # proxy connection): normal, one debug line — not aiohttp's ERROR traceback
            log.debug("log reader went away", namespace=ns, pod=pod, container=container,
                      error=str(exc) or type(exc).__name__)
        return response

    async def _follow(self, response: web.StreamResponse, ns: str, pod: str, container: str,
                      started: float, sent: int, sent_bytes: int, limit: int | None,
                      timestamps: bool) -> None:
        """One more line per interval until the instance ends (or `limit` bytes are out)."""
        while True:
            await asyncio.sleep(self.interval)
            now_span = self.source(ns, pod, container, False)
            if now_span is None or now_span[0] != started:
                return  # gone or restarted: end the stream like the kubelet
            end = now_span[1] if now_span[1] is not None else self.clock()
            now_total = lines_until(started, end, self.interval)
            if now_total > sent:
                chunk = render(ns, pod, container, sent, now_total, started, self.interval,
                               timestamps)
                if limit is not None:
                    chunk = chunk[:limit - sent_bytes]
                await response.write(chunk)
                sent_bytes += len(chunk)
                sent = now_total
            if now_span[1] is not None or (limit is not None and sent_bytes >= limit):
                return
