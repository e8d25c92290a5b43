"""Preemption's pure decision on real NodeTables (upstream default_preemption_test.go cases):
victims by priority with reprieve, PDB-violating victims reprieved first, the candidate
sampling, pickOneNodeForPreemption's criteria in order, and eligibility."""

from __future__ import annotations

import random

import numpy as np

from minikube_py.scheduler.algorithm import predicates
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState, Status
from minikube_py.scheduler.framework.preemption import (
    ERR_NO_VICTIMS,
    MSG_PREEMPTION_NEVER,
    MSG_TERMINATING_ON_NOMINATED,
    Candidate,
    Victims,
    calculate_num_candidates,
    dry_run_preemption,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
    pod_eligible_to_preempt_others,
    select_victims,
    unschedulable_rows,
)
from minikube_py.scheduler.nodeinfo import NodeInfo

NOW = 1_700_000_000.0


def node(name: str, cpu: str = "4", pods: int = 110) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": str(pods)}}}


def pod(name: str, priority: int, cpu: str = "1", *, labels=None, start: str | None = None,
        node_name: str = "", port: int = 0) -> dict:
    container: dict = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    status: dict = {}
    if start:
        status["startTime"] = start
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": labels or {}},
            "spec": {"priority": priority, "nodeName": node_name, "containers": [container]},
            "status": status}


def info(n: dict, *pods: dict) -> NodeInfo:
    i = NodeInfo(node=n)
    for p in pods:
        i.add_pod(p)
    return i


def run_filters(state, meta, nodes, candidates):
    """The v1.0 resource and host-port predicates as a column-wise Filter (the same
    functions the NodeResourcesFit/NodePorts plugins wrap)."""
    out = []
    for predicate in (predicates.pod_fits_resources, predicates.pod_fits_host_ports):
        for reason, rows in predicate(meta, nodes):
            rows = rows & candidates
            if rows.any():
                out.append((Status.unschedulable(reason), rows))
    return out


def names(victims: Victims) -> list[str]:
    return [p["metadata"]["name"] for p in victims.pods]


def test_victims_are_the_least_important_pods_needed():
    preemptor = PodMeta.of(pod("hi", 100, cpu="2"))
    n = info(node("n1"), pod("p1", 1), pod("p2", 2), pod("p3", 3), pod("p50", 50))
    [outcome] = select_victims(preemptor, CycleState(), [n], [], run_filters, NOW)
    # two cores must go: the two lowest priorities, listed most important first
    assert isinstance(outcome, Victims) and names(outcome) == ["p2", "p1"]
    assert len(n.pods) == 4  # the real NodeInfo is untouched


def test_equal_priority_the_pod_started_later_goes_first():
    preemptor = PodMeta.of(pod("hi", 100, cpu="1"))
    n = info(node("n1", cpu="2"), pod("old", 1, start="2024-01-01T00:00:00Z"),
             pod("new", 1, start="2024-06-01T00:00:00Z"))
    [outcome] = select_victims(preemptor, CycleState(), [n], [], run_filters, NOW)
    assert names(outcome) == ["new"]


def test_nodes_without_lower_priority_pods_or_hopeless_are_no_candidates():
    preemptor = PodMeta.of(pod("hi", 10, cpu="3"))
    same = info(node("same", cpu="2"), pod("a", 10, cpu="2"))
    small = info(node("small", cpu="2"), pod("b", 1))
    outcomes = select_victims(preemptor, CycleState(), [same, small], [], run_filters, NOW)
    assert outcomes[0] == Status.unresolvable(ERR_NO_VICTIMS)
    assert outcomes[1].code is Code.UNSCHEDULABLE and outcomes[1].reasons == ("Insufficient cpu",)


def test_host_port_conflict_makes_the_port_holder_the_victim():
    preemptor = PodMeta.of(pod("hi", 100, cpu="100m", port=8080))
    n = info(node("n1"), pod("web", 1, cpu="100m", port=8080), pod("other", 0, cpu="100m"))
    [outcome] = select_victims(preemptor, CycleState(), [n], [], run_filters, NOW)
    assert names(outcome) == ["web"]


def pdb(name: str, selector: dict, allowed: int, disrupted=None) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": selector}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}}


def test_filter_pods_with_pdb_violation_spends_the_budget_in_order():
    pods = [pod(f"p{i}", 1, labels={"app": "db"}) for i in range(3)] + [pod("free", 1)]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb("db", {"app": "db"}, 1)])
    assert [p["metadata"]["name"] for p in violating] == ["p1", "p2"]
    assert [p["metadata"]["name"] for p in ok] == ["p0", "free"]
    # a pod already in disruptedPods does not spend the budget again
    violating, ok = filter_pods_with_pdb_violation(
        pods, [pdb("db", {"app": "db"}, 1, {"p0": "2024-01-01T00:00:00Z"})])
    assert [p["metadata"]["name"] for p in violating] == ["p2"]
    # another namespace's or an empty-selector budget covers nothing
    other = pdb("db", {"app": "db"}, 0)
    other["metadata"]["namespace"] = "elsewhere"
    empty = pdb("all", {}, 0)
    assert filter_pods_with_pdb_violation(pods, [other, empty])[0] == []


