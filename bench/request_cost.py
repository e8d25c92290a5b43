"""Per-request CPU of the API server's common requests, in a started all-in-one cluster.

Why: the API server's CPU per pod create is what bounds every workload benchmark (a Job's pod,
a ReplicaSet's pods, the kubelets' status writes all go through the same handler pipeline:
filters, admission, validation, managedFields, store). This benchmark measures that cost
directly, without sockets: a client on the in-process transport (the transport the
controllers and kubelets of `minikube-py start` use) issues N requests of one kind, one after
the other, and the process CPU time (`time.process_time`) they took is divided by N. Process
CPU, not wall time: it counts everything a request causes in this process (the watch fan-out
to the informers, the controllers that react), as a `minikube-py start` pays it.

Each measure gives two figures, in microseconds of CPU per request: the mean over all N
requests, and `best`, the cheapest chunk of CHUNK consecutive requests — on a shared machine
the mean moves by +-15% with the neighbours' load, the best chunk much less.

Requests measured, in this order (each is one line of the table):
  event-create    POST a core/v1 Event (the kubelet's and controllers' most frequent write)
  cm-get          GET configmaps/kube-root-ca.crt
  pod-create      POST a pod, as the Job controller would (no node: schedulerName "none")
  pod-get         GET of each pod just created
  pod-status-put  PUT pods/status: phase Running, a Ready condition, a containerStatus
  lease-create    POST a node Lease in kube-node-lease
  lease-put       PUT of each Lease with a new renewTime (the kubelets' heartbeat)

A/B in one run: `--baseline DIR` measures another checkout (e.g. /work/main) in alternating
fresh interpreters beside this one, so the machine's noise hits both sides alike; the table
gives both figures and their ratio. Each figure is the median of --runs runs.

    python bench/request_cost.py                          # this checkout, 3 runs
    python bench/request_cost.py --baseline /work/main    # A/B against another checkout
    python bench/request_cost.py --only pod-create --profile pod-create   # cProfile one request

uvloop is used when installed (`--loop`), as `minikube-py start` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
#: requests per chunk: `<measure>.best` is the cheapest chunk's CPU per request, the figure
#: least disturbed by other processes on a shared machine (caches, frequency)
CHUNK = 200
MEASURES = ("event-create", "cm-get", "pod-create", "pod-get", "pod-status-put",
            "lease-create", "lease-put")


# ------------------------------------------------------------------------------ the objects


def event(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"pod-{i}.18{i:014x}", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": f"pod-{i}",
                               "uid": "0b6e7d5c-1c1c-4a4a-9f9f-0123456789ab", "apiVersion": "v1",
                               "resourceVersion": "123", "fieldPath": "spec.containers{c}"},
            "reason": "Pulled", "message": 'Container image "busybox" already present on machine',
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2026-11-26T12:00:00Z", "lastTimestamp": "2026-11-26T12:00:00Z",
            "count": 1, "type": "Normal", "eventTime": None, "reportingComponent": "kubelet",
            "reportingInstance": "node-1"}


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": "none", "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox",
                                     "command": ["echo", "done"]}]}}


def lease(i: int) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": f"node-{i}"},
            "spec": {"holderIdentity": f"node-{i}", "leaseDurationSeconds": 40,
                     "renewTime": "2026-11-26T12:00:00.000000Z"}}


def running(p: dict[str, Any]) -> dict[str, Any]:
    status = p.setdefault("status", {})
    status["phase"] = "Running"
    status["conditions"] = [{"type": "Ready", "status": "True", "lastProbeTime": None,
                             "lastTransitionTime": "2026-11-26T12:00:00Z"}]
    status["containerStatuses"] = [{
        "name": "c", "ready": True, "restartCount": 0, "image": "busybox", "imageID": "",
        "started": True, "state": {"running": {"startedAt": "2026-11-26T12:00:00Z"}},
        "lastState": {}}]
    return p


# ------------------------------------------------------------------------------ one run


async def measure(n: int, only: set[str], profile: str | None) -> dict[str, float]:
    """Start a cluster in a temporary directory; CPU microseconds per request of each measure."""
    from bench.pod_startup import start_flags
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import CONFIGMAPS, EVENTS, LEASES, PODS

    out: dict[str, float] = {}
    needed = set(only).union(*(NEEDS.get(label, ()) for label in only))
    with tempfile.TemporaryDirectory() as tmp:
        flags = start_flags(Path(tmp) / "data", 0, "Node,RBAC")
        options = StartOptions.from_args(build_parser().parse_args(flags))
        async with running_cluster(options) as cluster:
            client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
            prof = None
            if profile:
                import cProfile

                prof = cProfile.Profile(time.process_time)

            async def timeit(label: str, fn: Callable[[int], Awaitable[Any]]) -> None:
                if label not in needed:
                    return
                enabled = prof is not None and profile == label
                if enabled:
                    prof.enable()
                chunks = []
                start = time.process_time()
                for first in range(0, n, CHUNK):
                    t = time.process_time()
                    for i in range(first, min(n, first + CHUNK)):
                        await fn(i)
                    chunks.append((time.process_time() - t) / (min(n, first + CHUNK) - first))
                d = time.process_time() - start
                if enabled:
                    prof.disable()
                if label in only:
                    out[label] = 1e6 * d / n
                    out[f"{label}.best"] = 1e6 * min(chunks)

            # warm-up: first requests of a kind build caches (schemas, compiled validators)
            for i in range(100):
                await client.create(PODS, pod(f"warm-{i}"), "default")
                await client.create(EVENTS, event(10**6 + i), "default")
            await timeit("event-create", lambda i: client.create(EVENTS, event(i), "default"))
            await timeit("cm-get", lambda i: client.get(CONFIGMAPS, "kube-root-ca.crt", "default"))
            await timeit("pod-create", lambda i: client.create(PODS, pod(f"p{i}"), "default"))
            pods: dict[int, dict[str, Any]] = {}

            async def get(i: int) -> None:
                pods[i] = await client.get(PODS, f"p{i}", "default")

            await timeit("pod-get", get)
            await timeit("pod-status-put",
                         lambda i: client.update_status(PODS, running(pods[i])))
            leases: dict[int, dict[str, Any]] = {}

            async def lcreate(i: int) -> None:
                leases[i] = await client.create(LEASES, lease(i), "kube-node-lease")

            async def lput(i: int) -> None:
                obj = leases[i]
                obj["spec"]["renewTime"] = f"2026-11-26T12:00:{i % 60:02d}.{i:06d}Z"
                leases[i] = await client.update(LEASES, obj)

            await timeit("lease-create", lcreate)
            await timeit("lease-put", lput)
            await client.close()
            if prof is not None:
                import pstats

                stats = pstats.Stats(prof, stream=sys.stderr)
                stats.sort_stats("tottime").print_stats(40)
                stats.sort_stats("cumtime").print_stats(60)
    return out


#: the measures whose objects another measure works on
NEEDS = {"pod-get": ("pod-create",), "pod-status-put": ("pod-create", "pod-get"),
         "lease-put": ("lease-create",)}


def one(args: argparse.Namespace) -> int:
    """The child side: import minikube_py from --source, measure, print one JSON line."""
    sys.path.insert(0, str(args.source))
    from bench import common
    from minikube_py.cli import runtime

    common.quiet_logs()
    loop = common.choose_loop(args.loop)
    runtime.tune_gc()
    result = asyncio.run(measure(args.n, set(args.only), args.profile))
    result["loop"] = loop  # type: ignore[assignment]
    print(json.dumps(result))
    return 0


# ------------------------------------------------------------------------------ the driver


def child(source: Path, args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--one", "--source", str(source),
            "-n", str(args.n), "--loop", args.loop, "--only", ",".join(args.only)]
    if args.profile:
        argv += ["--profile", args.profile]
    out = subprocess.run(argv, capture_output=True, text=True, check=False,
                         timeout=args.timeout, cwd=str(source))
    if args.profile:
        sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise RuntimeError(f"run on {source} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("-n", type=int, default=2000, help="requests per measure")
    p.add_argument("--loop", default="auto", choices=("auto", "uvloop", "asyncio"))
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout to measure beside this one (A/B in one run)")
    p.add_argument("--only", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                   default=list(MEASURES), help="comma-separated measures")
    p.add_argument("--profile", default=None, help="cProfile this measure (to stderr)")
    p.add_argument("--json", default=str(HERE / "bench" / "results" / "request_cost.json"))
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--source", type=Path, default=HERE, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    unknown = set(args.only) - set(MEASURES)
    if unknown:
        p.error(f"unknown measures {sorted(unknown)}; known: {', '.join(MEASURES)}")
    if args.one:
        return one(args)

    sys.path.insert(0, str(HERE))
    from bench import common

    sides = {"this": HERE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    loop = "?"
    for run in range(args.runs):
        for side, source in (reversed(sides.items()) if run % 2 else sides.items()):
            result = child(source, args)
            loop = result.pop("loop", loop)
            runs[side].append(result)
            print(f"run {run + 1} {side:8} " + "  ".join(
                f"{k}={v:.0f}us" for k, v in result.items()), flush=True)
    medians = {side: common.aggregate(rs) for side, rs in runs.items()}
    headers = ["request", "this (us CPU)"]
    if args.baseline:
        headers += [f"baseline {args.baseline} (us CPU)", "this / baseline"]
    rows = []
    for label in [x for m in args.only for x in (m, f"{m}.best")]:
        row = [label, common.fmt(medians["this"].get(label))]
        if args.baseline:
            base = medians["baseline"].get(label)
            mine = medians["this"].get(label)
            row += [common.fmt(base), common.fmt(mine / base if mine and base else None)]
        rows.append(row)
    print(f"\nper-request CPU, median of {args.runs} runs, n={args.n}, loop {loop}")
    print(common.render_table(headers, rows))
    path = common.write_json(args.json, {
        "machine": common.machine_facts(loop), "n": args.n, "runs": runs, "median": medians,
        "sources": {side: str(source) for side, source in sides.items()}})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
