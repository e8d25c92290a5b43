"""Scale: 5000 simulated nodes and 50,000 Running pods in one all-in-one process, once per
node heartbeat mode.

The cluster is built the way `minikube-py start` builds it (its `open_store`,
`start_components`, `wait_ready`; options parsed from `start` flags): embedded store with
`--fsync never`, the API server, scheduler, controller manager (every controller) and the
kubelet pool, each on the in-process transport. Pods are created **directly** (bare pods, 64
creates in flight, through the in-process client), not through ReplicationControllers; a watch
on pods (a client's view) counts them Running.

Each run measures one `--node-heartbeat-mode`, in a fresh interpreter; by default both run:
`lease` (upstream 1.17+, the default: every kubelet renews a ~300-byte Lease every 10 s and
posts its Node status only on change or every 5 min) and `status` (v1.0: every kubelet PATCHes
its Node's conditions every 10 s, a write every scheduler and controller informer receives).

Figures, per mode:
- time from the first create until every pod is Running;
- memory: VmRSS and the peak VmHWM from /proc/self/status once everything runs;
- steady-state CPU: with every pod Running, the process's CPU time (API server and every
  component: one process) over `--idle` seconds of quiet, as a share of one core, and the
  store writes per second in that window (the heartbeats: lease renewals or status PATCHes);
- the real `kubectl get nodes` (and `get pods -A`) over HTTP against the same process, wall
  time, median of 3.
Targets (lease mode): CPU <= 5% of a core, RSS <= 1.5 GiB, `kubectl get nodes` <= 1 s.

Ports: only the API server's insecure port listens (scheduler, controller-manager and kubelet
ports are off: the bench needs none of them). `--insecure-port 0` would mean "no listener", so
the port is picked free and, should another process take it before the bind, the start is
retried with a new one.

`--tracemalloc` takes a snapshot once everything runs and prints where memory was allocated
(by site), which is slow: use it at `--quick` size. Each run gets a fresh interpreter.

    python -m bench.scale [--quick] [--nodes 5000] [--pods 50000] [--idle 30] [--runs 1]
                          [--modes lease,status]

`--burst` measures something else: whether memory comes back after a create/delete burst
(bench/burst.py; issue 23 item 3).

    python -m bench.scale --burst [--nodes 50] [--pods 20000] [--wave 5000] [--wait 600]
                          [--sample-every 10] [--event-ttl 1h] [--census] [--code DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

KUBECTL = "/usr/bin/kubectl"
MODES = ("lease", "status")
#: targets of the default (lease) mode
TARGET_RSS_GIB = 1.5
TARGET_IDLE_CPU = 0.05
TARGET_KUBECTL_NODES_S = 1.0
#: what bind() says when a port picked free was taken before we bound it
PORT_IN_USE = "address already in use"
START_ATTEMPTS = 4


def start_flags(data_dir: Path, nodes: int, mode: str) -> list[str]:
    return ["start", "--data-dir", str(data_dir), "--fsync", "never", "--nodes", str(nodes),
            "--insecure-port", str(common.free_port()), "--scheduler-port", "0",
            "--controller-manager-port", "0", "--kubelet-port", "0", "--kubeconfig-out", "",
            "--secure-port", "0", "--image-pull-duration", "0",
            "--container-start-duration", "0", "--node-heartbeat-mode", mode,
            "--ready-timeout", "600"]


def pod(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"scale-{i}", "labels": {"app": f"scale-{i % 10}"}},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": "10m",
                                                                "memory": "16Mi"}}}]}}


def proc_status() -> dict[str, int]:
    """VmRSS and VmHWM in bytes."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0]) * 1024
    return out


async def kubectl_seconds(url: str, args: list[str], home: str, times: int = 3) -> tuple[float, int]:
    """Median wall time of `kubectl -s url <args>` (run as a subprocess while this process
    keeps serving), and the number of lines it printed."""
    walls, lines = [], 0
    for _ in range(times):
        began = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, "-s", url, *args, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, "HOME": home})
        out, err = await proc.communicate()
        walls.append(time.perf_counter() - began)
        if proc.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {err.decode()[-500:]}")
        lines = len(out.splitlines())
    return common.median(walls), lines


