"""Priority functions and prioritize: upstream's worked examples, table-driven.

Most tables are transcribed from upstream plugin/pkg/scheduler/algorithm/priorities/*_test.go
(v1.2-v1.5): TestLeastRequested, TestBalancedResourceAllocation, TestZeroRequest,
TestNewNodeLabelPriority, TestImageLocalityPriority, TestSelectorSpreadPriority,
TestZoneSelectorSpreadPriority and TestZoneSpreadPriority (ServiceAntiAffinity). The comments
give upstream's arithmetic so a failing case can be checked by hand.

Cases are written as NodeInfos; `scores` builds the NodeTable from them and scores every row,
as the scheduler does when every node is feasible. Separate tests score a subset of the rows
and check the float32 zone blend against a step-by-step emulation of Go's arithmetic.
"""

from __future__ import annotations

import itertools
import random
import struct
from typing import Any

import numpy as np
import pytest

from minikube_py.api.labels import selector_from_label_selector, selector_from_set
from minikube_py.scheduler.algorithm import priorities_meta
from minikube_py.scheduler.algorithm.priorities import (
    PRIORITIES,
    PriorityConfig,
    PriorityContext,
    PriorityFunction,
    balanced_resource_allocation,
    image_locality_priority,
    least_requested_priority,
    most_requested_priority,
    node_affinity_priority,
    node_label_priority,
    prioritize,
    selector_spread_priority,
    service_anti_affinity,
    service_spreading_priority,
    taint_toleration_priority,
)
from minikube_py.scheduler.algorithm.priorities_spreading import spread_scores
from minikube_py.scheduler.nodeinfo import DEFAULT_MEMORY_REQUEST, NodeInfo
from minikube_py.scheduler.nodetable import ABSENT, build

_names = itertools.count()
MB = 1024 * 1024


def container(cpu: str | None = None, memory: str | None = None, image: str = "") -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"name": "c", "image": image, "resources": {"requests": requests}}


def pod(containers: list | None = None, labels: dict | None = None, namespace: str = "",
        **spec: Any) -> dict:
    spec = dict(spec)
    if containers is not None:
        spec["containers"] = containers
    return {"metadata": {"name": f"p{next(_names)}", "namespace": namespace,
                         "labels": labels or {}}, "spec": spec}


def node(name: str, cpu: int = 0, memory: int = 0, labels: dict | None = None,
         **extra: Any) -> dict:
    resources = {"cpu": f"{cpu}m", "memory": str(memory)}
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": extra.get("spec", {}),
            "status": {"capacity": resources, "allocatable": resources,
                       "images": extra.get("images", [])}}


def infos(nodes: list[dict], placed: list[tuple[str, dict]] = ()) -> list[NodeInfo]:
    """NodeInfos for `nodes`, with each (node name, pod) of `placed` added to its node."""
    by_name = {n["metadata"]["name"]: NodeInfo(node=n) for n in nodes}
    for name, p in placed:
        by_name[name].add_pod(p)
    return list(by_name.values())


def _matching(objs: list[dict]):
    """A GetPodServices/GetPodControllers double: same namespace, selector matches the pod."""
    def lister(p: dict) -> list[dict]:
        md = p.get("metadata") or {}
        out = []
        for obj in objs:
            if (obj.get("metadata") or {}).get("namespace", "") != md.get("namespace", ""):
                continue
            sel = obj["spec"]["selector"]
            selector = (selector_from_label_selector(sel) if "matchLabels" in sel
                        else selector_from_set(sel))
            if selector.matches(md.get("labels") or {}):
                out.append(obj)
        return out
    return lister


def ctx(services: list[dict] = (), controllers: list[dict] = (), all_pods=None) -> PriorityContext:
    return PriorityContext(services_for_pod=_matching(list(services)),
                           controllers_for_pod=_matching(list(controllers)),
                           all_pods=all_pods)


def scores(function: PriorityFunction, p: dict, node_infos: list[NodeInfo],
           context: PriorityContext) -> list[int]:
    """`function`'s scores with every node a candidate, in the nodes' order."""
    nodes = build(node_infos)
    result = function(p, nodes, np.arange(nodes.size), context)
    assert result.dtype == np.int64 and result.shape == (nodes.size,)
    return result.tolist()


