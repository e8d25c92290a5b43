"""The pure EndpointSlice reconcilers (upstream reconciler_test.go cases): packing into slices
of at most max_endpoints_per_slice, minimal churn (unchanged endpoints never move, leftovers
go to the slice they fill best), the placeholder slice, endpoint conditions, ports resolved
from named targetPorts, labels, topology hints, the tracker, and mirroring."""

from __future__ import annotations

import functools
import itertools

from minikube_py.controllers.endpointslice_hints import TopologyHints, allocations
from minikube_py.controllers.endpointslice_reconciler import reconcile, remove_hints
from minikube_py.controllers.endpointslice_tracker import EndpointSliceTracker
from minikube_py.controllers.endpointslice_trigger_time import (
    ANNOTATION,
    TriggerTimeTracker,
    with_trigger_time,
)
from minikube_py.controllers.endpointslice_util import (
    CONTROLLER_NAME,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    MIRRORING_CONTROLLER_NAME,
    Plan,
)
from minikube_py.controllers.endpointslicemirroring_reconciler import (
    reconcile as mirror,
)

_names = itertools.count()


def svc(ports=None, **spec) -> dict:
    return {"metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid",
                         "labels": {"team": "a"}},
            "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.10",
                     "ipFamilies": ["IPv4"],
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080,
                                "protocol": "TCP"}] if ports is None else ports, **spec}}


