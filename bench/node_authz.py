"""The Node authorizer's cost per check and per pod event, in-process.

Kubernetes piece: plugin/pkg/auth/authorizer/node (upstream walks its graph from the object
to the node per check, with a destination-edge index for vertices with many edges; ours keeps
per-object reference counts per node, see apiserver/authz/node_graph.py).
What it measures: µs per `authorize()` call of the Node authorizer (minus AlwaysAllow's) with
--pods pods bound to node-1 (each mounting a secret, a projected secret and a configmap, with
an env secret) and --others pods spread over 50 other nodes, for: a secret mounted by a pod on
the node (allowed), an unreferenced secret (denied with upstream's reason), a request NodeRules
allow (create events), and a non-node user (no opinion). Also µs per pod event: a status-only
update of a bound pod (unchanged references) and a pod re-filed with new references.
`best` is the least noisy figure on a shared machine (as timeit's best-of).

Usage: python -m bench.node_authz [--pods 110] [--others 5000] [--calls 200000] [--runs 3]
       [--json bench/results/node_authz.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import common
from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authz import AlwaysAllow, Attributes
from minikube_py.apiserver.authz.node import NodeAuthorizer
from minikube_py.apiserver.authz.rbac.bootstrap import cluster_role_rules

NODE = UserInfo("system:node:node-1", groups=("system:nodes", "system:authenticated"))


def pod(i: int, node: str, ns: str = "default", suffix: str = "") -> dict:
    return {"metadata": {"name": f"pod-{node}-{i}", "namespace": ns},
            "spec": {"nodeName": node, "serviceAccountName": "default",
                     "containers": [{"name": "c", "image": "x", "env": [
                         {"name": "E", "valueFrom": {"secretKeyRef": {
                             "name": f"env-{node}-{i}{suffix}", "key": "k"}}}]}],
                     "volumes": [
                         {"name": "s", "secret": {"secretName": f"secret-{node}-{i}{suffix}"}},
                         {"name": "p", "projected": {"sources": [
                             {"secret": {"name": f"proj-{node}-{i}{suffix}"}}]}},
                         {"name": "m", "configMap": {"name": f"cm-{node}-{i}{suffix}"}}]},
            "status": {"phase": "Running"}}


def per_call(fn, arg, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(arg)
    return (time.perf_counter() - start) / calls * 1e6


def build(pods: int, others: int) -> NodeAuthorizer:
    authorizer = NodeAuthorizer(rules=cluster_role_rules("system:node"))
    for i in range(pods):
        authorizer.graph.set_pod(f"/pods/default/pod-node-1-{i}", pod(i, "node-1"))
    for i in range(others):
        node = f"node-{2 + i % 50}"
        authorizer.graph.set_pod(f"/pods/default/pod-{node}-{i}", pod(i, node))
    return authorizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=110)
    parser.add_argument("--others", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", default=str(REPO / "bench" / "results" / "node_authz.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    node = build(args.pods, args.others)
    build_ms = (time.perf_counter() - start) * 1e3
    last = args.pods - 1
    cases = {
        "secret_allowed": Attributes(NODE, "get", True, namespace="default",
                                     resource="secrets", name=f"secret-node-1-{last}"),
        "secret_denied": Attributes(NODE, "get", True, namespace="default",
                                    resource="secrets", name="secret-node-2-0"),
        "node_rules_events": Attributes(NODE, "create", True, namespace="default",
                                        resource="events"),
        "non_node_user": Attributes(UserInfo("alice"), "get", True, namespace="default",
                                    resource="secrets", name="x"),
    }
    expected = {"secret_allowed": True, "secret_denied": False, "node_rules_events": True,
                "non_node_user": False}
    for name, attrs in cases.items():
        assert node.authorize(attrs)[0] is expected[name], name
    allow = AlwaysAllow()
    report: dict = {"pods_on_node": args.pods, "pods_elsewhere": args.others,
                    "graph_build_ms": round(build_ms, 2), "checks_added_us": {}}
    print(f"pods on node-1={args.pods} elsewhere={args.others} graph_build_ms={build_ms:.1f}")
    for name, attrs in cases.items():
        added = []
        for _ in range(args.runs):
            base = per_call(allow.authorize, attrs, args.calls)
            added.append(per_call(node.authorize, attrs, args.calls) - base)
        report["checks_added_us"][name] = {"best": round(min(added), 3),
                                           "median": round(statistics.median(added), 3)}
        print(f"{name:20s} added_us best={min(added):.2f} median={statistics.median(added):.2f}")
    # pod events: a status update (same references) and a re-filing with new references
    events = max(1, args.calls // 20)
    graph = node.graph
    same = [pod(i % args.pods, "node-1") for i in range(events)]
    changed = [pod(i % args.pods, "node-1", suffix=f"-v{i}") for i in range(events)]
    timings = {}
    for label, pods in (("pod_update_same_refs_us", same), ("pod_refile_new_refs_us", changed)):
        start = time.perf_counter()
        for i, obj in enumerate(pods):
            graph.set_pod(f"/pods/default/pod-node-1-{i % args.pods}", obj)
        timings[label] = round((time.perf_counter() - start) / events * 1e6, 2)
        print(f"{label:28s} {timings[label]:.2f}")
    report["events"] = timings
    print("wrote", common.write_json(args.json, report))


if __name__ == "__main__":
    main()