def ranked(p: dict, node_infos: list[NodeInfo], configs: list[PriorityConfig],
           context: PriorityContext) -> list[tuple[str, int]]:
    """(node name, prioritize's total) with every node a candidate."""
    nodes = build(node_infos)
    rows = np.arange(nodes.size)
    totals = prioritize(p, nodes, rows, configs, context)
    assert totals.dtype == np.int64
    return [(nodes.names[row], total) for row, total in zip(rows.tolist(), totals.tolist())]


# ----------------------------------------------------------------------------- resources

NO_RESOURCES: list = []
CPU_ONLY = [container("1000m", "0"), container("2000m", "0")]
CPU_AND_MEMORY = [container("1000m", "2000"), container("2000m", "3000")]

RESOURCE_CASES = [
    # (test, pod containers, nodes (name, cpu, mem), placed (node, containers),
    #  least, balanced, most)
    ("nothing scheduled, nothing requested", NO_RESOURCES,
     [("m1", 4000, 10000), ("m2", 4000, 10000)], [],
     [10, 10], [10, 10], [0, 0]),
    # least m1: cpu ((4000-3000)*10)/4000 = 2, mem ((10000-5000)*10)/10000 = 5 -> 3
    # balanced m1: 10 - |0.75-0.5|*10 = 7.5 -> 7; m2 equal fractions -> 10
    ("nothing scheduled, resources requested, differently sized machines", CPU_AND_MEMORY,
     [("m1", 4000, 10000), ("m2", 6000, 10000)], [],
     [3, 5], [7, 10], [6, 5]),
    ("no resources requested, pods scheduled", NO_RESOURCES,
     [("m1", 4000, 10000), ("m2", 4000, 10000)],
     [("m1", NO_RESOURCES), ("m1", NO_RESOURCES), ("m2", NO_RESOURCES), ("m2", NO_RESOURCES)],
     [10, 10], [10, 10], [0, 0]),
    # least m1: cpu 4, mem 10 -> 7; m2: cpu 4, mem 7.5 -> 5
    ("no resources requested, pods scheduled with resources", NO_RESOURCES,
     [("m1", 10000, 20000), ("m2", 10000, 20000)],
     [("m1", CPU_ONLY), ("m1", CPU_ONLY), ("m2", CPU_ONLY), ("m2", CPU_AND_MEMORY)],
     [7, 5], [4, 6], [3, 4]),
    ("resources requested, pods scheduled with resources", CPU_AND_MEMORY,
     [("m1", 10000, 20000), ("m2", 10000, 20000)],
     [("m1", CPU_ONLY), ("m2", CPU_AND_MEMORY)],
     [5, 4], [6, 9], [4, 5]),
    ("resources requested, pods scheduled with resources, differently sized machines",
     CPU_AND_MEMORY, [("m1", 10000, 20000), ("m2", 10000, 50000)],
     [("m1", CPU_ONLY), ("m2", CPU_AND_MEMORY)],
     [5, 6], [6, 6], [4, 4]),
    # cpu 6000 > 4000: that resource scores 0 (least/most); balanced gives the node 0
    ("requested resources exceed node capacity", CPU_ONLY,
     [("m1", 4000, 10000), ("m2", 4000, 10000)],
     [("m1", CPU_ONLY), ("m2", CPU_AND_MEMORY)],
     [5, 2], [0, 0], [0, 2]),
    ("zero node resources, pods scheduled with resources", NO_RESOURCES,
     [("m1", 0, 0), ("m2", 0, 0)], [("m1", CPU_ONLY), ("m2", CPU_AND_MEMORY)],
     [0, 0], [0, 0], [0, 0]),
]


def _resource_setup(pod_containers, nodes, placed):
    ns = [node(name, cpu, mem) for name, cpu, mem in nodes]
    return pod(pod_containers), infos(ns, [(n, pod(c)) for n, c in placed])


