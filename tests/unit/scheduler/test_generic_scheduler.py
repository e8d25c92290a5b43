"""genericScheduler: fit, score, select; FitError messages as upstream prints them."""

from __future__ import annotations

import pytest

from minikube_py.scheduler.algorithm.predicates import PREDICATES
from minikube_py.scheduler.algorithm.priorities import PRIORITIES, PriorityConfig
from minikube_py.scheduler.algorithm.select_host import HostSelector
from minikube_py.scheduler.factory import from_policy, from_provider
from minikube_py.scheduler.generic_scheduler import (
    FitError,
    GenericScheduler,
    NoNodesAvailable,
    sample_size,
)
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

V10_PREDICATES = {name: PREDICATES[name] for name in (
    "PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName")}
V10_PRIORITIES = [PriorityConfig(name, PRIORITIES[name], 1) for name in (
    "LeastRequestedPriority", "BalancedResourceAllocation", "ServiceSpreadingPriority")]


def node(name: str, cpu: str = "4", memory: str = "8Gi", **labels: str) -> NodeInfo:
    return NodeInfo({"metadata": {"name": name, "labels": labels},
                     "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                                "conditions": [{"type": "Ready", "status": "True"}]}})


def pod(name: str, cpu: str = "1", memory: str = "1Gi", **selector: str) -> dict:
    spec = {"containers": [{"name": "c", "image": "x",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def test_least_requested_wins_and_ties_rotate():
    sched = GenericScheduler(V10_PREDICATES, V10_PRIORITIES, selector=HostSelector())
    busy = node("busy")
    busy.add_pod({**pod("x", cpu="3", memory="6Gi"), "spec": {**pod("x", "3", "6Gi")["spec"],
                                                              "nodeName": "busy"}})
    nodes = build([busy, node("a"), node("b")])
    picks = [(await sched.schedule(pod(f"p{i}"), nodes)).node for i in range(4)]
    assert "busy" not in picks and set(picks) == {"a", "b"}  # round robin over the tie
    result = await sched.schedule(pod("p"), nodes)
    assert result.feasible == 3 and result.total == 3 and result.scores["busy"] < result.score


async def test_fit_error_counts_reasons_over_nodes():
    sched = GenericScheduler(V10_PREDICATES, V10_PRIORITIES)
    nodes = build([node("small1", cpu="500m"), node("small2", cpu="500m"),
                   node("ssd", disk="ssd"), node("hdd1", disk="hdd"), node("hdd2", disk="hdd")])
    with pytest.raises(FitError) as info:
        await sched.schedule(pod("p", cpu="1", disk="nvme"), nodes)
    message = str(info.value)
    assert message.startswith("0/5 nodes are available: ")
    assert "2 Insufficient cpu" in message
    assert "3 node(s) didn't match node selector" in message and message.endswith(".")
    # a node is charged only with its first failing predicate's reasons
    assert info.value.failed == {
        "small1": ["Insufficient cpu"], "small2": ["Insufficient cpu"],
        "ssd": ["node(s) didn't match node selector"],
        "hdd1": ["node(s) didn't match node selector"],
        "hdd2": ["node(s) didn't match node selector"]}


async def test_no_nodes_is_err_no_nodes_available_not_a_fit_error():
    """upstream ErrNoNodesAvailable, the same text from v1.0 to 1.31."""
    with pytest.raises(NoNodesAvailable, match=r"^no nodes available to schedule pods$"):
        await GenericScheduler(V10_PREDICATES, V10_PRIORITIES).schedule(pod("p"), build([]))


def _mixed_nodes() -> list[NodeInfo]:
    """small-hdd fails both cpu and the selector; small-ssd only cpu; big-hdd only the
    selector; a NotReady node fails only as the node lister would exclude it."""
    not_ready = node("gone", disk="ssd")
    assert not_ready.node is not None
    not_ready.node["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    return [node("small-hdd", cpu="500m", disk="hdd"), node("small-ssd", cpu="500m", disk="ssd"),
            node("big-hdd", disk="hdd"), not_ready]


async def test_v1_0_charges_a_node_with_its_first_failing_predicate_only():
    algorithm = from_provider("V1.0Provider")
    assert not algorithm.check_all_predicates
    sched = GenericScheduler(algorithm.predicates, algorithm.priorities,
                             check_all_predicates=algorithm.check_all_predicates)
    with pytest.raises(FitError) as info:
        await sched.schedule(pod("p", cpu="1", disk="ssd"), build(_mixed_nodes()))
    assert info.value.failed == {"small-hdd": ["Insufficient cpu"],
                                 "small-ssd": ["Insufficient cpu"],
                                 "big-hdd": ["node(s) didn't match node selector"],
                                 "gone": ["node(s) were not ready"]}
    assert str(info.value) == ("0/4 nodes are available: 1 node(s) didn't match node selector, "
                               "1 node(s) were not ready, 2 Insufficient cpu.")


@pytest.mark.parametrize("source", ["DefaultProvider", "policy"])
async def test_v1_5_collects_every_failing_predicates_reasons(source: str):
    """v1.5 podFitsOnNode runs every predicate and appends all their reasons; the FitError
    counts each reason over the nodes it applies to. A NotReady node never reaches the
    predicates (v1.5's node lister leaves it out)."""
    algorithm = from_provider(source) if source != "policy" else from_policy({
        "predicates": [{"name": "PodFitsResources"}, {"name": "MatchNodeSelector"}]})
    assert algorithm.check_all_predicates
    sched = GenericScheduler(algorithm.predicates, algorithm.priorities,
                             check_all_predicates=algorithm.check_all_predicates)
    with pytest.raises(FitError) as info:
        await sched.schedule(pod("p", cpu="1", disk="ssd"), build(_mixed_nodes()))
    failed = {name: sorted(reasons) for name, reasons in info.value.failed.items()}
    assert failed == {"small-hdd": ["Insufficient cpu", "node(s) didn't match node selector"],
                      "small-ssd": ["Insufficient cpu"],
                      "big-hdd": ["node(s) didn't match node selector"],
                      "gone": ["node(s) were not ready"]}
    assert str(info.value) == ("0/4 nodes are available: 1 node(s) were not ready, "
                               "2 Insufficient cpu, 2 node(s) didn't match node selector.")


async def test_sampling_finds_enough_feasible_nodes_and_rotates():
    assert sample_size(50, 10) == 50 and sample_size(1000, 10) == 100
    assert sample_size(5000, 50) == 2500 and sample_size(1000, 100) == 1000
    sched = GenericScheduler(V10_PREDICATES, [], percentage_of_nodes_to_score=10)
    nodes = build([node(f"n{i:04d}") for i in range(1000)])
    first = await sched.schedule(pod("a"), nodes)
    second = await sched.schedule(pod("b"), nodes)
    assert first.feasible == 100 and second.feasible == 100
    assert first.node != second.node  # the next search starts where the last one stopped


async def test_not_ready_and_cordoned_nodes_get_nothing_whatever_the_predicates():
    """v1.0's node lister fed the algorithm only Ready, schedulable nodes: a dead kubelet's
    node (Ready=Unknown) must not receive the pods that replace its evicted ones."""
    sched = GenericScheduler(V10_PREDICATES, V10_PRIORITIES)
    dead, cordoned, fine = node("dead"), node("cordoned"), node("fine")
    dead.node["status"]["conditions"] = [{"type": "Ready", "status": "Unknown"}]
    cordoned.node["spec"] = {"unschedulable": True}
    nodes = build([dead, cordoned, fine])
    assert {(await sched.schedule(pod(f"p{i}"), nodes)).node for i in range(6)} == {"fine"}
    with pytest.raises(FitError) as info:
        await sched.schedule(pod("p"), build([dead, cordoned]))
    assert info.value.failed == {"dead": ["node(s) were not ready"],
                                 "cordoned": ["node(s) were unschedulable"]}
