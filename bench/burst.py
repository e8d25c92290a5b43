"""Memory that comes back (issue 23, item 3): RSS before, during and after a create/delete
burst of pods, then over a quiet wait, in one all-in-one process.

The cluster is built as `bench/scale.py` builds it (`minikube-py start`'s own
`running_cluster`, every component in process, `--fsync never`). The run:

1. idle: the cluster is Ready and quiet; RSS is sampled (the pre-burst level);
2. burst: `--pods` bare pods are created in waves of `--wave` (default: all at once, up to 100
   a node — the kubelets' --max-pods is 110; 64 creates in flight), each wave waited
   for until Running, then deleted gracefully (the kubelet kills the containers and removes the
   pod, as upstream) and waited for until gone;
3. compaction: the store's history is compacted at its current revision (what the periodic
   compactor, kube-apiserver's --etcd-compaction-interval, does on its next tick);
4. the wait: RSS is sampled every `--sample-every` seconds for `--wait` seconds (10 minutes for
   the issue's figure, shorter for a quick run).

Events the burst wrote (Scheduled, Pulled, Created, Started, Killing... per pod) are live
objects until `--event-ttl` (1 h by default), not leaks: they are counted separately at every
sample, and `--event-ttl` is a parameter so a run can let them expire inside the wait.

`--census` adds, at idle, after compaction and at the end, a count of the live objects by type
(`gc.get_objects()`), and the difference end - idle: what the burst left behind.

`--code DIR` runs against another checkout's `minikube_py` (e.g. /work/main, the baseline) with
this harness, so a before/after pair is one command each with the same parameters.

    python -m bench.scale --burst [--nodes 50] [--pods 20000] [--wave 5000] [--wait 600]
                          [--sample-every 10] [--event-ttl 1h] [--census] [--code DIR]
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench import common

IN_FLIGHT = 64
#: the kubelet's --max-pods default: a wave larger than nodes x this never gets all Running
MAX_PODS_PER_NODE = 110


def rss_bytes() -> int:
    """VmRSS of this process, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def pymalloc_stats() -> dict[str, int]:
    """pymalloc's own figures (objects of 512 bytes or less), from sys._debugmallocstats,
    which writes to the C stderr: arenas (1 MiB each) held, bytes in live blocks. Arenas held
    well above live bytes is fragmentation no malloc_trim returns."""
    import os
    import tempfile

    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    wanted = {"# arenas allocated current": "arenas", "# bytes in allocated blocks": "live_bytes",
              "# bytes in available blocks": "free_bytes"}
    stats = {}
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name.strip() in wanted:
            stats[wanted[name.strip()]] = int(value.strip().replace(",", ""))
    return stats


def census(top: int = 30) -> dict[str, int]:
    """Live gc-tracked objects by type name (dicts, lists, our classes; not str/bytes)."""
    counts = collections.Counter(type(o).__name__ for o in gc.get_objects())
    return dict(counts.most_common(top))


def census_diff(before: dict[str, int], after: dict[str, int], top: int = 20) -> dict[str, int]:
    """Types whose count grew the most between two censuses."""
    grown = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    return dict(sorted(((k, v) for k, v in grown.items() if v), key=lambda kv: -abs(kv[1]))[:top])


async def _wait_until(check, limit: float, every: float = 0.5) -> float:
    began = time.perf_counter()
    while not await check():
        if time.perf_counter() - began > limit:
            raise TimeoutError(f"not reached within {limit:g}s")
        await asyncio.sleep(every)
    return time.perf_counter() - began


async def _count(client: Any, resource: Any, namespace: str | None = None,
                 field_selector: str = "") -> int:
    page = await client.list(resource, namespace, field_selector=field_selector)
    return len(page["items"])