@pytest.mark.parametrize("case", RESOURCE_CASES, ids=[c[0] for c in RESOURCE_CASES])
@pytest.mark.parametrize("function, column", [
    (least_requested_priority, 4), (balanced_resource_allocation, 5),
    (most_requested_priority, 6),
])
def test_resource_priorities(case, function, column):
    p, nodes = _resource_setup(case[1], case[2], case[3])
    assert scores(function, p, nodes, ctx()) == case[column]


def test_resource_priorities_count_defaults_for_zero_request_containers():
    # a container without requests counts as 100m / 200MB: on a 1000m node that is 9
    p = pod([container()])
    nodes = infos([node("m1", 1000, DEFAULT_MEMORY_REQUEST * 10)])
    assert scores(least_requested_priority, p, nodes, ctx()) == [9]
    assert scores(most_requested_priority, p, nodes, ctx()) == [1]


# upstream TestZeroRequest: LeastRequested + Balanced + SelectorSpread, weight 1 each
SMALL = [container("100m", str(DEFAULT_MEMORY_REQUEST))]
LARGE = [container("300m", str(DEFAULT_MEMORY_REQUEST * 3))]


@pytest.mark.parametrize("incoming, all_25", [
    ([container()], True), (SMALL, True), (LARGE, False),
])
def test_zero_request_pod_scores_like_default_request(incoming, all_25):
    nodes = infos([node("m1", 1000, DEFAULT_MEMORY_REQUEST * 10),
                   node("m2", 1000, DEFAULT_MEMORY_REQUEST * 10)],
                  [("m1", pod(LARGE)), ("m1", pod([container()])),
                   ("m2", pod(LARGE)), ("m2", pod(SMALL))])
    configs = [PriorityConfig(n, PRIORITIES[n], 1) for n in
               ("LeastRequestedPriority", "BalancedResourceAllocation", "SelectorSpreadPriority")]
    result = ranked(pod(incoming), nodes, configs, ctx())
    assert [name for name, _ in result] == ["m1", "m2"]
    assert all((score == 25) == all_25 for _, score in result), result


# ----------------------------------------------------------------------------- images


def _image(size_mb: int, *names: str) -> dict:
    return {"names": list(names), "sizeBytes": size_mb * MB}


IMAGE_NODES = [
    node("m1", images=[_image(40, "gcr.io/40", "gcr.io/40:v1", "gcr.io/40:v1"),
                       _image(140, "gcr.io/140", "gcr.io/140:v1"), _image(2000, "gcr.io/2000")]),
    node("m2", images=[_image(250, "gcr.io/250"), _image(10, "gcr.io/10", "gcr.io/10:v1")]),
]


@pytest.mark.parametrize("images, expected", [
    # m1: (40M-23M)*10/977M + 1 = 1; m2: (250M-23M)*10/977M + 1 = 3
    (("gcr.io/40", "gcr.io/250"), [1, 3]),
    # m1: (180M-23M)*10/977M + 1 = 2; m2 has neither
    (("gcr.io/40", "gcr.io/140"), [2, 0]),
    # 2000M >= max -> 10; 10M < min -> 0
    (("gcr.io/10", "gcr.io/2000"), [10, 0]),
    ((), [0, 0]),
])
def test_image_locality(images, expected):
    p = pod([container(image=i) for i in images])
    assert scores(image_locality_priority, p, infos(IMAGE_NODES), ctx()) == expected


# ----------------------------------------------------------------------------- node labels

LABEL_NODES = [node("m1", labels={"foo": "bar"}), node("m2", labels={"bar": "foo"}),
               node("m3", labels={"bar": "baz"})]


@pytest.mark.parametrize("label, presence, expected", [
    ("baz", True, [0, 0, 0]), ("baz", False, [10, 10, 10]),
    ("foo", True, [10, 0, 0]), ("foo", False, [0, 10, 10]),
    ("bar", True, [0, 10, 10]), ("bar", False, [10, 0, 0]),
])
def test_node_label_priority(label, presence, expected):
    priority = node_label_priority(label, presence)
    assert scores(priority, pod(), infos(LABEL_NODES), ctx()) == expected


# ----------------------------------------------------------------------------- spreading

L1 = {"foo": "bar", "baz": "blah"}
L2 = {"bar": "foo", "baz": "blah"}


def svc(selector: dict, namespace: str = "") -> dict:
    return {"metadata": {"namespace": namespace}, "spec": {"selector": selector}}