def test_pdb_violating_victims_are_reprieved_first():
    preemptor = PodMeta.of(pod("hi", 100, cpu="1"))
    # protected (priority 5) is more important than plain (priority 1), but removing plain
    # would be the choice anyway; with plain higher, PDB order decides
    n = info(node("n1", cpu="2"), pod("guarded", 1, labels={"app": "db"}), pod("plain", 5))
    [outcome] = select_victims(preemptor, CycleState(), [n], [pdb("db", {"app": "db"}, 0)],
                               run_filters, NOW)
    assert names(outcome) == ["plain"] and outcome.num_pdb_violations == 0
    n2 = info(node("n2", cpu="1"), pod("guarded", 1, labels={"app": "db"}))
    [outcome] = select_victims(preemptor, CycleState(), [n2], [pdb("db", {"app": "db"}, 0)],
                               run_filters, NOW)
    assert names(outcome) == ["guarded"] and outcome.num_pdb_violations == 1


class PerNodeExtensions:
    """Counts the PreFilter extension calls the per-node path makes."""

    def __init__(self) -> None:
        self.calls = 0

    def run_pre_filter_extension_add_pod(self, state, pod, pod_to_add, node):
        self.calls += 1

    def run_pre_filter_extension_remove_pod(self, state, pod, pod_to_remove, node):
        self.calls += 1


def test_column_wise_dry_run_equals_node_by_node():
    rng = random.Random(11)
    infos = []
    for i in range(40):
        pods = [pod(f"n{i}-p{j}", rng.randrange(0, 6), cpu=f"{rng.choice([250, 500, 1000])}m",
                    start=f"2024-01-{rng.randrange(1, 28):02d}T00:00:00Z",
                    port=rng.choice([0, 0, 0, 9000]))
                for j in range(rng.randrange(0, 8))]
        infos.append(info(node(f"n{i}", cpu=str(rng.choice([2, 3, 4]))), *pods))
    preemptor = PodMeta.of(pod("hi", 4, cpu="1500m", port=9000))
    together = select_victims(preemptor, CycleState(), infos, [], run_filters, NOW)
    extensions = PerNodeExtensions()
    alone = [select_victims(preemptor, CycleState(), [i], [], run_filters, NOW, extensions)[0]
             for i in infos]
    assert together == alone
    assert extensions.calls > 0
    assert sum(isinstance(o, Victims) for o in together) > 5  # the case is not trivial


def test_pick_one_node_criteria_in_upstream_order():
    def cand(node_name, *prios, violations=0, start="2024-01-01T00:00:00Z"):
        return Candidate(node_name, Victims([pod(f"{node_name}-{i}", p, start=start)
                                             for i, p in enumerate(prios)], violations))

    assert pick_one_node_for_preemption([cand("a", 1, violations=1), cand("b", 9)], NOW).node == "b"
    assert pick_one_node_for_preemption([cand("a", 5, 1), cand("b", 4, 4)], NOW).node == "b"
    assert pick_one_node_for_preemption([cand("a", 5, 3), cand("b", 5, 2)], NOW).node == "b"
    assert pick_one_node_for_preemption([cand("a", 5, -2, -2), cand("b", 5, -2)], NOW).node == "b"
    assert pick_one_node_for_preemption(
        [cand("a", 5, start="2024-01-01T00:00:00Z"), cand("b", 5, start="2024-03-01T00:00:00Z")],
        NOW).node == "b"
    assert pick_one_node_for_preemption([cand("a", 5), cand("b", 5)], NOW).node == "a"
    assert pick_one_node_for_preemption([], NOW) is None


def test_num_candidates_and_dry_run_stops_once_enough_are_found():
    assert calculate_num_candidates(1000, 10, 100) == 100
    assert calculate_num_candidates(5000, 10, 100) == 500
    assert calculate_num_candidates(30, 10, 100) == 30
    preemptor = PodMeta.of(pod("hi", 100, cpu="1"))
    infos = [info(node(f"n{i}", cpu="1"), pod(f"low{i}", 1)) for i in range(10)]
    calls = []

    def counting(state, meta, nodes, candidates):
        calls.append(int(candidates.sum()))
        return run_filters(state, meta, nodes, candidates)

    result = dry_run_preemption(preemptor, CycleState(), infos, [], counting, 3, now=NOW)
    assert [c.node for c in result.candidates] == ["n0", "n1", "n2"]
    assert sum(calls) < 10 * 2  # the later batches were never evaluated


def test_unschedulable_rows_skip_unresolvable_nodes():
    u = np.array([True, True, False, False])
    r = np.array([False, True, False, True])
    rows = unschedulable_rows([(Status.unschedulable("Insufficient cpu"), u),
                               (Status.unresolvable("node(s) didn't match"), r)], 4)
    assert rows.tolist() == [True, False, False, False]


def test_eligibility():
    never = pod("p", 10)
    never["spec"]["preemptionPolicy"] = "Never"
    assert pod_eligible_to_preempt_others(never, None, None) == (False, MSG_PREEMPTION_NEVER)
    nominated = pod("p", 10)
    nominated["status"]["nominatedNodeName"] = "n1"
    victim = pod("v", 1)
    victim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                       "reason": "PreemptionByScheduler"}]
    n = info(node("n1"), victim)
    assert pod_eligible_to_preempt_others(nominated, None, n) == \
        (False, MSG_TERMINATING_ON_NOMINATED)
    assert pod_eligible_to_preempt_others(nominated, Status.unresolvable("x"), n) == (True, "")
    victim["status"]["conditions"][0]["reason"] = "EvictionByEvictionAPI"
    assert pod_eligible_to_preempt_others(nominated, None, info(node("n1"), victim)) == (True, "")
