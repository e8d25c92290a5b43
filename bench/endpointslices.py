"""A Service over 1000 pods on 100 simulated nodes: how soon the EndpointSlices (and, as the
baseline, the Endpoints) list every pod once the pods are Ready.

The cluster is built the way `minikube-py start` builds it (bench/pod_startup.py's flags: the
embedded store with `--fsync never`, scheduler, controller manager, N simulated kubelets with
`--image-pull-duration 0 --container-start-duration 0`, `--authorization-mode Node,RBAC`, so
the controllers act as their kube-system service accounts). Both the endpointslice and the
endpoint controller run, as in a real cluster. The bench watches pods, EndpointSlices and
Endpoints through informers, as a client would.

Figures per run:
- follow: a Service exists, a ReplicaSet of 1000 pods is created; from the moment the last pod
  is Ready (as the pod watch sees it) until the Service's slices hold 1000 ready endpoints
  (issue 19's target: <= 1 s), and until its Endpoints hold 1000 addresses;
- cold: a second Service is created over the 1000 Ready pods; from its create until its
  slices (resp. Endpoints) list all of them — one sync of a whole Service;
  The worst event-loop lag during it is reported too (the loop is shared by everything);
- CPU per sync: the pure work of one sync over the final state (slices: the reconciler over
  1000 pods and 10 slices; Endpoints: building the subsets) in process CPU time, and each
  controller's mean sync wall time from `controller_sync_duration_seconds`.

    python -m bench.endpointslices [--runs 3] [--pods 1000] [--nodes 100]
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

TARGET_S = 1.0
NAMESPACE = "default"
APP = "bench-eps"


def replica_set(pods: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": APP},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": APP}},
                     "template": {"metadata": {"labels": {"app": APP}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "web", "image": "nginx",
                                                           "ports": [{"name": "http",
                                                                      "containerPort": 80}],
                                                           "resources": {"requests": {
                                                               "cpu": "1m",
                                                               "memory": "4Mi"}}}]}}}}


def service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": APP},
                     "ports": [{"name": "http", "port": 8080, "targetPort": "http"}]}}


def _sync_seconds(controller: str) -> tuple[float, float]:
    """(sum, count) of controller_sync_duration_seconds for one controller."""
    from prometheus_client import REGISTRY

    total = count = 0.0
    for metric in REGISTRY.collect():
        if metric.name != "controller_sync_duration_seconds":
            continue
        for sample in metric.samples:
            if sample.labels.get("name") == controller:
                if sample.name.endswith("_sum"):
                    total = sample.value
                elif sample.name.endswith("_count"):
                    count = sample.value
    return total, count


async def one_run(tmp: Path, nodes: int, pods: int) -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions

    options = StartOptions.from_args(build_parser().parse_args(start_flags(tmp / "data",
                                                                           nodes)))
    async with running_cluster(options) as cluster:
        return await measure(cluster, pods)


class Watch:
    """One informer and an event set on every change, to wait on a predicate over its cache."""

    def __init__(self, client: Any, resource: Any, **selectors: str) -> None:
        from minikube_py.client.cache import Informer

        self.informer = Informer(client, resource, namespace=NAMESPACE, **selectors)
        self.changed = asyncio.Event()
        self.informer.add_event_handler(on_add=self._seen, on_update=lambda _o, n: self._seen(n),
                                        on_delete=self._seen)

    def _seen(self, _obj: dict) -> None:
        self.changed.set()

    def items(self) -> list[dict]:
        return self.informer.indexer.list()

    async def until(self, predicate: Any, timeout: float) -> float:
        """Wait until `predicate()` holds; returns perf_counter() at the event that made it."""
        deadline = time.perf_counter() + timeout
        while not predicate():
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - time.perf_counter()))
        return time.perf_counter()


class LagProbe:
    """The event loop's worst lag: a 5 ms sleeper notes how late it wakes (every component
    shares the loop, so a sync that holds it delays kubelets, watches and requests)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - began - 0.005)

    def restart(self) -> None:
        self.worst = 0.0
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


