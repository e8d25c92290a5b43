"""NodeLabel, ServiceAffinity and NodePreferAvoidPods: the upstream 1.19-1.22 plugins a v1.x
Policy maps to (labelsPresence / labelPreference, serviceAffinity / serviceAntiAffinity,
NodePreferAvoidPodsPriority), scored 0-100 where v1.5 scored 0-10.
"""

from __future__ import annotations

import json

from minikube_py.client.cache.factory import InformerFactory
from minikube_py.client.resources import SERVICES
from minikube_py.scheduler.framework.interface import Code
from minikube_py.scheduler.framework.plugins import registry
from minikube_py.scheduler.nodetable import NodeTable

from .plugin_helpers import node, pod, run_filter, run_score, table


def plugin(name: str, args: dict, handle=None):
    return registry.in_tree_registry()[name](args, handle)


def test_node_label_presence_and_preference():
    nodes = table([node("plain"), node("retiring", labels={"retiring": "yes"}),
                   node("ssd", labels={"ssd": "true"})])
    nl = plugin("NodeLabel", {"absentLabels": ["retiring"],
                              "presentLabelsPreference": ["ssd"],
                              "absentLabelsPreference": ["retiring"]})
    statuses = run_filter(nl, pod(), nodes)
    assert set(statuses) == {"retiring"}
    assert statuses["retiring"].reasons == ("node(s) didn't have the requested labels",)
    assert statuses["retiring"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    # (100 per satisfied preference) / 2 preferences
    assert run_score(nl, pod(), nodes) == {"plain": 50, "retiring": 0, "ssd": 100}


class Handle:
    def __init__(self, nodes: NodeTable, services: list[dict]) -> None:
        self.informers = InformerFactory(None)
        for svc in services:
            self.informers.informer(SERVICES).indexer.add(svc)
        self._nodes = nodes

    def snapshot(self) -> NodeTable:
        return self._nodes

    def node_info(self, name: str):
        row = self._nodes.row_of.get(name)
        return None if row is None else self._nodes.infos[row]


def test_service_affinity_keeps_a_service_in_one_region_and_spreads_by_rack():
    svc = {"kind": "Service", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"selector": {"app": "db"}}}
    nodes = table([node("r1-a", labels={"region": "r1", "rack": "a"}),
                   node("r1-b", labels={"region": "r1", "rack": "b"}),
                   node("r2-a", labels={"region": "r2", "rack": "a"})],
                  {"r1-a": [pod("db-0", labels={"app": "db"})]})
    sa = plugin("ServiceAffinity", {"affinityLabels": ["region"],
                                    "antiAffinityLabelsPreference": ["rack"]},
                Handle(nodes, [svc]))
    statuses = run_filter(sa, pod("db-1", labels={"app": "db"}), nodes)
    assert set(statuses) == {"r2-a"}
    assert statuses["r2-a"].reasons == ("node(s) didn't match service affinity",)
    # v1.5 ServiceAntiAffinity: 10 * (1 - pods on the rack value) / 1 -> rack a: 0, b: 10; x10
    assert run_score(sa, pod("db-1", labels={"app": "db"}), nodes) == \
        {"r1-a": 0, "r1-b": 100, "r2-a": 0}


def test_node_prefer_avoid_pods():
    avoid = {"preferAvoidPods": [{"podSignature": {"podController": {
        "kind": "ReplicaSet", "uid": "rs-1"}}}]}
    avoiding = node("avoiding")
    avoiding["metadata"]["annotations"] = {
        "scheduler.alpha.kubernetes.io/preferAvoidPods": json.dumps(avoid)}
    nodes = table([avoiding, node("other")])
    owned = pod("web-x")
    owned["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "uid": "rs-1",
                                             "controller": True, "name": "web"}]
    npa = plugin("NodePreferAvoidPods", {})
    assert run_score(npa, owned, nodes) == {"avoiding": 0, "other": 100}
    assert run_score(npa, pod("free"), nodes) == {"avoiding": 100, "other": 100}
