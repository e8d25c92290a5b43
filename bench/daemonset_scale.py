"""A DaemonSet on many simulated nodes: created -> every pod Running, then a rolling update.

The cluster is built the way `minikube-py start` builds it (bench/pod_startup.py's flags: the
embedded store with `--fsync never`, the scheduler, the controller manager and N simulated
nodes with `--image-pull-duration 0 --container-start-duration 0`, start's default
`--authorization-mode Node,RBAC`, so the daemonset controller acts as
`system:serviceaccount:kube-system:daemon-set-controller`). The load client creates one
DaemonSet and watches its pods through an informer, as kubectl or a controller would.

Two figures per run:
- rollout: DaemonSet create acknowledged -> the watch has seen a Running pod on every node
  (issue 18's target: <= 5 s on 1000 nodes);
- rolling update: the image change acknowledged -> every node runs a Running pod of the new
  image and no old pod is left (target <= 15 s), with `--max-unavailable` (default 10%: with
  upstream's default of 1 a thousand nodes are replaced one after another, which this also
  measures when asked).
Plus, per phase, each controller's reconciles (count, CPU per reconcile — its own steps plus
the in-process API server's work for its requests, controllers/sync_cpu.py — and wall time per
reconcile, which includes its awaits) and the process CPU share (of one core).

    python -m bench.daemonset_scale [--runs 3] [--nodes 1000] [--max-unavailable 10%]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from bench import common
from bench.pod_startup import start_flags

TARGET_ROLLOUT_S = 5.0
TARGET_UPDATE_S = 15.0
NAMESPACE = "default"
APP = "bench-daemon"


def daemon_set(max_unavailable: str) -> dict[str, Any]:
    unavailable: Any = int(max_unavailable) if max_unavailable.isdigit() else max_unavailable
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": APP},
            "spec": {"selector": {"matchLabels": {"app": APP}},
                     "updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxUnavailable": unavailable}},
                     "template": {"metadata": {"labels": {"app": APP}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "agent", "image": "agent:v1",
                                                           "resources": {"requests": {
                                                               "cpu": "1m",
                                                               "memory": "4Mi"}}}]}}}}


async def one_run(tmp: Path, nodes: int, max_unavailable: str,
                  authorization_mode: str) -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions

    options = StartOptions.from_args(build_parser().parse_args(
        start_flags(tmp / "data", nodes, authorization_mode)))
    async with running_cluster(options) as cluster:
        return await measure(cluster, nodes, max_unavailable)


async def measure(cluster: Any, nodes: int, max_unavailable: str) -> dict[str, Any]:
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.cache import Informer
    from minikube_py.client.resources import DAEMONSETS, PODS

    client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
    informer = Informer(client, PODS, namespace=NAMESPACE, label_selector=f"app={APP}")
    pods: dict[str, dict] = {}
    changed = asyncio.Event()

    def seen(obj: dict) -> None:
        pods[obj["metadata"]["name"]] = obj
        changed.set()

    def gone(obj: dict) -> None:
        pods.pop(obj["metadata"]["name"], None)
        changed.set()

    def running_on_every_node(image: str) -> bool:
        nodes_running = set()
        for pod in pods.values():
            if pod["spec"]["containers"][0]["image"] != image:
                return False
            if (pod.get("status") or {}).get("phase") == "Running" and pod["spec"].get("nodeName"):
                nodes_running.add(pod["spec"]["nodeName"])
        return len(nodes_running) >= nodes

    async def until(image: str, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        while not running_on_every_node(image):
            changed.clear()
            await asyncio.wait_for(changed.wait(), max(0.01, deadline - time.perf_counter()))

    try:
        informer.add_event_handler(on_add=seen, on_update=lambda _o, n: seen(n), on_delete=gone)
        informer.start()
        await informer.wait_for_sync()
        result: dict[str, Any] = {"nodes": nodes, "max_unavailable": max_unavailable}
        for phase, image, timeout in (("rollout", "agent:v1", 120.0),
                                      ("update", "agent:v2", 600.0)):
            syncs_before = common.controller_syncs()
            cpu = time.process_time()
            began = time.perf_counter()
            if phase == "rollout":
                await client.create(DAEMONSETS, daemon_set(max_unavailable), NAMESPACE)
            else:
                await client.patch(DAEMONSETS, APP, {"spec": {"template": {"spec": {
                    "containers": [{"name": "agent", "image": image}]}}}}, NAMESPACE,
                    patch_type="strategic")
            await until(image, timeout)
            elapsed = time.perf_counter() - began
            syncs = common.per_sync(syncs_before, common.controller_syncs(), f"{phase}_")
            result.update({
                f"{phase}_seconds": elapsed,
                f"{phase}_pods_per_s": nodes / elapsed,
                f"{phase}_process_cpu_share": (time.process_time() - cpu) / elapsed,
                f"{phase}_sync_mean_ms": syncs.get(f"{phase}_wall_ms_per_sync.daemonset"),
                **syncs,
            })
        return result
    finally:
        await informer.stop()
        await client.close()


def _in_fresh_process(args: argparse.Namespace) -> dict[str, Any]:
    return common.run_fresh(["bench.daemonset_scale", "--one", "--nodes", str(args.nodes),
                             "--max-unavailable", args.max_unavailable,
                             "--authorization-mode", args.authorization_mode], timeout=1800)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--max-unavailable", default="10%",
                        help="the DaemonSet's rollingUpdate.maxUnavailable (count or percent)")
    parser.add_argument("--authorization-mode", default="Node,RBAC")
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, args.nodes, args.max_unavailable,
                                                     args.authorization_mode))
    load_before = common.loadavg()
    runs = []
    for i in range(args.runs):
        result = _in_fresh_process(args)
        runs.append(result)
        print(f"  run {i + 1}: rollout {result['rollout_seconds']:.2f} s, rolling update "
              f"{result['update_seconds']:.2f} s", flush=True)
    agg = common.aggregate(runs)
    rows = [
        ["DaemonSet create -> Running on every node", common.fmt(agg["rollout_seconds"]),
         common.fmt(agg["rollout_pods_per_s"]), common.fmt(agg["rollout_sync_mean_ms"]),
         f"<= {TARGET_ROLLOUT_S:g} s",
         "met" if agg["rollout_seconds"] <= TARGET_ROLLOUT_S else "MISSED"],
        [f"rolling update (maxUnavailable {args.max_unavailable})",
         common.fmt(agg["update_seconds"]), common.fmt(agg["update_pods_per_s"]),
         common.fmt(agg["update_sync_mean_ms"]), f"<= {TARGET_UPDATE_S:g} s",
         "met" if agg["update_seconds"] <= TARGET_UPDATE_S else "MISSED"],
    ]
    print(common.render_table(["phase (median of runs)", "seconds", "pods/s",
                               "daemonset sync ms (mean)", "target", "verdict"], rows))
    for phase in ("rollout", "update"):
        print(f"{phase}: each controller's reconciles (medians of runs)")
        print(common.render_table(common.PER_SYNC_HEADER,
                                  common.per_sync_rows(agg, f"{phase}_")))
    print(f"note: {args.nodes} simulated nodes, all-in-one process built like `minikube-py "
          f"start --fsync never --image-pull-duration 0 --container-start-duration 0 "
          f"--authorization-mode {args.authorization_mode}`; process CPU "
          f"{agg['rollout_process_cpu_share'] * 100:.0f}% / "
          f"{agg['update_process_cpu_share'] * 100:.0f}% of one core (rollout / update); "
          f"load average before {load_before}; {args.runs} runs, each in a fresh interpreter; "
          f"loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "daemonset_scale.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes,
                                           "max_unavailable": args.max_unavailable,
                                           "authorization_mode": args.authorization_mode,
                                           "load_average_before": load_before},
                              "median": agg, "runs": runs})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
