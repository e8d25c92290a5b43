"""API server benchmark: the HTTP API of `minikube-py start`, against its own ceiling.

Starts the real server as a separate process (`minikube-py start --fsync always`, fresh data dir
per measure and run) and loads it from other processes, so the load generator never shares the
server's event loop. On a machine with 2+ CPUs the server is pinned to CPU 0 and everything else
(this process, wrk, the Python clients) to CPU 1, so the figures are "what one core of server
does" and the load generator cannot steal it.

    /tmp/devvenv/bin/python -m bench.apiserver            # full run (~2 minutes)
    /tmp/devvenv/bin/python -m bench.apiserver --quick    # smoke run (~20 s)
    /tmp/devvenv/bin/python bench/apiserver.py --only ceiling,get_pod --runs 5

Measures (JSON names), all in one run, each the median of --runs runs:
  ceiling         an aiohttp hello world (`web.Response(text="ok")`, same loop as the server:
                  uvloop when installed) under `wrk -t1 -c32`: what aiohttp itself can serve on
                  one core. Every other rate is also given as a ratio of this one, measured in
                  the same run, because absolute req/s say more about the machine than the code.
  get_pod         wrk GET of one pod: the full request path (filters, routing, storage read,
                  JSON out). Target: >= 60% of the ceiling.
                  The ceiling and GET are also loaded with 128 connections: in some runs on a
                  shared 2-core VM, one wrk thread with 32 connections left the hello world
                  half idle (the client core was the limit), which flatters the 32-connection
                  ratio. Each run records the server's CPU use, so this is visible.
  list_1000       1000 pods in a namespace; sequential GETs of the list on one keep-alive
                  connection (p50/p99, time to the last byte, body not parsed; 2 warm-up
                  requests not counted), then wrk req/s. Target: p50 <= 10 ms.
  create_durable  wrk POSTs of distinct ~1.2 KB pods (bench/wrk/create_pods.lua names them),
                  every write fsynced before the 201. Only 201s count; the count is checked by
                  listing afterwards. Target: >= 3000 creates/s.
  watch_fanout    W watchers (raw asyncio streams, one client process) on a namespace from its
                  current resourceVersion, then N pods created by another client process (32 in
                  flight). Time from the first create until every watcher has all N events; each
                  watcher must have exactly N ADDED events, one per pod (checked after the clock
                  stops: the timed loop only de-chunks and counts lines, so the client's JSON
                  parsing does not bound the figure). Target: >= 200k events/s aggregate; the
                  create rate of the same run is reported too, as fan-out cannot outrun the
                  writes that feed it.

The real kube-apiserver v1.20.2 figures of /work/shared/reference/field-facts.md §9 are printed
beside ours as context only: they were measured elsewhere, with a different load client.
Cross-process timestamps use CLOCK_MONOTONIC, which is system-wide on Linux.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import common
from bench.store import _fs_type, _git_state  # the same facts as the store benchmark

HOST = "127.0.0.1"
SERVER_CPU, CLIENT_CPU = 0, 1
CONNECTIONS = 32  # wrk -c, and creates in flight: the same 32 as the reference figures
#: A second, heavier load for the ceiling and GET: with 32 connections one wrk thread on a
#: contended client core may not keep a hello world busy, so the ratio is also given where
#: both are closer to server-bound (each run records how busy the server was).
SATURATION_CONNECTIONS = 128
CREATE_LUA = REPO / "bench" / "wrk" / "create_pods.lua"
JSON_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}

FULL = {"duration_s": 5, "list_pods": 1000, "list_requests": 50, "watchers": 100, "watch_pods": 1000}
QUICK = {"duration_s": 2, "list_pods": 1000, "list_requests": 20, "watchers": 50, "watch_pods": 500}


def stamp() -> float:
    """A timestamp comparable between processes (CLOCK_MONOTONIC is system-wide)."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def pod_manifest(name: str, namespace: str) -> dict[str, Any]:
    """A realistic Deployment-made pod, ~1.2 KB of JSON: one container with ports, env,
    resources, a probe and a volume."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": "web", "tier": "frontend", "version": "v1.4.2",
                       "pod-template-hash": "5d8f7b9c6d"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9113",
                            "kubernetes.io/change-cause": "kubectl set image deployment/web web=nginx:1.25.3"},
        },
        "spec": {
            "containers": [{
                "name": "web",
                "image": "nginx:1.25.3",
                "command": ["nginx"],
                "args": ["-g", "daemon off;"],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"},
                          {"name": "metrics", "containerPort": 9113, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "UPSTREAM", "value": "http://api.default.svc.cluster.local:8080"},
                        {"name": "WORKERS", "value": "4"},
                        {"name": "CACHE_DIR", "value": "/var/cache/nginx"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                              "limits": {"cpu": "500m", "memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 80},
                                   "initialDelaySeconds": 5, "periodSeconds": 10},
                "volumeMounts": [{"name": "cache", "mountPath": "/var/cache/nginx"}],
                "imagePullPolicy": "IfNotPresent",
            }],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
        },
    }


def pod_template(namespace: str) -> str:
    """The pod as JSON with the placeholder __NAME__ for its name (for wrk and the workers)."""
    return json.dumps(pod_manifest("__NAME__", namespace), separators=(",", ":"))


def pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


# ------------------------------------------------------------------------------ processes


class Procs:
    """Every child process the benchmark starts, so that all of them are stopped whatever
    happens (failure, Ctrl-C)."""

    def __init__(self, pinned: bool) -> None:
        self.pinned = pinned
        self.live: list[asyncio.subprocess.Process] = []

    async def spawn(self, argv: list[str], cpu: int, **kwargs: Any) -> asyncio.subprocess.Process:
        if self.pinned:
            argv = ["taskset", "-c", str(cpu), *argv]
        kwargs.setdefault("stdout", asyncio.subprocess.PIPE)
        kwargs.setdefault("stderr", asyncio.subprocess.PIPE)
        proc = await asyncio.create_subprocess_exec(*argv, cwd=REPO, **kwargs)
        self.live.append(proc)
        return proc

    async def stop(self, proc: asyncio.subprocess.Process, grace: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL after `grace` seconds; returns the exit code."""
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if proc in self.live:
            self.live.remove(proc)
        return proc.returncode

    async def stop_all(self) -> None:
        for proc in list(self.live):
            await self.stop(proc, grace=5.0)

    def kill_all_now(self) -> None:
        """Last resort when the event loop is gone: SIGKILL our own children by pid."""
        for proc in self.live:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)


