"""Pod startup latency in an all-in-one cluster: create acknowledged -> observed Running.

The cluster is built the way `minikube-py start` builds it (its own `open_store`,
`start_components` and `wait_ready`, options parsed from `start` flags): embedded store with
`--fsync never` (the store's fsync is not what is measured), the API server on a free port,
the scheduler, the controller manager and 100 simulated nodes with
`--image-pull-duration 0 --container-start-duration 0`, each component on the in-process
transport as `start` wires it. The load generator is a client like any other (in-process
transport by default, `--transport http` for loopback HTTP): it creates 1000 pods at a steady
100/s (a paced loop, each create its own request) and an informer on pods — a watch, as
kubectl or a controller would use — notes when each pod is first seen bound
(`spec.nodeName`) and first seen `Running`.

Per pod: create->scheduled and create->Running, both from the moment the create was
acknowledged (upstream's pod startup SLI is measured the same way, from creation to the
watch seeing Running; its SLO is p99 <= 5 s). Baseline in the same run: the bare create's
own latency (request sent -> acknowledged). Each run gets a fresh interpreter.

With `start`'s default `--authorization-mode Node,RBAC` every component request is authorized
as the component's identity (docs/security.md, "Who the components are");
`--authorization-mode AlwaysAllow` measures the same cluster without that cost, for a ratio.

`--trace off|on|viewer` measures the trace ring's cost (minikube_py.trace): `on` records with
nobody reading (`start --trace`), `viewer` also streams every record over HTTP from
`/debug/trace` to a client in the same process that drains the bytes; `--trace compare` runs
the three modes interleaved, each run in a fresh interpreter, and reports the overhead of each
against `off` (results in bench/results/pod_startup_trace.json).

    python -m bench.pod_startup [--runs 3] [--pods 1000] [--rate 100] [--nodes 100]
                                [--transport in-process|http] [--authorization-mode MODES]
                                [--trace off|on|viewer|compare]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from bench import common

TARGET_P50_MS = 50.0
TARGET_P99_MS = 250.0


def start_flags(data_dir: Path, nodes: int, authorization_mode: str = "Node,RBAC") -> list[str]:
    """The `minikube-py start` command line of the cluster under test."""
    return ["start", "--authorization-mode", authorization_mode, "--data-dir", str(data_dir), "--fsync", "never", "--nodes", str(nodes),
            "--insecure-port", str(common.free_port()),
            "--scheduler-port", str(common.free_port()),
            "--controller-manager-port", str(common.free_port()),
            "--kubelet-port", "0", "--kubeconfig-out", "", "--secure-port", "0",
            "--image-pull-duration", "0", "--container-start-duration", "0"]


def pod(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"startup-{i}", "labels": {"app": "startup"}},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": "10m",
                                                                "memory": "16Mi"}}}]}}


async def one_run(tmp: Path, nodes: int, pods: int, rate: float, transport: str,
                  authorization_mode: str = "Node,RBAC", trace: str = "off") -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions
    from minikube_py.trace import TRACE

    flags = start_flags(tmp / "data", nodes, authorization_mode)
    options = StartOptions.from_args(build_parser().parse_args(
        flags + (["--trace"] if trace == "on" else [])))
    async with running_cluster(options) as cluster:
        first = TRACE.last_seq
        viewer = TraceViewer(cluster.url) if trace == "viewer" else None
        if viewer is not None:
            await viewer.start()
        try:
            result = await measure(cluster, nodes, pods, rate, transport)
        finally:
            if viewer is not None:
                await viewer.stop()
        result["trace"] = trace
        result["trace_records"] = TRACE.last_seq - first
        result["trace_viewer_bytes"] = viewer.received if viewer is not None else 0
        return result


class GCTime:
    """The cyclic garbage collector's pauses while it is installed (gc.callbacks)."""

    def __init__(self) -> None:
        import gc

        self.seconds = 0.0
        self.longest = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            pause = time.perf_counter() - self._started
            self.seconds += pause
            self.longest = max(self.longest, pause)

    def stop(self) -> None:
        import gc

        gc.callbacks.remove(self._callback)


