"""Scheduler throughput end to end through the API: create pods -> all bound.

One process runs the API server (embedded store, fsync off: the store is not what is measured
here) and the scheduler. Both the scheduler and the load generator reach the API server
through the in-process transport (the handler pipeline without a socket) or, with
`--transport http`, over loopback HTTP like separate processes would. N nodes
of mixed sizes, labels and taints are registered; P pods (requests, 1/3 with a nodeSelector,
1/10 with a host port, 7 apps with Services) are created 32 at a time; the clock runs from the
first create until an informer has seen every pod bound. Each run gets a fresh interpreter.

Scenarios (`--scenarios plain,affinity`, both by default, reported side by side): `plain` is
the above; `affinity` (issue 7) puts the nodes in 10 zones (failure-domain.beta.kubernetes.io/
zone) and first binds 2000 labelled "cache" pods directly to nodes of zones z0-z4 (a quarter
of them carrying a required anti-affinity term of their own, so the symmetric check has work);
then each of the P pods belongs to one of 10 groups with required anti-affinity on
kubernetes.io/hostname against its own group (at most one per node per group) and a preferred
affinity (weight 10) for zones running cache pods. DefaultProvider is v1.5's set, so
MatchInterPodAffinity and InterPodAffinityPriority run in both scenarios.

The time split, per pod: algorithm = CPU inside predicates/priorities/selectHost (the
scheduler's own histogram); API = the rest of the process's CPU (serving creates, bindings,
events and watches, informers, the event loop); binding = the mean latency of one binding
request (concurrent with the next decisions, so it is latency, not a share of CPU); p50 / p99
= the distribution of one decision's algorithm time (GenericScheduler.schedule, or the
framework's schedulePod, timed per pod).

Algorithms (`--algorithms v1.5,framework`, both by default, same workload, same run): `v1.5` is
the DefaultProvider through GenericScheduler; `framework` is the scheduling framework with the
default profile (KubeSchedulerConfiguration defaults when the config package provides them),
keeping only the plugins this build's registry has — the plugins it had to drop are printed,
so a figure taken before every in-tree plugin exists says what it measured.

    python -m bench.scheduler [--quick] [--runs N] [--nodes 100,1000,5000] [--pods P]
                              [--transport in-process,http] [--scenarios plain,affinity]
                              [--algorithms v1.5,framework] [--percentage P]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from bench import common
from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.client import Client, HTTPTransport, InProcessTransport
from minikube_py.client.cache import Informer
from minikube_py.client.resources import NODES, PODS, SERVICES
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.framework.config.types import (
    PluginRef,
    Profile,
    SchedulerConfiguration,
)
from minikube_py.scheduler.framework.handle import FrameworkHandle
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.framework.runtime import EXTENSION_POINTS
from minikube_py.scheduler.scheduler import Scheduler
from minikube_py.storage import EmbeddedStore

TARGETS = {100: 1000.0, 1000: 600.0, 5000: 250.0}  # pods/s, from the issue (plain scenario)
SCENARIOS = ("plain", "affinity")
ALGORITHMS = ("v1.5", "framework")
#: the framework's floor against v1.5 in the same run (issue 20)
FRAMEWORK_RATIO_TARGET = 0.9
ZONE = "failure-domain.beta.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CACHE_PODS = 2000
GROUPS = 10


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


def affinity_node(i: int) -> dict[str, Any]:
    """The plain node, in one of 10 zones under the label inter-pod terms name."""
    body = node(i)
    body["metadata"]["labels"][ZONE] = f"z{i % 10}"
    return body


def cache_pod(i: int, nodes: int) -> dict[str, Any]:
    """An already running, labelled pod in zones z0-z4 (bound at creation)."""
    target = (i * 10) % nodes // 10 * 10 + (i % 5)  # nodes whose index ends in 0-4
    spec: dict[str, Any] = {"nodeName": f"node-{target % nodes}", "containers": [
        {"name": "c", "image": "redis", "resources": {"requests": {"cpu": "10m"}}}]}
    if i % 4 == 0:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "batch"}}, "topologyKey": HOST}]}}
    return {"metadata": {"name": f"cache-{i}", "labels": {"tier": "cache", "app": f"cache{i % 3}"}},
            "spec": spec}


def affinity_pod(i: int, rng: random.Random) -> dict[str, Any]:
    """The plain pod in group web-<i % 10>: one per node per group, near the cache."""
    body = pod(i, rng)
    group = {"group": f"web-{i % GROUPS}"}
    body["metadata"]["labels"].update(group)
    body["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": group}, "topologyKey": HOST}]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"tier": "cache"}}, "topologyKey": ZONE}}]}}
    return body


def pod(i: int, rng: random.Random) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nginx", "resources": {"requests": {
        "cpu": rng.choice(["100m", "250m"]), "memory": "128Mi"}}}
    if i % 10 == 0:
        container["ports"] = [{"containerPort": 80, "hostPort": 10000 + i}]
    spec: dict[str, Any] = {"containers": [container]}
    if i % 3 == 0:
        spec["nodeSelector"] = {"disk": "ssd"}
    return {"metadata": {"name": f"p{i}", "labels": {"app": f"a{i % 7}"}}, "spec": spec}


def framework_configuration() -> tuple[SchedulerConfiguration, list[str]]:
    """The default profile — the config package's defaults when it has them, else the
    runtime's own plugins — keeping only the plugins the registry has, at the extension
    points they implement in this build; returns what was dropped (`Name` or `Name@point`)."""
    try:
        from minikube_py.scheduler.framework.config.load import (  # type: ignore[import-not-found]
            default_configuration,
        )
        config = default_configuration()
    except ImportError:
        config = SchedulerConfiguration(profiles=[Profile(plugins={
            "queueSort": [PluginRef("PrioritySort")], "preEnqueue": [PluginRef("SchedulingGates")],
            "bind": [PluginRef("DefaultBinder")]})])
    registry = build_registry()
    dropped: set[str] = set()
    for profile in config.profiles:
        built: dict[str, Any] = {}
        for point, refs in profile.plugins.items():
            kept = []
            for ref in refs:
                if ref.name not in registry:
                    dropped.add(ref.name)
                    continue
                if ref.name not in built:  # does this build's plugin implement the point?
                    built[ref.name] = registry[ref.name](profile.args(ref.name), FrameworkHandle())
                if not isinstance(built[ref.name], EXTENSION_POINTS[point][0]):
                    dropped.add(f"{ref.name}@{point}")
                    continue
                kept.append(ref)
            profile.plugins[point] = kept
    return config, sorted(dropped)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def one_run(nodes: int, pods: int, tmp: Path, transport: str,
                  scenario: str = "plain", algorithm: str = "v1.5",
                  percentage: int | None = None) -> dict[str, Any]:
    """`percentage`: the framework's percentageOfNodesToScore (None: the configuration's,
    upstream's adaptive default; 100 scores every feasible node, as the v1.5 run does)."""
    affinity = scenario == "affinity"
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
    dropped: list[str] = []
    if algorithm == "framework":
        config, dropped = framework_configuration()
        if percentage is not None:
            config.percentage_of_nodes_to_score = percentage
        scheduler = Scheduler(sched_client, config)
        assert scheduler.framework is not None
        timed_owner: Any = scheduler.framework.pod_scheduler
        timed_name = "schedule_pod"
    else:
        scheduler = Scheduler(sched_client, from_provider("DefaultProvider"))
        timed_owner, timed_name = scheduler.algorithm, "schedule"
    decisions: list[float] = []
    decide = getattr(timed_owner, timed_name)

    async def timed(*args: Any) -> Any:  # one decision's algorithm time, per pod
        begun = time.perf_counter()
        try:
            return await decide(*args)
        finally:
            decisions.append(time.perf_counter() - begun)

    setattr(timed_owner, timed_name, timed)
    bound = Informer(client, PODS, field_selector="spec.nodeName!=")
    done = asyncio.Event()
    seen: set[str] = set()

    def on_bound(p: dict) -> None:
        if p["metadata"]["name"].startswith("cache-"):
            return
        seen.add(p["metadata"]["name"])
        if len(seen) >= pods:
            done.set()

    bound.add_event_handler(on_add=on_bound)
    sem = asyncio.Semaphore(32)

    async def create(kind, body: dict, ns: str | None = None) -> None:
        async with sem:
            await client.create(kind, body, ns)

    try:
        make_node = affinity_node if affinity else node
        await asyncio.gather(*(create(NODES, make_node(i)) for i in range(nodes)))
        if affinity:
            await asyncio.gather(*(create(PODS, cache_pod(i, nodes), "default")
                                   for i in range(CACHE_PODS)))
        for app in range(7):
            await client.create(SERVICES, {"metadata": {"name": f"a{app}"}, "spec": {
                "selector": {"app": f"a{app}"}, "ports": [{"port": 80}]}}, "default")
        task = asyncio.create_task(scheduler.run())
        bound.start()
        await bound.wait_for_sync()
        while not scheduler.running or not scheduler.nodes.has_synced or \
                len(scheduler.cache.pod_nodes) < (CACHE_PODS if affinity else 0):
            await asyncio.sleep(0.05)
        seen.clear()  # count only the measured pods (the cache pods were bound at creation)
        decisions.clear()
        algo_before = scheduler.metrics.algorithm._sum.get()
        bind_before = scheduler.metrics.binding._sum.get()
        rng = random.Random(1)
        cpu = time.process_time()
        started = time.perf_counter()
        make_pod = affinity_pod if affinity else pod
        await asyncio.gather(*(create(PODS, make_pod(i, rng), "default") for i in range(pods)))
        created = time.perf_counter()
        await asyncio.wait_for(done.wait(), 600)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        algorithm_s = scheduler.metrics.algorithm._sum.get() - algo_before
        binding_s = scheduler.metrics.binding._sum.get() - bind_before
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return {"nodes": nodes, "pods": pods, "transport": transport, "scenario": scenario,
                "algorithm": algorithm, "dropped_plugins": dropped,
                "pods_per_s": pods / elapsed, "seconds": elapsed, "create_s": created - started,
                "algorithm_ms_per_pod": algorithm_s / pods * 1000,
                "api_ms_per_pod": (cpu - algorithm_s) / pods * 1000,
                "binding_latency_ms": binding_s / pods * 1000,
                "decision_p50_ms": _percentile(decisions, 0.50) * 1000,
                "decision_p99_ms": _percentile(decisions, 0.99) * 1000,
                "algorithm_share": algorithm_s / cpu if cpu else 0.0,
                "process_cpu_busy": cpu / elapsed / 2}  # of both cores
    finally:
        await bound.stop()
        await client.close()
        await sched_client.close()
        await runner.cleanup()
        await store.close()