async def settle(client: Any, limit: float = 300.0, quiet: float = 3.0) -> float:
    """Seconds until the cluster is quiet: the kubelets' event backlog (Starting, NodeReady...
    for every node, Pulled, Created, Started... for every pod, written by a few writers)
    drained — no Event written for `quiet` seconds. (A store write rate near the heartbeat
    rate is no sign: at 5000 nodes the backlog drains at ~200 events/s beside 500 heartbeats/s,
    and a saturated process writes fewer heartbeats than asked.)"""
    from minikube_py.client.resources import EVENTS

    began = time.perf_counter()
    last = time.perf_counter()
    rv = (await client.list(EVENTS, limit=1))["metadata"]["resourceVersion"]

    async def follow() -> None:
        nonlocal last
        async for _ in client.watch(EVENTS, resource_version=rv, allow_bookmarks=False):
            last = time.perf_counter()

    watcher = asyncio.create_task(follow())
    try:
        while time.perf_counter() - began < limit and time.perf_counter() - last < quiet:
            await asyncio.sleep(0.25)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    return time.perf_counter() - began


async def not_ready_events(client: Any) -> int:
    """How often the node controller found a node silent (NodeNotReady events on Nodes): a
    sign the process could not keep the heartbeats within --node-monitor-grace-period."""
    from minikube_py.client.resources import EVENTS

    events = (await client.list(EVENTS, field_selector="involvedObject.kind=Node,"
                                "reason=NodeNotReady"))["items"]
    return sum(int(e.get("count") or 1) for e in events)


def memory_by_site(snapshot: Any, top: int = 25) -> list[tuple[str, int]]:
    """The biggest allocation sites, each as its innermost frames of our code (where a decoded
    object or stored value was made, and who asked for it)."""
    root = str(Path(__file__).resolve().parents[1]) + "/"
    out = []
    for stat in snapshot.statistics("traceback")[:top]:
        frames = [f"{f.filename.replace(root, '')}:{f.lineno}" for f in stat.traceback
                  if "site-packages" not in f.filename and "<frozen" not in f.filename][-4:]
        out.append((" <- ".join(reversed(frames)), stat.size))
    return out


async def one_run(tmp: Path, nodes: int, pods: int, idle: float, mode: str,
                  trace: bool, profile_idle: str | None = None) -> dict[str, Any]:
    """One measured cluster; a start that lost the race for its port is retried."""
    from minikube_py.cli.storage_target import CommandError

    for attempt in range(START_ATTEMPTS):
        data = tmp / f"data-{attempt}"
        try:
            return await _measure(data, nodes, pods, idle, mode, trace, profile_idle)
        except CommandError as exc:
            if PORT_IN_USE not in str(exc).lower() or attempt == START_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