class TraceViewer:
    """A `/debug/trace` follower over HTTP that drains what it is sent (what a console or
    `minikube-py trace --follow` costs the server, without the reader's own parsing)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.received = 0
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        from minikube_py.trace import TRACE

        self._task = asyncio.ensure_future(self._read())
        async with asyncio.timeout(10):
            while TRACE.viewers == 0:
                await asyncio.sleep(0.01)

    async def _read(self) -> None:
        import aiohttp

        async with aiohttp.ClientSession() as session, \
                session.get(self.url + "/debug/trace") as resp:
            async for chunk in resp.content.iter_any():
                self.received += len(chunk)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass


async def measure(cluster: Any, nodes: int, pods: int, rate: float,
                  transport: str) -> dict[str, Any]:
    """Create `pods` at `rate`/s on a running cluster (cli.start.RunningCluster); latencies
    per pod."""
    from minikube_py.client import Client, HTTPTransport, InProcessTransport
    from minikube_py.client.cache import Informer
    from minikube_py.client.resources import PODS

    client = None
    informer = None
    try:
        client = Client(HTTPTransport(cluster.url, user_agent="bench") if transport == "http"
                        else InProcessTransport(cluster.runner.app, user_agent="bench"))

        sent: dict[str, float] = {}
        acked: dict[str, float] = {}
        scheduled: dict[str, float] = {}
        running: dict[str, float] = {}
        done = asyncio.Event()

        def seen(obj: dict) -> None:
            name = obj["metadata"]["name"]
            now = time.perf_counter()
            if name not in scheduled and (obj.get("spec") or {}).get("nodeName"):
                scheduled[name] = now
            if name not in running and (obj.get("status") or {}).get("phase") == "Running":
                running[name] = now
                if len(running) >= pods:
                    done.set()

        informer = Informer(client, PODS, namespace="default", label_selector="app=startup")
        informer.add_event_handler(on_add=seen, on_update=lambda _old, new: seen(new))
        informer.start()
        await informer.wait_for_sync()

        async def create(i: int) -> None:
            body = pod(i)
            name = body["metadata"]["name"]
            sent[name] = time.perf_counter()
            await client.create(PODS, body, "default")
            acked[name] = time.perf_counter()

        gc_time = GCTime()
        cpu = time.process_time()
        began = time.perf_counter()
        tasks = []
        interval = 1.0 / rate
        for i in range(pods):  # paced: the i-th create starts at began + i/rate
            delay = began + i * interval - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(create(i)))
        await asyncio.gather(*tasks)
        offered = time.perf_counter() - began
        await asyncio.wait_for(done.wait(), 120)
        elapsed = time.perf_counter() - began
        cpu = time.process_time() - cpu
        gc_time.stop()

        names = list(acked)
        create_lat = [acked[n] - sent[n] for n in names]
        to_sched = [max(0.0, scheduled[n] - acked[n]) for n in names]
        to_run = [max(0.0, running[n] - acked[n]) for n in names]
        early = sum(running[n] < acked[n] for n in names)
        result: dict[str, Any] = {
            "nodes": nodes, "pods": pods, "rate_per_s": rate, "transport": transport,
            "achieved_rate_per_s": pods / offered,
            **common.latency_summary(to_run, "running_"),
            **common.latency_summary(to_sched, "scheduled_"),
            **common.latency_summary(create_lat, "create_"),
            "running_seen_before_ack": early,
            "seconds": elapsed,
            "process_cpu_share": cpu / elapsed,  # of one core
            "cpu_ms_per_pod": cpu * 1000 / pods,  # the process's CPU per pod started
            "gc_ms": gc_time.seconds * 1000,  # the cycle collector's pauses in the window
            "gc_max_pause_ms": gc_time.longest * 1000,
        }
        return result
    finally:
        if informer is not None:
            await informer.stop()
        if client is not None:
            await client.close()


def _in_fresh_process(args: argparse.Namespace, trace: str | None = None) -> dict[str, Any]:
    return common.run_fresh(["bench.pod_startup", "--one", "--nodes", str(args.nodes),
                             "--pods", str(args.pods), "--rate", str(args.rate),
                             "--transport", args.transport,
                             "--authorization-mode", args.authorization_mode,
                             "--trace", trace or args.trace])


TRACE_MODES = ("off", "on", "viewer")


def compare_trace(args: argparse.Namespace, loop_name: str) -> int:
    """The trace's overhead: the three modes interleaved run by run (a drift of the machine
    hits them alike), medians per mode, overhead against `off`."""
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in TRACE_MODES}
    for i in range(args.runs):
        for mode in TRACE_MODES:
            result = _in_fresh_process(args, mode)
            runs[mode].append(result)
            print(f"  run {i + 1} trace={mode}: ->Running p50 {result['running_p50_ms']:.1f} ms"
                  f", p99 {result['running_p99_ms']:.1f} ms; CPU "
                  f"{result['cpu_ms_per_pod']:.2f} ms per pod; "
                  f"{result['trace_records']} records", flush=True)
    agg = {mode: common.aggregate(runs[mode]) for mode in TRACE_MODES}
    base = agg["off"]

    def over(mode: str, key: str) -> str:
        return f"{(agg[mode][key] / base[key] - 1) * 100:+.1f}%" if base[key] else "n/a"

    rows = [[mode, common.fmt(agg[mode]["running_p50_ms"]),
             common.fmt(agg[mode]["running_p99_ms"]),
             f"{agg[mode]['cpu_ms_per_pod']:.2f}",
             over(mode, "cpu_ms_per_pod") if mode != "off" else "",
             over(mode, "running_p50_ms") if mode != "off" else "",
             str(agg[mode]["trace_records"])] for mode in TRACE_MODES]
    print(common.render_table(["trace", "->Running p50 ms", "p99 ms", "CPU ms per pod",
                               "CPU vs off", "p50 vs off", "records"], rows))
    print(f"note: {args.pods} pods at {args.rate:g}/s onto {args.nodes} nodes, "
          f"--authorization-mode {args.authorization_mode}; {args.runs} runs per mode, "
          f"interleaved, each in a fresh interpreter; loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "pod_startup_trace.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes, "pods": args.pods,
                                           "rate_per_s": args.rate,
                                           "transport": args.transport,
                                           "authorization_mode": args.authorization_mode},
                              "median": agg, "runs": runs})
    print(f"JSON written to {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100.0, help="pod creates per second")
    parser.add_argument("--transport", choices=("in-process", "http"), default="in-process")
    parser.add_argument("--authorization-mode", default="Node,RBAC",
                        help="the cluster's mode (start's default Node,RBAC; AlwaysAllow for "
                             "the cost of authorizing the components)")
    parser.add_argument("--trace", choices=(*TRACE_MODES, "compare"), default="off",
                        help="the trace ring: off (nobody reads), on (start --trace), viewer "
                             "(a /debug/trace follower attached); compare: all three")
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, args.nodes, args.pods, args.rate,
                                                     args.transport, args.authorization_mode,
                                                     args.trace))
    if args.trace == "compare":
        return compare_trace(args, loop_name)
    runs = []
    for i in range(args.runs):
        result = _in_fresh_process(args)
        runs.append(result)
        print(f"  run {i + 1}: ->Running p50 {result['running_p50_ms']:.1f} ms, "
              f"p99 {result['running_p99_ms']:.1f} ms; ->scheduled p50 "
              f"{result['scheduled_p50_ms']:.1f} ms; create p50 {result['create_p50_ms']:.2f} ms",
              flush=True)
    agg = common.aggregate(runs)
    rows = [
        ["create ack -> Running (watch)", common.fmt(agg["running_p50_ms"]),
         common.fmt(agg["running_p99_ms"]), common.fmt(agg["running_max_ms"]),
         f"p50 <= {TARGET_P50_MS:g}, p99 <= {TARGET_P99_MS:g}",
         "met" if agg["running_p50_ms"] <= TARGET_P50_MS and agg["running_p99_ms"] <= TARGET_P99_MS
         else "MISSED"],
        ["create ack -> scheduled (watch)", common.fmt(agg["scheduled_p50_ms"]),
         common.fmt(agg["scheduled_p99_ms"]), common.fmt(agg["scheduled_max_ms"]), "", ""],
        ["baseline: create request -> ack", common.fmt(agg["create_p50_ms"]),
         common.fmt(agg["create_p99_ms"]), common.fmt(agg["create_max_ms"]), "", ""],
    ]
    print(common.render_table(["latency per pod (median of runs)", "p50 ms", "p99 ms", "max ms",
                               "target", "verdict"], rows))
    print(f"note: {args.pods} pods at {args.rate:g}/s (achieved "
          f"{agg['achieved_rate_per_s']:.1f}/s) onto {args.nodes} simulated nodes; "
          f"--authorization-mode {args.authorization_mode}; all-in-one "
          f"process built like `minikube-py start --fsync never --image-pull-duration 0 "
          f"--container-start-duration 0`; load client transport {args.transport}; process "
          f"CPU {agg['process_cpu_share'] * 100:.0f}% of one core; {args.runs} runs, each in a "
          f"fresh interpreter; loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "pod_startup.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes, "pods": args.pods,
                                           "rate_per_s": args.rate, "transport": args.transport,
                                           "authorization_mode": args.authorization_mode,
                                           "fsync": "never", "image_pull_duration": 0,
                                           "container_start_duration": 0},
                              "median": agg, "runs": runs})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
