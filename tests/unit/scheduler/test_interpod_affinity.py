"""MatchInterPodAffinity and the topology arithmetic under it, as pure functions.

Cases follow upstream predicates_test.go TestInterPodAffinity (v1.5) where it has them:
required affinity on the same/different topology value, namespaces, the "first pod of a
group" rule, required anti-affinity, and the symmetry (an existing pod's anti-affinity
against the incoming pod). The vectorised answers are checked against a per-node walk.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest

from minikube_py.scheduler.algorithm.interpod_topology import (
    domain_sums,
    existing_terms,
    shares_domain,
)
from minikube_py.scheduler.algorithm.pod_affinity import (
    DEFAULT_FAILURE_DOMAINS,
    PREFERRED_ANTI,
    REQUIRED_ANTI,
    compile_pod_affinity,
)
from minikube_py.scheduler.algorithm.predicates import PREDICATES
from minikube_py.scheduler.algorithm.predicates_affinity import (
    ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_POD_AFFINITY_NOT_MATCH,
    ERR_POD_AFFINITY_RULES_NOT_MATCH,
    ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH,
    match_inter_pod_affinity,
)
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

Obj = dict[str, Any]
HOST, ZONE, REGION = DEFAULT_FAILURE_DOMAINS
PREDICATE = PREDICATES["MatchInterPodAffinity"]


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": {HOST: name, **labels}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, labels: dict[str, str] | None = None, *, affinity: Obj | None = None,
        node_name: str = "", namespace: str = "default") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "x"}]}
    if affinity:
        spec["affinity"] = affinity
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": spec}


def term(key: str = HOST, namespaces: list[str] | None = None, **match: str) -> Obj:
    out: Obj = {"labelSelector": {"matchLabels": match}, "topologyKey": key}
    if namespaces:
        out["namespaces"] = namespaces
    return out


def required(kind: str, *terms: Obj) -> Obj:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def cluster(nodes: list[Obj], placed: dict[str, list[Obj]]) -> list[NodeInfo]:
    infos = []
    for n in nodes:
        info = NodeInfo(n)
        for p in placed.get(n["metadata"]["name"], ()):
            info.add_pod(dict(p, spec=dict(p["spec"], nodeName=n["metadata"]["name"])))
        infos.append(info)
    return infos


def verdicts(predicate, p: Obj, infos: list[NodeInfo]) -> dict[str, list[str]]:
    """Per node the reasons it fails ([] = fits)."""
    table = build(infos)
    failures = predicate(PodMeta.of(p), table)
    return {name: [reason for reason, rows in failures if rows[row]]
            for row, name in enumerate(table.names)}


NOT_AFFINE = [ERR_POD_AFFINITY_NOT_MATCH, ERR_POD_AFFINITY_RULES_NOT_MATCH]
ANTI = [ERR_POD_AFFINITY_NOT_MATCH, ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH]
EXISTING = [ERR_POD_AFFINITY_NOT_MATCH, ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH]
NODES = [node("a1", **{ZONE: "a"}), node("a2", **{ZONE: "a"}), node("b1", **{ZONE: "b"}),
         node("bare")]
DB = pod("db", {"app": "db"})


def test_pod_without_terms_fits_everywhere_when_no_existing_terms() -> None:
    infos = cluster(NODES, {"a1": [DB]})
    assert PREDICATE(PodMeta.of(pod("p")), build(infos)) == []


def test_required_affinity_on_zone_keeps_the_pod_in_the_zone_of_a_matching_pod() -> None:
    p = pod("web", affinity=required("podAffinity", term(ZONE, app="db")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [DB]}))
    assert got == {"a1": [], "a2": [], "b1": NOT_AFFINE, "bare": NOT_AFFINE}


def test_required_affinity_on_hostname_means_the_same_node() -> None:
    p = pod("web", affinity=required("podAffinity", term(HOST, app="db")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a2": [DB]}))
    assert [n for n, r in got.items() if not r] == ["a2"]


def test_affinity_terms_are_anded() -> None:
    cache = pod("cache", {"app": "cache"})
    p = pod("web", affinity=required("podAffinity", term(ZONE, app="db"),
                                     term(HOST, app="cache")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [DB], "a2": [cache], "b1": [cache]}))
    assert [n for n, r in got.items() if not r] == ["a2"]


def test_term_namespaces_default_to_the_pods_own() -> None:
    other_db = pod("db", {"app": "db"}, namespace="other")
    p = pod("web", affinity=required("podAffinity", term(ZONE, app="db")))
    # the only db is in another namespace: the term matches nothing, and web is not a db
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [other_db], "b1": [pod("x")]}))
    assert all(r == NOT_AFFINE for r in got.values())
    named = pod("web", affinity=required("podAffinity", term(ZONE, ["other"], app="db")))
    got = verdicts(PREDICATE, named, cluster(NODES, {"a1": [other_db], "b1": [pod("x")]}))
    assert [n for n, r in got.items() if not r] == ["a1", "a2"]


def test_first_pod_of_a_self_affine_group_may_schedule_anywhere() -> None:
    """upstream: 'if the requirement matches a pod's own labels and namespace, and there are
    no other such pods, then disregard the requirement'."""
    p = pod("web-0", {"app": "web"}, affinity=required("podAffinity", term(ZONE, app="web")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [DB]}))
    assert all(r == [] for r in got.values())
    # once one exists, the group sticks to its zone
    got = verdicts(PREDICATE, p, cluster(NODES, {"b1": [pod("web-1", {"app": "web"})]}))
    assert [n for n, r in got.items() if not r] == ["b1"]
    # a pod that does not match its own term gets no such exemption
    stranger = pod("x", {"app": "x"}, affinity=required("podAffinity", term(ZONE, app="web")))
    assert all(r == NOT_AFFINE for r in verdicts(PREDICATE, stranger,
                                                   cluster(NODES, {})).values())