def rs(match_labels: dict) -> dict:
    return {"metadata": {"namespace": ""}, "spec": {"selector": {"matchLabels": match_labels}}}


SPREAD_CASES = [
    # (test, pod labels, pod ns, placed (node, labels, ns), services, controllers, expected)
    ("nothing scheduled", {}, "", [], [], [], [10, 10]),
    ("no services", L1, "", [("m1", {}, "")], [], [], [10, 10]),
    ("different services", L1, "", [("m1", L2, "")], [svc({"key": "value"})], [], [10, 10]),
    ("two pods, one service pod", L1, "", [("m1", L2, ""), ("m2", L1, "")],
     [svc(L1)], [], [10, 0]),
    ("five pods, one service pod in no namespace", L1, "",
     [("m1", L2, ""), ("m1", L1, "default"), ("m1", L1, "ns1"), ("m2", L1, ""), ("m2", L2, "")],
     [svc(L1)], [], [10, 0]),
    ("five pods, one service pod in specific namespace", L1, "ns1",
     [("m1", L1, ""), ("m1", L1, "default"), ("m1", L1, "ns2"), ("m2", L1, "ns1"),
      ("m2", L2, "")], [svc(L1, "ns1")], [], [10, 0]),
    ("three pods, two service pods on different machines", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")], [svc(L1)], [], [0, 0]),
    ("four pods, three service pods", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, ""), ("m2", L1, "")], [svc(L1)], [], [5, 0]),
    ("service with partial pod label matches", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")], [svc({"baz": "blah"})], [], [0, 5]),
    ("service and replication controller", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")],
     [svc({"baz": "blah"})], [svc({"foo": "bar"})], [0, 5]),
    ("disjoint service and replica set", {"foo": "bar", "bar": "foo"}, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")],
     [svc({"bar": "foo"})], [rs({"foo": "bar"})], [0, 5]),
    ("replica set with partial pod label matches", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")], [], [rs({"foo": "bar"})], [0, 0]),
    ("replication controller with partial pod label matches", L1, "",
     [("m1", L2, ""), ("m1", L1, ""), ("m2", L1, "")], [], [svc({"baz": "blah"})], [0, 5]),
]


@pytest.mark.parametrize("case", SPREAD_CASES, ids=[c[0] for c in SPREAD_CASES])
def test_selector_spread(case):
    _, labels, namespace, placed, services, controllers, expected = case
    nodes = infos([node("m1"), node("m2")],
                  [(n, pod(labels=lb, namespace=ns)) for n, lb, ns in placed])
    p = pod(labels=labels, namespace=namespace)
    assert scores(selector_spread_priority, p, nodes, ctx(services, controllers)) == expected


def test_selector_spread_ignores_terminating_pods_and_service_spreading_ignores_controllers():
    gone = pod(labels=L1)
    gone["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    nodes = infos([node("m1"), node("m2")], [("m1", gone), ("m2", pod(labels=L1))])
    assert scores(selector_spread_priority, pod(labels=L1), nodes, ctx([svc(L1)])) == [10, 0]
    only_rc = ctx(controllers=[svc(L1)])
    assert scores(selector_spread_priority, pod(labels=L1), nodes, only_rc) == [10, 0]
    assert scores(service_spreading_priority, pod(labels=L1), nodes, only_rc) == [10, 10]


ZONE = "failure-domain.beta.kubernetes.io/zone"
ZONE_NODES = ["machine1.zone1", "machine1.zone2", "machine2.zone2",
              "machine1.zone3", "machine2.zone3", "machine3.zone3"]
Z1 = {"label1": "l1", "baz": "blah"}
Z2 = {"label2": "l2", "baz": "blah"}


@pytest.mark.parametrize("placed, services, controllers, expected", [
    ([], [], [], [10, 10, 10, 10, 10, 10]),
    ([("machine1.zone1", Z2), ("machine1.zone2", Z1)], [svc(Z1)], [],
     [10, 0, 3, 10, 10, 10]),
    ([("machine1.zone1", Z2), ("machine1.zone2", Z1), ("machine2.zone2", Z1),
      ("machine1.zone3", Z2), ("machine2.zone3", Z1)], [svc(Z1)], [],
     [10, 0, 0, 6, 3, 6]),
    ([("machine1.zone1", Z1), ("machine1.zone2", Z1), ("machine2.zone2", Z2),
      ("machine1.zone3", Z1)], [svc(Z1)], [], [0, 0, 3, 0, 3, 3]),
    ([("machine1.zone3", Z1), ("machine1.zone2", Z1), ("machine1.zone3", Z1)], [], [svc(Z1)],
     [10, 5, 6, 0, 3, 3]),
])
def test_zone_selector_spread(placed, services, controllers, expected):
    zone_of = {name: name.split(".")[1] for name in ZONE_NODES}
    nodes = infos([node(n, labels={ZONE: zone_of[n]}) for n in ZONE_NODES],
                  [(n, pod(labels=lb)) for n, lb in placed])
    context = ctx(services, controllers)
    assert scores(selector_spread_priority, pod(labels=Z1), nodes, context) == expected


ANTI_NODES = [("machine11", {"zone": "zone1"}), ("machine12", {"zone": "zone1"}),
              ("machine21", {"zone": "zone2"}), ("machine22", {"zone": "zone2"}),
              ("machine01", {"name": "value"}), ("machine02", {"name": "value"})]


@pytest.mark.parametrize("placed, services, expected", [
    ([], [], [10, 10, 10, 10, 0, 0]),
    ([("machine11", L2, ""), ("machine21", L1, "")], [svc({"key": "value"})],
     [10, 10, 10, 10, 0, 0]),
    ([("machine01", L2, ""), ("machine11", L2, ""), ("machine21", L1, "")], [svc(L1)],
     [10, 10, 0, 0, 0, 0]),
    ([("machine11", L2, ""), ("machine11", L1, ""), ("machine21", L1, "")], [svc(L1)],
     [5, 5, 5, 5, 0, 0]),
    ([("machine11", L2, ""), ("machine11", L1, ""), ("machine21", L1, ""),
      ("machine21", L1, "")], [svc(L1)], [6, 6, 3, 3, 0, 0]),
    ([("machine11", L2, ""), ("machine11", L1, ""), ("machine21", L1, "")],
     [svc({"baz": "blah"})], [3, 3, 6, 6, 0, 0]),
    # 4 service pods, one on a node without the label: zone1 10*3/4 = 7, zone2 10*2/4 = 5
    ([("machine01", L1, ""), ("machine11", L1, ""), ("machine21", L1, ""),
      ("machine21", L1, "")], [svc(L1)], [7, 7, 5, 5, 0, 0]),
])
@pytest.mark.parametrize("cluster_wide", [True, False])
def test_service_anti_affinity(placed, services, expected, cluster_wide):
    placed_pods = [(n, pod(labels=lb, namespace=ns, nodeName=n)) for n, lb, ns in placed]
    nodes = infos([node(n, labels=lb) for n, lb in ANTI_NODES], placed_pods)
    all_pods = (lambda: [p for _, p in placed_pods]) if cluster_wide else None
    priority = service_anti_affinity("zone")
    assert scores(priority, pod(labels=L1), nodes, ctx(services, all_pods=all_pods)) == expected


def test_service_anti_affinity_counts_pods_on_nodes_that_are_not_candidates():
    # upstream counts the service's pods cluster-wide: a pod on a node that failed the
    # predicates still makes its zone less attractive
    elsewhere = pod(labels=L1, nodeName="machine99")
    nodes = infos([node(n, labels=lb) for n, lb in ANTI_NODES[:4]],
                  [("machine11", pod(labels=L1, nodeName="machine11"))])
    all_pods = lambda: [elsewhere, *nodes[0].pods.values(), pod(labels=L1)]
    assert scores(service_anti_affinity("zone"), pod(labels=L1), nodes,
                  ctx([svc(L1)], all_pods=all_pods)) == [5, 5, 10, 10]


# ----------------------------------------------------------------------------- affinity, taints


def preferred(*terms: tuple[int, list[dict]], fields: list[dict] | None = None) -> dict:
    prefs = [{"weight": w, "preference": {"matchExpressions": exprs}} for w, exprs in terms]
    if fields is not None:
        prefs.append({"weight": 3, "preference": {"matchFields": fields}})
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefs}}