def worker_argv(kind: str, spec: dict[str, Any]) -> list[str]:
    """This very file in worker mode (see worker_main)."""
    return [sys.executable, str(Path(__file__).resolve()), "_worker", kind, json.dumps(spec)]


async def run_worker(procs: Procs, kind: str, spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run a worker process on the client CPU; its result is the last line of its stdout."""
    proc = await procs.spawn(worker_argv(kind, spec), CLIENT_CPU)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        await procs.stop(proc)
    return _worker_result(kind, proc.returncode, out, err)


def _worker_result(kind: str, code: int | None, out: bytes, err: bytes) -> dict[str, Any]:
    lines = out.decode(errors="replace").strip().splitlines()
    if code != 0 or not lines:
        raise RuntimeError(f"{kind} worker exited {code}: {err.decode(errors='replace')[-2000:]}")
    return json.loads(lines[-1])


@dataclass
class Server:
    """A server process that has logged its "ready" line; its stderr is drained (and its tail
    kept for error reports) so a full pipe can never stall it."""

    proc: asyncio.subprocess.Process
    url: str
    startup_s: float
    log_tail: collections.deque = field(default_factory=lambda: collections.deque(maxlen=40))
    drain: asyncio.Task | None = None

    def cpu_s(self) -> float:
        """User + system CPU seconds the server has used so far (all its threads, and its
        child processes': `--apiservers N` runs API servers as children)."""
        return sum(_process_cpu_s(pid) for pid in _process_tree(self.proc.pid))

    def rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None


def _process_tree(pid: int) -> list[int]:
    """`pid` and its live descendants (Linux /proc/PID/task/TID/children)."""
    pids, i = [pid], 0
    while i < len(pids):
        for task in Path(f"/proc/{pids[i]}/task").glob("*"):
            try:
                pids += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        i += 1
    return pids


def _process_cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0  # exited between the listing and the read
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def start_server(procs: Procs, argv: list[str], timeout: float,
                       also: str | None = None) -> Server:
    """Spawn on the server CPU and wait for a JSON stderr line with "event": "ready" (and,
    with `also`, for a line with that event after it: `--apiservers N`'s children join the
    port after `ready`, and say "all API servers serving" once all have)."""
    started = time.perf_counter()
    ready: str | None = None
    proc = await procs.spawn(argv, SERVER_CPU, stdout=asyncio.subprocess.DEVNULL)
    tail: collections.deque = collections.deque(maxlen=40)
    deadline = started + timeout
    while True:
        try:
            line = await asyncio.wait_for(proc.stderr.readline(), max(deadline - time.perf_counter(), 0.01))
        except TimeoutError:
            await procs.stop(proc)
            raise RuntimeError("server not ready in time:\n" + "".join(tail)) from None
        if not line:
            await procs.stop(proc)
            raise RuntimeError(f"server exited {proc.returncode} before ready:\n" + "".join(tail))
        text = line.decode(errors="replace")
        tail.append(text)
        ready = ready or _ready_url(text)
        if ready and (also is None or _event(text) == also):
            server = Server(proc, ready, time.perf_counter() - started, tail)
            server.drain = asyncio.create_task(_drain(proc.stderr, tail))
            return server


def _ready_url(line: str) -> str | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event.get("url") if isinstance(event, dict) and event.get("event") == "ready" else None


def _event(line: str) -> str | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event.get("event") if isinstance(event, dict) else None


async def _drain(stream: asyncio.StreamReader, tail: collections.deque) -> None:
    while line := await stream.readline():
        tail.append(line.decode(errors="replace"))


async def stop_server(procs: Procs, server: Server) -> int | None:
    code = await procs.stop(server.proc)
    if server.drain is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.drain, 2)
    return code


# ------------------------------------------------------------------------------ load tools


WRK_LINE = {
    "requests": re.compile(r"(\d+) requests in ([\d.]+)(\w+)"),
    "non_2xx": re.compile(r"Non-2xx or 3xx responses: (\d+)"),
    "errors": re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)"),
    "created": re.compile(r"^CREATED (\d+)$", re.MULTILINE),
    "first_error": re.compile(r"^FIRST_ERROR (.*)$", re.MULTILINE),
}
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def parse_wrk(text: str) -> dict[str, Any]:
    """wrk --latency output -> requests, ok (2xx), rate of ok responses, p50/p99 ms."""
    m = WRK_LINE["requests"].search(text)
    if not m:
        raise RuntimeError(f"unexpected wrk output:\n{text}")
    requests, seconds = int(m.group(1)), float(m.group(2)) * UNITS[m.group(3)] / 1e3
    non_2xx = int(m.group(1)) if (m := WRK_LINE["non_2xx"].search(text)) else 0
    errors = sum(map(int, m.groups())) if (m := WRK_LINE["errors"].search(text)) else 0
    out: dict[str, Any] = {"requests": requests, "ok": requests - non_2xx, "non_2xx": non_2xx,
                           "socket_errors": errors, "duration_s": seconds}
    for pct in ("50", "99"):
        if m := re.search(rf"^\s+{pct}%\s+([\d.]+)(\w+)$", text, re.MULTILINE):
            out[f"p{pct}_ms"] = float(m.group(1)) * UNITS[m.group(2)]
    if m := WRK_LINE["created"].search(text):
        out["ok"] = out["created"] = int(m.group(1))
    if m := WRK_LINE["first_error"].search(text):
        out["first_error"] = m.group(1)[:300]
    out["req_per_s"] = out["ok"] / seconds
    return out


