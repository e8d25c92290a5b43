"""The default plugin set's Filter + Score vs the v1.5 predicates + priorities, on one NodeTable.

No API server, no queue, no binding: one decision's algorithm only, the part issue 20 asks to
keep vectorised. N nodes (3 zones, mixed sizes, 1 in 20 tainted, 5 pods each: 7 apps with a
Service each) are built once into a NodeTable; then P pods of those apps (requests, 1/3 with a
nodeSelector, 1/10 with a host port) are decided one after another, each assumed onto its best
node (NodeInfo.add_pod + NodeTable.fill, as the cache does) so the incremental columns are
exercised as in a real run.

- `v1.5`: DefaultProvider's predicates (every reason collected) and weighted priorities
  (factory.from_provider + algorithm.priorities.prioritize), the Services fed to
  SelectorSpreadPriority.
- `framework`: the default profile of the configuration (framework/config: upstream 1.31's
  default plugin set and Score weights, defaulted args), run by a minimal driver here
  (PreFilter/PreScore Skip, rows failing one plugin not passed to the next, weighted sum):
  the fw-runtime's Framework adds timing and bookkeeping on top, measured by
  bench/scheduler.py end to end.
- `legacy-profile`: DefaultProvider expressed as plugins (plugins/legacy.py
  profile_for_provider), through the same driver: the same algorithm set as `v1.5`, so the
  difference is the plugin implementations (and the 1.31 formulas they carry).

Prints microseconds per pod (median of --runs runs) and writes bench/results/scheduler_plugins.json.

    python -m bench.scheduler_plugins [--nodes 1000,5000] [--pods 300] [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

import numpy as np

from bench import common
from minikube_py.client.cache.factory import InformerFactory
from minikube_py.client.resources import SERVICES
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.algorithm.priorities import PriorityContext, prioritize
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.framework.config.load import default_configuration
from minikube_py.scheduler.framework.config.types import Profile
from minikube_py.scheduler.framework.interface import Code, CycleState
from minikube_py.scheduler.framework.plugins.legacy import profile_for_provider
from minikube_py.scheduler.framework.plugins.registry import in_tree_registry
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import NodeTable, build

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
APPS = 7
def make_node(i: int, rng: random.Random) -> Obj:
    cpu, memory = rng.choice((("4", "8Gi"), ("8", "16Gi"), ("16", "64Gi")))
    spec: Obj = {}
    if i % 20 == 0:
        spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    name = f"node-{i:05d}"
    return {"kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, ZONE: f"zone-{i % 3}", "disk": rng.choice(("ssd", "hdd"))}},
        "spec": spec,
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "images": [{"names": ["nginx:1.25"], "sizeBytes": 180 * 1024 * 1024}]
                   if i % 2 else []}}


def make_pod(i: int, rng: random.Random, bound: str = "") -> Obj:
    app = f"app-{i % APPS}"
    container: Obj = {"name": "c", "image": "nginx:1.25",
                      "resources": {"requests": {"cpu": rng.choice(("100m", "250m", "500m")),
                                                 "memory": rng.choice(("128Mi", "256Mi"))}}}
    spec: Obj = {"containers": [container]}
    if not bound and i % 3 == 0:
        spec["nodeSelector"] = {"disk": "ssd"}
    if not bound and i % 10 == 0:
        container["ports"] = [{"containerPort": 80, "hostPort": 8000 + i % 50}]
    if bound:
        spec["nodeName"] = bound
    return {"kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": "default",
                                        "labels": {"app": app}, "uid": f"uid-{i}"},
            "spec": spec}


def services() -> list[Obj]:
    return [{"kind": "Service", "metadata": {"name": f"app-{a}", "namespace": "default"},
             "spec": {"selector": {"app": f"app-{a}"}}} for a in range(APPS)]


def cluster(n: int, seed: int = 1) -> NodeTable:
    rng = random.Random(seed)
    infos = []
    for i in range(n):
        node = make_node(i, rng)
        info = NodeInfo(node=node)
        for j in range(5):
            info.add_pod(make_pod(100_000 + i * 5 + j, rng, node["metadata"]["name"]))
        infos.append(info)
    return build(infos)


def assume(nodes: NodeTable, pod: Obj, row: int) -> None:
    pod = {**pod, "spec": {**pod["spec"], "nodeName": nodes.names[row]}}
    nodes.infos[row].add_pod(pod)
    nodes.fill(row)


class Handle:
    """What the plugins read from the scheduler: its informer cache (the Services here)."""

    def __init__(self) -> None:
        self.informers = InformerFactory(None)
        for svc in services():
            self.informers.informer(SERVICES).indexer.add(svc)
        self.client = None


def framework_decide(plugins: dict[str, Any], profile: Profile, pod: Obj, nodes: NodeTable) -> int:
    """PreFilter (Skip honoured) -> Filter (a row failing one plugin is not offered to the
    next) -> PreScore (Skip honoured) -> Score + NormalizeScore, weighted -> the best row."""
    state = CycleState()
    meta = PodMeta.of(pod)
    skipped: set[str] = set()
    for ref in profile.enabled("preFilter"):
        _result, status = plugins[ref.name].pre_filter(state, meta, nodes)
        if status is not None and status.code is Code.SKIP:
            skipped.add(ref.name)
        elif status is not None:
            return -1
    alive = nodes.everywhere()
    for ref in profile.enabled("filter"):
        if ref.name in skipped:
            continue
        for _status, mask in plugins[ref.name].filter(state, meta, nodes, alive):
            alive &= ~mask
    rows = np.flatnonzero(alive)
    if not len(rows):
        return -1
    skipped = set()
    for ref in profile.enabled("preScore"):
        status = plugins[ref.name].pre_score(state, meta, nodes, rows)
        if status is not None and status.code is Code.SKIP:
            skipped.add(ref.name)
    total = np.zeros(len(rows), dtype=np.int64)
    for ref in profile.enabled("score"):
        if ref.name in skipped:
            continue
        plugin = plugins[ref.name]
        scores = np.asarray(plugin.score(state, meta, nodes, rows), dtype=np.int64)
        extensions = plugin.score_extensions()
        if extensions is not None:
            scores = scores.copy()
            extensions.normalize_score(state, meta, scores)
        total += scores * ref.weight
    return int(rows[int(np.argmax(total))])


def v15_decide(algorithm: Any, ctx: PriorityContext, pod: Obj, nodes: NodeTable) -> int:
    meta = PodMeta.of(pod)
    alive = nodes.everywhere()
    for predicate in algorithm.predicates.values():
        for _reason, mask in predicate(meta, nodes):
            alive &= ~mask
    rows = np.flatnonzero(alive)
    if not len(rows):
        return -1
    totals = prioritize(pod, nodes, rows, algorithm.priorities, ctx)
    return int(rows[int(np.argmax(totals))])


def measure(n: int, pods: int, which: str) -> dict[str, Any]:
    nodes = cluster(n)
    rng = random.Random(7)
    batch = [make_pod(i, rng) for i in range(pods)]
    if which in ("framework", "legacy-profile"):
        profile = (default_configuration().profiles[0] if which == "framework"
                   else profile_for_provider("DefaultProvider"))  # v1.5's set as plugins
        factories = in_tree_registry()
        handle = Handle()
        names = {r.name for point in ("preFilter", "filter", "preScore", "score")
                 for r in profile.enabled(point)}
        plugins = {name: factories[name](profile.args(name), handle) for name in names}

        def decide(pod: Obj) -> int:
            return framework_decide(plugins, profile, pod, nodes)
    else:
        algorithm = from_provider("DefaultProvider")
        svc = services()

        def services_for_pod(pod: Obj) -> list[Obj]:
            app = (pod["metadata"].get("labels") or {}).get("app")
            return [s for s in svc if s["spec"]["selector"]["app"] == app]
        ctx = PriorityContext(services_for_pod=services_for_pod)

        def decide(pod: Obj) -> int:
            return v15_decide(algorithm, ctx, pod, nodes)
    for pod in batch[:APPS]:  # warm the per-table caches (label columns, each app's counts)
        decide(pod)
    placed = 0
    times = []
    for pod in batch[APPS:]:
        started = time.perf_counter()
        row = decide(pod)
        times.append(time.perf_counter() - started)
        if row >= 0:
            assume(nodes, pod, row)
            placed += 1
    return {"us_per_pod": common.median(times) * 1e6, "p99_us": common.percentile(times, 99) * 1e6,
            "mean_us": sum(times) / len(times) * 1e6, "placed": placed, "pods": len(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="1000,5000")
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    common.quiet_logs()
    results: dict[str, Any] = {"machine": common.machine_facts("none"), "pods": args.pods,
                               "runs": args.runs, "nodes": {}}
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        entry: dict[str, Any] = {}
        for which in ("v1.5", "framework", "legacy-profile"):
            runs = [measure(n, args.pods, which) for _ in range(args.runs)]
            entry[which] = {"runs": runs,
                            "us_per_pod": common.median(r["us_per_pod"] for r in runs),
                            "p99_us": common.median(r["p99_us"] for r in runs)}
        ratio = entry["v1.5"]["us_per_pod"] / entry["framework"]["us_per_pod"]
        legacy_ratio = entry["v1.5"]["us_per_pod"] / entry["legacy-profile"]["us_per_pod"]
        entry["framework_speed_vs_v1_5"] = ratio
        entry["legacy_profile_speed_vs_v1_5"] = legacy_ratio
        results["nodes"][str(n)] = entry
        rows.append([str(n), f"{entry['v1.5']['us_per_pod']:,.0f}",
                     f"{entry['framework']['us_per_pod']:,.0f}",
                     f"{entry['legacy-profile']['us_per_pod']:,.0f}",
                     f"{entry['v1.5']['p99_us']:,.0f}",
                     f"{entry['framework']['p99_us']:,.0f}", f"{ratio:.2f}x", f"{legacy_ratio:.2f}x"])
        print(f"{n} nodes done", file=sys.stderr)
    print(common.render_table(["nodes", "v1.5 µs/pod", "default plugins µs/pod",
                               "DefaultProvider as plugins µs/pod", "v1.5 p99",
                               "default plugins p99", "default plugins vs v1.5",
                               "DefaultProvider as plugins vs v1.5"], rows))
    path = common.write_json("bench/results/scheduler_plugins.json", results)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
