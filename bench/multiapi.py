"""Several API server processes (issue 23): `minikube-py apiserver --apiservers N` against the
single process, in one run, on the same machine and load.

The measures are bench/apiserver.py's own (the same server command, data dirs, wrk scripts and
figures): GET of one pod, LIST of 1000 pods (JSON), CREATE of distinct pods (fsync always), 32
connections. A third mode in the same run is the ceiling: two independent single-process
servers side by side, each with its own wrk and 16 connections (`measure_pair`). Unlike that benchmark nothing is pinned: the point is to let the server use every
core, so the load client (wrk, one thread) shares the cores with the server — on a 2-core
machine the ratios below are what a client on the same machine sees, not a ceiling. The modes
alternate run by run (1, N, pair, 1, N, pair, ...) so drifting machine load hits both alike; server CPU
counts the whole process tree.

    /work/main/.venv-test/bin/python bench/multiapi.py [--apiservers 2] [--runs 3] [--quick]

Targets (issue 23, on 2 cores): CREATE >= 1.8x, GET >= 1.6x, LIST >= 1.0x the single process.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import common
from bench.apiserver import (
    CONNECTIONS,
    FULL,
    QUICK,
    Bench,
    Procs,
    create_pods,
    ensure_namespace,
    list_pods,
    measure_create_durable,
    measure_get_pod,
    measure_list_1000,
    pods_path,
    session,
)

#: the servers' event loop (cli/runtime.py takes uvloop when this interpreter has it)
LOOP = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
MEASURES = {"get_pod": (measure_get_pod, "req_per_s", 1.6),
            "list_1000": (measure_list_1000, "req_per_s", 1.0),
            "create_durable": (measure_create_durable, "creates_per_s", 1.8)}


PAIR = "pair"  # the ceiling: two independent single-process servers side by side


async def measure_pair(b: Bench, name: str, run: int) -> dict[str, Any]:
    """The machine's own ceiling for "two processes": two unrelated single-process servers
    (each its own store), each loaded by its own wrk with half the connections, at once. What
    the fleet cannot beat on this machine whatever its design — the load client shares the
    cores, and two busy processes slow each other (shared caches, the host's scheduling)."""
    async with b.apiserver(f"{name}-a") as one, b.apiserver(f"{name}-b") as two, session() as s:
        urls = []
        for server in (one, two):
            if name == "get_pod":
                await ensure_namespace(s, server.url, "default")
                await create_pods(s, server.url, "default", ["bench-get"])
                urls.append((f"{server.url}{pods_path('default')}/bench-get", None))
            elif name == "list_1000":
                n, ns = b.sizes["list_pods"], "bench-list"
                await ensure_namespace(s, server.url, ns)
                await create_pods(s, server.url, ns, [f"list-{i:04d}" for i in range(n)])
                if len((await list_pods(s, server.url, ns))["items"]) != n:
                    raise RuntimeError(f"the list did not return {n} pods")
                urls.append((f"{server.url}{pods_path(ns)}", None))
            else:
                await ensure_namespace(s, server.url, "bench-create")
                urls.append((f"{server.url}{pods_path('bench-create')}", "bench-create"))
        loads = await asyncio.gather(*(
            b.load(server, url, create_ns=ns, prefix=f"c{run}", connections=CONNECTIONS // 2)
            for server, (url, ns) in zip((one, two), urls)))
    total = {"req_per_s": sum(x["req_per_s"] for x in loads),
             "server_cpu_busy": sum(x["server_cpu_busy"] for x in loads)}
    if name == "create_durable":
        total["creates_per_s"] = sum(x["created"] / x["duration_s"] for x in loads)
    return total


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = dict(QUICK if args.quick else FULL)
    procs = Procs(pinned=False)
    workdir = Path(tempfile.mkdtemp(prefix="bench-multiapi-"))
    modes: dict[int | str, tuple[str, ...]] = {
        1: (), args.apiservers: ("--apiservers", str(args.apiservers))}
    if not args.no_pair:
        modes[PAIR] = ()
    results: dict[str, dict[int | str, list[dict[str, Any]]]] = {}
    try:
        for run_index in range(args.runs):
            for name, (fn, _metric, _target) in MEASURES.items():
                for count, extra in modes.items():
                    b = Bench(procs, workdir, sizes, True, args.timeout, extra)
                    out = await (measure_pair(b, name, run_index) if count == PAIR
                                 else fn(b, run_index))
                    results.setdefault(name, {}).setdefault(count, []).append(out)
                    label = "2 single servers" if count == PAIR else f"apiservers={count}"
                    print(f"  run {run_index + 1} {name:<15} {label}: "
                          f"{out[MEASURES[name][1]]:,.0f}/s  server CPU busy "
                          f"{out.get('server_cpu_busy', float('nan')):.2f}", flush=True)
    finally:
        await procs.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--apiservers", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="2 s loads (bench/apiserver.py's QUICK)")
    p.add_argument("--no-pair", action="store_true",
                   help="skip the ceiling: two independent single-process servers side by side")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--json", default=str(REPO / "bench" / "results" / "multiapi.json"))
    args = p.parse_args()
    if shutil.which("wrk") is None:
        print("wrk not found (apt-get install wrk)", file=sys.stderr)
        return 1
    common.quiet_logs()
    load_start = common.loadavg()
    started = time.perf_counter()
    print(f"multi-apiserver benchmark: 1 vs {args.apiservers} API server processes, wrk -t1 -c32, "
          f"nproc={common.machine_facts(LOOP)['nproc']}, load average {load_start}")
    results = asyncio.run(run(args))
    rows, summary = [], {}
    n = args.apiservers
    for name, by_count in results.items():
        metric, target = MEASURES[name][1], MEASURES[name][2]
        one = common.median(r[metric] for r in by_count[1])
        many = common.median(r[metric] for r in by_count[n])
        cpu_one = common.median(r.get("server_cpu_busy", float("nan")) for r in by_count[1])
        cpu_many = common.median(r.get("server_cpu_busy", float("nan")) for r in by_count[n])
        ratio = many / one
        pair = common.median(r[metric] for r in by_count[PAIR]) if PAIR in by_count else None
        ceiling = pair / one if pair else None
        summary[name] = {"single": one, "multi": many, "ratio": ratio, "target": target,
                         "met": ratio >= target, "server_cpu_busy_single": cpu_one,
                         "server_cpu_busy_multi": cpu_many, "pair": pair,
                         "pair_ratio": ceiling}
        rows.append([name, f"{one:,.0f}", f"{many:,.0f}", f"{ratio:.2f}x", f">= {target}x",
                     "met" if ratio >= target else "MISSED", f"{cpu_one:.2f} / {cpu_many:.2f}",
                     f"{pair:,.0f} ({ceiling:.2f}x)" if pair else "-"])
    print()
    print(common.render_table(["measure", "1 process /s", f"{n} processes /s", "ratio", "target",
                               "", "server cores busy (1 / N)",
                               "2 single servers side by side /s (ceiling)"], rows))
    load_end = common.loadavg()
    print(f"medians of {args.runs} runs; load average {load_start} -> {load_end}; "
          f"total {time.perf_counter() - started:.0f} s")
    path = common.write_json(args.json, {
        "benchmark": "multiapi", "apiservers": n, "runs": args.runs, "quick": args.quick,
        "machine": common.machine_facts(LOOP), "load_start": load_start,
        "load_end": load_end, "summary": summary,
        "measures": {k: {str(c): v for c, v in by.items()} for k, by in results.items()}})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