FOO_BAR = {"key": "foo", "operator": "In", "values": ["bar"]}
KEY_VALUE = {"key": "key", "operator": "In", "values": ["value"]}
AZ1 = {"key": "az", "operator": "In", "values": ["az1"]}
AFFINITY_NODES = [node("m1", labels={"foo": "bar"}), node("m5", labels={
    "foo": "bar", "key": "value", "az": "az1"}), node("m2", labels={"key": "value"})]


@pytest.mark.parametrize("affinity, expected", [
    (None, [0, 0, 0]),
    (preferred((2, [{"key": "foo", "operator": "In", "values": ["nope"]}])), [0, 0, 0]),
    (preferred((2, [FOO_BAR])), [10, 10, 0]),
    # upstream: points 2, 11, 4 -> int(10*2/11) = 1, 10, int(10*4/11) = 3
    (preferred((2, [FOO_BAR]), (4, [KEY_VALUE]), (5, [FOO_BAR, KEY_VALUE, AZ1])), [1, 10, 3]),
    (preferred((0, [FOO_BAR]), (1, [KEY_VALUE])), [0, 10, 10]),       # weight 0 is skipped
    (preferred((5, [])), [0, 0, 0]),                                   # empty term: nothing
    (preferred((2, [{"key": "foo", "operator": "Bogus"}])), [0, 0, 0]),
    (preferred((1, [{"key": "az", "operator": "DoesNotExist"}])), [10, 0, 10]),
    (preferred(fields=[{"key": "metadata.name", "operator": "In", "values": ["m2"]}]),
     [0, 0, 10]),
    (preferred(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["m2"]}]),
     [10, 10, 0]),
    # matchFields take In/NotIn with one value (NodeSelectorRequirementsAsFieldSelector)
    (preferred(fields=[{"key": "metadata.name", "operator": "Exists"}]), [0, 0, 0]),
])
def test_node_affinity_priority(affinity, expected):
    p = pod(affinity=affinity) if affinity else pod()
    assert scores(node_affinity_priority, p, infos(AFFINITY_NODES), ctx()) == expected


