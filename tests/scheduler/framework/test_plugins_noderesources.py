"""NodeResourcesFit (Filter reasons, the three scoring strategies) and BalancedAllocation.

Score tables are upstream's (pkg/scheduler/framework/plugins/noderesources
least_allocated_test.go, most_allocated_test.go, balanced_allocation_test.go, 1.31): the same
nodes, pods and expected scores. Upstream's quantities ("4000" cpu, "10000" memory) are kept
as written; only ratios matter.
"""

from __future__ import annotations

import pytest

from minikube_py.scheduler.framework.interface import Code
from minikube_py.scheduler.framework.plugins.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from minikube_py.scheduler.framework.plugins.noderesources_fit import NodeResourcesFit

from .plugin_helpers import node, pod, run_filter, run_score, table


def req(cpu: str, memory: str) -> dict:
    return {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}}


TWO_CONTAINERS = [req("1000", "2000"), req("2000", "3000")]


def fit(strategy: str, resources: list[dict] | None = None) -> NodeResourcesFit:
    scoring: dict = {"type": strategy}
    if resources is not None:
        scoring["resources"] = resources
    return NodeResourcesFit({"scoringStrategy": scoring})


def on(node_name: str, cpu: str, memory: str) -> tuple[str, dict]:
    return node_name, pod(f"x-{node_name}-{cpu}-{memory}", containers=[req(cpu, memory)])


def cluster(sizes: dict[str, tuple[str, str]], existing: list[tuple[str, dict]] = ()):
    placed: dict[str, list] = {}
    for i, (name, p) in enumerate(existing):
        p["metadata"]["name"] += f"-{i}"
        placed.setdefault(name, []).append(p)
    return table([node(n, cpu=c, memory=m) for n, (c, m) in sizes.items()], placed)


LEAST = [
    ("nothing scheduled, nothing requested", [], {"n1": ("4000", "10000"), "n2": ("4000", "10000")},
     [], {"n1": 100, "n2": 100}),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     {"n1": ("4000", "10000"), "n2": ("6000", "10000")}, [], {"n1": 37, "n2": 50}),
    ("no resources requested, pods scheduled with resources", [],
     {"n1": ("10000", "20000"), "n2": ("10000", "20000")},
     [on("n1", "3000", "0"), on("n1", "3000", "0"), on("n2", "3000", "0"), on("n2", "3000", "5000")],
     {"n1": 70, "n2": 57}),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     {"n1": ("10000", "20000"), "n2": ("10000", "20000")},
     [on("n1", "3000", "0"), on("n2", "3000", "5000")], {"n1": 57, "n2": 45}),
    ("resources requested, pods scheduled with resources, differently sized nodes", TWO_CONTAINERS,
     {"n1": ("10000", "20000"), "n2": ("10000", "50000")},
     [on("n1", "3000", "0"), on("n2", "3000", "5000")], {"n1": 57, "n2": 60}),
    ("requested resources exceed node capacity", [req("3000", "0")],
     {"n1": ("4000", "10000"), "n2": ("4000", "10000")},
     [on("n1", "3000", "0"), on("n2", "3000", "5000")], {"n1": 50, "n2": 25}),
]


@pytest.mark.parametrize("name,containers,sizes,existing,expected", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated_upstream_table(name, containers, sizes, existing, expected):
    scores = run_score(fit("LeastAllocated"), pod(containers=containers), cluster(sizes, existing))
    assert scores == expected


def test_least_allocated_resource_weights():
    # upstream: memory weight 2, cpu weight 1 -> (25 + 50*2) / 3 = 41 and 50
    plugin = fit("LeastAllocated", [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}])
    scores = run_score(plugin, pod(containers=TWO_CONTAINERS),
                       cluster({"n1": ("4000", "10000"), "n2": ("6000", "10000")}))
    assert scores == {"n1": 41, "n2": 50}


MOST = [
    ("nothing scheduled, nothing requested", [], {"n1": ("4000", "10000"), "n2": ("4000", "10000")},
     [], {"n1": 0, "n2": 0}),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS,
     {"n1": ("4000", "10000"), "n2": ("6000", "10000")}, [], {"n1": 62, "n2": 50}),
    ("no resources requested, pods scheduled with resources", [],
     {"n1": ("10000", "20000"), "n2": ("10000", "20000")},
     [on("n1", "3000", "0"), on("n1", "3000", "0"), on("n2", "3000", "0"), on("n2", "3000", "5000")],
     {"n1": 30, "n2": 42}),
    ("resources requested equal node capacity", [req("2000", "4000"), req("3000", "5000")],
     {"n1": ("5000", "10000"), "n2": ("10000", "9000")}, [], {"n1": 95, "n2": 75}),
]