async def burst_run(tmp: Path, *, nodes: int, pods: int, wave: int, wait: float,
                    sample_every: float, event_ttl: str, take_census: bool,
                    trace: bool = False) -> dict[str, Any]:
    from bench.scale import pod, start_flags
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import EVENTS, PODS

    try:  # `minikube-py start` runs with the process's memory trimmer (cli/runtime.py)
        from minikube_py.memtrim import MemoryTrimmer
        trimmer: Any = MemoryTrimmer()
    except ImportError:  # a checkout from before it (the baseline)
        trimmer = None
    flags = start_flags(tmp / "data", nodes, "lease") + ["--event-ttl", event_ttl]
    options = StartOptions.from_args(build_parser().parse_args(flags))
    result: dict[str, Any] = {"nodes": nodes, "pods": pods, "wave": wave, "wait_s": wait,
                              "event_ttl": event_ttl, "memtrim": trimmer is not None,
                              "samples": []}
    censuses: dict[str, dict[str, int]] = {}
    if trimmer is not None:
        trimmer.start()
    async with running_cluster(options) as cluster:
        store = cluster.store
        client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
        try:
            await asyncio.sleep(5)  # the start's writes (node status, events) settle
            gc.collect()
            result["rss_idle_mib"] = rss_bytes() / 2**20
            result["events_idle"] = await _count(client, EVENTS)
            result["pymalloc_idle"] = pymalloc_stats()
            if take_census:
                censuses["idle"] = census()
            if trace:  # from here on: what is still allocated at the end is what the burst left
                import tracemalloc

                tracemalloc.start(10)

            began = time.perf_counter()
            peak = 0
            sem = asyncio.Semaphore(IN_FLIGHT)
            for first in range(0, pods, wave):
                names = [f"scale-{i}" for i in range(first, min(first + wave, pods))]

                async def create(i: int) -> None:
                    async with sem:
                        await client.create(PODS, pod(i), "default")

                async def delete(name: str) -> None:
                    async with sem:
                        await client.delete(PODS, name, "default")

                await asyncio.gather(*(create(i) for i in range(first, first + len(names))))

                async def all_running(want: int = len(names)) -> bool:
                    return await _count(client, PODS, "default",
                                        "status.phase=Running") >= want

                await _wait_until(all_running, 1800)
                peak = max(peak, rss_bytes())
                await asyncio.gather(*(delete(n) for n in names))

                async def all_gone() -> bool:
                    return await _count(client, PODS, "default") == 0

                await _wait_until(all_gone, 1800)
            result["burst_s"] = time.perf_counter() - began
            result["rss_burst_peak_mib"] = peak / 2**20
            result["rss_after_delete_mib"] = rss_bytes() / 2**20

            revision = await store.current_revision()
            await store.compact(revision)
            result["compacted_at"] = revision
            await asyncio.sleep(0)
            result["rss_after_compact_mib"] = rss_bytes() / 2**20
            if take_census:
                gc.collect()
                censuses["compacted"] = census()

            start = time.perf_counter()
            while True:
                elapsed = time.perf_counter() - start
                result["samples"].append({"t_s": round(elapsed, 1),
                                          "rss_mib": round(rss_bytes() / 2**20, 1),
                                          "events": await _count(client, EVENTS)})
                if elapsed >= wait:
                    break
                await asyncio.sleep(min(sample_every, wait - elapsed))
            result["rss_end_mib"] = result["samples"][-1]["rss_mib"]
            if trace:
                from bench.scale import memory_by_site

                gc.collect()
                result["traced_since_idle_mib"] = tracemalloc.get_traced_memory()[0] / 2**20
                result["memory_by_site"] = memory_by_site(tracemalloc.take_snapshot(), top=30)
                tracemalloc.stop()
            result["ratio_end_to_idle"] = result["rss_end_mib"] / result["rss_idle_mib"]
            result["pymalloc_end"] = pymalloc_stats()
            if take_census:
                gc.collect()
                censuses["end"] = census()
                result["census"] = censuses
                result["census_grown_end_minus_idle"] = census_diff(censuses["idle"],
                                                                     censuses["end"])
            return result
        finally:
            await client.close()
            if trimmer is not None:
                await trimmer.stop()


