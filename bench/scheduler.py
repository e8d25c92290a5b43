"""Scheduler throughput end to end through the API: create pods -> all bound.

One process runs the API server (embedded store, fsync off: the store is not what is measured
here) and the scheduler. Both the scheduler and the load generator reach the API server
through the in-process transport (the handler pipeline without a socket) or, with
`--transport http`, over loopback HTTP like separate processes would. N nodes
of mixed sizes, labels and taints are registered; P pods (requests, 1/3 with a nodeSelector,
1/10 with a host port, 7 apps with Services) are created 32 at a time; the clock runs from the
first create until an informer has seen every pod bound. Each run gets a fresh interpreter.

The time split, per pod: algorithm = CPU inside predicates/priorities/selectHost (the
scheduler's own histogram); API = the rest of the process's CPU (serving creates, bindings,
events and watches, informers, the event loop); binding = the mean latency of one binding
request (concurrent with the next decisions, so it is latency, not a share of CPU).

    python -m bench.scheduler [--quick] [--runs N] [--nodes 100,1000,5000] [--pods P]
                              [--transport in-process,http]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from bench import common
from minikube_py.apiserver.options import APIServerOptions
from minikube_py.cli import runtime
from minikube_py.apiserver.server import APIServer
from minikube_py.client import Client, HTTPTransport, InProcessTransport
from minikube_py.client.cache import Informer
from minikube_py.client.resources import NODES, PODS, SERVICES
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.scheduler import Scheduler
from minikube_py.storage import EmbeddedStore

TARGETS = {100: 1000.0, 1000: 600.0, 5000: 250.0}  # pods/s, from the issue


def node(i: int) -> dict[str, Any]:
    big = i % 4 == 0
    return {"metadata": {"name": f"node-{i}", "labels": {
                "kubernetes.io/hostname": f"node-{i}", "disk": "ssd" if i % 2 else "hdd",
                "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "spec": {"taints": [{"key": "gpu", "value": "y", "effect": "NoSchedule"}]}
            if i % 10 == 9 else {},
            "status": {"allocatable": {"cpu": "64" if big else "16", "memory": "256Gi" if big
                                       else "64Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(i: int, rng: random.Random) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nginx", "resources": {"requests": {
        "cpu": rng.choice(["100m", "250m"]), "memory": "128Mi"}}}
    if i % 10 == 0:
        container["ports"] = [{"containerPort": 80, "hostPort": 10000 + i}]
    spec: dict[str, Any] = {"containers": [container]}
    if i % 3 == 0:
        spec["nodeSelector"] = {"disk": "ssd"}
    return {"metadata": {"name": f"p{i}", "labels": {"app": f"a{i % 7}"}}, "spec": spec}


async def one_run(nodes: int, pods: int, tmp: Path, transport: str) -> dict[str, Any]:
    store = await EmbeddedStore.open(tmp / "data", fsync=False)
    api = APIServer(store, APIServerOptions(max_requests_inflight=0,
                                            max_mutating_requests_inflight=0))
    runner = web.AppRunner(api.build_app(), access_log=None)
    await runner.setup()
    if transport == "http":
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        client = Client(HTTPTransport(url))
        sched_client = Client(HTTPTransport(url, user_agent="kube-scheduler"))
    else:
        client = Client(InProcessTransport(runner.app))
        sched_client = Client(InProcessTransport(runner.app, user_agent="kube-scheduler"))
    scheduler = Scheduler(sched_client, from_provider("DefaultProvider"))
    bound = Informer(client, PODS, field_selector="spec.nodeName!=")
    done = asyncio.Event()
    seen: set[str] = set()

    def on_bound(p: dict) -> None:
        seen.add(p["metadata"]["name"])
        if len(seen) >= pods:
            done.set()

    bound.add_event_handler(on_add=on_bound)
    sem = asyncio.Semaphore(32)

    async def create(kind, body: dict, ns: str | None = None) -> None:
        async with sem:
            await client.create(kind, body, ns)

    try:
        await asyncio.gather(*(create(NODES, node(i)) for i in range(nodes)))
        for app in range(7):
            await client.create(SERVICES, {"metadata": {"name": f"a{app}"}, "spec": {
                "selector": {"app": f"a{app}"}, "ports": [{"port": 80}]}}, "default")
        task = asyncio.create_task(scheduler.run())
        bound.start()
        await bound.wait_for_sync()
        while scheduler.queue is None or not scheduler.nodes.has_synced:
            await asyncio.sleep(0.05)
        algo_before = scheduler.metrics.algorithm._sum.get()
        bind_before = scheduler.metrics.binding._sum.get()
        rng = random.Random(1)
        cpu = time.process_time()
        started = time.perf_counter()
        await asyncio.gather(*(create(PODS, pod(i, rng), "default") for i in range(pods)))
        created = time.perf_counter()
        await asyncio.wait_for(done.wait(), 600)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        algorithm_s = scheduler.metrics.algorithm._sum.get() - algo_before
        binding_s = scheduler.metrics.binding._sum.get() - bind_before
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return {"nodes": nodes, "pods": pods, "transport": transport,
                "pods_per_s": pods / elapsed, "seconds": elapsed, "create_s": created - started,
                "algorithm_ms_per_pod": algorithm_s / pods * 1000,
                "api_ms_per_pod": (cpu - algorithm_s) / pods * 1000,
                "binding_latency_ms": binding_s / pods * 1000,
                "algorithm_share": algorithm_s / cpu if cpu else 0.0,
                "process_cpu_busy": cpu / elapsed / 2}  # of both cores
    finally:
        await bound.stop()
        await client.close()
        await sched_client.close()
        await runner.cleanup()
        await store.close()


def _in_fresh_process(transport: str, nodes: int, pods: int) -> dict[str, Any]:
    return common.run_fresh(["bench.scheduler", "--one", f"{transport}/{nodes}",
                             "--pods", str(pods)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 nodes only, 1 run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", default="100,1000,5000")
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--transport", default="in-process,http",
                        help="comma list of in-process and/or http")
    parser.add_argument("--one", metavar="TRANSPORT/NODES",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        runtime.tune_gc()  # as every minikube-py command does
        transport, nodes = args.one.split("/")
        with tempfile.TemporaryDirectory() as tmp:
            result = asyncio.run(one_run(int(nodes), args.pods, Path(tmp), transport))
        print(json.dumps(result))
        return 0
    sizes = [100] if args.quick else [int(n) for n in args.nodes.split(",")]
    transports = args.transport.split(",")
    runs = 1 if args.quick else args.runs
    results: dict[str, list[dict[str, Any]]] = {f"{t}/{n}": [] for t in transports for n in sizes}
    for run in range(runs):
        for transport in transports:
            for n in sizes:
                result = _in_fresh_process(transport, n, args.pods)
                print(f"  run {run + 1}: {transport}, {n} nodes: "
                      f"{result['pods_per_s']:.0f} pods/s, algorithm "
                      f"{result['algorithm_ms_per_pod']:.2f} ms/pod, API "
                      f"{result['api_ms_per_pod']:.2f} ms/pod", flush=True)
                results[f"{transport}/{n}"].append(result)
    rows = []
    for key, runs_of in results.items():
        transport, n = key.split("/")
        agg = common.aggregate(runs_of)
        target = TARGETS.get(int(n))
        rate = agg["pods_per_s"]
        verdict = ""
        if target and transport == "in-process":  # the targets are in-process
            verdict = "met" if rate >= target else "MISSED"
        rows.append([transport, n, common.fmt(rate), common.fmt(agg["algorithm_ms_per_pod"]),
                     common.fmt(agg["api_ms_per_pod"]), common.fmt(agg["binding_latency_ms"]),
                     f">= {target:.0f}" if target else "", verdict])
    print(common.render_table(["transport", "nodes", "pods/s (median)", "algorithm ms/pod",
                               "API+rest CPU ms/pod", "binding latency ms", "target",
                               "verdict"], rows))
    print(f"note: API server and scheduler share one process; {args.pods} pods per run; "
          f"DefaultProvider; loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "scheduler.json",
                             {"machine": common.machine_facts(loop_name), "runs": results})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
