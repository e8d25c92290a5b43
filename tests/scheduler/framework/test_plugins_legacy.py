"""The legacy mapping: every v1.0/v1.5 predicate and priority becomes a plugin, a Policy or an
--algorithm-provider becomes a Profile, and the mapped Filter plugins keep the same nodes as the
predicates they replace.
"""

from __future__ import annotations

import numpy as np
import pytest

from minikube_py.scheduler import factory
from minikube_py.scheduler.algorithm.predicates import PREDICATE_FACTORIES
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState
from minikube_py.scheduler.framework.plugins import legacy, registry
from minikube_py.scheduler.framework.plugins.legacy import (
    profile_for_policy,
    profile_for_provider,
)

from .plugin_helpers import node, pod, table

#: the framework-only plugins the fw-runtime helper provides (not filter/score plugins)
RUNTIME_PLUGINS = {"PrioritySort", "SchedulingGates", "DefaultBinder", "DefaultPreemption"}
METHODS = {"preFilter": "pre_filter", "filter": "filter", "preScore": "pre_score",
           "score": "score", "reserve": "reserve", "preBind": "pre_bind"}


def every_name() -> tuple[set[str], set[str]]:
    predicates = {*factory.PREDICATES, *factory.BUILT_PREDICATES, *PREDICATE_FACTORIES}
    priorities = {*factory.PRIORITIES, *factory.BUILT_PRIORITIES}
    for preds, prios in factory.PROVIDERS.values():
        predicates |= set(preds)
        priorities |= {name for name, _w in prios}
    return predicates, priorities


def test_every_predicate_and_priority_of_factory_maps_to_a_plugin():
    predicates, priorities = every_name()
    assert predicates - set(legacy.PREDICATE_PLUGINS) == set()
    assert priorities - set(legacy.PRIORITY_PLUGINS) == set()
    for name in predicates:
        for plugin in legacy.PREDICATE_PLUGINS[name]:
            assert plugin in registry.IN_TREE, (name, plugin)
    for name in priorities:
        plugin, _strategy = legacy.PRIORITY_PLUGINS[name]
        assert plugin is None or plugin in registry.IN_TREE, (name, plugin)


def test_each_mapped_point_is_implemented_by_the_plugin():
    factories = registry.in_tree_registry()
    for points in (legacy.FILTER_POINTS, legacy.SCORE_POINTS):
        for name, wanted in points.items():
            plugin = factories[name]({}, None)
            assert plugin.name == name
            for point in wanted:
                assert callable(getattr(plugin, METHODS[point], None)), (name, point)


def names(profile, point):
    return [ref.name for ref in profile.enabled(point)]


def test_default_provider_profile():
    profile = profile_for_provider("DefaultProvider")
    assert names(profile, "filter") == [
        "NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity",
        "VolumeRestrictions", "TaintToleration", "NodeVolumeLimits", "VolumeZone",
        "InterPodAffinity"]
    weights = {ref.name: ref.weight for ref in profile.enabled("score")}
    assert weights == {"PodTopologySpread": 1, "InterPodAffinity": 1, "NodeResourcesFit": 1,
                       "NodeResourcesBalancedAllocation": 1, "NodePreferAvoidPods": 10000,
                       "NodeAffinity": 1, "TaintToleration": 1}
    assert profile.args("NodeResourcesFit")["scoringStrategy"]["type"] == "LeastAllocated"
    assert profile.args("PodTopologySpread") == {"defaultingType": "System"}
    assert names(profile, "queueSort") == ["PrioritySort"]
    assert names(profile, "bind") == ["DefaultBinder"]
    assert names(profile, "postFilter") == ["DefaultPreemption"]
    autoscaler = profile_for_provider("ClusterAutoscalerProvider")
    assert autoscaler.args("NodeResourcesFit")["scoringStrategy"]["type"] == "MostAllocated"


def test_v1_0_provider_profile():
    profile = profile_for_provider("V1.0Provider")
    assert names(profile, "filter") == ["NodeUnschedulable", "NodeName", "NodePorts",
                                        "NodeAffinity", "NodeResourcesFit", "VolumeRestrictions",
                                        "TaintToleration"]
    assert {r.name: r.weight for r in profile.enabled("score")} == {
        "NodeResourcesBalancedAllocation": 1, "NodeResourcesFit": 1, "PodTopologySpread": 1}


