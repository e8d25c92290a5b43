"""DefaultPreemption inside a real Framework (runtime, handle, PodScheduler) on real NodeTables:
upstream's messages when preemption cannot help, the chosen node and victims, PDBs from the
handle's informers, and the combined FailedScheduling text.

The Filter is the in-tree NodeResourcesFit (PreFilter + Filter), so "Insufficient cpu" is the
plugin's own reason.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.config.types import PluginRef, Profile
from minikube_py.scheduler.framework.handle import FrameworkHandle
from minikube_py.scheduler.framework.interface import Code, CycleState, Status
from minikube_py.scheduler.framework.plugins.defaultpreemption import DefaultPreemption
from minikube_py.scheduler.framework.preemption import Candidate
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.framework.runtime import Framework
from minikube_py.scheduler.framework.schedule_one import FitError, PodScheduler
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build


def node(name: str, cpu: str = "2") -> dict:
    return {"metadata": {"name": name, "labels": {}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, priority: int, cpu: str = "1", node_name: str = "", labels=None,
        **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": labels or {}},
            "spec": {"priority": priority, "nodeName": node_name, **spec,
                     "containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": cpu}}}]},
            "status": {}}


def cluster(*nodes: tuple[dict, list[dict]], pdbs: list[dict] | None = None):
    infos = []
    for n, pods in nodes:
        info = NodeInfo(node=n)
        for p in pods:
            info.add_pod(p)
        infos.append(info)
    table = build(infos)
    handle = FrameworkHandle(snapshot=lambda: table)
    profile = Profile(plugins={"queueSort": [PluginRef("PrioritySort")],
                               "preFilter": [PluginRef("NodeResourcesFit")],
                               "filter": [PluginRef("NodeResourcesFit")],
                               "postFilter": [PluginRef("DefaultPreemption")],
                               "bind": [PluginRef("DefaultBinder")]})
    framework = Framework(profile, build_registry(group=None), handle)
    plugin = framework.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    plugin.rng = random.Random(1)
    plugin.list_pdbs = lambda: list(pdbs or [])  # the PDB informer's cache, as data
    return framework, handle, table, plugin


async def fit_error(framework, handle, table, preemptor: dict) -> tuple[FitError, CycleState]:
    state = CycleState()
    with pytest.raises(FitError) as caught:
        await PodScheduler().schedule_pod(framework, handle, state, PodMeta.of(preemptor), table)
    return caught.value, state


async def test_candidate_is_the_node_with_the_cheapest_victims():
    framework, handle, table, plugin = cluster(
        (node("n1"), [pod("a1", 5), pod("a2", 5)]),
        (node("n2"), [pod("b1", 1), pod("b2", 9)]),
        (node("n3"), [pod("c1", 50), pod("c2", 50)]))
    preemptor = pod("hi", 10)
    err, state = await fit_error(framework, handle, table, preemptor)
    found = plugin.find_candidate(state, PodMeta.of(preemptor), err.diagnosis)
    assert isinstance(found, Candidate)
    # n2's only victim has priority 1: the lowest highest-priority victim wins
    assert found.node == "n2" and [p["metadata"]["name"] for p in found.victims.pods] == ["b1"]


async def test_no_victims_message_as_upstream():
    framework, handle, table, plugin = cluster(
        *[(node(f"n{i}"), [pod(f"p{i}-{j}", 10) for j in range(2)]) for i in range(3)])
    preemptor = pod("same", 10)
    err, state = await fit_error(framework, handle, table, preemptor)
    assert err.message() == "0/3 nodes are available: 3 Insufficient cpu."
    # the plugin clears any earlier nomination (upstream NewPostFilterResultWithNominatedNode(""))
    result, _ = await plugin.post_filter(state.clone(), PodMeta.of(preemptor), err.diagnosis)
    assert result is not None and result.nominated_node_name == ""
    _, status = await framework.run_post_filter_plugins(state, PodMeta.of(preemptor),
                                                        err.diagnosis)
    assert status.code is Code.UNSCHEDULABLE
    assert status.message() == ("preemption: 0/3 nodes are available: 3 No preemption victims "
                                "found for incoming pod.")
    err.diagnosis.post_filter_msg = status.message()
    # upstream's FitError closes the PostFilter message with its own period: real clusters
    # show "..." incoming pod.." in `kubectl describe`
    assert err.message() == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod..")


async def test_unresolvable_nodes_are_not_helpful_and_hopeless_nodes_keep_their_reason():
    framework, handle, table, plugin = cluster(
        (node("small", cpu="1"), [pod("s", 0)]),
        (node("big"), [pod("b", 50, cpu="2")]))
    preemptor = pod("hi", 10, cpu="2")
    err, state = await fit_error(framework, handle, table, preemptor)
    # mark "big" as unresolvable for this pod, the way a node selector would
    err.diagnosis.failures = [(s, m & np.array([True, False])) for s, m in err.diagnosis.failures]
    err.diagnosis.failures.append((Status.unresolvable("node(s) didn't match Pod's node "
                                                       "affinity/selector"),
                                   np.array([False, True])))
    _, status = await plugin.post_filter(state, PodMeta.of(preemptor), err.diagnosis)
    assert status.message() == ("preemption: 0/2 nodes are available: 1 Insufficient cpu, "
                                "1 Preemption is not helpful for scheduling.")


async def test_preemption_policy_never_is_not_eligible():
    framework, handle, table, plugin = cluster((node("n1"), [pod("low", 0, cpu="2")]))
    preemptor = pod("hi", 10, preemptionPolicy="Never")
    err, state = await fit_error(framework, handle, table, preemptor)
    result, status = await plugin.post_filter(state, PodMeta.of(preemptor), err.diagnosis)
    assert result is None
    assert status == Status.unschedulable(
        "preemption: not eligible due to preemptionPolicy=Never.")


async def test_pdb_from_the_informer_steers_the_choice():
    guarded = {"app": "db"}
    pdb = {"metadata": {"name": "db", "namespace": "default"},
           "spec": {"selector": {"matchLabels": guarded}},
           "status": {"disruptionsAllowed": 0}}
    framework, handle, table, plugin = cluster(
        (node("n1", cpu="1"), [pod("db-0", 1, labels=guarded)]),
        (node("n2", cpu="1"), [pod("web-0", 5)]),
        pdbs=[pdb])
    preemptor = pod("hi", 10)
    err, state = await fit_error(framework, handle, table, preemptor)
    found = plugin.find_candidate(state, PodMeta.of(preemptor), err.diagnosis)
    # web-0 has the higher priority, but evicting db-0 would violate its budget
    assert found.node == "n2" and found.victims.num_pdb_violations == 0