def pod(i: int, *, ready: bool = True, deleting: bool = False, node: str = "n1",
        ports=None) -> dict:
    md = {"name": f"p{i:04d}", "namespace": "ns", "uid": f"uid-{i}",
          "labels": {"app": "web"}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": md,
            "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports or []}]},
            "status": {"phase": "Running", "podIP": f"10.1.{i // 250}.{i % 250 + 1}",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


NODES = {"n1": {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z1"}}},
         "n2": {"metadata": {"name": "n2", "labels": {"topology.kubernetes.io/zone": "z2"}}}}


def store(plan: Plan, existing: list[dict]) -> list[dict]:
    """What the server holds after the plan: creates get names, updates replace."""
    by_name = {s["metadata"]["name"]: s for s in existing}
    for s in plan.delete:
        by_name.pop(s["metadata"]["name"])
    for s in plan.update:
        by_name[s["metadata"]["name"]] = s
    for s in plan.create:
        name = s["metadata"]["generateName"] + f"x{next(_names)}"
        by_name[name] = {**s, "metadata": {**s["metadata"], "name": name}}
    return list(by_name.values())


def run(service, pods, existing=(), max_per_slice=100, nodes=NODES):
    plan, skipped = reconcile(service, pods, nodes, list(existing),
                              max_endpoints_per_slice=max_per_slice, hints=remove_hints)
    return plan, store(plan, list(existing)), skipped


def test_packs_into_slices_of_max_size_with_labels_and_owner() -> None:
    plan, slices, _ = run(svc(), [pod(i) for i in range(250)])
    assert [len(s["endpoints"]) for s in plan.create] == [100, 100, 50]
    assert plan.added == 250 and not plan.update and not plan.delete
    assert plan.desired == [250]  # per port set, for the desired_endpoint_slices gauge
    first = plan.create[0]
    assert first["metadata"]["generateName"] == "web-"
    assert first["metadata"]["labels"] == {"team": "a", LABEL_SERVICE_NAME: "web",
                                           LABEL_MANAGED_BY: CONTROLLER_NAME}
    assert first["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Service", "name": "web", "uid": "svc-uid",
        "controller": True, "blockOwnerDeletion": True}]
    assert first["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert first["endpoints"][0] == {
        "addresses": ["10.1.0.1"], "conditions": {"ready": True, "serving": True,
                                                  "terminating": False},
        "targetRef": {"kind": "Pod", "namespace": "ns", "name": "p0000", "uid": "uid-0"},
        "nodeName": "n1", "zone": "z1"}
    # a second sync over the same state changes nothing
    again, _, _ = run(svc(), [pod(i) for i in range(250)], slices)
    assert again.changes == 0


def test_minimal_churn_one_pod_gone_and_one_added() -> None:
    pods = [pod(i) for i in range(250)]
    _, slices, _ = run(svc(), pods)
    before = {s["metadata"]["name"]: {e["targetRef"]["name"] for e in s["endpoints"]}
              for s in slices}
    # p0005 goes away, p0999 arrives: one slice is updated (the one losing a pod gets the
    # new one), nothing else moves
    plan, after, _ = run(svc(), [p for p in pods if p["metadata"]["name"] != "p0005"] +
                         [pod(999)], slices)
    assert (len(plan.create), len(plan.update), len(plan.delete)) == (0, 1, 0)
    assert plan.added == 1 and plan.removed == 1
    changed = plan.update[0]["metadata"]["name"]
    for s in after:
        names = {e["targetRef"]["name"] for e in s["endpoints"]}
        if s["metadata"]["name"] == changed:
            assert names == before[changed] - {"p0005"} | {"p0999"}
        else:
            assert names == before[s["metadata"]["name"]]


def test_leftovers_fill_the_closest_unchanged_slice() -> None:
    _, slices, _ = run(svc(), [pod(i) for i in range(250)])  # 100, 100, 50
    plan, after, _ = run(svc(), [pod(i) for i in range(270)], slices)
    assert not plan.create and len(plan.update) == 1
    assert sorted(len(s["endpoints"]) for s in after) == [70, 100, 100]


def test_placeholder_slice_kept_and_replaced() -> None:
    plan, slices, _ = run(svc(), [])
    [placeholder] = plan.create
    assert placeholder["endpoints"] == [] and "ports" not in placeholder
    # an unchanged empty service keeps its placeholder (no delete/recreate)
    again, _, _ = run(svc(), [], slices)
    assert again.changes == 0
    # pods arrive: the placeholder is reused (finalize turns create+delete into one update)
    plan, after, _ = run(svc(), [pod(1)], slices)
    assert (len(plan.create), len(plan.update), len(plan.delete)) == (0, 1, 0)
    assert plan.update[0]["metadata"]["name"] == slices[0]["metadata"]["name"]
    assert len(after[0]["endpoints"]) == 1
    # and when they go, the slice becomes the placeholder again
    plan, _, _ = run(svc(), [], after)
    assert (len(plan.create), len(plan.update), len(plan.delete)) == (0, 1, 0)
    assert plan.update[0]["endpoints"] == [] and "ports" not in plan.update[0]


def test_conditions_terminating_not_ready_and_publish_not_ready() -> None:
    pods = [pod(1), pod(2, ready=False), pod(3, deleting=True), pod(4, ready=False,
                                                                     deleting=True)]
    plan, _, _ = run(svc(), pods)
    conds = {e["targetRef"]["name"]: e["conditions"] for e in plan.create[0]["endpoints"]}
    assert conds == {
        "p0001": {"ready": True, "serving": True, "terminating": False},
        "p0002": {"ready": False, "serving": False, "terminating": False},
        "p0003": {"ready": False, "serving": True, "terminating": True},
        "p0004": {"ready": False, "serving": False, "terminating": True}}
    plan, _, _ = run(svc(publishNotReadyAddresses=True), pods)
    assert all(e["conditions"]["ready"] for e in plan.create[0]["endpoints"])


def test_named_target_ports_split_slices_by_port_set() -> None:
    service = svc([{"name": "http", "port": 80, "targetPort": "web", "protocol": "TCP"}])
    pods = [pod(1, ports=[{"name": "web", "containerPort": 8080}]),
            pod(2, ports=[{"name": "web", "containerPort": 9090}]),
            pod(3, ports=[{"name": "other", "containerPort": 1}])]
    plan, _, _ = run(service, pods)
    by_port = {tuple(p["port"] for p in s.get("ports", ())): [e["targetRef"]["name"]
                                                             for e in s["endpoints"]]
               for s in plan.create}
    assert by_port == {(8080,): ["p0001"], (9090,): ["p0002"], (): ["p0003"]}


def test_label_change_updates_and_foreign_slices_are_deleted() -> None:
    _, slices, _ = run(svc(), [pod(1)])
    relabelled = svc()
    relabelled["metadata"]["labels"] = {"team": "b"}
    plan, _, _ = run(relabelled, [pod(1)], slices)
    assert len(plan.update) == 1 and plan.update[0]["metadata"]["labels"]["team"] == "b"
    other = svc()
    other["metadata"]["uid"] = "another-service-with-the-same-name"
    plan, _, _ = run(other, [pod(1)], slices)
    assert len(plan.delete) == 1 and len(plan.create) == 1  # not owned: never reused


def test_pod_on_unknown_node_is_skipped_and_reported() -> None:
    plan, _, skipped = run(svc(), [pod(1), pod(2, node="gone")])
    assert skipped and [e["targetRef"]["name"] for e in plan.create[0]["endpoints"]] == ["p0001"]


def test_tracker_detects_stale_cache() -> None:
    tracker = EndpointSliceTracker(LABEL_SERVICE_NAME)
    written = {"metadata": {"namespace": "ns", "uid": "u1", "generation": 2,
                            "labels": {LABEL_SERVICE_NAME: "web"}}}
    tracker.update(written)
    older = {"metadata": {**written["metadata"], "generation": 1}}
    assert tracker.stale_slices("ns/web", [])  # our slice is not in the cache yet
    assert tracker.stale_slices("ns/web", [older])
    assert not tracker.stale_slices("ns/web", [written])
    assert not tracker.should_sync(written) and tracker.should_sync(
        {"metadata": {**written["metadata"], "generation": 3}})
    tracker.expect_deletion(written)
    assert tracker.stale_slices("ns/web", [written])
    assert not tracker.handle_deletion(written)  # our own delete: nothing to do


def _ready_node(name: str, zone: str, cpu: str) -> dict:
    return {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def test_topology_hints_proportional_to_zone_cpu() -> None:
    assert allocations({"a": 0.5, "b": 0.5}, 1)[1] == (
        "Insufficient number of endpoints (1 endpoints, 2 zones)")
    events: list = []
    hints = TopologyHints()
    hints.nodes_changed([_ready_node("n1", "z1", "3"), _ready_node("n2", "z2", "1")])
    service = svc()
    service["metadata"]["annotations"] = {"service.kubernetes.io/topology-mode": "Auto"}
    pods = [pod(i, node="n1") for i in range(4)] + [pod(i, node="n2") for i in range(4, 8)]
    plan, _ = reconcile(service, pods, NODES, [],
                        hints=functools.partial(hints.apply, events=events))
    zones = [e["hints"]["forZones"][0]["name"] for e in plan.create[0]["endpoints"]]
    # 3:1 CPU over 8 endpoints: z1 wants 6 (at least ceil(6 / 1.2) = 5), z2 at most 2 + 1
    # slack = 3; z2 has 4, so it hands one hint to z1
    assert zones.count("z1") == 5 and zones.count("z2") == 3
    assert [e[2:] for e in events] == [("TopologyAwareHintsEnabled",
                                        ("Topology Aware Hints has been enabled, addressType: "
                                        "IPv4"))]
    # one zone only: hints removed, with upstream's reason
    hints.nodes_changed([_ready_node("n1", "z1", "3")])
    plan, _ = reconcile(service, pods, NODES, [],
                        hints=functools.partial(hints.apply, events=events))
    assert all("hints" not in e for e in plan.create[0]["endpoints"])
    assert events[-1][2:] == (
        "TopologyAwareHintsDisabled", ("Insufficient Node information: allocatable CPU or zone "
        "not specified on one or more nodes, addressType: IPv4"))


def _endpoints(subsets, **labels) -> dict:
    return {"metadata": {"name": "ext", "namespace": "ns", "uid": "ep-uid", "labels": labels,
                         "annotations": {"a": "1", "kubectl.kubernetes.io/last-applied-"
                                                   "configuration": "{}"}},
            "subsets": subsets}


def test_mirroring_one_slice_per_subset_and_family() -> None:
    endpoints = _endpoints([
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}, {"ip": "not-an-ip"}],
         "notReadyAddresses": [{"ip": "10.0.0.2"}], "ports": [{"port": 80}]}], team="x")
    result = mirror(endpoints, [])
    assert result.invalid == 1 and result.skipped == 1
    by_type = {s["addressType"]: s for s in result.plan.create}
    assert set(by_type) == {"IPv4", "IPv6"}
    v4 = by_type["IPv4"]
    assert v4["metadata"]["labels"] == {"team": "x", LABEL_SERVICE_NAME: "ext",
                                        LABEL_MANAGED_BY: MIRRORING_CONTROLLER_NAME}
    assert v4["metadata"]["annotations"] == {"a": "1"}
    assert v4["metadata"]["ownerReferences"][0]["kind"] == "Endpoints"
    assert v4["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]
    assert [(e["addresses"], e["conditions"]) for e in v4["endpoints"]] == [
        (["10.0.0.1"], {"ready": True}), (["10.0.0.2"], {"ready": False})]
    created = store(result.plan, [])
    assert mirror(endpoints, created).plan.changes == 0
    # an address goes: the slice is rewritten in place
    endpoints["subsets"][0]["notReadyAddresses"] = []
    plan = mirror(endpoints, created).plan
    assert len(plan.update) == 1 and plan.removed == 1 and not plan.create


def test_mirroring_caps_addresses_per_subset() -> None:
    endpoints = _endpoints([{"addresses": [{"ip": f"10.0.{i // 250}.{i % 250 + 1}"}
                                           for i in range(12)], "ports": [{"port": 80}]}])
    result = mirror(endpoints, [], max_per_subset=10)
    assert len(result.plan.create[0]["endpoints"]) == 10 and result.skipped == 2


def test_trigger_time_is_the_earliest_change_since_the_last_sync() -> None:
    tracker = TriggerTimeTracker()
    service = svc()
    service["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"

    def ready_at(i: int, when: str) -> dict:
        p = pod(i)
        p["status"]["conditions"][0]["lastTransitionTime"] = when
        return p

    pods = [ready_at(1, "2026-01-01T00:00:05Z"), ready_at(2, "2026-01-01T00:00:07Z")]
    assert tracker.compute("ns/web", service, pods) == "2026-01-01T00:00:00Z"  # first sync
    assert tracker.compute("ns/web", service, pods) == ""  # nothing moved
    pods = [ready_at(1, "2026-01-01T00:01:00Z"), ready_at(2, "2026-01-01T00:00:59Z")]
    assert tracker.compute("ns/web", service, pods) == "2026-01-01T00:00:59Z"
    annotated = with_trigger_time({"metadata": {"annotations": {"a": "b"}}}, "t")
    assert annotated["metadata"]["annotations"] == {"a": "b", ANNOTATION: "t"}
    assert with_trigger_time(annotated, "")["metadata"]["annotations"] == {"a": "b"}


def test_headless_and_dual_stack() -> None:
    headless = svc([], clusterIP="None")
    plan, _, _ = run(headless, [pod(1)])
    [slice_] = plan.create
    assert "ports" not in slice_ and len(slice_["endpoints"]) == 1
    assert slice_["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    dual = svc(ipFamilies=["IPv4", "IPv6"])
    both = pod(1)
    both["status"]["podIPs"] = [{"ip": "10.1.0.2"}, {"ip": "fd00::2"}]
    plan, _, _ = run(dual, [both])
    assert {s["addressType"]: s["endpoints"][0]["addresses"] for s in plan.create} == {
        "IPv4": ["10.1.0.2"], "IPv6": ["fd00::2"]}
    # the service goes single-stack: its IPv6 slice is deleted
    _, slices, _ = run(dual, [both])
    plan, _, _ = run(svc(), [both], slices)
    assert [s["addressType"] for s in plan.delete] == ["IPv6"] and not plan.create
