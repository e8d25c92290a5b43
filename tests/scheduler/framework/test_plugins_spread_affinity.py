"""PodTopologySpread and InterPodAffinity: the kubernetes.io examples, and preemption's
AddPod/RemovePod on the PreFilter state.

Pod topology spread page ("Example: one TopologySpreadConstraint", "multiple
TopologySpreadConstraints"): zoneA = node1, node2; zoneB = node3, node4; pods labelled foo=bar
on node1, node2 and node3.
"""

from __future__ import annotations

import numpy as np

from minikube_py.client.cache.factory import InformerFactory
from minikube_py.client.resources import SERVICES
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState
from minikube_py.scheduler.framework.plugins.interpodaffinity import InterPodAffinity
from minikube_py.scheduler.framework.plugins.podtopologyspread import PodTopologySpread
from minikube_py.scheduler.nodeinfo import NodeInfo

from .plugin_helpers import node, pod, run_filter, run_score, table

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def spread_cluster():
    nodes = [node("node1", labels={ZONE: "zoneA"}), node("node2", labels={ZONE: "zoneA"}),
             node("node3", labels={ZONE: "zoneB"}), node("node4", labels={ZONE: "zoneB"})]
    placed = {n: [pod(f"p-{n}", labels={"foo": "bar"})] for n in ("node1", "node2", "node3")}
    return table(nodes, placed)


def constraint(key: str, max_skew: int = 1, when: str = "DoNotSchedule", **extra) -> dict:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"foo": "bar"}}, **extra}


def mypod(*constraints: dict, **kw) -> dict:
    return pod("mypod", labels={"foo": "bar"},
               spec={"topologySpreadConstraints": list(constraints), **kw})


def test_one_constraint_only_zone_b_fits():
    statuses = run_filter(PodTopologySpread({}, None), mypod(constraint(ZONE)), spread_cluster())
    assert set(statuses) == {"node1", "node2"}
    assert statuses["node1"].reasons == ("node(s) didn't match pod topology spread constraints",)
    assert statuses["node1"].code is Code.UNSCHEDULABLE


def test_two_constraints_only_node4_fits():
    statuses = run_filter(PodTopologySpread({}, None),
                          mypod(constraint(ZONE), constraint(HOST)), spread_cluster())
    assert set(statuses) == {"node1", "node2", "node3"}