def test_required_anti_affinity_on_hostname_and_zone() -> None:
    on_host = pod("web", affinity=required("podAntiAffinity", term(HOST, app="db")))
    got = verdicts(PREDICATE, on_host, cluster(NODES, {"a1": [DB]}))
    assert got == {"a1": ANTI, "a2": [], "b1": [], "bare": []}
    in_zone = pod("web", affinity=required("podAntiAffinity", term(ZONE, app="db")))
    got = verdicts(PREDICATE, in_zone, cluster(NODES, {"a1": [DB]}))
    assert got == {"a1": ANTI, "a2": ANTI, "b1": [], "bare": []}  # bare has no zone label


def test_symmetry_existing_pods_anti_affinity_repels_the_incoming_pod() -> None:
    """The incoming pod has no terms at all; the existing pod's anti-affinity selects it."""
    loner = pod("loner", {"app": "loner"},
                affinity=required("podAntiAffinity", term(ZONE, app="web")))
    got = verdicts(PREDICATE, pod("web", {"app": "web"}), cluster(NODES, {"a1": [loner]}))
    assert got == {"a1": EXISTING, "a2": EXISTING, "b1": [], "bare": []}
    # another namespace is not selected by the loner's term (its namespaces default to its own)
    got = verdicts(PREDICATE, pod("web", {"app": "web"}, namespace="other"),
                   cluster(NODES, {"a1": [loner]}))
    assert all(r == [] for r in got.values())


def test_existing_anti_affinity_is_reported_before_the_pods_own_terms() -> None:
    loner = pod("loner", {"app": "loner"},
                affinity=required("podAntiAffinity", term(HOST, app="web")))
    p = pod("web", {"app": "web"}, affinity=required("podAffinity", term(HOST, app="loner")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [loner]}))
    assert got == {"a1": EXISTING, "a2": NOT_AFFINE, "b1": NOT_AFFINE, "bare": NOT_AFFINE}


