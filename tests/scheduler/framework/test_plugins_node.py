"""NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, ImageLocality.

Cases follow upstream's plugin tests (1.31 pkg/scheduler/framework/plugins/*/..._test.go) and the
kubernetes.io pages on taints and node affinity: statuses, codes, reasons and scores.
"""

from __future__ import annotations

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState
from minikube_py.scheduler.framework.plugins.imagelocality import ImageLocality
from minikube_py.scheduler.framework.plugins.nodeaffinity import NodeAffinity
from minikube_py.scheduler.framework.plugins.nodename import NodeName
from minikube_py.scheduler.framework.plugins.nodeports import NodePorts
from minikube_py.scheduler.framework.plugins.nodeunschedulable import NodeUnschedulable
from minikube_py.scheduler.framework.plugins.tainttoleration import TaintToleration

from .plugin_helpers import node, pod, run_filter, run_score, table

MB = 1024 * 1024


def test_node_unschedulable_unless_tolerated():
    nodes = table([node("cordoned", unschedulable=True), node("open")])
    statuses = run_filter(NodeUnschedulable(), pod(), nodes)
    assert statuses["cordoned"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["cordoned"].reasons == ("node(s) were unschedulable",)
    assert "open" not in statuses
    tolerating = pod(spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable",
                                            "operator": "Exists", "effect": "NoSchedule"}]})
    assert run_filter(NodeUnschedulable(), tolerating, nodes) == {}


def test_node_name():
    nodes = table([node("a"), node("b")])
    statuses = run_filter(NodeName(), pod(node_name="b"), nodes)
    assert set(statuses) == {"a"}
    assert statuses["a"].reasons == ("node(s) didn't match the requested node name",)
    assert statuses["a"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert run_filter(NodeName(), pod(), nodes) == {}


def test_taint_toleration_filter_names_the_first_untolerated_taint():
    # upstream taint_toleration_test.go: "node(s) had untolerated taint {dedicated: user1}"
    nodes = table([node("n1", taints=[{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]),
                   node("n2", taints=[{"key": "dedicated", "value": "user2", "effect": "NoSchedule"}]),
                   node("soft", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}])])
    tolerating = pod(spec={"tolerations": [{"key": "dedicated", "operator": "Equal",
                                            "value": "user2", "effect": "NoSchedule"}]})
    statuses = run_filter(TaintToleration(), tolerating, nodes)
    assert set(statuses) == {"n1"}
    assert statuses["n1"].reasons == ("node(s) had untolerated taint {dedicated: user1}",)
    assert statuses["n1"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_taint_toleration_score_is_reversed_count_of_prefer_no_schedule():
    # upstream "the more intolerable taints a node has, the lower score it gets": 0, 1, 2
    # untolerated PreferNoSchedule taints -> 100, 50, 0
    def soft(*keys):
        return [{"key": k, "value": "v", "effect": "PreferNoSchedule"} for k in keys]
    nodes = table([node("clean"), node("one", taints=soft("a")), node("two", taints=soft("a", "b"))])
    assert run_score(TaintToleration(), pod(), nodes) == {"clean": 100, "one": 50, "two": 0}
    tolerates_a = pod(spec={"tolerations": [{"key": "a", "operator": "Exists",
                                             "effect": "PreferNoSchedule"}]})
    assert run_score(TaintToleration(), tolerates_a, nodes) == {"clean": 100, "one": 100, "two": 0}


def _required(*terms):
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}}}


def test_node_affinity_filter_selector_and_required_terms():
    # kubernetes.io "Assign Pods to Nodes": required zone In (antarctica-east1, antarctica-west1)
    nodes = table([node("east", labels={"topology.kubernetes.io/zone": "antarctica-east1"}),
                   node("arctic", labels={"topology.kubernetes.io/zone": "arctic-1"})])
    spec = _required({"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                            "values": ["antarctica-east1", "antarctica-west1"]}]})
    statuses = run_filter(NodeAffinity({}), pod(spec=spec), nodes)
    assert set(statuses) == {"arctic"}
    assert statuses["arctic"].reasons == ("node(s) didn't match Pod's node affinity/selector",)
    assert statuses["arctic"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    by_selector = run_filter(NodeAffinity({}), pod(spec={"nodeSelector": {
        "topology.kubernetes.io/zone": "arctic-1"}}), nodes)
    assert set(by_selector) == {"east"}


def test_node_affinity_prefilter_skip_and_metadata_name_narrowing():
    plugin = NodeAffinity({})
    nodes = table([node("a"), node("b"), node("c")])
    state = CycleState()
    result, status = plugin.pre_filter(state, PodMeta.of(pod()), nodes)
    assert status is not None and status.code is Code.SKIP
    spec = _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
                     {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]})
    result, status = plugin.pre_filter(state, PodMeta.of(pod(spec=spec)), nodes)
    assert status is None and result.node_names == frozenset({"a", "b", "c"})
    conflict = _required({"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]},
        {"key": "metadata.name", "operator": "In", "values": ["b"]}]})
    _result, status = plugin.pre_filter(state, PodMeta.of(pod(spec=conflict)), nodes)
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("pod affinity terms conflict",)
    unnamed = _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
                        {"matchExpressions": [{"key": "x", "operator": "Exists"}]})
    result, status = plugin.pre_filter(state, PodMeta.of(pod(spec=unnamed)), nodes)
    assert status is None and result is None


