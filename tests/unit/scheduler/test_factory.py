"""Providers and Policy files: the shipped example loads and is used; bad ones fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minikube_py.scheduler.factory import (
    PolicyError,
    from_policy,
    from_provider,
    load_policy,
)
from minikube_py.scheduler.generic_scheduler import GenericScheduler
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

REPO = Path(__file__).resolve().parents[3]


def node(name: str, **labels: str) -> NodeInfo:
    return NodeInfo({"metadata": {"name": name, "labels": labels},
                     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


POD = {"metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x"}]}}


def test_v1_0_provider_keeps_v1_0s_default_set():
    """DefaultProvider is v1.5's set now (test_interpod_priority); v1.0's is kept by name."""
    algorithm = from_provider("V1.0Provider")
    assert list(algorithm.predicates) == ["PodFitsPorts", "PodFitsResources", "NoDiskConflict",
                                          "MatchNodeSelector", "HostName"]
    assert [(p.name, p.weight) for p in algorithm.priorities] == [
        ("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
        ("ServiceSpreadingPriority", 1)]
    with pytest.raises(PolicyError, match="unknown algorithm provider 'Nope'; known: "):
        from_provider("Nope")


async def test_shipped_policy_loads_and_its_arguments_act():
    algorithm = load_policy(REPO / "configs/scheduler-policy.json")
    assert "RequireZoneLabel" in algorithm.predicates
    sched = GenericScheduler(algorithm.predicates, algorithm.priorities)
    nodes = build([node("no-zone"), node("zoned", zone="a"),
                   node("zoned-ssd", zone="b", ssd="true")])
    result = await sched.schedule(POD, nodes)
    assert result.failed == {"no-zone": ["node(s) didn't have the requested labels"]}
    assert result.node == "zoned-ssd"  # PreferSSD breaks the tie


@pytest.mark.parametrize("policy,message", [
    ({"predicates": [{"name": "PodFitsFoo"}]}, "unknown predicate 'PodFitsFoo'; known: "),
    ({"priorities": [{"name": "LeastRequestedPriority", "weight": 0}]},
     "priority LeastRequestedPriority should have a positive weight applied to it"),
    ({"priorities": [{"name": "Nope", "weight": 1}]}, "unknown priority 'Nope'"),
    ({"predicates": [{"name": "X", "argument": {"frob": {}}}]}, "unknown argument ['frob']"),
    ({"kind": "Pod"}, "kind must be Policy"),
    ({"extenders": [{"filterVerb": "filter"}]}, "an extender needs a urlPrefix"),
])
def test_bad_policies_name_the_problem(policy, message):
    with pytest.raises(PolicyError) as info:
        from_policy(policy)
    assert message in str(info.value)


def test_policy_file_errors_name_the_file(tmp_path: Path):
    bad = tmp_path / "p.json"
    bad.write_text('{"predicates": [')
    with pytest.raises(PolicyError, match=r"p.json is not valid JSON: line 1"):
        load_policy(bad)
    bad.write_text(json.dumps({"predicates": [{"name": "Nope"}]}))
    with pytest.raises(PolicyError, match=r"policy file .*p.json: unknown predicate 'Nope'"):
        load_policy(bad)