def _ready_pods(pods: list[dict]) -> int:
    return sum(1 for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                      for c in (p.get("status") or {}).get("conditions") or ()))


def _slice_endpoints(slices: list[dict], service_name: str) -> int:
    return sum(1 for s in slices
               if (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") ==
               service_name
               for e in s.get("endpoints") or () if (e.get("conditions") or {}).get("ready"))


def _endpoints_addresses(endpoints: list[dict], name: str) -> int:
    return sum(len(sub.get("addresses") or ()) for e in endpoints
               if e["metadata"]["name"] == name for sub in e.get("subsets") or ())


async def measure(cluster: Any, pods: int) -> dict[str, Any]:
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import (
        ENDPOINT_SLICES,
        ENDPOINTS,
        NODES,
        PODS,
        REPLICASETS,
        SERVICES,
    )

    client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
    pod_watch = Watch(client, PODS, label_selector=f"app={APP}")
    slice_watch = Watch(client, ENDPOINT_SLICES)
    ep_watch = Watch(client, ENDPOINTS)
    watches = (pod_watch, slice_watch, ep_watch)
    lag = LagProbe()
    try:
        for watch in watches:
            watch.informer.start()
        await asyncio.gather(*(w.informer.wait_for_sync() for w in watches))
        result: dict[str, Any] = {"pods": pods}
        # -- follow: pods become Ready while the Service exists --------------------------
        await client.create(SERVICES, service("follow"), NAMESPACE)
        before = {c: _sync_seconds(c) for c in ("endpointslice", "endpoint")}
        cpu = time.process_time()
        began = time.perf_counter()
        await client.create(REPLICASETS, replica_set(pods), NAMESPACE)
        all_ready = await pod_watch.until(lambda: _ready_pods(pod_watch.items()) >= pods, 600)
        slices_done = await slice_watch.until(
            lambda: _slice_endpoints(slice_watch.items(), "follow") >= pods, 120)
        endpoints_done = await ep_watch.until(
            lambda: _endpoints_addresses(ep_watch.items(), "follow") >= pods, 120)
        result.update(pods_ready_seconds=all_ready - began,
                      follow_slices_after_ready_s=max(0.0, slices_done - all_ready),
                      follow_endpoints_after_ready_s=max(0.0, endpoints_done - all_ready),
                      follow_process_cpu_share=(time.process_time() - cpu) /
                      (time.perf_counter() - began))
        for controller in ("endpointslice", "endpoint"):
            total, count = _sync_seconds(controller)
            syncs = count - before[controller][1]
            result[f"follow_{controller}_syncs"] = syncs
            result[f"follow_{controller}_sync_mean_ms"] = (
                1000 * (total - before[controller][0]) / syncs if syncs else None)
        # -- cold: a new Service over Ready pods ---------------------------------------------
        lag.restart()
        began = time.perf_counter()
        await client.create(SERVICES, service("cold"), NAMESPACE)
        slices_done, endpoints_done = await asyncio.gather(
            slice_watch.until(lambda: _slice_endpoints(slice_watch.items(), "cold") >= pods,
                              120),
            ep_watch.until(lambda: _endpoints_addresses(ep_watch.items(), "cold") >= pods, 120))
        result.update(cold_slices_s=slices_done - began, cold_endpoints_s=endpoints_done - began,
                      cold_max_loop_lag_ms=1000 * lag.worst)
        cold_slices = [s for s in slice_watch.items()
                       if s["metadata"]["labels"].get("kubernetes.io/service-name") == "cold"]
        result["slices_per_service"] = len(cold_slices)
        # -- CPU of one sync's pure work, over the final state ---------------------------------
        nodes = {n["metadata"]["name"]: n for n in (await client.list(NODES))["items"]}
        result.update(await asyncio.to_thread(_pure_cpu, await client.get(
            SERVICES, "cold", NAMESPACE), pod_watch.items(), nodes, cold_slices))
        return result
    finally:
        lag.stop()
        for watch in watches:
            await watch.informer.stop()
        await client.close()


def _pure_cpu(svc: dict, pods: list[dict], nodes: dict, slices: list[dict],
              repeats: int = 20) -> dict[str, float]:
    """Process CPU of the reconciler (a no-change sync and a sync from nothing) and of the
    Endpoints subsets, per call."""
    from minikube_py.controllers.endpoints_util import build_subsets
    from minikube_py.controllers.endpointslice_reconciler import reconcile, remove_hints

    def per_call(fn: Any) -> float:
        began = time.process_time()
        for _ in range(repeats):
            fn()
        return 1000 * (time.process_time() - began) / repeats

    changes = reconcile(svc, pods, nodes, slices, hints=remove_hints)[0].changes
    return {"slice_sync_cpu_ms_steady": per_call(
                lambda: reconcile(svc, pods, nodes, slices, hints=remove_hints)),
            "slice_sync_cpu_ms_from_empty": per_call(
                lambda: reconcile(svc, pods, nodes, [], hints=remove_hints)),
            "endpoints_sync_cpu_ms": per_call(lambda: build_subsets(svc, pods)),
            "steady_sync_changes": changes}


def _in_fresh_process(args: argparse.Namespace) -> dict[str, Any]:
    return common.run_fresh(["bench.endpointslices", "--one", "--nodes", str(args.nodes),
                             "--pods", str(args.pods)], timeout=1800)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, args.nodes, args.pods))
    load_before = common.loadavg()
    runs = []
    for i in range(args.runs):
        result = _in_fresh_process(args)
        runs.append(result)
        print(f"  run {i + 1}: slices {result['follow_slices_after_ready_s']:.3f} s after the "
              f"last pod Ready (Endpoints {result['follow_endpoints_after_ready_s']:.3f} s); "
              f"cold service {result['cold_slices_s']:.3f} s (Endpoints "
              f"{result['cold_endpoints_s']:.3f} s)", flush=True)
    agg = common.aggregate(runs)
    verdict = "met" if agg["follow_slices_after_ready_s"] <= TARGET_S else "MISSED"
    rows = [
        ["last pod Ready -> all endpoints listed (s)",
         common.fmt(agg["follow_slices_after_ready_s"]),
         common.fmt(agg["follow_endpoints_after_ready_s"]), f"<= {TARGET_S:g} s ({verdict})"],
        ["new Service over Ready pods -> all listed (s)", common.fmt(agg["cold_slices_s"]),
         common.fmt(agg["cold_endpoints_s"]), ""],
        ["worst event-loop lag meanwhile (ms, both controllers)",
         common.fmt(agg["cold_max_loop_lag_ms"]), "", ""],
        ["syncs while pods started", common.fmt(agg["follow_endpointslice_syncs"]),
         common.fmt(agg["follow_endpoint_syncs"]), ""],
        ["mean sync wall time (ms)", common.fmt(agg["follow_endpointslice_sync_mean_ms"]),
         common.fmt(agg["follow_endpoint_sync_mean_ms"]), ""],
        ["CPU of one sync's pure work, no change (ms)",
         common.fmt(agg["slice_sync_cpu_ms_steady"]), common.fmt(agg["endpoints_sync_cpu_ms"]),
         ""],
        ["CPU of one sync's pure work, from nothing (ms)",
         common.fmt(agg["slice_sync_cpu_ms_from_empty"]), "-", ""],
    ]
    print(common.render_table(["figure (median of runs)", "EndpointSlices", "Endpoints",
                               "target"], rows))
    print(f"note: {args.pods} pods of one ReplicaSet on {args.nodes} simulated nodes, "
          f"{agg['slices_per_service']} slices per Service (--max-endpoints-per-slice 100); "
          f"pods Ready {agg['pods_ready_seconds']:.1f} s after the ReplicaSet's create; process "
          f"CPU {agg['follow_process_cpu_share'] * 100:.0f}% of one core meanwhile; all-in-one "
          f"process built like `minikube-py start --fsync never --image-pull-duration 0 "
          f"--container-start-duration 0 --authorization-mode Node,RBAC`; load average before "
          f"{load_before}; {args.runs} runs, each in a fresh interpreter; loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "endpointslices.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes, "pods": args.pods,
                                           "load_average_before": load_before},
                              "median": agg, "runs": runs})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
