"""Preemption decision latency: DefaultPreemption's dry run and node choice for one pod.

N nodes (4 CPU each) are full: four 1-CPU pods apiece, priorities 0, 100 or 1000, start times
spread over a month, a tenth of them `app=db` under a PodDisruptionBudget that allows no
disruption. A pod of priority 2000 asking for 2 CPU fits nowhere; the scheduling cycle's
Filter gives the Diagnosis (not timed), then what is timed is DefaultPreemption's decision —
eligibility, the candidate sampling (10 % / at least 100 nodes from a random offset), the dry
run with reprieve (PDB-aware) and pickOneNodeForPreemption — i.e. everything PostFilter does
before its API calls (evicting victims is I/O, measured by the end-to-end tests, not here).

The profile is the default one as bench/scheduler.py builds it (only the plugins this build
has); if it has no Filter plugin yet, the v1.0 PodFitsResources predicate stands in as a
column-wise Filter (the check NodeResourcesFit makes), and the JSON says so.

    python -m bench.preemption [--nodes 1000,5000] [--repeats 30] [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from bench import common
from bench.scheduler import framework_configuration
from minikube_py.scheduler.algorithm import predicates
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.config.types import PluginRef
from minikube_py.scheduler.framework.handle import FrameworkHandle
from minikube_py.scheduler.framework.interface import CycleState, Status
from minikube_py.scheduler.framework.plugins.defaultpreemption import DefaultPreemption
from minikube_py.scheduler.framework.preemption import Candidate
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.framework.runtime import Framework
from minikube_py.scheduler.framework.schedule_one import PodScheduler
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

TARGET_MS = 10.0  # issue 20: one preemption decision at 1000 nodes
FALLBACK_FILTER = "PodFitsResources"


class PodFitsResources:
    """The v1.0 predicate as a column-wise Filter, for builds without NodeResourcesFit."""

    name = FALLBACK_FILTER

    def filter(self, state: CycleState, pod: PodMeta, nodes: Any, candidates: Any) -> list:
        return [(Status.unschedulable(reason), rows)
                for reason, rows in predicates.pod_fits_resources(pod, nodes)]


def node(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, priority: int, cpu: str, rng: random.Random, db: bool = False,
        node_name: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": {"app": "db" if db else "web"}},
            "spec": {"priority": priority, "nodeName": node_name, "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"startTime": f"2026-10-{rng.randrange(1, 29):02d}T"
                                    f"{rng.randrange(24):02d}:00:00Z"}}


PDB = {"metadata": {"name": "db", "namespace": "default"},
       "spec": {"selector": {"matchLabels": {"app": "db"}}},
       "status": {"disruptionsAllowed": 0}}


def cluster(nodes: int, rng: random.Random) -> list[NodeInfo]:
    infos = []
    for i in range(nodes):
        info = NodeInfo(node=node(i))
        for j in range(4):
            info.add_pod(pod(f"p-{i}-{j}", rng.choice((0, 100, 1000)), "1", rng,
                             db=rng.random() < 0.1, node_name=f"node-{i}"))
        infos.append(info)
    return infos


def framework_for(table: Any) -> tuple[Framework, FrameworkHandle, list[str], list[str]]:
    config, dropped = framework_configuration()
    profile = config.profiles[0]
    extra: dict[str, Any] = {}
    if not profile.enabled("filter"):
        extra[FALLBACK_FILTER] = lambda args, handle: PodFitsResources()
        profile.plugins["filter"] = [PluginRef(FALLBACK_FILTER)]
    if not any(ref.name == "DefaultPreemption" for ref in profile.enabled("postFilter")):
        profile.plugins["postFilter"] = [PluginRef("DefaultPreemption")]
    handle = FrameworkHandle(snapshot=lambda: table)
    framework = Framework(profile, build_registry(extra), handle)
    return framework, handle, [r.name for r in profile.enabled("filter")], dropped


def one_run(nodes: int, repeats: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    table = build(cluster(nodes, rng))
    framework, handle, filters, dropped = framework_for(table)
    handle.set_snapshot(table)
    plugin = framework.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    plugin.list_pdbs = lambda: [PDB]
    plugin.rng = random.Random(seed)
    preemptor = PodMeta.of(pod("preemptor", 2000, "2", rng))
    state = CycleState()
    feasible, diagnosis = PodScheduler().find_nodes_that_fit_pod(
        framework, handle, state, preemptor, table, {})
    if len(feasible):
        raise RuntimeError("the preemptor fits without preemption: the workload is wrong")
    seconds: list[float] = []
    found: Candidate | None = None
    for _ in range(repeats):
        started = time.perf_counter()
        answer = plugin.find_candidate(state, preemptor, diagnosis)
        seconds.append(time.perf_counter() - started)
        if not isinstance(answer, Candidate):
            raise RuntimeError(f"no candidate: {answer}")  # noqa: TRY004 — a wrong workload
        found = answer
    assert found is not None
    return {"nodes": nodes, "repeats": repeats, "filters": filters, "dropped_plugins": dropped,
            "median_ms": common.median(seconds) * 1000,
            "p90_ms": common.percentile(seconds, 90) * 1000, "min_ms": min(seconds) * 1000,
            "victims": len(found.victims.pods), "pdb_violations": found.victims.num_pdb_violations,
            "node": found.node}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1000,5000")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    common.quiet_logs()
    results = []
    for nodes in (int(n) for n in args.nodes.split(",")):
        runs = [one_run(nodes, args.repeats, seed) for seed in range(args.runs)]
        results.append({"nodes": nodes, "median_ms": common.median(r["median_ms"] for r in runs),
                        "p90_ms": common.median(r["p90_ms"] for r in runs),
                        "min_ms": min(r["min_ms"] for r in runs), "runs": runs})
    rows = [[str(r["nodes"]), common.fmt(r["median_ms"]), common.fmt(r["p90_ms"]),
             common.fmt(r["min_ms"]), str(r["runs"][0]["victims"]),
             ("yes" if r["median_ms"] <= TARGET_MS else "NO") if r["nodes"] == 1000 else "-"]
            for r in results]
    print(common.render_table(["nodes", "median ms", "p90 ms", "min ms", "victims",
                               f"<= {TARGET_MS:g} ms at 1000"], rows))
    print("filters:", ", ".join(results[0]["runs"][0]["filters"]))
    path = common.write_json(Path(__file__).parent / "results" / "preemption.json",
                             {"machine": common.machine_facts("asyncio"), "target_ms": TARGET_MS,
                              "results": results})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