def test_policy_arguments_become_plugin_args():
    profile = profile_for_policy({"kind": "Policy", "predicates": [
        {"name": "zones", "argument": {"serviceAffinity": {"labels": ["zone"]}}},
        {"name": "retiring", "argument": {"labelsPresence": {"labels": ["retiring"], "presence": False}}},
        {"name": "PodFitsPorts"}],
        "priorities": [
        {"name": "ssd", "weight": 2, "argument": {"labelPreference": {"label": "ssd", "presence": True}}},
        {"name": "spread-rack", "weight": 3, "argument": {"serviceAntiAffinity": {"label": "rack"}}},
        {"name": "InterPodAffinityPriority", "weight": 1}]},
        factory.AlgorithmArgs(hard_pod_affinity_symmetric_weight=7))
    assert profile.args("ServiceAffinity") == {"affinityLabels": ["zone"],
                                               "antiAffinityLabelsPreference": ["rack"]}
    assert profile.args("NodeLabel") == {"absentLabels": ["retiring"],
                                         "presentLabelsPreference": ["ssd"]}
    assert profile.args("InterPodAffinity") == {"hardPodAffinityWeight": 7}
    assert "NodePorts" in names(profile, "filter") and "NodePorts" in names(profile, "preFilter")
    # mandatory predicates are always there
    assert {"TaintToleration", "NodeUnschedulable"} <= set(names(profile, "filter"))
    assert {r.name: r.weight for r in profile.enabled("score")}["ServiceAffinity"] == 3