def wave_of(args: Any) -> int:
    """--wave, by default every pod at once up to 100 a node (the nodes' --max-pods is 110)."""
    return args.wave or min(args.pods or 20_000, (args.nodes or 50) * 100)


def run_one(args: Any) -> int:
    """The `--one --burst` side: this process measures one burst and prints it as JSON."""
    if args.code:
        sys.path.insert(0, str(Path(args.code).resolve()))
    import minikube_py

    code = str(Path(minikube_py.__file__).resolve().parents[1])
    nodes = args.nodes or 50
    pods = args.pods or 20_000

    async def one(tmp: Path) -> dict[str, Any]:
        out = await burst_run(tmp, nodes=nodes, pods=pods, wave=wave_of(args),
                              wait=args.wait, sample_every=args.sample_every,
                              event_ttl=args.event_ttl, take_census=args.census,
                              trace=args.tracemalloc)
        out["code"] = code
        return out

    common.choose_loop("auto")
    return common.measure_here(one)


def run(args: Any) -> int:
    """`--burst`: one measured burst in a fresh interpreter; prints the curve, writes JSON."""
    if wave_of(args) > (args.nodes or 50) * MAX_PODS_PER_NODE:
        raise SystemExit(f"--wave {wave_of(args)}: {args.nodes or 50} nodes run at most "
                         f"{(args.nodes or 50) * MAX_PODS_PER_NODE} pods at once "
                         "(--max-pods 110 each)")
    argv = ["bench.scale", "--one", "--burst", "--wait", str(args.wait),
            "--sample-every", str(args.sample_every), "--event-ttl", args.event_ttl]
    for flag, value in (("--nodes", args.nodes), ("--pods", args.pods), ("--wave", args.wave),
                        ("--code", args.code)):
        if value:
            argv += [flag, str(value)]
    if args.census:
        argv.append("--census")
    if args.tracemalloc:
        argv.append("--tracemalloc")
    loop_name = common.choose_loop("auto")
    result = common.run_fresh(argv, timeout=args.wait + 7200)
    print(f"code: {result['code']}")
    print(f"{result['nodes']} nodes, {result['pods']} pods in waves of {result['wave']}: "
          f"burst {result['burst_s']:.0f} s")
    rows = [["idle, before the burst", f"{result['rss_idle_mib']:.0f} MiB", ""],
            ["peak while pods ran", f"{result['rss_burst_peak_mib']:.0f} MiB", ""],
            ["all deleted", f"{result['rss_after_delete_mib']:.0f} MiB", ""],
            ["compacted", f"{result['rss_after_compact_mib']:.0f} MiB", ""]]
    rows += [[f"+{s['t_s']:.0f} s", f"{s['rss_mib']:.0f} MiB", str(s["events"])]
             for s in result["samples"]]
    print(common.render_table(["RSS", "VmRSS", "events"], rows))
    print(f"end / idle: {result['ratio_end_to_idle']:.2f}x (target <= 1.5x)")
    for stage in ("idle", "end"):
        stats = result.get(f"pymalloc_{stage}") or {}
        if stats:
            print(f"pymalloc at {stage}: {stats['arenas']} arenas of 1 MiB, "
                  f"{stats['live_bytes'] / 2**20:.0f} MiB in live blocks")
    if "traced_since_idle_mib" in result:
        print(f"allocated after idle and still live at the end (tracemalloc): "
              f"{result['traced_since_idle_mib']:.0f} MiB")
        for site, size in result["memory_by_site"]:
            print(f"  {size / 2**20:8.1f} MiB  {site}")
    for stage, grown in (("end - idle", result.get("census_grown_end_minus_idle")),):
        if grown:
            print(f"census {stage}: {json.dumps(grown)}")
    name = "burst" if not args.code else "burst_" + Path(args.code).resolve().name
    path = common.write_json(Path(__file__).parent / "results" / f"{name}.json",
                             {"machine": common.machine_facts(loop_name), "result": result})
    print(f"JSON written to {path}")
    return 0