async def _measure(data: Path, nodes: int, pods: int, idle: float, mode: str,
                   trace: bool, profile_idle: str | None) -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import PODS

    if trace:
        import tracemalloc

        tracemalloc.start(8)
    result: dict[str, Any] = {"nodes": nodes, "pods": pods, "pod_creation": "direct",
                              "heartbeat_mode": mode}
    options = StartOptions.from_args(build_parser().parse_args(start_flags(data, nodes, mode)))
    began = time.perf_counter()
    async with running_cluster(options) as cluster:
        store, runner, url = cluster.store, cluster.runner, cluster.url
        client = None
        watcher = None
        try:
            result["nodes_ready_s"] = time.perf_counter() - began
            client = Client(InProcessTransport(runner.app, user_agent="bench"))

            running: set[str] = set()
            all_running = asyncio.Event()
            rv = (await client.list(PODS, "default", limit=1))["metadata"]["resourceVersion"]

            async def count_running() -> None:
                async for event in client.watch(PODS, "default", resource_version=rv,
                                                allow_bookmarks=False):
                    obj = event.object
                    if (obj.get("status") or {}).get("phase") == "Running":
                        running.add(obj["metadata"]["name"])
                        if len(running) >= pods:
                            all_running.set()
                            return

            watcher = asyncio.create_task(count_running())
            sem = asyncio.Semaphore(64)

            async def create(i: int) -> None:
                async with sem:
                    await client.create(PODS, pod(i), "default")

            started = time.perf_counter()
            cpu = time.process_time()
            await asyncio.gather(*(create(i) for i in range(pods)))
            result["create_s"] = time.perf_counter() - started
            await asyncio.wait_for(all_running.wait(), 3600)
            result["all_running_s"] = time.perf_counter() - started
            result["pods_running_per_s"] = pods / result["all_running_s"]
            result["load_cpu_share"] = (time.process_time() - cpu) / result["all_running_s"]
            await watcher
            watcher = None

            result["settle_s"] = await settle(client)
            mem = proc_status()
            result["rss_gib"] = mem["VmRSS"] / 2**30
            result["hwm_gib"] = mem["VmHWM"] / 2**30

            revision = await store.current_revision()
            profiler = None
            if profile_idle:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            wall, cpu = time.perf_counter(), time.process_time()
            await asyncio.sleep(idle)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(profile_idle)
            result["idle_window_s"] = wall
            result["idle_cpu_share"] = cpu / wall
            result["writes_per_s"] = (await store.current_revision() - revision) / wall

            with tempfile.TemporaryDirectory() as home:
                result["kubectl_get_nodes_s"], lines = await kubectl_seconds(
                    url, ["get", "nodes"], home)
                result["kubectl_nodes_listed"] = lines - 1
                result["kubectl_get_pods_s"], lines = await kubectl_seconds(
                    url, ["get", "pods", "-A"], home)
                result["kubectl_pods_listed"] = lines - 1
            result["node_not_ready_events"] = await not_ready_events(client)
            mem = proc_status()
            result["hwm_gib"] = mem["VmHWM"] / 2**30
            if trace:
                import tracemalloc

                snapshot = tracemalloc.take_snapshot()
                result["traced_gib"] = tracemalloc.get_traced_memory()[0] / 2**30
                result["memory_by_site"] = memory_by_site(snapshot)
            return result
        finally:
            if watcher is not None:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            if client is not None:
                await client.close()


def _in_fresh_process(args: argparse.Namespace, nodes: int, pods: int,
                      mode: str) -> dict[str, Any]:
    argv = ["bench.scale", "--one", "--nodes", str(nodes), "--pods", str(pods),
            "--idle", str(args.idle), "--modes", mode]
    if args.tracemalloc:
        argv.append("--tracemalloc")
    return common.run_fresh(argv, timeout=7200)


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise SystemExit(f"--modes: expected a list of {', '.join(MODES)}, got {text!r}")
    return modes