def test_node_without_the_key_is_unresolvable():
    nodes = table([node("zoned", labels={ZONE: "a"}), node("bare")])
    statuses = run_filter(PodTopologySpread({}, None), mypod(constraint(ZONE)), nodes)
    assert statuses["bare"].reasons == (
        "node(s) didn't match pod topology spread constraints (missing required label)",)
    assert statuses["bare"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert "zoned" not in statuses


def test_min_domains_counts_missing_domains_as_zero():
    # two zones with one pod each; minDomains 3 -> the global minimum is 0 and every
    # placement makes a skew of 2
    nodes = table([node("a", labels={ZONE: "a"}), node("b", labels={ZONE: "b"})],
                  {"a": [pod("x", labels={"foo": "bar"})], "b": [pod("y", labels={"foo": "bar"})]})
    assert run_filter(PodTopologySpread({}, None), mypod(constraint(ZONE)), nodes) == {}
    statuses = run_filter(PodTopologySpread({}, None), mypod(constraint(ZONE, minDomains=3)), nodes)
    assert set(statuses) == {"a", "b"}


def test_node_affinity_policy_honor_ignores_excluded_nodes():
    # zoneB is excluded by the pod's nodeSelector, so only zoneA's domains count: node1 and
    # node2 hold one pod each, so either is fine under a hostname constraint
    nodes = spread_cluster()
    restricted = mypod(constraint(HOST), nodeSelector={ZONE: "zoneA"})
    state = CycleState()
    plugin = PodTopologySpread({}, None)
    plugin.pre_filter(state, PodMeta.of(restricted), nodes)
    counts = state.read("PreFilterPodTopologySpread").counts[0]
    assert counts == {"node1": 1, "node2": 1}


def test_remove_pod_for_preemption_updates_the_counts():
    nodes = spread_cluster()
    plugin = PodTopologySpread({}, None)
    state = CycleState()
    meta = PodMeta.of(mypod(constraint(ZONE)))
    plugin.pre_filter(state, meta, nodes)
    trial = state.clone()
    info: NodeInfo = nodes.infos[nodes.row_of["node1"]]
    victim = next(iter(info.pods.values()))
    plugin.remove_pod(trial, meta, victim, info)
    failures = plugin.filter(trial, meta, nodes, nodes.everywhere())
    failing = {nodes.names[r] for _s, m in failures for r in np.flatnonzero(m).tolist()}
    assert failing == set()  # zoneA 1, zoneB 1: every node is within maxSkew 1 now
    original = plugin.filter(state, meta, nodes, nodes.everywhere())
    assert {nodes.names[r] for _s, m in original for r in np.flatnonzero(m).tolist()} == \
        {"node1", "node2"}  # the clone did not touch the cycle's state
    plugin.add_pod(trial, meta, victim, info)
    assert trial.read("PreFilterPodTopologySpread").counts == \
        state.read("PreFilterPodTopologySpread").counts


def test_no_constraints_prefilter_skips():
    assert run_filter(PodTopologySpread({}, None), pod(), spread_cluster()) == {}
    assert run_score(PodTopologySpread({}, None), pod(), spread_cluster()) is None


def test_system_default_constraints_spread_a_services_pods():
    # a Service selecting app=web; two of its pods on n1 (zone a). System defaults: hostname
    # maxSkew 3, zone maxSkew 5, ScheduleAnyway. Raw scores: n1 = 2*ln5 + 2 + 2*ln4 + 4 = 12,
    # n2 = 2 + 2*ln4 + 4 = 9, n3 = 2 + 4 = 6; normalised 100*(12+6-s)/12 -> 50, 75, 100.
    informers = InformerFactory(None)  # never started: its cache is filled by hand
    informers.informer(SERVICES).indexer.add(
        {"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"selector": {"app": "web"}}})

    class Handle:
        pass
    handle = Handle()
    handle.informers = informers
    nodes = table([node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}),
                   node("n3", labels={ZONE: "b"})],
                  {"n1": [pod("w1", labels={"app": "web"}), pod("w2", labels={"app": "web"})]})
    plugin = PodTopologySpread({"defaultingType": "System"}, handle)
    scores = run_score(plugin, pod("w3", labels={"app": "web"}), nodes)
    assert scores == {"n1": 50, "n2": 75, "n3": 100}
    # List defaulting without constraints: nothing to spread
    assert run_score(PodTopologySpread({"defaultingType": "List"}, handle),
                     pod("w3", labels={"app": "web"}), nodes) is None


def test_soft_constraint_scores_fewer_matching_pods_higher():
    soft = mypod(constraint(ZONE, when="ScheduleAnyway"))
    scores = run_score(PodTopologySpread({}, None), soft, spread_cluster())
    assert scores["node3"] == scores["node4"] > scores["node1"] == scores["node2"]
    assert max(scores.values()) == 100


# --- InterPodAffinity -------------------------------------------------------------------------


def affinity_cluster():
    nodes = [node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}),
             node("n3", labels={ZONE: "b"}), node("n4")]
    return table(nodes, {"n1": [pod("db", labels={"app": "db"})]})


def term(labels: dict, key: str) -> dict:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def test_required_affinity_zone_of_the_db():
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term({"app": "db"}, ZONE)]}}}
    statuses = run_filter(InterPodAffinity({}), pod("web", labels={"app": "web"}, spec=spec),
                          affinity_cluster())
    assert set(statuses) == {"n3", "n4"}
    assert statuses["n3"].reasons == ("node(s) didn't match pod affinity rules",)
    assert statuses["n3"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_first_pod_of_a_self_affine_group_may_go_anywhere_with_the_key():
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term({"app": "cache"}, ZONE)]}}}
    statuses = run_filter(InterPodAffinity({}), pod("c1", labels={"app": "cache"}, spec=spec),
                          affinity_cluster())
    assert set(statuses) == {"n4"}  # n4 lacks the zone label


def test_required_anti_affinity_and_existing_pods_anti_affinity():
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term({"app": "db"}, HOST)]}}}
    statuses = run_filter(InterPodAffinity({}), pod("db2", labels={"app": "x"}, spec=anti),
                          affinity_cluster())
    assert set(statuses) == {"n1"}
    assert statuses["n1"].reasons == ("node(s) didn't match pod anti-affinity rules",)
    assert statuses["n1"].code is Code.UNSCHEDULABLE
    guarded = pod("guard", labels={"app": "guard"}, spec={"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term({"app": "web"}, ZONE)]}}})
    nodes = table([node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}),
                   node("n3", labels={ZONE: "b"})], {"n1": [guarded]})
    statuses = run_filter(InterPodAffinity({}), pod("web", labels={"app": "web"}), nodes)
    assert set(statuses) == {"n1", "n2"}
    assert statuses["n2"].reasons == ("node(s) didn't satisfy existing pods anti-affinity rules",)


