"""Dynamic provisioning on a `minikube-py start` cluster: CSINodes, Immediate claims, and
WaitForFirstConsumer claims through the scheduler.

The cluster is built the way `minikube-py start` builds it (bench/pod_startup.py's flags, start's
default `--authorization-mode Node,RBAC`, the storage addon with its default class `standard`,
the simulated CSI driver's provisioner and attacher running as their service account). Three
figures per run:
- csinodes: cluster ready -> every node's CSINode listed (the kubelets' pool-level writer
  publishes them after registration, so this trails "ready");
- immediate: M claims of the default class created at once -> all Bound (the claim binder hands
  each to the provisioner, which creates `pvc-<uid>`, which the binder binds);
- wffc: M pods, each with its own claim of a WaitForFirstConsumer class, created at once -> all
  Running (scheduler's volume binding selects the node, the provisioner provisions there, the
  binder binds, the attach/detach controller and the attacher attach, the kubelet mounts).

    python -m bench.storage_provisioning [--runs 3] [--nodes 200] [--claims 100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench import common
from bench.pod_startup import start_flags

NAMESPACE = "default"


def claim(name: str, storage_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"metadata": {"name": name}, "spec": spec}


def pod(name: str, claim_name: str) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "volumes": [{"name": "data",
                                  "persistentVolumeClaim": {"claimName": claim_name}}],
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "1m"}},
                                     "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}}


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not await check():
        if time.perf_counter() > deadline:
            raise TimeoutError("not reached in time")
        await asyncio.sleep(0.1)


async def one_run(tmp: Path, nodes: int, claims: int) -> dict[str, Any]:
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.start_options import StartOptions

    options = StartOptions.from_args(build_parser().parse_args(start_flags(tmp / "data", nodes)))
    async with running_cluster(options) as cluster:
        return await measure(cluster, nodes, claims)


async def measure(cluster: Any, nodes: int, claims: int) -> dict[str, Any]:
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import (
        CSI_NODES,
        PERSISTENT_VOLUME_CLAIMS,
        PODS,
        STORAGE_CLASSES,
    )

    client = Client(InProcessTransport(cluster.runner.app, user_agent="bench"))
    result: dict[str, Any] = {"nodes": nodes, "claims": claims}
    try:
        began = time.perf_counter()

        async def csinodes() -> bool:
            return len((await client.list(CSI_NODES))["items"]) >= nodes

        await until(csinodes, 300)
        result["csinodes_seconds"] = time.perf_counter() - began

        async def bound(prefix: str) -> bool:
            items = (await client.list(PERSISTENT_VOLUME_CLAIMS, NAMESPACE))["items"]
            return sum(1 for c in items if c["metadata"]["name"].startswith(prefix)
                       and (c.get("status") or {}).get("phase") == "Bound") >= claims

        began = time.perf_counter()
        await asyncio.gather(*(client.create(PERSISTENT_VOLUME_CLAIMS, claim(f"imm-{i}"),
                                             NAMESPACE) for i in range(claims)))
        await until(lambda: bound("imm-"), 600)
        result["immediate_seconds"] = time.perf_counter() - began
        result["immediate_claims_per_s"] = claims / result["immediate_seconds"]

        await client.create(STORAGE_CLASSES, {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "local"}, "provisioner": "hostpath.csi.minikube-py.io",
            "volumeBindingMode": "WaitForFirstConsumer"})

        async def running() -> bool:
            items = (await client.list(PODS, NAMESPACE))["items"]
            return sum(1 for p in items if p["metadata"]["name"].startswith("wffc-")
                       and (p.get("status") or {}).get("phase") == "Running") >= claims

        began = time.perf_counter()
        await asyncio.gather(*(client.create(PERSISTENT_VOLUME_CLAIMS,
                                             claim(f"wffc-{i}", "local"), NAMESPACE)
                               for i in range(claims)))
        await asyncio.gather(*(client.create(PODS, pod(f"wffc-{i}", f"wffc-{i}"), NAMESPACE)
                               for i in range(claims)))
        await until(running, 600)
        result["wffc_seconds"] = time.perf_counter() - began
        result["wffc_pods_per_s"] = claims / result["wffc_seconds"]
        return result
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    loop_name = common.choose_loop("auto")
    common.quiet_logs()
    if args.one:
        return common.measure_here(lambda tmp: one_run(tmp, args.nodes, args.claims))
    load_before = common.loadavg()
    runs = []
    for i in range(args.runs):
        result = common.run_fresh(["bench.storage_provisioning", "--one", "--nodes",
                                   str(args.nodes), "--claims", str(args.claims)], timeout=1800)
        runs.append(result)
        print(f"  run {i + 1}: csinodes {result['csinodes_seconds']:.2f} s, immediate "
              f"{result['immediate_seconds']:.2f} s, wffc {result['wffc_seconds']:.2f} s",
              flush=True)
    agg = common.aggregate(runs)
    rows = [
        [f"ready -> {args.nodes} CSINodes", common.fmt(agg["csinodes_seconds"]), ""],
        [f"{args.claims} Immediate claims -> Bound", common.fmt(agg["immediate_seconds"]),
         common.fmt(agg["immediate_claims_per_s"]) + " claims/s"],
        [f"{args.claims} WaitForFirstConsumer pods -> Running",
         common.fmt(agg["wffc_seconds"]), common.fmt(agg["wffc_pods_per_s"]) + " pods/s"],
    ]
    print(common.render_table(["phase (median of runs)", "seconds", "rate"], rows))
    print(f"note: all-in-one process built like `minikube-py start --fsync never "
          f"--image-pull-duration 0 --container-start-duration 0` with {args.nodes} nodes; "
          f"load average before {load_before}; {args.runs} runs, each in a fresh interpreter; "
          f"loop {loop_name}")
    path = common.write_json(Path(__file__).parent / "results" / "storage_provisioning.json",
                             {"machine": common.machine_facts(loop_name),
                              "settings": {"nodes": args.nodes, "claims": args.claims,
                                           "load_average_before": load_before},
                              "median": agg, "runs": runs})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
