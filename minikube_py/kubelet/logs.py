"""Container logs: what a container's command wrote, or a server's synthetic lines, served on
the kubelet port.

Kubernetes v1.0 piece: pkg/kubelet/server.go's `/containerLogs/{namespace}/{pod}/{container}`
handler (query `follow`, `tailLines`, `timestamps`, `previous`, `limitBytes`, `sinceSeconds`),
which the API server proxies for `pods/{name}/log` (pkg/registry/pod/etcd LogREST), and the
runtime's CRI log file (one timestamped entry per line, stdout and stderr interleaved as
written; a line without its newline is a partial entry).

Two kinds of log:
- a command the simulated shell runs (process.py) writes a `ContainerLog`: its output, each
  line stamped with the time it was written, bounded at `MAX_LOG_BYTES` (the oldest lines go
  first, as a rotated log loses them);
- a server (nginx, no command: nothing the shell can run) gets generated lines: the same pod
  and container always produce the same lines, one per `interval` seconds since the container
  instance started, so `kubectl logs` is testable and `-f` streams, at no memory cost;
- a server that answered requests (the simulated HTTP server, http_sim.py, reached through
  pods/proxy, services/proxy or port-forward) also keeps an `AccessLog`: one access line per
  request (nginx's combined format, `access_line`), written when the request is answered.
  Its log is both, merged in time order (`merge`): a server nobody asked keeps no log at all.

A restarted container starts a new log (its instance started later); `previous` shows the
instance before. A finished instance's log stops at its finish time, and a followed log ends
when its instance ends. One server answers for every simulated node. A follower that leaves is
normal (Ctrl-C on `kubectl logs -f`): one debug line.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from datetime import datetime, timezone
from typing import Callable, NamedTuple

import structlog
from aiohttp import web

from ..api.params import parse_bool

log = structlog.get_logger(component="kubelet")

LINES_AT_START = 3
DEFAULT_INTERVAL = 1.0
MAX_LOG_BYTES = 1 << 20         # per container instance (upstream rotates at 10 MiB)
#: FallbackToLogsOnError: upstream's MaxContainerTerminationMessageLogLines / ...LogLength
FALLBACK_LINES = 80
FALLBACK_BYTES = 2048
#: how often a server's follower looks for the access log its first request creates
FIRST_ACCESS_POLL = 0.2


class ContainerLog:
    """What one container instance wrote: (time, fd, bytes) entries, one per line (the last
    one partial when its newline has not come yet). `first` numbers the oldest entry kept, so
    a follower can tell what it has already sent even after old entries were dropped."""

    __slots__ = ("entries", "size", "first", "_changed")

    def __init__(self) -> None:
        self.entries: deque[tuple[float, int, bytes]] = deque()
        self.size = 0
        self.first = 0
        self._changed: asyncio.Event | None = None

    @property
    def end(self) -> int:
        """The number of the entry the next write makes."""
        return self.first + len(self.entries)

    def write(self, when: float, fd: int, data: bytes) -> None:
        for line in data.splitlines(keepends=True):
            self.entries.append((when, fd, line))
            self.size += len(line)
        while self.size > MAX_LOG_BYTES and self.entries:
            self.size -= len(self.entries.popleft()[2])
            self.first += 1
        self.notify()

    def notify(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def wait(self, timeout: float) -> None:
        """Until the next write (or `notify`), at most `timeout` seconds."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        self._changed.clear()

    def select(self, tail: int | None, since: float | None) -> int:
        """The number of the first entry to show for `tailLines` / a `sinceSeconds` cutoff."""
        start = self.first if tail is None else max(self.first, self.end - tail)
        if since is not None:
            while start < self.end and self.entries[start - self.first][0] < since:
                start += 1
        return start

    def lines(self, start: int) -> list[Line]:
        """(time, line) of the entries from number `start` on."""
        return [(when, line) for when, _fd, line in
                list(self.entries)[max(0, start - self.first):]]

    def render(self, start: int, timestamps: bool) -> bytes:
        return render_lines(self.lines(start), timestamps)

    def tail_text(self, lines: int = FALLBACK_LINES, limit: int = FALLBACK_BYTES) -> str:
        """The end of the log for a termination message (FallbackToLogsOnError)."""
        return self.render(self.select(lines, None), False)[-limit:].decode(errors="replace")


class AccessLog(ContainerLog):
    """A server container's access lines (the requests its simulated HTTP server answered):
    shown merged with the server's generated lines, not instead of them."""

    __slots__ = ()


#: one log line and the time it was written (epoch seconds)
Line = tuple[float, bytes]


def render_lines(lines: list[Line], timestamps: bool) -> bytes:
    """The CRI log as `kubectl logs` shows it: each line, with `timestamps` prefixed by its
    RFC 3339 time (nanosecond-style, as the kubelet writes)."""
    return b"".join(f"{_stamp(when)} ".encode() + line if timestamps else line
                    for when, line in lines)


def merge(first: list[Line], second: list[Line], tail: int | None) -> list[Line]:
    """Two time-ordered runs of lines (a server's generated lines, its access lines) as one,
    in time order (`first`'s line first on a tie), keeping the last `tail` lines when asked."""
    lines = list(heapq.merge(first, second, key=lambda entry: entry[0]))
    return lines if tail is None else lines[max(0, len(lines) - tail):]


#: nginx's `$time_local`
_ACCESS_TIME = "%d/%b/%Y:%H:%M:%S +0000"