def test_requested_to_capacity_ratio_argument_and_policy_symmetric_weight():
    profile = profile_for_policy({"kind": "Policy", "hardPodAffinitySymmetricWeight": 5,
        "predicates": [], "priorities": [
        {"name": "binpack", "weight": 2, "argument": {"requestedToCapacityRatioArguments": {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "resources": [{"name": "cpu", "weight": 3}]}}},
        {"name": "InterPodAffinityPriority", "weight": 1}]})
    assert profile.args("NodeResourcesFit") == {"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 3}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                               {"utilization": 100, "score": 10}]}}}
    assert profile.args("InterPodAffinity") == {"hardPodAffinityWeight": 5}
    assert {r.name: r.weight for r in profile.enabled("score")}["NodeResourcesFit"] == 2
    with pytest.raises(factory.PolicyError, match="must be in 0-100"):
        profile_for_policy({"hardPodAffinitySymmetricWeight": 101})


def test_missing_fields_get_upstream_defaults_and_empty_lists_stay_empty():
    profile = profile_for_policy({"kind": "Policy"})
    assert "PodTopologySpread" in names(profile, "filter")  # EvenPodsSpread is a default
    assert {r.name: r.weight for r in profile.enabled("score")}["PodTopologySpread"] == 2
    bare = profile_for_policy({"kind": "Policy", "predicates": [], "priorities": []})
    assert names(bare, "filter") == ["NodeUnschedulable", "TaintToleration"]
    assert names(bare, "score") == []


@pytest.mark.parametrize("policy,message", [
    ({"priorities": [{"name": "LeastRequestedPriority", "weight": 1},
                     {"name": "MostRequestedPriority", "weight": 1}]},
     "LeastAllocated and MostAllocated both configure NodeResourcesFit's scoringStrategy"),
    ({"priorities": [{"name": "LeastRequestedPriority", "weight": 0}]},
     "priority LeastRequestedPriority should have a positive weight applied to it"),
    ({"predicates": [{"name": "NoSuchPredicate"}]}, 'predicate type not found for "NoSuchPredicate"'),
    ({"priorities": [{"name": "NoSuch", "weight": 1}]}, 'priority type not found for "NoSuch"'),
    ({"kind": "Other"}, "kind must be Policy"),
])
def test_policies_that_cannot_be_expressed_are_refused(policy, message):
    with pytest.raises(factory.PolicyError, match=message):
        profile_for_policy(policy)


def framework_failures(profile, raw_pod, nodes) -> set[str]:
    """The nodes the profile's PreFilter/Filter plugins reject, run in profile order."""
    factories = registry.in_tree_registry()
    state = CycleState()
    meta = PodMeta.of(raw_pod)
    plugins = {ref.name: factories[ref.name](profile.args(ref.name), None)
               for point in ("preFilter", "filter") for ref in profile.enabled(point)}
    skipped = set()
    for ref in profile.enabled("preFilter"):
        _result, status = plugins[ref.name].pre_filter(state, meta, nodes)
        if status is not None and status.code is Code.SKIP:
            skipped.add(ref.name)
        elif status is not None:
            return set(nodes.names)
    failed = nodes.everywhere(False)
    for ref in profile.enabled("filter"):
        if ref.name in skipped:
            continue
        for _status, mask in plugins[ref.name].filter(state, meta, nodes, ~failed):
            failed |= mask
    return {nodes.names[r] for r in np.flatnonzero(failed).tolist()}


def predicate_failures(algorithm, raw_pod, nodes) -> set[str]:
    meta = PodMeta.of(raw_pod)
    failed = nodes.everywhere(False)
    for predicate in algorithm.predicates.values():
        for _reason, mask in predicate(meta, nodes):
            failed |= mask
    return {nodes.names[r] for r in np.flatnonzero(failed).tolist()}


@pytest.mark.parametrize("provider", ["DefaultProvider", "V1.0Provider"])
def test_mapped_filters_keep_the_nodes_the_predicates_keep(provider):
    taint = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
    web = pod("web", cpu="500m", labels={"app": "web"},
              containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 80}],
                           "resources": {"requests": {"cpu": "500m"}}}])
    nodes = table([node("small", cpu="1", memory="1Gi"), node("big", cpu="8", memory="16Gi"),
                   node("tainted", cpu="8", taints=taint), node("ssd", labels={"disk": "ssd"}),
                   node("ported"), node("pd")],
                  {"small": [pod("hog", cpu="900m")], "ported": [web],
                   "pd": [pod("pdholder", spec={"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]})]})
    cases = [
        pod("plain", cpu="500m"),
        pod("selective", cpu="100m", spec={"nodeSelector": {"disk": "ssd"}}),
        pod("named", spec={}, node_name="big"),
        {**web, "metadata": {**web["metadata"], "name": "web2"}},
        pod("pd-user", spec={"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]}),
        pod("tolerant", spec={"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
    ]
    algorithm = factory.from_provider(provider)
    profile = profile_for_provider(provider)
    for raw in cases:
        expected = predicate_failures(algorithm, raw, nodes)
        if provider == "V1.0Provider":
            expected |= {"tainted"} if not raw["spec"].get("tolerations") else set()
        assert framework_failures(profile, raw, nodes) == expected, raw["metadata"]["name"]


def test_scale_change_least_requested_0_10_vs_least_allocated_0_100():
    # the same formula on a finer scale: per resource floor(100 f) is within [10 floor(10 f),
    # 10 floor(10 f) + 9], so after the two integer averages the plugin's score is 10x v1.5's
    # plus 0..14 — ten times larger, never ranking a node v1.5 scored lower above by more
    # than the rounding v1.5 threw away
    import random

    from minikube_py.scheduler.algorithm.priorities import (
        PriorityContext,
        least_requested_priority,
    )
    from minikube_py.scheduler.framework.plugins.noderesources_fit import (
        NodeResourcesFit,
    )

    from .plugin_helpers import run_score
    rng = random.Random(11)
    sizes = [(f"{rng.randint(1, 64)}", f"{rng.randint(1, 256)}Gi") for _ in range(60)]
    nodes = table([node(f"n{i}", cpu=c, memory=m) for i, (c, m) in enumerate(sizes)],
                  {f"n{i}": [pod(f"x{i}", cpu=f"{rng.randint(0, 900)}m",
                                 memory=f"{rng.randint(0, 900)}Mi")] for i in range(60)})
    incoming = pod("p", cpu="500m", memory="700Mi")
    v15 = least_requested_priority(incoming, nodes, np.arange(nodes.size), PriorityContext())
    plugin = run_score(NodeResourcesFit({}), incoming, nodes)
    for i, name in enumerate(nodes.names):
        assert 0 <= plugin[name] - 10 * int(v15[i]) <= 14, name


def test_plugins_implement_exactly_upstreams_extension_points():
    # the configuration's table of upstream 1.31's interface assertions (fw-config) and the
    # plugins themselves must agree, or a profile would list a point a plugin lacks
    from minikube_py.scheduler.framework.config.default_plugins import IN_TREE_POINTS
    from minikube_py.scheduler.framework.config.expand import (
        points_of,
        registered_points,
    )

    factories = registry.in_tree_registry()
    for name, points in IN_TREE_POINTS.items():
        if name not in registry.IN_TREE or name in RUNTIME_PLUGINS:
            continue
        assert points_of(factories[name]({}, None)) == points, name
    for name in ("NodeLabel", "ServiceAffinity", "NodePreferAvoidPods"):
        assert registered_points(name) == points_of(factories[name]({}, None)), name