def test_remove_pod_drops_the_affinity_count():
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term({"app": "db"}, ZONE)]}}}
    nodes = affinity_cluster()
    plugin = InterPodAffinity({})
    state = CycleState()
    meta = PodMeta.of(pod("web", labels={"app": "web"}, spec=spec))
    plugin.pre_filter(state, meta, nodes)
    info = nodes.infos[nodes.row_of["n1"]]
    plugin.remove_pod(state, meta, next(iter(info.pods.values())), info)
    failures = plugin.filter(state, meta, nodes, nodes.everywhere())
    assert {nodes.names[r] for _s, m in failures for r in np.flatnonzero(m).tolist()} == \
        {"n1", "n2", "n3", "n4"}


def test_preferred_affinity_score_and_skip():
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": term({"app": "db"}, ZONE)}]}}}
    scores = run_score(InterPodAffinity({}), pod("web", spec=spec), affinity_cluster())
    assert scores == {"n1": 100, "n2": 100, "n3": 0, "n4": 0}
    assert run_score(InterPodAffinity({}), pod("plain"), affinity_cluster()) is None
    assert run_score(InterPodAffinity({"ignorePreferredTermsOfExistingPods": True}),
                     pod("plain"), affinity_cluster()) is None


def test_node_taints_policy_honor_leaves_untolerated_nodes_out():
    # node3/node4 (zoneB) are tainted: with nodeTaintsPolicy Honor their pod does not count and
    # zoneB is not a domain, so zoneA (2 pods) is the minimum and node1/node2 fit
    taint = [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]
    nodes = table([node("node1", labels={ZONE: "zoneA"}), node("node2", labels={ZONE: "zoneA"}),
                   node("node3", labels={ZONE: "zoneB"}, taints=taint),
                   node("node4", labels={ZONE: "zoneB"}, taints=taint)],
                  {n: [pod(f"p-{n}", labels={"foo": "bar"})] for n in ("node1", "node2", "node3")})
    ignore = run_filter(PodTopologySpread({}, None), mypod(constraint(ZONE)), nodes)
    assert set(ignore) == {"node1", "node2"}
    honor = run_filter(PodTopologySpread({}, None),
                       mypod(constraint(ZONE, nodeTaintsPolicy="Honor")), nodes)
    assert honor == {}


def test_add_pod_with_anti_affinity_blocks_its_domain():
    # preemption adds a nominated pod whose required anti-affinity selects the incoming pod
    nodes = affinity_cluster()
    plugin = InterPodAffinity({})
    state = CycleState()
    meta = PodMeta.of(pod("web", labels={"app": "web"}))
    _result, status = plugin.pre_filter(state, meta, nodes)
    assert status is not None and status.code is Code.SKIP  # nothing to check yet
    state = CycleState()
    nominated = pod("guard", labels={"app": "guard"}, spec={"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term({"app": "web"}, ZONE)]}}})
    guarded = table([node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "b"})],
                    {"n2": [pod("other-guard", labels={"app": "g2"}, spec=nominated["spec"])]})
    plugin.pre_filter(state, meta, guarded)
    info = guarded.infos[guarded.row_of["n1"]]
    plugin.add_pod(state, meta, nominated, info)
    failures = plugin.filter(state, meta, guarded, guarded.everywhere())
    assert {guarded.names[r] for _s, m in failures for r in np.flatnonzero(m).tolist()} == \
        {"n1", "n2"}


def test_existing_pods_preferred_terms_score_the_incoming_pod():
    # symmetry: an existing pod preferring app=web in its zone pulls web pods to that zone,
    # unless ignorePreferredTermsOfExistingPods
    fan = pod("fan", labels={"app": "fan"}, spec={"affinity": {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": term({"app": "web"}, ZONE)}]}}})
    nodes = table([node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}),
                   node("n3", labels={ZONE: "b"})], {"n1": [fan]})
    web = pod("web", labels={"app": "web"})
    assert run_score(InterPodAffinity({}), web, nodes) == {"n1": 100, "n2": 100, "n3": 0}
    assert run_score(InterPodAffinity({"ignorePreferredTermsOfExistingPods": True}),
                     web, nodes) is None