def access_line(image: str, remote: str, when: float, request: str, status: int, size: int,
                referer: str | None, agent: str | None) -> bytes:
    """One request in the server's access log: httpd's default `common` format for httpd
    images, nginx's `combined` format (its default) for every other server."""
    stamp = datetime.fromtimestamp(when, timezone.utc).strftime(_ACCESS_TIME)
    repository = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    if repository == "httpd":
        return f'{remote} - - [{stamp}] "{request}" {status} {size or "-"}\n'.encode()
    return (f'{remote} - - [{stamp}] "{request}" {status} {size} "{referer or "-"}" '
            f'"{agent or "-"}"\n').encode()


class LogSpan(NamedTuple):
    """One container instance: started, finished (None while running), epoch seconds, and
    what it wrote (None: a server, whose lines are generated)."""

    started: float
    finished: float | None
    recorded: ContainerLog | None = None


#: (namespace, pod, container, previous) -> the instance's span, None if there is none
LogSource = Callable[[str, str, str, bool], "tuple | LogSpan | None"]


def _stamp(when: float) -> str:
    return datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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


def generated(namespace: str, pod: str, container: str, start: int, stop: int,
              started: float, interval: float) -> list[Line]:
    """(time, line) of generated lines `start`..`stop - 1`."""
    return [(line_time(started, n, interval),
             (log_line(namespace, pod, container, n) + "\n").encode())
            for n in range(start, stop)]


def render(namespace: str, pod: str, container: str, start: int, stop: int, started: float,
           interval: float, timestamps: bool) -> bytes:
    return render_lines(generated(namespace, pod, container, start, stop, started, interval),
                        timestamps)


def server_lines(namespace: str, pod: str, container: str, started: float, interval: float,
                 span: tuple[int, int], access: ContainerLog | None,
                 acc_sent: int) -> tuple[list[Line], int]:
    """A server's new lines for a follower (`kubectl logs -f`, attach): generated lines
    `span[0]`..`span[1] - 1` merged with its access lines from number `acc_sent` on; and the
    number of the next access line."""
    lines = generated(namespace, pod, container, *span, started, interval)
    if access is None:
        return lines, acc_sent
    return merge(lines, access.lines(max(acc_sent, access.first)), None), access.end


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
        started, finished, recorded = LogSpan(*span)
        tail = _int_query(query, "tailLines")
        limit = _int_query(query, "limitBytes")
        since = _int_query(query, "sinceSeconds")
        timestamps = parse_bool(query.get("timestamps"))
        follow = parse_bool(query.get("follow")) and not previous
        cutoff = None if since is None else self.clock() - since
        acc_sent = 0
        if recorded is not None and not isinstance(recorded, AccessLog):
            sent = recorded.end
            body = recorded.render(recorded.select(tail, cutoff), timestamps)
        else:
            end = finished if finished is not None else self.clock()
            sent = lines_until(started, end, self.interval)
            first = self._first_line(started, sent, tail, since)
            lines = generated(ns, pod, container, first, sent, started, self.interval)
            if recorded is not None:  # a server that answered requests
                acc_sent = recorded.end
                lines = merge(lines, recorded.lines(recorded.select(tail, cutoff)), tail)
            body = render_lines(lines, timestamps)
        if limit is not None:
            body = body[:limit]
        if not follow or finished is not None or (limit is not None and len(body) >= limit):
            return web.Response(body=body, content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        try:
            await response.write(body)
            await self._follow(request, response, ns, pod, container, started, (sent, acc_sent),
                               len(body), limit, timestamps)
        except ConnectionError as exc:
            # the reader left (`kubectl logs -f` stopped, so the API server dropped its
            # proxy connection): normal, one debug line — not aiohttp's ERROR traceback
            log.debug("log reader went away", namespace=ns, pod=pod, container=container,
                      error=str(exc) or type(exc).__name__)
        return response

    async def _follow(self, request: web.Request, response: web.StreamResponse, ns: str,
                      pod: str, container: str, started: float, sent_at: tuple[int, int],
                      sent_bytes: int, limit: int | None, timestamps: bool) -> None:
        """What comes next, until the instance ends (or `limit` bytes are out): a recorded
        log as soon as it is written; a server's generated lines one per interval, merged
        with its access lines as soon as they are written (until its first request there is
        no access log to wait on: a short poll finds it). `sent_at`: the generated (or
        recorded) lines and the access lines already sent. A follower that left ends the
        loop at its next wake-up, whether or not there is anything to write."""
        sent, acc_sent = sent_at
        while True:
            now_span = self.source(ns, pod, container, False)
            recorded = LogSpan(*now_span).recorded if now_span is not None else None
            if recorded is not None:
                await recorded.wait(self.interval)
            else:
                await asyncio.sleep(min(self.interval, FIRST_ACCESS_POLL))
            transport = request.transport
            if transport is None or transport.is_closing():  # the follower left
                log.debug("log reader went away", namespace=ns, pod=pod, container=container,
                          error="connection lost")
                return
            now_span = self.source(ns, pod, container, False)
            if now_span is None or now_span[0] != started:
                return  # gone or restarted: end the stream like the kubelet
            _, finished, recorded = LogSpan(*now_span)
            if recorded is not None and not isinstance(recorded, AccessLog):
                chunk = recorded.render(max(sent, recorded.first), timestamps)
                now_total = recorded.end
            else:
                end = finished if finished is not None else self.clock()
                now_total = max(sent, lines_until(started, end, self.interval))
                lines, acc_sent = server_lines(ns, pod, container, started, self.interval,
                                               (sent, now_total), recorded, acc_sent)
                chunk = render_lines(lines, timestamps)
            if chunk:
                if limit is not None:
                    chunk = chunk[:limit - sent_bytes]
                await response.write(chunk)
                sent_bytes += len(chunk)
            sent = now_total
            if finished is not None or (limit is not None and sent_bytes >= limit):
                return