def test_replicas_with_self_anti_affinity_fill_one_per_node() -> None:
    anti = required("podAntiAffinity", term(HOST, app="web"))
    placed: dict[str, list[Obj]] = {}
    for i in range(len(NODES)):
        p = pod(f"web-{i}", {"app": "web"}, affinity=anti)
        free = [n for n, r in verdicts(PREDICATE, p, cluster(NODES, placed)).items() if not r]
        assert len(free) == len(NODES) - i
        placed[free[0]] = [p]
    last = verdicts(PREDICATE, pod("web-9", {"app": "web"}, affinity=anti),
                    cluster(NODES, placed))
    assert all(r == EXISTING for r in last.values())


def test_empty_topology_key_means_any_failure_domain() -> None:
    """v1.5's predicate used the failure domains for an empty key too."""
    p = pod("web", affinity=required("podAntiAffinity", term("", app="db")))
    got = verdicts(PREDICATE, p, cluster(NODES, {"a1": [DB]}))
    assert got == {"a1": ANTI, "a2": ANTI, "b1": [], "bare": []}  # host a1 or zone a
    only_hosts = match_inter_pod_affinity((HOST,))
    got = verdicts(only_hosts, p, cluster(NODES, {"a1": [DB]}))
    assert got == {"a1": ANTI, "a2": [], "b1": [], "bare": []}


def test_bad_selector_selects_nothing() -> None:
    bad = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
           "topologyKey": HOST}
    compiled = compile_pod_affinity(pod("x", affinity=required("podAntiAffinity", bad)))
    assert compiled is not None and not compiled.required_anti[0].selects("default", {})
    assert compile_pod_affinity(pod("x", affinity={"podAffinity": {}})) is None


# ---------------------------------------------------------------------------------------------
# the arithmetic, against a per-node walk


def _walk_domain_sum(labels: list[dict[str, str]], weights: list[float],
                     keys: tuple[str, ...]) -> list[float]:
    out = []
    for mine in labels:
        out.append(sum(w for theirs, w in zip(labels, weights)
                       if any(k in mine and k in theirs and mine[k] == theirs[k] for k in keys)))
    return out


def test_domain_sums_match_a_walk_for_one_and_several_keys() -> None:
    rng = random.Random(7)
    nodes = []
    for i in range(60):
        labels = {HOST: f"h{i}"}
        if rng.random() < 0.8:
            labels[ZONE] = f"z{rng.randrange(4)}"
        if rng.random() < 0.7:
            labels[REGION] = f"r{rng.randrange(2)}"
        nodes.append({"metadata": {"name": f"n{i}", "labels": labels}})
    table = build([NodeInfo(n) for n in nodes])
    weights = np.array([rng.choice([0, 0, 1, 2, 5]) for _ in nodes], dtype=np.float64)
    all_labels = [n["metadata"]["labels"] for n in nodes]
    for keys in [(ZONE,), (HOST,), (ZONE, REGION), DEFAULT_FAILURE_DOMAINS]:
        for subset in itertools.permutations(keys):
            got = domain_sums(table, weights, subset)
            assert got.tolist() == _walk_domain_sum(all_labels, weights.tolist(), subset)
    rows = np.array([0, 5])
    expected = [any(k in all_labels[r] and k in mine and all_labels[r][k] == mine[k]
                    for r in rows for k in (ZONE,)) for mine in all_labels]
    assert shares_domain(table, rows, (ZONE,)).tolist() == expected