def taint(key: str, value: str = "", effect: str = "PreferNoSchedule") -> dict:
    return {"key": key, "value": value, "effect": effect}


TAINT_NODES = [node("m1"), node("m2", spec={"taints": [taint("foo", "bar")]}),
               node("m3", spec={"taints": [taint("foo", "blah"), taint("cpu", "x")]}),
               node("m4", spec={"taints": [taint("hard", effect="NoSchedule")]})]


@pytest.mark.parametrize("tolerations, expected", [
    ([], [10, 5, 0, 10]),
    ([{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
     [10, 10, 0, 10]),
    ([{"key": "foo", "operator": "Exists"}], [10, 10, 0, 10]),        # counts 0, 0, 1
    ([{"operator": "Exists"}], [10, 10, 10, 10]),
    ([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}], [10, 5, 0, 10]),
    ([{"key": "cpu", "value": "x"}], [10, 0, 0, 10]),                 # counts 0, 1, 1
])
def test_taint_toleration_priority(tolerations, expected):
    p = pod(tolerations=tolerations)
    assert scores(taint_toleration_priority, p, infos(TAINT_NODES), ctx()) == expected


# ----------------------------------------------------------------------------- prioritize


def test_registry_names():
    assert set(PRIORITIES) == {
        "LeastRequestedPriority", "MostRequestedPriority", "BalancedResourceAllocation",
        "SelectorSpreadPriority", "ServiceSpreadingPriority", "ImageLocalityPriority",
        "NodeAffinityPriority", "TaintTolerationPriority", "EqualPriority",
        "NodePreferAvoidPodsPriority", "InterPodAffinityPriority"}


def test_prioritize_sums_weighted_scores_in_node_order():
    p, nodes = _resource_setup(CPU_AND_MEMORY, [("m1", 4000, 10000), ("m2", 6000, 10000)], [])
    configs = [PriorityConfig("LeastRequestedPriority", least_requested_priority, 1),
               PriorityConfig("BalancedResourceAllocation", balanced_resource_allocation, 2),
               PriorityConfig("label", node_label_priority("nope", False), 3)]
    # least [3, 5], balanced [7, 10], label [10, 10]
    assert ranked(p, nodes, configs, ctx()) == [("m1", 3 + 14 + 30), ("m2", 5 + 20 + 30)]


def test_prioritize_without_configs_is_equal_priority():
    nodes = infos([node("b"), node("a")])
    assert ranked(pod(), nodes, [], ctx()) == [("b", 1), ("a", 1)]
    assert scores(PRIORITIES["EqualPriority"], pod(), nodes, ctx()) == [1, 1]


def test_prioritize_skips_weight_zero_and_rejects_wrong_lengths():
    def boom(*_):
        raise AssertionError("weight-0 priority must not run")

    nodes = infos([node("m1"), node("m2")])
    configs = [PriorityConfig("boom", boom, 0),
               PriorityConfig("eq", PRIORITIES["EqualPriority"], 4)]
    assert ranked(pod(), nodes, configs, ctx()) == [("m1", 4), ("m2", 4)]
    short = PriorityConfig("short", lambda p, n, r, c: np.ones(1, dtype=np.int64), 1)
    with pytest.raises(ValueError, match="short"):
        ranked(pod(), nodes, [short], ctx())


def test_prioritize_computes_pod_side_values_once(monkeypatch):
    calls = []
    real = priorities_meta.pod_nonzero_requests
    monkeypatch.setattr(priorities_meta, "pod_nonzero_requests",
                        lambda p: calls.append(1) or real(p))
    p, nodes = _resource_setup(CPU_AND_MEMORY, [(f"m{i}", 4000, 10000) for i in range(50)], [])
    configs = [PriorityConfig(name, PRIORITIES[name], 1) for name in
               ("LeastRequestedPriority", "MostRequestedPriority", "BalancedResourceAllocation")]
    context = ctx()
    table = build(nodes)
    rows = np.arange(table.size)
    prioritize(p, table, rows, configs, context)
    prioritize(p, table, rows, configs, context)
    assert len(calls) == 2  # once per decision, not per node or per priority


def test_priorities_do_not_mutate_inputs():
    import copy
    p = pod(CPU_AND_MEMORY, labels=L1, affinity=preferred((2, [FOO_BAR])),
            tolerations=[{"operator": "Exists"}])
    nodes = infos(AFFINITY_NODES + TAINT_NODES[1:2], [("m1", pod(labels=L1))])
    before = copy.deepcopy((p, [n.node for n in nodes]))
    configs = [PriorityConfig(name, fn, 1) for name, fn in PRIORITIES.items()]
    ranked(p, nodes, configs, ctx([svc(L1)]))
    assert (p, [n.node for n in nodes]) == before


def test_empty_context_lists_nothing():
    context = PriorityContext.empty()
    nodes = infos([node("m1"), node("m2")], [("m1", pod(labels=L1))])
    assert scores(selector_spread_priority, pod(labels=L1), nodes, context) == [10, 10]
    assert scores(service_anti_affinity("zone"), pod(labels=L1), nodes, context) == [0, 0]


# ----------------------------------------------------------------------------- table shape

_F32 = struct.Struct("f")


def _f32(x: float) -> float:
    """Round to the nearest float32: Go's float32 arithmetic, one operation at a time."""
    return _F32.unpack(_F32.pack(x))[0]


def _reference_spread(counts: list[int], zones: list[int]) -> list[int]:
    """upstream selector_spreading.go's scores with each float32 step emulated in Python
    (zone 0: the node has no zone) — the scalar implementation the vectorised one replaced."""
    max_count = max(counts, default=0)
    by_zone: dict[int, int] = {}
    for zone, count in zip(zones, counts):
        if zone:
            by_zone[zone] = by_zone.get(zone, 0) + count
    max_zone = max(by_zone.values(), default=0)
    out = []
    for zone, count in zip(zones, counts):
        score = 10.0
        if max_count > 0:
            score = _f32(10 * _f32((max_count - count) / max_count))
        if zone:
            zone_score = 10.0
            if max_zone > 0:
                zone_score = _f32(10 * _f32((max_zone - by_zone[zone]) / max_zone))
            score = _f32(_f32(score * _f32(1.0 - 2.0 / 3.0)) + _f32(_f32(2.0 / 3.0) * zone_score))
        out.append(int(score))
    return out


def test_spread_scores_match_go_float32_step_by_step():
    rng = random.Random(7)
    for _ in range(3000):
        n = rng.randint(1, 40)
        top = rng.choice((1, 3, 10, 50, 400))
        counts = [rng.randint(0, top) for _ in range(n)]
        zones = [rng.choice((0, 1, 2, 3, 4, 5)) if rng.random() < 0.8 else 0 for _ in range(n)]
        got = spread_scores(np.array(counts, dtype=np.int64), np.array(zones, dtype=np.int32))
        assert got.tolist() == _reference_spread(counts, zones), (counts, zones)


def test_spread_scores_without_zones_equal_the_integer_formula():
    # Go's float32 expression and the exact floor 10 * (max - count) // max agree here
    for max_count in range(1, 401):
        counts = np.arange(max_count + 1, dtype=np.int64)
        got = spread_scores(counts, np.full(len(counts), ABSENT, dtype=np.int32))
        assert got.tolist() == (10 * (max_count - counts) // max_count).tolist()


def _mixed_cluster() -> tuple[list[NodeInfo], dict]:
    """Nodes of varied size, zones, labels and taints, some running pods of a service."""
    rng = random.Random(3)
    nodes = []
    for i in range(12):
        labels = {"disk": rng.choice(("ssd", "hdd")), "zone": f"z{i % 3}"}
        if i % 4:
            labels[ZONE] = f"zone{i % 3}"
        taints = [taint("foo", "bar")] if i % 5 == 0 else []
        nodes.append(node(f"n{i}", 1000 * (1 + i % 4), 2 ** 30 * (1 + i % 3), labels=labels,
                          spec={"taints": taints}, images=[_image(100 * i, "img")]))
    placed = [(f"n{rng.randrange(12)}", pod([container(f"{rng.randint(1, 9) * 100}m",
                                                       f"{rng.randint(1, 9) * 100}Mi")],
                                            labels=rng.choice((L1, L2)), nodeName="x"))
              for _ in range(20)]
    return infos(nodes, placed), {"preferred": preferred((3, [{"key": "disk", "operator": "In",
                                                               "values": ["ssd"]}]))}


ALL_PRIORITIES = [*PRIORITIES.items(), ("label", node_label_priority(ZONE, True)),
                  ("anti", service_anti_affinity(ZONE))]


@pytest.mark.parametrize("name, function", ALL_PRIORITIES, ids=[n for n, _ in ALL_PRIORITIES])
def test_scoring_some_rows_is_scoring_a_table_of_those_nodes(name, function):
    # maxima are over the candidates: scoring rows [1, 2, 5, ...] of the full table must
    # give what a table holding only those nodes gives
    node_infos, extra = _mixed_cluster()
    p = pod([container("200m", "100Mi", image="img")], labels=L1, affinity=extra["preferred"],
            tolerations=[{"key": "cpu", "operator": "Exists"}])
    context = ctx([svc(L1)])
    table = build(node_infos)
    rows = np.array([1, 2, 5, 6, 8, 11])
    subset = [node_infos[row] for row in rows.tolist()]
    assert function(p, table, rows, context).tolist() == scores(function, p, subset, context)
    everything = function(p, table, np.arange(table.size), context)
    assert everything.tolist() == scores(function, p, node_infos, context)


def test_spreading_counts_follow_pods_added_after_the_first_decision():
    node_infos = infos([node("m1"), node("m2")], [("m1", pod(labels=L1))])
    table = build(node_infos)
    rows = np.arange(table.size)
    context = ctx([svc(L1)])
    assert selector_spread_priority(pod(labels=L1), table, rows, context).tolist() == [0, 10]
    node_infos[1].add_pod(pod(labels=L1))
    node_infos[1].add_pod(pod(labels=L1))
    table.fill(1)  # what the scheduler cache does for a dirty row
    assert selector_spread_priority(pod(labels=L1), table, rows, context).tolist() == [5, 0]
