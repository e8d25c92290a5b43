"""Informer event-delivery cost: µs per watch event from the reflector's store interface to
every handler, with the indexer kept up to date.

The whole control plane runs on informers (every controller, the scheduler, every kubelet),
so this is the per-event tax each component pays. The workload: 2,500 pods each added,
updated twice and deleted (10,000 events) fed to one pod informer with three handlers
(`on_add`/`on_update`/`on_delete` functions, as components register them) and a
`spec.nodeName` index. Events are fed to what the Reflector feeds (`informer.reflector.store`:
the DeltaFIFO since issue 20, the informer itself before) in batches, yielding to the event
loop after each batch as a watch stream does between socket reads: batch 1 is one event per
read (what a consumer woken per batch would pay most for), batch 100 a burst.

No API server is involved: the point is the informer's own cost, which a server-backed run
would drown in decoding and transport. Each run is a fresh interpreter.

    python -m bench.informer [--runs 5] [--pods 2500] [--batches 1,100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from bench import common

HANDLERS = 3


def _pod(i: int, rv: int, node: str = "") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "resourceVersion": str(rv),
                         "uid": f"uid-{i}", "labels": {"app": "bench", "i": str(i % 10)}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]},
            "status": {"phase": "Pending"}}


def events(pods: int) -> list[tuple[str, dict[str, Any]]]:
    """add, update (bound), update (running), delete per pod; pods interleaved in fours."""
    out: list[tuple[str, dict[str, Any]]] = []
    rv = 1
    for base in range(0, pods, 4):
        group = range(base, min(base + 4, pods))
        for step, kind in enumerate(("add", "update", "update", "delete")):
            for i in group:
                rv += 1
                out.append((kind, _pod(i, rv, node="" if step == 0 else f"n{i % 50}")))
    return out


async def one_run(pods: int, batch: int) -> dict[str, Any]:
    from minikube_py.client import Client
    from minikube_py.client.cache import Informer
    from minikube_py.client.resources import PODS

    informer = Informer(Client.__new__(Client), PODS, indexers={
        "node": lambda p: [p["spec"]["nodeName"]] if p["spec"].get("nodeName") else []})
    counts = [0, 0, 0]

    def on_add(obj: dict[str, Any]) -> None:
        counts[0] += 1

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        counts[1] += 1

    def on_delete(obj: dict[str, Any]) -> None:
        counts[2] += 1

    for _ in range(HANDLERS):
        informer.add_event_handler(on_add, on_update, on_delete)
    feed = events(pods)
    expected = len(feed) * HANDLERS
    sink = informer.reflector.store
    loop_task = (asyncio.create_task(informer.process_loop())
                 if hasattr(informer, "process_loop") else None)
    await asyncio.sleep(0)
    start = time.perf_counter()
    cpu0 = time.process_time()
    for n, (kind, obj) in enumerate(feed, 1):
        getattr(sink, kind)(obj)
        if n % batch == 0:
            await asyncio.sleep(0)
    while sum(counts) < expected:
        await asyncio.sleep(0)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    if loop_task is not None:
        loop_task.cancel()
    assert len(informer.indexer) == 0 and sum(counts) == expected
    return {"events": len(feed), "handlers": HANDLERS, "batch": batch,
            "us_per_event": elapsed / len(feed) * 1e6, "cpu_us_per_event": cpu / len(feed) * 1e6,
            "machinery": "DeltaFIFO" if loop_task is not None else "direct"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pods", type=int, default=2500)
    parser.add_argument("--batches", default="1,100")
    parser.add_argument("--label", default="", help="a name for this result file")
    parser.add_argument("--one", metavar="BATCH", type=int,
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(args.pods, args.one))
    rows, results = [], {}
    for batch in (int(b) for b in args.batches.split(",")):
        runs = [common.run_fresh(["bench.informer", "--one", str(batch), "--pods", str(args.pods)])
                for _ in range(args.runs)]
        agg = common.aggregate(runs)
        results[f"batch_{batch}"] = {"median": agg, "runs": runs}
        rows.append([str(batch), agg["machinery"], common.fmt(agg["us_per_event"]),
                     common.fmt(agg["cpu_us_per_event"]),
                     " ".join(common.fmt(r["us_per_event"]) for r in runs)])
    print(common.render_table(["events per loop turn", "machinery", "µs/event (median)",
                               "CPU µs/event", "runs µs/event"], rows))
    print(f"note: {args.pods * 4} pod events, {HANDLERS} handlers, one index; loop {loop_name}; "
          f"each run a fresh interpreter")
    name = f"informer{'-' + args.label if args.label else ''}.json"
    path = common.write_json(Path(__file__).parent / "results" / name,
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"pods": args.pods, "handlers": HANDLERS},
                              "results": results})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