def test_random_clusters_agree_with_a_per_node_reference() -> None:
    """The vectorised predicate against upstream's algorithm written per node."""
    rng = random.Random(3)
    apps = ["web", "db", "cache"]
    for _ in range(30):
        nodes = [node(f"n{i}", **({ZONE: f"z{rng.randrange(3)}"} if rng.random() < .8 else {}))
                 for i in range(8)]
        placed: dict[str, list[Obj]] = {}
        for i in range(rng.randrange(0, 10)):
            kind = rng.choice(["podAffinity", "podAntiAffinity", None])
            aff = required(kind, term(rng.choice([HOST, ZONE]), app=rng.choice(apps))) \
                if kind else None
            target = rng.choice(nodes)["metadata"]["name"]
            placed.setdefault(target, []).append(
                pod(f"e{i}", {"app": rng.choice(apps)}, affinity=aff))
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        incoming = pod("in", {"app": rng.choice(apps)},
                       affinity=required(kind, term(rng.choice([HOST, ZONE]),
                                                    app=rng.choice(apps))))
        got = verdicts(PREDICATE, incoming, cluster(nodes, placed))
        assert got == _reference(incoming, nodes, placed)


def _same(a: Obj, b: Obj, key: str) -> bool:
    la, lb = a["metadata"]["labels"], b["metadata"]["labels"]
    return key in la and key in lb and la[key] == lb[key]


def _reference(p: Obj, nodes: list[Obj], placed: dict[str, list[Obj]]) -> dict[str, list[str]]:
    by_name = {n["metadata"]["name"]: n for n in nodes}
    existing = [(e, by_name[name]) for name, pods in placed.items() for e in pods]
    mine = compile_pod_affinity(p)
    out = {}
    for n in nodes:
        reasons: list[str] = []
        for e, en in existing:
            theirs = compile_pod_affinity(e)
            if theirs and any(t.selects("default", p["metadata"]["labels"])
                              and _same(n, en, t.topology_key) for t in theirs.required_anti):
                reasons = EXISTING
        if not reasons and mine:
            for t in mine.required_affinity:
                matching = [en for e, en in existing
                            if t.selects("default", e["metadata"]["labels"])]
                if not any(_same(n, en, t.topology_key) for en in matching) and not (
                        not matching and t.selects("default", p["metadata"]["labels"])):
                    reasons = NOT_AFFINE
            if not reasons and any(
                    t.selects("default", e["metadata"]["labels"]) and _same(n, en, t.topology_key)
                    for t in mine.required_anti for e, en in existing):
                reasons = ANTI
        out[n["metadata"]["name"]] = reasons
    return out


def test_existing_terms_index_follows_changed_rows_only() -> None:
    anti = required("podAntiAffinity", term(HOST, app="web"))
    infos = cluster(NODES, {"a1": [pod("w0", {"app": "web"}, affinity=anti)]})
    table = build(infos)
    index = existing_terms(table)
    groups = [(key[0], rows.tolist()) for key, rows, _ in index.of_kind(REQUIRED_ANTI)]
    assert groups == [(REQUIRED_ANTI, [0])]
    assert list(index.of_kind(PREFERRED_ANTI)) == []
    infos[2].add_pod(pod("w1", {"app": "web"}, affinity=anti, node_name="b1"))
    table.fill(2)
    (_, rows, weights), = existing_terms(table).of_kind(REQUIRED_ANTI)
    assert sorted(rows.tolist()) == [0, 2] and weights.tolist() == [1.0, 1.0]
    infos[0].remove_pod(infos[0].pods["default/w0"])
    table.fill(0)
    (_, rows, _), = existing_terms(table).of_kind(REQUIRED_ANTI)
    assert rows.tolist() == [2]
    # the predicate reads the same index
    got = verdicts(PREDICATE, pod("w2", {"app": "web"}), infos)
    assert got == {"a1": [], "a2": [], "b1": EXISTING, "bare": []}


@pytest.mark.parametrize("weight", [1, 3])
def test_preferred_terms_compile_with_weights(weight: int) -> None:
    aff = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": term("", app="db")},
        {"weight": 0, "podAffinityTerm": term(HOST, app="db")}]}}
    compiled = compile_pod_affinity(pod("x", affinity=aff))
    assert compiled is not None
    assert [(t.kind, t.weight, t.topology_key) for t in compiled.all()] == [
        (PREFERRED_ANTI, weight, "")]