@dataclass
class Bench:
    procs: Procs
    workdir: Path
    sizes: dict[str, Any]
    use_wrk: bool
    timeout: float
    #: extra flags for the server, to measure what a feature costs (`--admission-control X`)
    server_args: tuple[str, ...] = ()

    @property
    def tool(self) -> str:
        return "wrk -t1 -c32" if self.use_wrk else "2 Python aiohttp processes x 16 connections"

    async def load(self, server: Server, url: str, *, create_ns: str | None = None,
                   prefix: str = "p", connections: int = CONNECTIONS) -> dict[str, Any]:
        """`duration_s` of load on `url` over `connections`: GETs, or pod creates in
        `create_ns` when given. wrk when available, else Python client processes. Adds the
        server's CPU use (busy = CPU seconds / load seconds) and how busy each core was,
        whoever used it: another program on the machine shows up as a gap between the two."""
        cpu, cores = server.cpu_s(), common.per_cpu_times()
        if self.use_wrk:
            result = await self._wrk(url, create_ns, prefix, connections)
        else:
            result = await self._python_load(url, create_ns, prefix, connections)
        cpu, cores = server.cpu_s() - cpu, common.cpu_busy(cores, common.per_cpu_times())
        result["server_cpu_busy"] = cpu / result["duration_s"]
        result["server_cpu_ms_per_req"] = cpu * 1e3 / max(result["requests"], 1)
        result["cpu0_busy"], result["cpu1_busy"] = cores.get(SERVER_CPU), cores.get(CLIENT_CPU)
        return result

    async def _wrk(self, url: str, create_ns: str | None, prefix: str, connections: int) -> dict[str, Any]:
        argv = ["wrk", "-t1", f"-c{connections}", f"-d{self.sizes['duration_s']}s", "--latency",
                "--timeout", "30s", "-H", "Accept: application/json"]
        if create_ns is not None:
            template = self.workdir / f"pod-{create_ns}.json"
            template.write_text(pod_template(create_ns))
            argv += ["-s", str(CREATE_LUA), url, "--", str(template), pods_path(create_ns), prefix]
        else:
            argv.append(url)
        proc = await self.procs.spawn(argv, CLIENT_CPU)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), self.sizes["duration_s"] + self.timeout)
        finally:
            await self.procs.stop(proc)
        if proc.returncode != 0:
            raise RuntimeError(f"wrk exited {proc.returncode}: {err.decode(errors='replace')}")
        return parse_wrk(out.decode())

    async def _python_load(self, url: str, create_ns: str | None, prefix: str, connections: int) -> dict[str, Any]:
        specs = [{"url": url, "connections": connections // 2, "duration": self.sizes["duration_s"],
                  "body": pod_template(create_ns) if create_ns else None, "prefix": f"{prefix}-{i}-"}
                 for i in range(2)]
        parts = await asyncio.gather(*(run_worker(self.procs, "load", s, self.timeout + 60) for s in specs))
        ok = sum(p["ok"] for p in parts)
        duration = max(p["last_done"] for p in parts) - min(p["first_send"] for p in parts)
        out = {"requests": sum(p["requests"] for p in parts), "ok": ok,
               "non_2xx": sum(p["requests"] - p["ok"] for p in parts), "socket_errors": 0,
               "duration_s": duration, "req_per_s": ok / duration,
               "p50_ms": common.median(p["p50_ms"] for p in parts),
               "p99_ms": max(p["p99_ms"] for p in parts)}
        if create_ns:
            out["created"] = sum(p["statuses"].get("201", 0) for p in parts)
        errors = [p["first_error"] for p in parts if p.get("first_error")]
        if errors:
            out["first_error"] = errors[0]
        return out

    @contextlib.asynccontextmanager
    async def apiserver(self, tag: str) -> AsyncIterator[Server]:
        """A fresh `minikube-py start` (durable, empty data dir) for one measure run."""
        data_dir = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=self.workdir))
        argv = [sys.executable, "-m", "minikube_py.cli.main", "apiserver",
                "--insecure-port", str(common.free_port()), "--secure-port", "0",
                "--data-dir", str(data_dir), "--fsync", "always", "--log-format", "json",
                *self.server_args]
        fleet = "--apiservers" in self.server_args and \
            int(self.server_args[self.server_args.index("--apiservers") + 1]) > 1
        server = await start_server(self.procs, argv, self.timeout,
                                    also="all API servers serving" if fleet else None)
        try:
            yield server
        except Exception as exc:
            exc.add_note("server log tail:\n" + "".join(list(server.log_tail)[-15:]))
            raise
        finally:
            code = await stop_server(self.procs, server)
            shutil.rmtree(data_dir, ignore_errors=True)
            if code not in (0, None):
                print(f"    warning: server exited {code}:\n" + "".join(server.log_tail), flush=True)


# ------------------------------------------------------------------------------ API helpers


async def call(session: Any, method: str, url: str, body: Any = None, expect: tuple[int, ...] = (200,)) -> Any:
    """One request; the decoded JSON answer, or RuntimeError with the status and body."""
    data = json.dumps(body) if body is not None else None
    async with session.request(method, url, data=data, headers=JSON_HEADERS) as resp:
        raw = await resp.read()
        if resp.status not in expect:
            raise RuntimeError(f"{method} {url} -> {resp.status}: {raw[:500].decode(errors='replace')}")
        return json.loads(raw) if raw else None