def _in_fresh_process(transport: str, nodes: int, pods: int, scenario: str,
                      algorithm: str, percentage: int | None = None) -> dict[str, Any]:
    extra = ["--percentage", str(percentage)] if percentage is not None else []
    return common.run_fresh(["bench.scheduler", "--one",
                             f"{transport}/{nodes}/{scenario}/{algorithm}", "--pods", str(pods),
                             *extra])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 nodes only, 1 run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", default="100,1000,5000")
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--transport", default="in-process,http",
                        help="comma list of in-process and/or http")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help="comma list of plain and/or affinity")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help="comma list of v1.5 and/or framework")
    parser.add_argument("--percentage", type=int, default=None,
                        help="the framework's percentageOfNodesToScore (default: adaptive)")
    parser.add_argument("--one", metavar="TRANSPORT/NODES/SCENARIO/ALGORITHM",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        transport, nodes, scenario, algorithm = (args.one.split("/") + ["plain", "v1.5"])[:4]
        return common.measure_here(
            lambda tmp: one_run(int(nodes), args.pods, tmp, transport, scenario, algorithm,
                                args.percentage))
    sizes = [100] if args.quick else [int(n) for n in args.nodes.split(",")]
    transports = args.transport.split(",")
    runs = 1 if args.quick else args.runs
    scenarios = args.scenarios.split(",")
    algorithms = args.algorithms.split(",")
    results: dict[str, list[dict[str, Any]]] = {
        f"{t}/{n}/{s}/{a}": [] for t in transports for n in sizes for s in scenarios
        for a in algorithms}
    dropped: set[str] = set()
    for run in range(runs):
        for transport in transports:
            for n in sizes:
                for scenario in scenarios:
                    for algorithm in algorithms:  # interleaved: same machine state for both
                        result = _in_fresh_process(transport, n, args.pods, scenario, algorithm,
                                                   args.percentage)
                        dropped |= set(result.get("dropped_plugins") or ())
                        print(f"  run {run + 1}: {transport}, {n} nodes, {scenario}, "
                              f"{algorithm}: {result['pods_per_s']:.0f} pods/s, algorithm "
                              f"{result['algorithm_ms_per_pod']:.2f} ms/pod (p50 "
                              f"{result['decision_p50_ms']:.2f}, p99 "
                              f"{result['decision_p99_ms']:.2f}), API "
                              f"{result['api_ms_per_pod']:.2f} ms/pod", flush=True)
                        results[f"{transport}/{n}/{scenario}/{algorithm}"].append(result)
    rows = []
    medians = {key: common.aggregate(runs_of)["pods_per_s"] for key, runs_of in results.items()}
    for key, runs_of in results.items():
        transport, n, scenario, algorithm = key.split("/")
        agg = common.aggregate(runs_of)
        target = TARGETS.get(int(n))
        rate = agg["pods_per_s"]
        verdict = ""
        if target and transport == "in-process" and scenario == "plain":  # the targets
            verdict = "met" if rate >= target else "MISSED"
        baseline = medians.get(f"{transport}/{n}/{scenario}/v1.5")
        ratio = ""
        if algorithm == "framework" and baseline:
            ratio = f"{rate / baseline:.2f}x"
            verdict += (" " if verdict else "") + (
                "ratio met" if rate >= FRAMEWORK_RATIO_TARGET * baseline else "ratio MISSED")
        rows.append([transport, n, scenario, algorithm, common.fmt(rate), ratio,
                     common.fmt(agg["algorithm_ms_per_pod"]), common.fmt(agg["decision_p50_ms"]),
                     common.fmt(agg["decision_p99_ms"]), common.fmt(agg["api_ms_per_pod"]),
                     common.fmt(agg["binding_latency_ms"]),
                     f">= {target:.0f}" if target and scenario == "plain" else "", verdict])
    print(common.render_table(["transport", "nodes", "scenario", "algorithm", "pods/s (median)",
                               "vs v1.5",
                               "algorithm ms/pod", "p50 ms", "p99 ms", "API+rest CPU ms/pod",
                               "binding latency ms", "target", "verdict"], rows))
    print(f"note: API server and scheduler share one process; {args.pods} pods per run; "
          f"v1.5 = DefaultProvider; framework = the default profile "
          f"(percentageOfNodesToScore {args.percentage or 'adaptive'}); loop {loop_name}")
    if dropped:
        print(f"note: the framework ran without these default plugins (not in this build's "
              f"registry): {', '.join(sorted(dropped))}")
    path = common.write_json(Path(__file__).parent / "results" / "scheduler.json",
                             {"machine": common.machine_facts(loop_name), "runs": results})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