@pytest.mark.parametrize("name,containers,sizes,existing,expected", MOST, ids=[c[0] for c in MOST])
def test_most_allocated_upstream_table(name, containers, sizes, existing, expected):
    scores = run_score(fit("MostAllocated"), pod(containers=containers), cluster(sizes, existing))
    assert scores == expected


def test_most_allocated_caps_nonzero_requests_at_capacity():
    # upstream "no resources requested, pods scheduled, nonzero request for resource": the
    # 100m / 200Mi defaults of request-less containers push node1 past its 250m cpu
    plain = {"name": "c", "image": "i"}
    nodes = table([node("n1", cpu="250m", memory="1000Mi"), node("n2", cpu="250m", memory="1000Mi")],
                  {"n1": [pod("a", containers=[plain]), pod("b", containers=[plain])]})
    assert run_score(fit("MostAllocated"), pod(containers=[plain]), nodes) == {"n1": 80, "n2": 30}


def test_requested_to_capacity_ratio_shape_weights_and_go_rounding():
    # shape 0->0, 100->10 (scaled to 0..100): the score is the utilization. cpu weight 3,
    # memory 1. n1: cpu (1+2)/8 -> 37, memory 512Mi/1Gi -> 50: (111 + 50) / 4 = 40.25 -> 40.
    # n2: cpu 2/4 -> 50, memory 256Mi/2Gi -> 12: (150 + 12) / 4 = 40.5 -> 41 (math.Round).
    plugin = NodeResourcesFit({"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                               {"utilization": 100, "score": 10}]}}})
    nodes = table([node("n1", cpu="8", memory="1Gi"), node("n2", cpu="4", memory="2Gi")],
                  {"n1": [pod("used", containers=[req("1", "256Mi")])]})
    assert run_score(plugin, pod(containers=[req("2", "256Mi")]), nodes) == {"n1": 40, "n2": 41}


def test_requested_to_capacity_ratio_default_shape_prefers_empty_nodes():
    plugin = fit("RequestedToCapacityRatio")  # default shape 0 -> 10, 100 -> 0
    nodes = table([node("n1", cpu="4", memory="4Gi"), node("n2", cpu="4", memory="4Gi")],
                  {"n1": [pod("used", containers=[req("3", "3Gi")])]})
    scores = run_score(plugin, pod(containers=[req("1", "1Gi")]), nodes)
    assert scores == {"n1": 0, "n2": 75}


def test_filter_reports_every_shortage_with_upstream_reasons():
    nodes = table([node("small", cpu="1", memory="1Gi"), node("cpu-only", cpu="1", memory="8Gi"),
                   node("big", cpu="8", memory="8Gi"), node("full", cpu="8", memory="8Gi", pods="1")],
                  {"full": [pod("there")]})
    statuses = run_filter(fit("LeastAllocated"), pod(cpu="2", memory="2Gi"), nodes)
    assert statuses["small"].reasons == ("Insufficient cpu", "Insufficient memory")
    assert statuses["small"].code is Code.UNSCHEDULABLE
    assert statuses["cpu-only"].reasons == ("Insufficient cpu",)
    assert statuses["full"].reasons == ("Too many pods",)
    assert "big" not in statuses


def test_filter_zero_request_pod_only_needs_a_pod_slot():
    nodes = table([node("n1", cpu="0", memory="0"), node("n2", pods="0")])
    statuses = run_filter(fit("LeastAllocated"), pod(), nodes)
    assert list(statuses) == ["n2"] and statuses["n2"].reasons == ("Too many pods",)


def test_balanced_allocation_upstream_values():
    # upstream balanced_allocation_test.go "nothing scheduled, resources requested, differently
    # sized nodes": fractions 0.75/0.5 -> std 0.125 -> 87; 0.5/0.5 -> 100
    plugin = NodeResourcesBalancedAllocation({})
    nodes = cluster({"n1": ("4000", "10000"), "n2": ("6000", "10000")})
    assert run_score(plugin, pod(containers=TWO_CONTAINERS), nodes) == {"n1": 87, "n2": 100}


def test_balanced_allocation_counts_real_requests_not_defaults():
    # useRequested: a request-less pod adds nothing, so an empty node is perfectly balanced
    plugin = NodeResourcesBalancedAllocation({"resources": [{"name": "cpu", "weight": 1},
                                                            {"name": "memory", "weight": 1}]})
    nodes = table([node("n1", cpu="4", memory="4Gi")], {})
    assert run_score(plugin, pod(containers=[{"name": "c", "image": "i"}]), nodes) == {"n1": 100}