def test_node_affinity_added_affinity_is_enforced_first():
    plugin = NodeAffinity({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In",
                                                     "values": ["batch"]}]}]}}})
    nodes = table([node("batch", labels={"pool": "batch"}), node("web", labels={"pool": "web"})])
    statuses = run_filter(plugin, pod(), nodes)  # no affinity of its own: not skipped
    assert statuses["web"].reasons == ("node(s) didn't match scheduler-enforced node affinity",)
    assert "batch" not in statuses


def test_node_affinity_score_weights_then_normalizes():
    # upstream node_affinity_test.go's preferred terms (weights 2, 4, 5): a node earns the
    # weights it matches, normalised by the best (11): 100*2/11 = 18, 100*4/11 = 36, 100
    preferred = [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
        {"weight": 4, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}},
        {"weight": 5, "preference": {"matchExpressions": [
            {"key": "foo", "operator": "In", "values": ["bar"]},
            {"key": "key", "operator": "In", "values": ["value"]},
            {"key": "az", "operator": "In", "values": ["az1"]}]}},
    ]
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}}
    nodes = table([node("m1", labels={"foo": "bar"}),
                   node("m5", labels={"foo": "bar", "key": "value", "az": "az1"}),
                   node("m2", labels={"key": "value"})])
    assert run_score(NodeAffinity({}), pod(spec=spec), nodes) == {"m1": 18, "m5": 100, "m2": 36}
    assert run_score(NodeAffinity({}), pod(), nodes) is None  # PreScore: Skip


def test_node_ports():
    used = pod("web", containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}])
    nodes = table([node("busy"), node("free")], {"busy": [used]})
    wants = pod("new", containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}])
    statuses = run_filter(NodePorts(), wants, nodes)
    assert set(statuses) == {"busy"}
    assert statuses["busy"].reasons == ("node(s) didn't have free ports for the requested pod ports",)
    assert statuses["busy"].code is Code.UNSCHEDULABLE
    assert run_filter(NodePorts(), pod(), nodes) == {}  # PreFilter Skip: no host ports


def test_image_locality_upstream_values():
    # upstream image_locality_test.go (1.31, maxThreshold = 1000 MB x containers), each image on
    # one of the two nodes so it counts half its size:
    # "two images spread on two nodes, prefer the larger image one": node2 has gcr.io/250 ->
    #   100 * (250M/2 - 23M) / (2000M - 23M) = 5; node1's 40M/2 is below 23M -> 0
    # "two images on one node, prefer this node": 100 * ((40M + 300M)/2 - 23M) / 1977M = 7
    n1 = node("machine1", images=[{"names": ["gcr.io/40:latest"], "sizeBytes": 40 * MB},
                                   {"names": ["gcr.io/300:latest"], "sizeBytes": 300 * MB},
                                   {"names": ["gcr.io/2000:latest"], "sizeBytes": 2000 * MB}])
    n2 = node("machine2", images=[{"names": ["gcr.io/250:latest"], "sizeBytes": 250 * MB},
                                   {"names": ["gcr.io/10:latest", "gcr.io/10:v1"], "sizeBytes": 10 * MB}])
    nodes = table([n1, n2])

    def wants(*images):
        return pod(containers=[{"name": f"c{i}", "image": im} for i, im in enumerate(images)])

    assert run_score(ImageLocality(), wants("gcr.io/40", "gcr.io/250"), nodes) == \
        {"machine1": 0, "machine2": 5}
    assert run_score(ImageLocality(), wants("gcr.io/40", "gcr.io/300"), nodes) == \
        {"machine1": 7, "machine2": 0}


def test_image_locality_index_follows_node_updates():
    n1 = node("a", images=[{"names": ["big:1"], "sizeBytes": 1000 * MB}])
    nodes = table([n1, node("b")])
    wanted = pod(containers=[{"name": "c", "image": "big:1"}])
    first = run_score(ImageLocality(), wanted, nodes)
    assert first["a"] > 0 and first["b"] == 0
    info = nodes.infos[nodes.row_of["b"]]
    info.node = node("b", images=[{"names": ["big:1"], "sizeBytes": 1000 * MB}])
    nodes.fill(nodes.row_of["b"])
    second = run_score(ImageLocality(), wanted, nodes)
    assert second["a"] == second["b"] > 0  # now on both: spread halves and equalises