async def ensure_namespace(session: Any, base: str, name: str) -> None:
    """Create the namespace and its `default` ServiceAccount: the bench runs the API server
    alone (no ServiceAccount controller), and the ServiceAccount admission plugin of 1.31's
    default chain refuses pods in a namespace that has none."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    await call(session, "POST", f"{base}/api/v1/namespaces", body, expect=(201, 409))
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
    await call(session, "POST", f"{base}/api/v1/namespaces/{name}/serviceaccounts", account,
               expect=(201, 409))


async def create_pods(session: Any, base: str, namespace: str, names: list[str]) -> None:
    """Create the pods with 32 requests in flight; every one must answer 201."""
    queue = iter(names)

    async def worker() -> None:
        for name in queue:
            await call(session, "POST", f"{base}{pods_path(namespace)}", pod_manifest(name, namespace), expect=(201,))

    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))


async def list_pods(session: Any, base: str, namespace: str) -> dict[str, Any]:
    return await call(session, "GET", f"{base}{pods_path(namespace)}")


def session() -> Any:
    import aiohttp

    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))


# ------------------------------------------------------------------------------ measures


async def measure_ceiling(b: Bench, run: int) -> dict[str, Any]:
    server = await start_server(b.procs, worker_argv("hello", {}), b.timeout)
    try:
        result = await b.load(server, server.url + "/")
        result.update(saturation(await b.load(server, server.url + "/", connections=SATURATION_CONNECTIONS)))
    finally:
        await stop_server(b.procs, server)
    return result


def saturation(load: dict[str, Any]) -> dict[str, Any]:
    return {"sat_req_per_s": load["req_per_s"], "sat_server_cpu_busy": load["server_cpu_busy"],
            "sat_non_2xx": load["non_2xx"]}


async def measure_get_pod(b: Bench, run: int) -> dict[str, Any]:
    async with b.apiserver("get") as server, session() as s:
        await ensure_namespace(s, server.url, "default")
        await create_pods(s, server.url, "default", ["bench-get"])
        url = f"{server.url}{pods_path('default')}/bench-get"
        result = await b.load(server, url)
        result.update(saturation(await b.load(server, url, connections=SATURATION_CONNECTIONS)))
        return {**result, "startup_s": server.startup_s, "rss_mb": server.rss_mb()}


async def measure_list_1000(b: Bench, run: int) -> dict[str, Any]:
    n, ns = b.sizes["list_pods"], "bench-list"
    async with b.apiserver("list") as server, session() as s:
        await ensure_namespace(s, server.url, ns)
        await create_pods(s, server.url, ns, [f"list-{i:04d}" for i in range(n)])
        items = len((await list_pods(s, server.url, ns))["items"])
        if items != n:
            raise RuntimeError(f"list returned {items} pods, expected {n}")
        url = f"{server.url}{pods_path(ns)}"
        latencies, size = [], 0
        for i in range(2 + b.sizes["list_requests"]):  # 2 warm-up requests
            started = time.perf_counter()
            async with s.get(url, headers={"Accept": "application/json"}) as resp:
                body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"GET {url} -> {resp.status}")
            if i >= 2:
                latencies.append(time.perf_counter() - started)
            size = len(body)
        load = await b.load(server, url)
        return {**common.latency_summary(latencies), "req_per_s": load["req_per_s"],
                "wrk_p50_ms": load.get("p50_ms"), "non_2xx": load["non_2xx"],
                **{k: load[k] for k in ("server_cpu_busy", "server_cpu_ms_per_req", "cpu0_busy", "cpu1_busy")},
                "response_kb": size / 1024, "items": items, "rss_mb": server.rss_mb()}


async def measure_create_durable(b: Bench, run: int) -> dict[str, Any]:
    ns = "bench-create"
    async with b.apiserver("create") as server, session() as s:
        await ensure_namespace(s, server.url, ns)
        result = await b.load(server, f"{server.url}{pods_path(ns)}", create_ns=ns, prefix=f"c{run}")
        listed = len((await list_pods(s, server.url, ns))["items"])
        created = result["created"]
        # requests still in flight when wrk stops may be created without wrk seeing the 201
        result.update(creates_per_s=created / result["duration_s"], listed=listed,
                      count_verified=created <= listed <= created + CONNECTIONS,
                      pod_bytes=len(pod_template(ns)), rss_mb=server.rss_mb())
        return result


async def measure_watch_fanout(b: Bench, run: int) -> dict[str, Any]:
    watchers, n, ns = b.sizes["watchers"], b.sizes["watch_pods"], "bench-watch"
    prefix = f"w{run}-"
    async with b.apiserver("watch") as server, session() as s:
        await ensure_namespace(s, server.url, ns)
        rv = (await list_pods(s, server.url, ns))["metadata"]["resourceVersion"]
        port = int(server.url.rsplit(":", 1)[1])
        spec = {"port": port, "path": f"{pods_path(ns)}?watch=true&resourceVersion={rv}",
                "watchers": watchers, "expect": n, "prefix": prefix, "timeout": b.timeout}
        watch = await b.procs.spawn(worker_argv("watch", spec), CLIENT_CPU)
        try:
            ready = await asyncio.wait_for(watch.stdout.readline(), b.timeout)
            if ready.strip() != b"READY":
                raise RuntimeError(f"watch worker: {ready!r} {(await watch.stderr.read())[-2000:]!r}")
            cpu = server.cpu_s()
            creator = await run_worker(b.procs, "load", {
                "url": f"{server.url}{pods_path(ns)}", "connections": CONNECTIONS, "count": n,
                "body": pod_template(ns), "prefix": prefix}, b.timeout + 60)
            out, err = await asyncio.wait_for(watch.communicate(), b.timeout + 30)
            cpu = server.cpu_s() - cpu
        finally:
            await b.procs.stop(watch)
        seen = _worker_result("watch", watch.returncode, out, err)
    result = fanout_figures(seen, creator, watchers, n)
    # The CPU window also holds the creator's start-up and the watchers' 0.3 s wait for extra
    # events; the server idles then, so its CPU over the timed seconds is still its busy share.
    result.update(server_cpu_s=cpu, server_cpu_busy=cpu / result["all_delivered_s"],
                  watch_client_cpu_busy=seen["cpu_s"] / result["all_delivered_s"],
                  creator_cpu_busy=creator["cpu_s"] / (creator["last_done"] - creator["first_send"]))
    return result


def fanout_figures(seen: dict[str, Any], creator: dict[str, Any], watchers: int, n: int) -> dict[str, Any]:
    if creator["statuses"].get("201", 0) != n:
        raise RuntimeError(f"creates: {creator['statuses']} {creator.get('first_error', '')}")
    elapsed = (seen["last_done"] or math.nan) - creator["first_send"]
    writes = creator["last_done"] - creator["first_send"]
    return {
        "watchers": watchers, "pods": n,
        "events_per_s": watchers * n / elapsed if seen["complete"] == watchers else math.nan,
        "all_delivered_s": elapsed, "write_per_s": n / writes,
        "lag_after_last_write_ms": (seen["last_done"] - creator["last_done"]) * 1e3,
        "watchers_complete": seen["complete"], "watchers_wrong": watchers - seen["exact"],
        "problems": seen["problems"][:5],
    }


@dataclass
class Measure:
    name: str
    fn: Callable[[Bench, int], Awaitable[dict[str, Any]]]
    description: str


MEASURES = [
    Measure("ceiling", measure_ceiling, "aiohttp hello world, same loop and pinning as the server"),
    Measure("get_pod", measure_get_pod, "GET one pod"),
    Measure("list_1000", measure_list_1000, "LIST 1000 pods as JSON"),
    Measure("create_durable", measure_create_durable, "CREATE distinct pods, --fsync always"),
    Measure("watch_fanout", measure_watch_fanout, "watchers x pods created concurrently"),
]

# ------------------------------------------------------------------------------ reporting


@dataclass
class Row:
    measure: str
    metric: str
    label: str
    target: tuple[str, float] | None = None  # (op, bound)
    on_ratio: bool = False  # the target applies to value / ceiling
    ratio: bool = False  # show value / ceiling (for request rates)
    sat: bool = False  # show value / ceiling at SATURATION_CONNECTIONS


ROWS = [
    Row("ceiling", "req_per_s", "req/s, aiohttp hello world", ratio=True),
    Row("ceiling", "p50_ms", "p50 ms under load"),
    Row("ceiling", "server_cpu_busy", "server process CPU busy (1 = core saturated)"),
    Row("ceiling", "sat_req_per_s", f"req/s at {SATURATION_CONNECTIONS} connections", ratio=True),
    Row("ceiling", "sat_server_cpu_busy", f"server CPU busy at {SATURATION_CONNECTIONS} connections"),
    Row("get_pod", "req_per_s", "req/s", (">=", 0.60), on_ratio=True, ratio=True),
    Row("get_pod", "p50_ms", "p50 ms under load"),
    Row("get_pod", "p99_ms", "p99 ms under load"),
    Row("get_pod", "server_cpu_busy", "server process CPU busy"),
    Row("get_pod", "server_cpu_ms_per_req", "server CPU ms per request"),
    Row("get_pod", "sat_req_per_s", f"req/s at {SATURATION_CONNECTIONS} connections (server-bound check)",
        (">=", 0.60), on_ratio=True, sat=True),
    Row("get_pod", "sat_server_cpu_busy", f"server CPU busy at {SATURATION_CONNECTIONS} connections"),
    Row("get_pod", "startup_s", "server start -> ready, s"),
    Row("list_1000", "p50_ms", "p50 ms, sequential, 1 keep-alive client", ("<=", 10.0)),
    Row("list_1000", "p99_ms", "p99 ms, sequential"),
    Row("list_1000", "req_per_s", "req/s under load"),
    Row("list_1000", "wrk_p50_ms", "p50 ms under load"),
    Row("list_1000", "server_cpu_ms_per_req", "server CPU ms per request"),
    Row("list_1000", "response_kb", "response KiB"),
    Row("create_durable", "creates_per_s", "creates/s (201s only, fsync always)", (">=", 3000.0), ratio=True),
    Row("create_durable", "p50_ms", "p50 ms under load"),
    Row("create_durable", "p99_ms", "p99 ms under load"),
    Row("create_durable", "server_cpu_busy", "server process CPU busy"),
    Row("create_durable", "server_cpu_ms_per_req", "server CPU ms per request"),
    Row("create_durable", "count_verified", "201 count confirmed by a LIST", ("==", True)),
    Row("create_durable", "rss_mb", "server RSS after the creates, MiB"),
    Row("watch_fanout", "events_per_s", "delivered events/s, all watchers", (">=", 200_000.0)),
    Row("watch_fanout", "all_delivered_s", "first create -> all watchers have all, s"),
    Row("watch_fanout", "write_per_s", "creates/s feeding it (same run, context)"),
    Row("watch_fanout", "lag_after_last_write_ms", "last delivery - last 201, ms"),
    Row("watch_fanout", "server_cpu_busy", "server process CPU busy"),
    Row("watch_fanout", "watchers_wrong", "watchers without exactly 1 ADDED per pod", ("==", 0)),
]

#: field-facts.md §9: real kube-apiserver v1.20.2 on etcd 3.4.23, 2-core machine, aiohttp
#: client, keep-alive, 32 concurrent, 20 s, JSON. (label, measure, our metric, value, as quoted)
REFERENCE = [
    ("GET one pod, req/s", "get_pod", "req_per_s", 4990, "4,990 (8,905 from watch cache)"),
    ("GET one pod, p50 ms", "get_pod", "p50_ms", 5.8, "5.8"),
    ("GET one pod, p99 ms", "get_pod", "p99_ms", 16.4, "16.4"),
    ("GET one pod, server CPU ms/request", "get_pod", "server_cpu_ms_per_req", 0.19, "0.19 (0.13 from cache)"),
    ("LIST 1000 pods, req/s", "list_1000", "req_per_s", 58, "58 (86 from cache)"),
    ("LIST 1000 pods, p50 ms under load", "list_1000", "wrk_p50_ms", 541, "541 (359 from cache)"),
    ("LIST 1000 pods, server CPU ms/request", "list_1000", "server_cpu_ms_per_req", 25, "21-29"),
    ("LIST 1000 pods, response KiB", "list_1000", "response_kb", 1650e3 / 1024, "1.65 MB"),
    ("CREATE pod, req/s", "create_durable", "creates_per_s", 1756, "1,756"),
    ("CREATE pod, p50 ms", "create_durable", "p50_ms", 15.9, "15.9"),
    ("CREATE pod, p99 ms", "create_durable", "p99_ms", 50.9, "50.9"),
    ("CREATE pod, server CPU ms/request", "create_durable", "server_cpu_ms_per_req", 0.71, "0.71"),
    ("process start -> ready, s", "get_pod", "startup_s", 2.95, "2.9-3.0 (etcd already up)"),
    ("RSS after load, MiB", "create_durable", "rss_mb", 1.6e9 / 2**20, "1.6 GB (idle 320-367 MB)"),
]


def _median(results: dict[str, Any], measure: str, metric: str) -> Any:
    return results.get(measure, {}).get("median", {}).get(metric)


def _cell(results: dict[str, Any], measure: str, metric: str) -> str:
    entry = results.get(measure, {})
    value = _median(results, measure, metric)
    if value is None:
        return "error" if entry.get("errors") else "-"
    runs = [r.get(metric) for r in entry.get("runs", [])]
    text = common.fmt(value)
    return text + (" [" + ", ".join(common.fmt(r) for r in runs) + "]" if len(runs) > 1 else "")


def _verdict(op: str, bound: float, value: Any) -> str:
    if value is None or isinstance(value, list) or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    met = {">=": value >= bound, "<=": value <= bound, "==": value == bound}[op]
    return "MET" if met else "MISSED"


def build_table(results: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    ceiling = _median(results, "ceiling", "req_per_s")
    sat_ceiling = _median(results, "ceiling", "sat_req_per_s")
    headers = ["measure", "metric", "median [runs]", "target", "verdict", "ratio vs ceiling"]
    rows, verdicts = [], []
    for row in ROWS:
        if row.measure not in results:
            continue
        value = _median(results, row.measure, row.metric)
        base = sat_ceiling if row.sat or row.metric == "sat_req_per_s" else ceiling
        ratio = value / base if (row.ratio or row.sat) and base and isinstance(value, (int, float)) else None
        target_text = verdict = ""
        if row.target:
            op, bound = row.target
            target_text = f"{'ratio ' if row.on_ratio else ''}{op} {common.fmt(bound)}"
            verdict = _verdict(op, bound, ratio if row.on_ratio else value)
            verdicts.append({"measure": row.measure, "metric": row.metric, "rule": target_text,
                             "value": value, "ratio_vs_ceiling": ratio, "verdict": verdict})
        rows.append([row.measure, row.label, _cell(results, row.measure, row.metric), target_text,
                     verdict, f"{ratio:.2f}" if ratio is not None else ""])
    return common.render_table(headers, rows), verdicts


def build_reference_table(results: dict[str, Any]) -> str:
    headers = ["what", "ours (median)", "kube-apiserver v1.20.2 (NOT measured here)", "ours / reference"]
    rows = []
    for label, measure, metric, ref, quoted in REFERENCE:
        ours = _median(results, measure, metric)
        if measure not in results:
            continue
        ratio = f"{ours / ref:.2f}" if isinstance(ours, (int, float)) and not math.isnan(ours) else "-"
        rows.append([label, common.fmt(ours), quoted, ratio])
    return common.render_table(headers, rows) if rows else ""


def print_run(name: str, run: int, out: dict[str, Any]) -> None:
    items = ", ".join(f"{k}={common.fmt(v)}" for k, v in out.items() if not isinstance(v, (list, dict)))
    print(f"    run {run + 1}: {items}", flush=True)
    for problem in out.get("problems") or []:
        print(f"      problem: {problem}")
    if out.get("first_error"):
        print(f"      first error response: {out['first_error']}")


# ------------------------------------------------------------------------------ main


def pin_self() -> str | None:
    """Pin this process to the client CPU (children inherit it; the server is moved to CPU 0
    by taskset). None when the machine cannot be split that way."""
    try:
        usable = os.sched_getaffinity(0)
    except AttributeError:
        return None
    if {SERVER_CPU, CLIENT_CPU} <= usable and shutil.which("taskset"):
        os.sched_setaffinity(0, {CLIENT_CPU})
        return (f"server pinned to CPU {SERVER_CPU}; this process, wrk and the Python clients "
                f"pinned to CPU {CLIENT_CPU} (taskset)")
    return None


def select_measures(only: list[str] | None) -> list[Measure]:
    names = {m.name for m in MEASURES}
    unknown = set(only or ()) - names
    if unknown:
        raise SystemExit(f"unknown measure(s): {', '.join(sorted(unknown))}; known: {', '.join(names)}")
    wanted = set(only or names)
    if "get_pod" in wanted:
        wanted.add("ceiling")  # its target is a ratio to the ceiling of the same run
    return [m for m in MEASURES if m.name in wanted]


async def run_measures(b: Bench, selected: list[Measure], runs: int) -> dict[str, Any]:
    """Runs interleaved (every measure once, then again), so slow drift of the machine hits the
    ceiling and the measures alike."""
    results: dict[str, Any] = {m.name: {"description": m.description, "runs": []} for m in selected}
    for run in range(runs):
        for m in selected:
            print(f"  [{m.name}] run {run + 1}/{runs} ...", flush=True)
            try:
                out = await m.fn(b, run)
            except Exception as exc:  # noqa: BLE001 - one failure must not hide the rest
                traceback.print_exc()
                results[m.name].setdefault("errors", []).append(f"run {run + 1}: {type(exc).__name__}: {exc}")
                continue
            results[m.name]["runs"].append(out)
            print_run(m.name, run, out)
    for entry in results.values():
        entry["median"] = common.aggregate(entry["runs"])
    return results


async def run_all(args: argparse.Namespace, procs: Procs, loop_name: str, pinning: str | None) -> dict[str, Any]:
    sizes = dict(QUICK if args.quick else FULL)
    for key in ("watchers", "watch_pods"):
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    selected = select_measures(args.only)
    use_wrk = bool(shutil.which("wrk")) and not args.no_wrk
    workdir = Path(tempfile.mkdtemp(prefix="bench-apiserver-"))
    facts = common.machine_facts(loop_name)
    facts["pinning"] = pinning
    facts["workdir_fs"] = _fs_type(workdir)
    facts["git"] = _git_state()
    b = Bench(procs, workdir, sizes, use_wrk, args.timeout, tuple(args.server_arg))
    facts["load_tool"] = b.tool if use_wrk else b.tool + (" (--no-wrk)" if args.no_wrk else " (wrk not found)")
    print(f"apiserver benchmark  {'QUICK' if args.quick else 'FULL'}  runs={args.runs}  loop={loop_name}")
    print(f"  {facts['date']}  nproc={facts['nproc']}  python={facts['python']}  cpu={facts['cpu_model']}"
          f"  load={facts['loadavg_start']}")
    print(f"  pinning: {facts['pinning'] or 'none (needs 2 usable CPUs and taskset): server and clients share CPUs'}")
    print(f"  load tool: {facts['load_tool']}; sizes: {sizes}; data dirs on {facts['workdir_fs']}")
    started = time.perf_counter()
    try:
        results = await run_measures(b, selected, args.runs)
    finally:
        await procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    table, verdicts = build_table(results)
    reference = build_reference_table(results)
    notes = report_notes(b)
    print()
    print(table)
    print()
    if reference:
        print("Context: real kube-apiserver v1.20.2 on etcd 3.4.23, measured on a 2-core machine with an "
              "aiohttp client, 32 concurrent, 20 s (field-facts.md §9). NOT measured in this run; "
              "different load client.")
        print(reference)
        print()
    for note in notes:
        print(f"note: {note}")
    print(f"total {time.perf_counter() - started:.1f} s; medians of {args.runs} run(s), runs in brackets.")
    facts["loadavg_end"] = common.loadavg()
    return {"benchmark": "apiserver", "mode": "quick" if args.quick else "full", "runs": args.runs,
            "machine": facts, "sizes": sizes, "measures": results, "targets": verdicts,
            "table": table, "reference_table": reference, "notes": notes}


def report_notes(b: Bench) -> list[str]:
    return [
        (f"load: {b.tool}, {b.sizes['duration_s']} s per rate; rates count 2xx answers only "
         "(creates: 201 only); latencies 'under load' are the load tool's"),
        ("ratio vs ceiling = our req/s / the hello-world req/s of this run (same aiohttp, loop, pinning, "
         f"connections; the {SATURATION_CONNECTIONS}-connection rows compare at {SATURATION_CONNECTIONS})"),
        ("server process CPU busy = its CPU seconds / load seconds; runs also record cpu0_busy/cpu1_busy "
         "(each core's busy share, any process): cpu0_busy well above the server's share means "
         "something else ran on the server's core; the machine is shared, see loadavg in the JSON"),
        ("create_durable: every create is fsynced before its 201 (--fsync always); count_verified = "
         "201s <= pods listed afterwards <= 201s + 32 (requests cut off when wrk stops)"),
        (f"watch_fanout: {b.sizes['watchers']} watchers x {b.sizes['watch_pods']} pods, 32 creates in "
         "flight from another process; the fan-out cannot be faster than the creates feeding it"),
    ]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=None, help="runs per figure (default 3; 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="shorter loads, fewer watchers, 1 run")
    p.add_argument("--only", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=None,
                   help="comma-separated measures: " + ",".join(m.name for m in MEASURES))
    p.add_argument("--json", default=str(REPO / "bench" / "results" / "apiserver.json"), help="JSON output path")
    p.add_argument("--no-wrk", action="store_true", help="use Python client processes instead of wrk")
    p.add_argument("--watchers", type=int, default=None, help="watch_fanout watchers (default 100; 50 quick)")
    p.add_argument("--watch-pods", type=int, default=None, help="watch_fanout pods (default 1000; 500 quick)")
    p.add_argument("--timeout", type=float, default=120.0, help="per-step timeout, s")
    p.add_argument("--server-arg", action="append", default=[],
                   help="an extra flag for the server (repeatable), e.g. "
                        "--server-arg=--admission-control=NamespaceLifecycle to compare v1.0's chain")
    args = p.parse_args(argv)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.quiet_logs()
    loop_name = common.choose_loop("auto")
    pinning = pin_self()
    procs = Procs(pinned=pinning is not None)
    try:
        report = asyncio.run(run_all(args, procs, loop_name, pinning))
    except KeyboardInterrupt:
        print("interrupted: child processes stopped, temporary files removed", file=sys.stderr)
        return 130
    finally:
        procs.kill_all_now()
    path = common.write_json(args.json, report)
    print(f"JSON written to {path}")
    errors = [name for name, entry in report["measures"].items() if entry.get("errors")]
    if errors:
        print(f"errors in: {', '.join(errors)}")
    return 1 if errors else 0


# ------------------------------------------------------------------------------ workers
# This file run as `apiserver.py _worker KIND SPEC_JSON` is a client (or the hello-world
# server) in its own process; a client prints its result as the last line of stdout.


async def hello_server(spec: dict[str, Any]) -> None:
    """The ceiling: aiohttp with nothing behind it, logging "ready" like the real server."""
    from aiohttp import web

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, HOST, 0).start()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    port = runner.addresses[0][1]
    print(json.dumps({"event": "ready", "url": f"http://{HOST}:{port}"}), file=sys.stderr, flush=True)
    await stop.wait()
    await runner.cleanup()


async def load_worker(spec: dict[str, Any]) -> dict[str, Any]:
    """GETs of spec.url, or POSTs of spec.body with __NAME__ -> prefix + i, over
    spec.connections keep-alive connections, for spec.duration seconds or spec.count requests."""
    import aiohttp

    body, prefix, count = spec.get("body"), spec.get("prefix", ""), spec.get("count")
    head, _, tail = (body or "").partition("__NAME__")
    deadline = stamp() + spec["duration"] if count is None else math.inf
    statuses: collections.Counter = collections.Counter()
    latencies: list[float] = []
    state = {"next": 0, "last_done": math.nan, "first_error": None}

    async def client(session: aiohttp.ClientSession) -> None:
        while stamp() < deadline and (count is None or state["next"] < count):
            i = state["next"]
            state["next"] += 1
            data = f"{head}{prefix}{i}{tail}".encode() if body else None
            started = stamp()
            async with session.request("POST" if body else "GET", spec["url"], data=data, headers=JSON_HEADERS) as resp:
                raw = await resp.read()
            done = stamp()
            statuses[str(resp.status)] += 1
            if resp.status < 300:
                latencies.append(done - started)
                state["last_done"] = done
            elif state["first_error"] is None:
                state["first_error"] = f"{resp.status} {raw[:300].decode(errors='replace')}"

    connector = aiohttp.TCPConnector(limit=spec["connections"])
    async with aiohttp.ClientSession(connector=connector) as session:
        first_send, cpu = stamp(), time.process_time()
        await asyncio.gather(*(client(session) for _ in range(spec["connections"])))
        cpu = time.process_time() - cpu
    return {"requests": sum(statuses.values()), "ok": len(latencies), "statuses": dict(statuses),
            "first_send": first_send, "last_done": state["last_done"], "cpu_s": cpu,
            "first_error": state["first_error"], **common.latency_summary(latencies)}


class WatchStream:
    """One watcher on a plain blocking-then-non-blocking socket: HTTP/1.1 request, then raw
    bytes counted for event starts while the clock runs; de-chunked and parsed only by
    verify(). Deliberately cheaper than any asyncio client: 100 watchers x 1000 pods is
    ~300 MB, and the client core must not be what is measured."""

    MARKER = b'{"type":"'

    def __init__(self, port: int, path: str, expect: int) -> None:
        self.port, self.path, self.expect = port, path, expect
        self.data = bytearray()
        self.lines = 0
        self.tail = b""
        self.done_at: float | None = None
        self.problem: str | None = None

    def connect(self) -> None:
        self.sock = socket.create_connection((HOST, self.port))
        self.sock.sendall(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}\r\n"
                          "Accept: application/json\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(65536)
        head, _, rest = head.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200") or b"chunked" not in head.lower():
            raise RuntimeError(f"watch answered {head[:200]!r}")
        self.sock.setblocking(False)
        if rest:
            self.feed(rest)

    def feed(self, block: bytes) -> None:
        """Count event starts; a marker split by a read boundary is covered by the tail."""
        self.data += block
        window = self.tail + block
        self.lines += window.count(self.MARKER) - self.tail.count(self.MARKER)
        self.tail = window[-(len(self.MARKER) - 1):]
        if self.lines >= self.expect and self.done_at is None:
            self.done_at = stamp()

    def extra_bytes(self, wait: float) -> int:
        """Anything arriving after the expected events is an unexpected extra event."""
        ready, _, _ = select.select([self.sock], [], [], wait)
        if not ready:
            return 0
        try:
            return len(self.sock.recv(65536))
        except BlockingIOError:
            return 0

    def events(self) -> list[bytes]:
        """The event lines, with the HTTP chunk framing removed."""
        raw, body, at = bytes(self.data), bytearray(), 0
        while at < len(raw):
            end = raw.index(b"\r\n", at)
            size = int(raw[at:end].split(b";")[0], 16)
            if size == 0:
                break
            body += raw[end + 2:end + 2 + size]
            at = end + 2 + size + 2
        return bytes(body).splitlines()

    def verify(self, names: set[str], extra: int) -> str | None:
        """None when the stream held exactly one ADDED event per expected pod, else why not."""
        import orjson

        if self.problem:
            return self.problem
        types: collections.Counter = collections.Counter()
        seen = set()
        for line in self.events():
            event = orjson.loads(line)
            types[event["type"]] += 1
            seen.add(event["object"]["metadata"]["name"])
        if types != {"ADDED": self.expect} or seen != names or extra:
            return f"types {dict(types)}, {len(seen & names)}/{len(names)} names, {extra} extra bytes"
        return None


def consume_all(streams: list[WatchStream], timeout: float) -> None:
    """Read every stream with one epoll loop until each has its events (or the timeout)."""
    poller = select.epoll()
    by_fd = {s.sock.fileno(): s for s in streams if s.done_at is None}
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    deadline = time.monotonic() + timeout
    try:
        while by_fd and time.monotonic() < deadline:
            for fd, _ in poller.poll(0.5):
                stream = by_fd.get(fd)
                if stream is None:
                    continue
                try:
                    block = stream.sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not block:
                    stream.problem = f"stream ended after {stream.lines} events"
                else:
                    stream.feed(block)
                if not block or stream.done_at is not None:
                    poller.unregister(fd)
                    del by_fd[fd]
    finally:
        poller.close()


def watch_worker_sync(spec: dict[str, Any]) -> dict[str, Any]:
    """Open every watch, say READY, wait until each has `expect` events, then verify them."""
    streams = [WatchStream(spec["port"], spec["path"], spec["expect"]) for _ in range(spec["watchers"])]
    for stream in streams:
        stream.connect()
    print("READY", flush=True)
    cpu = time.process_time()
    consume_all(streams, spec["timeout"])
    cpu = time.process_time() - cpu
    extras = [s.extra_bytes(0.3) for s in streams]
    names = {f"{spec['prefix']}{i}" for i in range(spec["expect"])}
    problems = [p for s, x in zip(streams, extras) if (p := s.verify(names, x))]
    done = [s.done_at for s in streams if s.done_at is not None]
    for s in streams:
        s.sock.close()
    return {"complete": len(done), "exact": len(streams) - len(problems), "problems": problems[:10], "cpu_s": cpu,
            "last_done": max(done) if len(done) == len(streams) else None}


def worker_main(kind: str, spec_json: str) -> int:
    spec = json.loads(spec_json)
    common.choose_loop("auto")
    if kind == "hello":
        asyncio.run(hello_server(spec))
        return 0
    if kind == "watch":
        result = watch_worker_sync(spec)
    else:
        result = asyncio.run(load_worker(spec))
    print(json.dumps(common.clean_nans(result)), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "_worker":
        sys.exit(worker_main(sys.argv[2], sys.argv[3]))
    sys.exit(main())
