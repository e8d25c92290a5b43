"""InterPodAffinityPriority, NodePreferAvoidPodsPriority, zone+region spreading, and the
v1.5 providers/Policy names that bring them in — as pure functions over a NodeTable.

Expected scores are worked out by hand from upstream's formulas (interpod_affinity.go:
int(10 * (count - min) / (max - min)) with min <= 0 <= max over the candidates;
node_prefer_avoid_pods.go: 0 or 10; selector_spreading.go: the 2/3 zone weighting).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minikube_py.scheduler.algorithm.pod_affinity import DEFAULT_FAILURE_DOMAINS
from minikube_py.scheduler.algorithm.priorities import PRIORITIES, PriorityContext
from minikube_py.scheduler.algorithm.priorities_avoid import (
    PREFER_AVOID_PODS_ANNOTATION,
    node_prefer_avoid_pods_priority,
)
from minikube_py.scheduler.algorithm.priorities_interpod import inter_pod_affinity_priority
from minikube_py.scheduler.algorithm.priorities_spreading import selector_spread_priority
from minikube_py.scheduler.factory import (
    DEFAULT_PROVIDER,
    AlgorithmArgs,
    PolicyError,
    from_policy,
    from_provider,
)
from minikube_py.scheduler.generic_scheduler import GenericScheduler
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

Obj = dict[str, Any]
HOST, ZONE, REGION = DEFAULT_FAILURE_DOMAINS
DEFAULT = PRIORITIES["InterPodAffinityPriority"]


def node(name: str, annotations: dict[str, str] | None = None, **labels: str) -> Obj:
    md: Obj = {"name": name, "labels": {HOST: name, **labels}}
    if annotations:
        md["annotations"] = annotations
    return {"metadata": md,
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, labels: dict[str, str] | None = None, *, affinity: Obj | None = None,
        owner: tuple[str, str] | None = None, namespace: str = "default") -> Obj:
    md: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner:
        md["ownerReferences"] = [{"kind": owner[0], "uid": owner[1], "name": "x",
                                  "apiVersion": "v1", "controller": True}]
    spec: Obj = {"containers": [{"name": "c", "image": "x"}]}
    if affinity:
        spec["affinity"] = affinity
    return {"metadata": md, "spec": spec}


def term(key: str, **match: str) -> Obj:
    return {"labelSelector": {"matchLabels": match}, "topologyKey": key}


def preferred(kind: str, *weighted: tuple[int, Obj]) -> Obj:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "podAffinityTerm": t} for w, t in weighted]}}


def required(kind: str, *terms: Obj) -> Obj:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


NODES = [node("a1", **{ZONE: "a"}), node("a2", **{ZONE: "a"}), node("b1", **{ZONE: "b"}),
         node("bare")]
DB = pod("db", {"app": "db"})


def table(placed: dict[str, list[Obj]], nodes: list[Obj] = NODES):
    infos = []
    for n in nodes:
        info = NodeInfo(n)
        for p in placed.get(n["metadata"]["name"], ()):
            info.add_pod(dict(p, spec=dict(p["spec"], nodeName=n["metadata"]["name"])))
        infos.append(info)
    return build(infos)


def scores(function, p: Obj, placed: dict[str, list[Obj]], rows: list[int] | None = None,
           nodes: list[Obj] = NODES, context: PriorityContext | None = None) -> list[int]:
    t = table(placed, nodes)
    chosen = np.arange(t.size) if rows is None else np.array(rows)
    return np.asarray(function(p, t, chosen, context or PriorityContext.empty())).tolist()


# ------------------------------------------------------------------ InterPodAffinityPriority


def test_no_terms_anywhere_scores_zero() -> None:
    assert scores(DEFAULT, pod("web"), {"a1": [DB]}) == [0, 0, 0, 0]


@pytest.mark.parametrize("affinity, expected", [
    # +5 for every node in db's zone
    (preferred("podAffinity", (5, term(ZONE, app="db"))), [10, 10, 0, 0]),
    # -5 on db's node: min -5, max 0
    (preferred("podAntiAffinity", (5, term(HOST, app="db"))), [0, 10, 10, 10]),
    # a1: 4 - 2 = 2, a2: 4 -> int(10 * 2 / 4) = 5
    ({**preferred("podAffinity", (4, term(ZONE, app="db"))),
      **preferred("podAntiAffinity", (2, term(HOST, app="db")))}, [5, 10, 0, 0]),
    # an empty key in preferred anti-affinity: any failure domain (a1 by host and zone, a2 by
    # zone)
    (preferred("podAntiAffinity", (1, term("", app="db"))), [0, 0, 10, 10]),
])
def test_the_pods_preferred_terms(affinity: Obj, expected: list[int]) -> None:
    assert scores(DEFAULT, pod("web", affinity=affinity), {"a1": [DB]}) == expected


def test_two_matching_pods_count_twice() -> None:
    aff = preferred("podAffinity", (1, term(ZONE, app="db")))
    # zone a: 2 dbs, zone b: 1 -> 2, 2, 1 points over max 2
    got = scores(DEFAULT, pod("web", affinity=aff),
                 {"a1": [DB, pod("db2", {"app": "db"})], "b1": [pod("db3", {"app": "db"})]})
    assert got == [10, 10, 5, 0]


def test_existing_pods_required_affinity_pulls_with_the_symmetric_weight() -> None:
    needy = pod("needy", {"app": "needy"}, affinity=required("podAffinity", term(HOST, app="web")))
    web = pod("web", {"app": "web"})
    assert scores(DEFAULT, web, {"b1": [needy]}) == [0, 0, 10, 0]
    off = inter_pod_affinity_priority(0, DEFAULT_FAILURE_DOMAINS)
    assert scores(off, web, {"b1": [needy]}) == [0, 0, 0, 0]
    # weight 3 against the pod's own preferred anti-affinity of weight 2 towards needy
    both = inter_pod_affinity_priority(3, DEFAULT_FAILURE_DOMAINS)
    shy = pod("web", {"app": "web"},
              affinity=preferred("podAntiAffinity", (2, term(HOST, app="needy"))))
    assert scores(both, shy, {"b1": [needy]}) == [0, 0, 10, 0]  # b1: 3 - 2 = 1 > 0


def test_existing_pods_preferred_terms_act_symmetrically() -> None:
    web = pod("web", {"app": "web"})
    likes = pod("likes", affinity=preferred("podAffinity", (2, term(ZONE, app="web"))))
    dislikes = pod("dislikes", affinity=preferred("podAntiAffinity", (3, term(ZONE, app="web"))))
    assert scores(DEFAULT, web, {"b1": [likes]}) == [0, 0, 10, 0]
    assert scores(DEFAULT, web, {"a1": [dislikes]}) == [0, 0, 10, 10]
    # a term in another namespace does not see the pod
    elsewhere = pod("likes", namespace="other",
                    affinity=preferred("podAffinity", (2, term(ZONE, app="web"))))
    assert scores(DEFAULT, web, {"b1": [elsewhere]}) == [0, 0, 0, 0]
    # existing pods' *required anti*-affinity is the predicate's business, not a score
    hates = pod("hates", affinity=required("podAntiAffinity", term(ZONE, app="web")))
    assert scores(DEFAULT, web, {"a1": [hates]}) == [0, 0, 0, 0]


def test_min_and_max_are_taken_over_the_candidates_but_counts_over_every_node() -> None:
    aff = preferred("podAffinity", (1, term(ZONE, app="db")))
    # db runs on a1, which is not a candidate: a2 still shares its zone
    assert scores(DEFAULT, pod("web", affinity=aff), {"a1": [DB]}, rows=[1, 2]) == [10, 0]


def test_failure_domains_flag_changes_what_an_empty_key_means() -> None:
    aff = preferred("podAntiAffinity", (1, term("", app="db")))
    hosts_only = inter_pod_affinity_priority(1, (HOST,))
    assert scores(hosts_only, pod("web", affinity=aff), {"a1": [DB]}) == [0, 10, 10, 10]


# --------------------------------------------------------------- NodePreferAvoidPodsPriority


def avoid(kind: str, uid: str) -> dict[str, str]:
    import json

    return {PREFER_AVOID_PODS_ANNOTATION: json.dumps({"preferAvoidPods": [
        {"podSignature": {"podController": {"kind": kind, "uid": uid, "name": "x",
                                            "apiVersion": "v1"}},
         "reason": "some reason", "message": "some message"}]})}


AVOID_NODES = [node("m1", avoid("ReplicationController", "abcdef")),
               node("m2", avoid("ReplicaSet", "qwert")),
               node("m3", {PREFER_AVOID_PODS_ANNOTATION: "{not json"}),
               node("m4")]


@pytest.mark.parametrize("owner, expected", [
    (("ReplicationController", "abcdef"), [0, 10, 10, 10]),
    (("ReplicaSet", "qwert"), [10, 0, 10, 10]),
    (("ReplicaSet", "abcdef"), [10, 10, 10, 10]),  # kind must match too
    (("StatefulSet", "qwert"), [10, 10, 10, 10]),  # only RCs and ReplicaSets are avoided
    (None, [10, 10, 10, 10]),
])
def test_node_prefer_avoid_pods(owner, expected) -> None:
    got = scores(node_prefer_avoid_pods_priority, pod("p", owner=owner), {}, nodes=AVOID_NODES)
    assert got == expected


def test_prefer_avoid_outweighs_everything_in_the_default_provider() -> None:
    algorithm = from_provider(DEFAULT_PROVIDER)
    sched = GenericScheduler(algorithm.predicates, algorithm.priorities)
    import asyncio

    result = asyncio.run(sched.schedule(pod("p", owner=("ReplicationController", "abcdef")),
                                        table({}, AVOID_NODES[:2])))
    assert result.node == "m2"
    # 10 * 10000 for m2 only; every other priority together is worth at most 6 * 10
    assert result.scores["m2"] - result.scores["m1"] >= 10000 * 10 - 60


# --------------------------------------------------------------- zones and regions spreading


def test_selector_spread_counts_region_and_zone_together() -> None:
    """zone key = region + zone: the same zone name in two regions is two zones."""
    nodes = [node("r1a-1", **{REGION: "r1", ZONE: "a"}), node("r1a-2", **{REGION: "r1", ZONE: "a"}),
             node("r2a-1", **{REGION: "r2", ZONE: "a"}), node("plain")]
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"app": "s"}}}
    context = PriorityContext(services_for_pod=lambda p: [svc])
    placed = {"r1a-1": [pod("s0", {"app": "s"})]}
    # node counts 1,0,0,0 -> node scores 0,10,10,10; zone r1:a has 1, r2:a 0 -> zone 0, 10;
    # zoned: 10*(1/3)+ (2/3)*zone: r1a-1 0, r1a-2 3.33 -> 3, r2a-1 10; plain: 10 (no zone)
    got = scores(selector_spread_priority, pod("s1", {"app": "s"}), placed, nodes=nodes,
                 context=context)
    assert got == [0, 3, 10, 10]


# --------------------------------------------------------------------- providers & Policy


def test_default_provider_is_v1_5s() -> None:
    algorithm = from_provider(DEFAULT_PROVIDER)
    assert set(algorithm.predicates) == {
        "NoVolumeZoneConflict", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount",
        "MatchInterPodAffinity", "NoDiskConflict", "GeneralPredicates",
        "PodToleratesNodeTaints", "CheckNodeMemoryPressure", "CheckNodeDiskPressure"}
    assert {(p.name, p.weight) for p in algorithm.priorities} == {
        ("SelectorSpreadPriority", 1), ("InterPodAffinityPriority", 1),
        ("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
        ("NodePreferAvoidPodsPriority", 10000), ("NodeAffinityPriority", 1),
        ("TaintTolerationPriority", 1)}
    assert algorithm.volumes.needed
    autoscaler = {p.name for p in from_provider("ClusterAutoscalerProvider").priorities}
    assert "MostRequestedPriority" in autoscaler and "LeastRequestedPriority" not in autoscaler


NEW_PREDICATES = ["MatchInterPodAffinity", "NoVolumeZoneConflict", "CheckVolumeBinding",
                  "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxAzureDiskVolumeCount",
                  "NoDiskConflict"]


def test_every_new_name_is_usable_from_a_policy() -> None:
    algorithm = from_policy({
        "kind": "Policy", "apiVersion": "v1",
        "predicates": [{"name": n} for n in NEW_PREDICATES],
        "priorities": [{"name": "InterPodAffinityPriority", "weight": 2},
                       {"name": "NodePreferAvoidPodsPriority", "weight": 10000}]},
        args=AlgorithmArgs(hard_pod_affinity_symmetric_weight=0, failure_domains=HOST))
    assert list(algorithm.predicates) == NEW_PREDICATES
    assert algorithm.volumes.needed
    # the flags reached the built functions: weight 0 turns the symmetric pull off
    needy = pod("needy", affinity=required("podAffinity", term(HOST, app="web")))
    interpod = algorithm.priorities[0].function
    assert scores(interpod, pod("web", {"app": "web"}), {"b1": [needy]}) == [0, 0, 0, 0]
    only_affinity = from_policy({"predicates": [{"name": "MatchInterPodAffinity"}]})
    assert not only_affinity.volumes.needed


@pytest.mark.parametrize("args, message", [
    (AlgorithmArgs(hard_pod_affinity_symmetric_weight=101), "must be in 0-100"),
    (AlgorithmArgs(max_ebs_volumes=0), "--max-ebs-volumes must be positive"),
])
def test_bad_flags_fail_at_start(args: AlgorithmArgs, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        from_provider(DEFAULT_PROVIDER, args)
