"""Workload controllers end to end in an all-in-one cluster: scenarios by name.

The cluster is built the way `minikube-py start` builds it (as bench/pod_startup.py does):
embedded store with `--fsync never`, the API server, the scheduler, the controller manager
(as their service accounts, `--authorization-mode Node,RBAC` by default) and simulated nodes
with `--image-pull-duration 0 --container-start-duration 0`. The load generator is a client on
the in-process transport with an informer — a watch, as kubectl or a controller would use.

Scenarios (`--only NAME`, repeatable; default all):

- `jobs`: 1000 single-pod Jobs (busybox `echo done`, restartPolicy Never) created at once on
  100 nodes; measured from the first create until the watch has seen every Job `Complete`.
  Target <= 10 s; prints jobs/s.

Every scenario also prints each controller's reconciles in the window: how many, and the CPU
of one (controllers/sync_cpu.py: its own steps plus the in-process API server's work for its
requests) beside its wall time.

Each scenario runs in a fresh interpreter per run; the median of the runs is reported and
written with every run to bench/results/workloads.json. A scenario is a `Scenario` in
SCENARIOS: its flags' defaults, its measurement (an async function of the running cluster)
and its target; adding one is adding an entry.

    python -m bench.workloads [--only jobs] [--runs 3] [--nodes 100] [--jobs 1000]
                              [--authorization-mode MODES] [--concurrent-job-syncs N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import common
from bench.pod_startup import start_flags

Measure = Callable[[Any, argparse.Namespace], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Scenario:
    description: str
    measure: Measure
    #: (result key, target, "<=" or ">=") the verdict is about
    target: tuple[str, float, str]
    #: how one run's result reads in a line
    summary: Callable[[dict[str, Any]], str]


def job(i: int) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"bench-{i}", "labels": {"bench": "jobs"}},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": "busybox", "command": ["echo", "done"],
                                "resources": {"requests": {"cpu": "10m",
                                                           "memory": "16Mi"}}}]}}}}


async def measure_jobs(cluster: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Create `args.jobs` Jobs at once (concurrent creates); seconds until all Complete."""
    from minikube_py.api.batch import JOB_COMPLETE, job_condition
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.cache import Informer
    from minikube_py.client.resources import JOBS

    count = args.jobs
    client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
    informer = Informer(client, JOBS, namespace="default", label_selector="bench=jobs")
    complete: dict[str, float] = {}
    done = asyncio.Event()

    def seen(obj: dict) -> None:
        name = obj["metadata"]["name"]
        if name not in complete and job_condition(obj, JOB_COMPLETE):
            complete[name] = time.perf_counter()
            if len(complete) >= count:
                done.set()

    try:
        informer.add_event_handler(on_add=seen, on_update=lambda _old, new: seen(new))
        informer.start()
        await informer.wait_for_sync()
        limit = asyncio.Semaphore(64)  # "at once": as fast as the client can send them

        async def create(i: int) -> None:
            async with limit:
                await client.create(JOBS, job(i), "default")

        syncs = common.controller_syncs()
        cpu = time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(create(i) for i in range(count)))
        created = time.perf_counter() - began
        await asyncio.wait_for(done.wait(), 300)
        elapsed = time.perf_counter() - began
        cpu = time.process_time() - cpu
        to_complete = [complete[n] - began for n in complete]
        return {"nodes": args.nodes, "jobs": count, "seconds": elapsed,
                "jobs_per_s": count / elapsed, "create_seconds": created,
                **common.latency_summary(to_complete, "complete_"),
                "process_cpu_share": cpu / elapsed,
                **common.per_sync(syncs, common.controller_syncs())}
    finally:
        await informer.stop()
        await client.close()


SCENARIOS: dict[str, Scenario] = {
    "jobs": Scenario(
        "1000 single-pod Jobs created at once all Complete on 100 nodes",
        measure_jobs, ("seconds", 10.0, "<="),
        lambda r: f"{r['jobs']} Jobs Complete in {r['seconds']:.2f} s "
                  f"({r['jobs_per_s']:.0f} jobs/s; creates took {r['create_seconds']:.2f} s)"),
}


async def one_run(tmp: Path, name: str, args: argparse.Namespace) -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions

    flags = start_flags(tmp / "data", args.nodes, args.authorization_mode)
    if args.concurrent_job_syncs:
        flags += ["--concurrent-job-syncs", str(args.concurrent_job_syncs)]
    options = StartOptions.from_args(build_parser().parse_args(flags))
    async with running_cluster(options) as cluster:
        return await SCENARIOS[name].measure(cluster, args)


def _in_fresh_process(name: str, args: argparse.Namespace) -> dict[str, Any]:
    return common.run_fresh(["bench.workloads", "--one", name, "--nodes", str(args.nodes),
                             "--jobs", str(args.jobs),
                             "--concurrent-job-syncs", str(args.concurrent_job_syncs),
                             "--authorization-mode", args.authorization_mode])


def _verdict(scenario: Scenario, result: dict[str, Any]) -> str:
    key, target, op = scenario.target
    value = result[key]
    ok = value <= target if op == "<=" else value >= target
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS),
                        help="run only this scenario (repeatable)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1000, help="Jobs in the `jobs` scenario")
    parser.add_argument("--authorization-mode", default="Node,RBAC")
    parser.add_argument("--concurrent-job-syncs", type=int, default=0,
                        help="the job controller's workers (0: start's default, upstream's 5)")
    parser.add_argument("--one", metavar="SCENARIO",
                        help="(internal) measure one run of SCENARIO here, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, args.one, args))
    results: dict[str, Any] = {}
    rows = []
    for name in args.only or list(SCENARIOS):
        scenario = SCENARIOS[name]
        print(f"{name}: {scenario.description}", flush=True)
        runs = []
        for i in range(args.runs):
            result = _in_fresh_process(name, args)
            runs.append(result)
            print(f"  run {i + 1}: {scenario.summary(result)}", flush=True)
        agg = common.aggregate(runs)
        key, target, op = scenario.target
        rows.append([name, scenario.summary(agg), f"{key} {op} {target:g}",
                     _verdict(scenario, agg)])
        results[name] = {"description": scenario.description, "median": agg, "runs": runs}
    print(common.render_table(["scenario", "median of runs", "target", "verdict"], rows))
    for name, result in results.items():
        print(f"{name}: each controller's reconciles (medians of runs)")
        print(common.render_table(common.PER_SYNC_HEADER,
                                  common.per_sync_rows(result["median"])))
    syncs = args.concurrent_job_syncs or "default (5)"
    print(f"note: {args.nodes} simulated nodes; --authorization-mode {args.authorization_mode}; "
          f"--concurrent-job-syncs {syncs}; "
          "all-in-one process built like `minikube-py start --fsync never "
          "--image-pull-duration 0 --container-start-duration 0`; each run in a fresh "
          f"interpreter; loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "workloads.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes, "jobs": args.jobs,
                                           "concurrent_job_syncs": args.concurrent_job_syncs
                                           or 5,
                                           "authorization_mode": args.authorization_mode,
                                           "fsync": "never", "image_pull_duration": 0,
                                           "container_start_duration": 0},
                              "scenarios": results})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
