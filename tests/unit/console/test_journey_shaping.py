"""The journey view's pure shaping: trace records -> hops (lanes, links, offsets), the pod's
state, and a scheduling attempt's decision table for both scheduler algorithms."""

from __future__ import annotations

from typing import Any

from minikube_py.console.journey import (
    decision_table,
    find_schedule,
    hops,
    journey,
    pod_state,
)
from minikube_py.trace.journey import Timeline, component_lane

T0 = 1_000.0


def rec(seq: int, dt: float, kind: str, component: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "time": T0 + dt, "kind": kind, "component": component,
            "resource": "pods", "namespace": "default", "name": "web", "uid": "", **fields}


FRAMEWORK = {
    "pod": "default/web", "time": "2026-11-26T17:24:54Z", "result": "scheduled",
    "node": "node-1", "message": "", "feasible": 2, "total": 3, "seconds": 0.0016,
    "failed": {"node-2": ["node(s) had untolerated taint {a: b}"]},
    "scores": {"node-0": 397, "node-1": 497}, "profile": "default-scheduler",
    "filters": {"node-2": [{"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                            "reasons": ["node(s) had untolerated taint {a: b}"]}]},
    "pluginScores": {
        "node-0": {"TaintToleration": {"score": 100, "weight": 3, "weighted": 300},
                   "NodeResourcesFit": {"score": 97, "weight": 1, "weighted": 97}},
        "node-1": {"TaintToleration": {"score": 100, "weight": 3, "weighted": 300},
                   "NodeResourcesFit": {"score": 197, "weight": 1, "weighted": 197}}},
    "extensionPoints": {"Filter": 0.0003},
}

JOURNEY = [
    rec(17, 0.0, "store", "storage", type="ADDED", key="/registry/pods/default/web",
        revision=117, prev_revision=0),
    rec(18, 0.0001, "watch", "minikube-py-informers", revision=117, type="ADDED"),
    rec(21, 0.0002, "request", "kubectl/v1.31.0", verb="create", path="/api/v1/...",
        subresource="", status=201, latency_ms=6.0),
    rec(22, 0.0003, "request", "minikube-py-console", verb="get", path="/api/v1/...",
        subresource="", status=200, latency_ms=0.1),  # a viewer's own read: left out
    rec(30, 0.005, "request", "kube-scheduler", verb="create", path="/api/v1/.../binding",
        subresource="binding", status=201, latency_ms=0.5),
    rec(31, 0.0055, "schedule", "scheduler", detail=FRAMEWORK),
    rec(49, 0.014, "kubelet", "kubelet/node-1", node="node-1", phase="Running", reason=None,
        pod_ip="10.244.1.2"),
    rec(50, 0.015, "mystery", "nobody"),
]


def test_hops_are_timed_from_the_first_record_with_lanes_and_links() -> None:
    out = hops(JOURNEY)
    assert [h["label"] for h in out] == ["created", "watch", "request", "bound", "scheduled",
                                         "running"]  # the unknown kind is skipped
    assert [h["lane"] for h in out] == ["store", "informers", "apiserver", "apiserver",
                                        "scheduler", "kubelet"]
    assert out[0]["offset_ms"] == 0.0 and out[-1]["offset_ms"] == 14.0
    assert out[0]["link"] == {"store": {"key": "/registry/pods/default/web", "revision": 117,
                                        "prev_revision": 0}}
    assert out[4]["link"] == {"decision": 31}
    assert out[2]["link"] == {}
    assert "-> node-1" in out[4]["text"] and "2/3 nodes fit" in out[4]["text"]
    assert out[-1]["text"] == "node-1: Running ip 10.244.1.2"


def test_a_stream_timeline_keeps_the_journeys_start() -> None:
    hop = Timeline(start=T0 - 0.5).hop(JOURNEY[0])
    assert hop is not None and hop.to_json()["offset_ms"] == 500.0
    # the CLI's plain line is the same hop
    assert hop.plain().split() == ["500.0", "ms", "created", "rv=117",
                                   "/registry/pods/default/web"]


def test_component_lanes() -> None:
    assert component_lane("kube-scheduler/v1.31") == "scheduler"
    assert component_lane("kubelet/node-3") == "kubelet"
    assert component_lane("kube-controller-manager/endpoint-controller") == "controllers"
    assert component_lane("kubectl/v1.30.1 (linux/amd64)") == "client"


def test_framework_decision_table_rows_and_columns() -> None:
    table = decision_table(FRAMEWORK)
    assert table["algorithm"] == "framework" and table["profile"] == "default-scheduler"
    assert table["filters"] == ["TaintToleration"]
    assert table["scorers"] == [{"name": "TaintToleration", "weight": 3},
                                {"name": "NodeResourcesFit", "weight": 1}]
    names = [row["name"] for row in table["nodes"]]
    assert names == ["node-1", "node-0", "node-2"]  # chosen, feasible by total, rejected
    chosen, other, rejected = table["nodes"]
    assert chosen["chosen"] and chosen["total"] == 497 and chosen["feasible"]
    assert chosen["scores"]["NodeResourcesFit"]["weighted"] == 197
    assert not other["chosen"] and other["total"] == 397
    assert not rejected["feasible"] and rejected["total"] is None
    assert rejected["rejected"] == {"TaintToleration": ["node(s) had untolerated taint {a: b}"]}
    assert table["extensionPoints"] == {"Filter": 0.0003} and table["omitted"] == 0


def test_v1_decision_table_has_predicate_reasons_and_totals() -> None:
    detail = {"pod": "default/web", "result": "unschedulable", "node": "",
              "message": "0/2 nodes are available: 2 Insufficient cpu.", "feasible": 0,
              "total": 2, "failed": {"a": ["Insufficient cpu"], "b": ["Insufficient cpu"]},
              "scores": {}, "seconds": 0.001}
    table = decision_table(detail)
    assert table["algorithm"] == "v1" and table["filters"] == ["predicates"]
    assert table["scorers"] == [] and table["node"] == ""
    assert [r["name"] for r in table["nodes"]] == ["a", "b"]
    assert not any(r["chosen"] or r["feasible"] for r in table["nodes"])
    assert table["nodes"][0]["rejected"] == {"predicates": ["Insufficient cpu"]}
    parts = {"a": {"LeastRequestedPriority": {"score": 7, "weight": 1, "weighted": 7}},
             "b": {"LeastRequestedPriority": {"score": 9, "weight": 1, "weighted": 9}}}
    scheduled = decision_table({**detail, "result": "scheduled", "node": "b", "failed": {},
                                "scores": {"a": 7, "b": 9}, "feasible": 2,
                                "priorityScores": parts})
    assert [(r["name"], r["total"], r["chosen"]) for r in scheduled["nodes"]] == [
        ("b", 9, True), ("a", 7, False)]
    assert scheduled["scorers"] == [{"name": "LeastRequestedPriority", "weight": 1}]
    assert scheduled["nodes"][0]["scores"] == parts["b"]


def test_find_schedule_by_seq_or_latest() -> None:
    second = rec(60, 1.0, "schedule", "scheduler", detail={**FRAMEWORK, "node": "node-0"})
    records = [*JOURNEY, second]
    assert find_schedule(records, None)["node"] == "node-0"
    assert find_schedule(records, 31)["node"] == "node-1"
    assert find_schedule(records, 17) is None  # a store record, not an attempt


def test_pod_state_and_journey_body() -> None:
    pod = {"metadata": {"uid": "u1", "resourceVersion": "127"},
           "spec": {"nodeName": "node-1", "containers": [{"name": "c"}]},
           "status": {"phase": "Running", "podIP": "10.244.1.2",
                      "containerStatuses": [{"ready": True}],
                      "conditions": [{"type": "Ready", "status": "True"}]}}
    state = pod_state(pod)
    assert state is not None
    assert (state["phase"], state["node"], state["ready"]) == ("Running", "node-1", "1/1")
    assert pod_state(None) is None
    body = journey("default", "web", JOURNEY, 0, 50, pod, "/registry/pods/default/web", [])
    assert body["last_seq"] == 50 and len(body["hops"]) == 6
    # the CLI's timeline keeps the reads
    assert sum(1 for r in JOURNEY if Timeline().hop(r) is not None) == 7
    assert body["lanes"][:3] == ["client", "apiserver", "store"]