def _rows(mode: str, agg: dict[str, Any]) -> list[list[str]]:
    """One mode's table; the targets are the lease mode's (status mode is the comparison)."""
    def verdict(ok: bool) -> str:
        return ("met" if ok else "MISSED") if mode == "lease" else "(v1.0 comparison)"

    return [
        ["nodes Ready after start", f"{agg['nodes_ready_s']:.1f} s", "", ""],
        ["create all pods (64 in flight)", f"{agg['create_s']:.1f} s", "", ""],
        ["first create -> all Running", f"{agg['all_running_s']:.1f} s "
         f"({agg['pods_running_per_s']:.0f} pods/s)", "", ""],
        ["then until quiet (event backlog drained)", f"{agg['settle_s']:.1f} s", "", ""],
        ["RSS, all Running (VmRSS)", f"{agg['rss_gib']:.2f} GiB", f"<= {TARGET_RSS_GIB:g} GiB",
         verdict(agg["rss_gib"] <= TARGET_RSS_GIB)],
        ["peak RSS (VmHWM)", f"{agg['hwm_gib']:.2f} GiB", "", ""],
        [f"steady-state CPU, whole process ({agg['idle_window_s']:.0f} s idle, "
         f"{agg['writes_per_s']:.0f} store writes/s)", f"{agg['idle_cpu_share'] * 100:.1f}% "
         "of a core", f"<= {TARGET_IDLE_CPU * 100:g}%",
         verdict(agg["idle_cpu_share"] <= TARGET_IDLE_CPU)],
        [f"kubectl get nodes ({agg['kubectl_nodes_listed']} listed)",
         f"{agg['kubectl_get_nodes_s']:.2f} s", f"<= {TARGET_KUBECTL_NODES_S:g} s",
         verdict(agg["kubectl_get_nodes_s"] <= TARGET_KUBECTL_NODES_S)],
        [f"kubectl get pods -A ({agg['kubectl_pods_listed']} listed)",
         f"{agg['kubectl_get_pods_s']:.2f} s", "", ""],
        ["nodes found silent (NodeNotReady events)", f"{agg['node_not_ready_events']:.0f}",
         "0", "" if agg["node_not_ready_events"] == 0 else "nodes missed their grace period"],
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 nodes / 5000 pods")
    parser.add_argument("--nodes", type=int, default=None, help="default 5000")
    parser.add_argument("--pods", type=int, default=None, help="default 50000")
    parser.add_argument("--idle", type=float, default=30.0,
                        help="seconds of steady state over which CPU is measured")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--modes", default=",".join(MODES),
                        help="node heartbeat modes to measure, each in its own runs "
                             "(default: lease,status)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="print where memory was allocated (slow; use with --quick)")
    parser.add_argument("--profile-idle", metavar="FILE",
                        help="with --one: cProfile the steady-state window into FILE")
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run of the first mode in this process, "
                             "print it as JSON")
    burst = parser.add_argument_group("--burst (bench/burst.py)")
    burst.add_argument("--burst", action="store_true",
                       help="create and delete --pods pods, compact, then sample RSS over --wait")
    burst.add_argument("--wave", type=int, default=None,
                       help="pods alive at once during the burst (default: all of them)")
    burst.add_argument("--wait", type=float, default=600.0,
                       help="seconds to sample RSS after the compaction (default 600)")
    burst.add_argument("--sample-every", type=float, default=10.0)
    burst.add_argument("--event-ttl", default="1h", help="the cluster's --event-ttl")
    burst.add_argument("--census", action="store_true",
                       help="count live objects by type at idle, after compaction, at the end")
    burst.add_argument("--code", help="another checkout whose minikube_py to measure "
                                      "(the baseline, e.g. /work/main)")
    args = parser.parse_args(argv)
    if args.burst:
        from bench import burst as burst_bench

        common.quiet_logs()
        return burst_bench.run_one(args) if args.one else burst_bench.run(args)
    nodes = args.nodes or (500 if args.quick else 5000)
    pods = args.pods or (5000 if args.quick else 50_000)
    modes = _modes(args.modes)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, nodes, pods, args.idle, modes[0],
                                                     args.tracemalloc, args.profile_idle))
    by_mode: dict[str, dict[str, Any]] = {}
    for mode in modes:
        runs = []
        for i in range(args.runs):
            result = _in_fresh_process(args, nodes, pods, mode)
            runs.append(result)
            print(f"  {mode} run {i + 1}: all Running in {result['all_running_s']:.1f} s, RSS "
                  f"{result['rss_gib']:.2f} GiB (peak {result['hwm_gib']:.2f}), idle CPU "
                  f"{result['idle_cpu_share'] * 100:.1f}%, kubectl get nodes "
                  f"{result['kubectl_get_nodes_s']:.2f} s", flush=True)
            for name, size in result.get("memory_by_site", ()):
                print(f"    {size / 2**20:8.1f} MiB  {name}")
        agg = common.aggregate([{k: v for k, v in r.items()
                                 if k not in ("memory_by_site", "heartbeat_mode")}
                                for r in runs])
        by_mode[mode] = {"median": agg, "runs": runs}
        print(common.render_table([f"{nodes} nodes, {pods} pods, --node-heartbeat-mode={mode} "
                                   f"(median of {args.runs})", "figure", "target", "verdict"],
                                  _rows(mode, agg)))
    print(f"note: one process (API server, scheduler, controller manager, kubelets) built like "
          f"`minikube-py start --fsync never --image-pull-duration 0 --container-start-duration "
          f"0 --node-heartbeat-mode MODE`; pods created directly (bare pods, not via "
          f"controllers); lease renewals / status heartbeats every 10 s; fresh interpreter per "
          f"run; loop {loop_name}")
    name = "scale_quick" if (nodes, pods) != (5000, 50_000) else "scale"
    path = common.write_json(Path(__file__).parent / "results" / f"{name}.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": nodes, "pods": pods, "idle_s": args.idle,
                                           "fsync": "never", "pod_creation": "direct",
                                           "modes": modes, "lease_renew_interval_s": 10,
                                           "node_status_update_frequency_s": 10,
                                           "node_status_report_frequency_s": 300},
                              "modes": by_mode})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
