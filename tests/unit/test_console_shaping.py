"""The console's pure parts: view JSON shaping, request-rate counting, sample workloads."""

from __future__ import annotations

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.console.actions import MAX_REPLICAS, sample_workload
from minikube_py.console.rates import box_of, count_by_second, rates
from minikube_py.console.shaping import (
    event_row,
    nodes_view,
    overview,
    pod_row,
    pods_view,
    recent_events,
)
from minikube_py.trace.records import REQUEST, STORE, WATCH, Record

REQUESTS, EVENTS = "requests", "watchEvents"


def node(name: str, ready: str = "True", cpu: str = "4", memory: str = "8Gi",
         pods: str = "110") -> dict:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": [{"type": "Ready", "status": ready}]}}


def pod(name: str, node_name: str = "", phase: str = "Running", cpu: str = "250m",
        memory: str = "64Mi", namespace: str = "default", created: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": namespace,
                         **({"creationTimestamp": created} if created else {})},
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "c", "resources": {
                         "requests": {"cpu": cpu, "memory": memory}}}]},
            "status": {"phase": phase,
                       "conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Ready", "status": "False"}]}}


def test_nodes_view_sums_requests_of_pods_that_hold_the_node() -> None:
    rows = nodes_view(
        [node("node-10"), node("node-2", ready="Unknown"), node("node-1")],
        [pod("a", "node-1"), pod("b", "node-1", cpu="1", memory="1Gi"),
         pod("done", "node-1", phase="Succeeded"), pod("pending"), pod("c", "node-2")])
    assert [r["name"] for r in rows] == ["node-1", "node-2", "node-10"]  # natural order
    first = rows[0]
    assert first["allocatable"] == {"cpu": 4000, "memory": 8 * 2**30, "pods": 110}
    # the Succeeded pod is listed but holds nothing (the scheduler's rule)
    assert first["requested"] == {"cpu": 1250, "memory": 64 * 2**20 + 2**30, "pods": 2}
    assert first["pods"] == ["default/a", "default/b", "default/done"]
    assert rows[1]["ready"] == "Unknown"
    assert rows[2]["requested"]["pods"] == 0


def test_a_node_without_conditions_is_unknown_and_bad_quantities_show_zero() -> None:
    (row,) = nodes_view([{"metadata": {"name": "n"}, "status": {
        "allocatable": {"cpu": "lots"}}}], [])
    assert row["ready"] == "Unknown"
    assert row["allocatable"] == {"cpu": 0, "memory": 0, "pods": 0}


def test_pod_rows_have_phase_conditions_node_and_age() -> None:
    row = pod_row(pod("web-1", "node-0", created="2024-01-01T00:00:00Z"), 1704067230.0)
    assert row == {"namespace": "default", "name": "web-1", "phase": "Running",
                   "deleting": False, "conditions": {"PodScheduled": "True", "Ready": "False"},
                   "node": "node-0", "age": 30.0}
    assert pod_row({"metadata": {"name": "x"}}, 0)["phase"] == "Pending"
    rows = pods_view([pod("b", namespace="ns2"), pod("a-10"), pod("a-9")], 0)
    assert [(r["namespace"], r["name"]) for r in rows] == [
        ("default", "a-9"), ("default", "a-10"), ("ns2", "b")]
    assert [r["name"] for r in pods_view([pod("b", namespace="ns2"), pod("a")], 0, "ns2")] \
        == ["b"]


def test_event_rows_as_kubectl_get_events() -> None:
    event = {"metadata": {"name": "web.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "web"}, "reason": "Scheduled",
             "type": "Normal", "message": "assigned", "source": {"component": "scheduler"},
             "lastTimestamp": "2024-01-01T00:00:10Z", "count": 2}
    row = event_row(event)
    assert row["key"] == "default/web.1"
    assert row["object"] == "pod/web"
    assert row["time"] == 1704067210.0
    assert (row["reason"], row["source"], row["count"]) == ("Scheduled", "scheduler", 2)
    # an events.k8s.io-style Event: eventTime and reportingComponent, no count
    newer = {"metadata": {"name": "e2", "namespace": "x"}, "eventTime":
             "2024-01-01T00:00:05.000000Z", "reportingComponent": "kubelet"}
    assert event_row(newer)["source"] == "kubelet" and event_row(newer)["count"] == 1
    assert [r["key"] for r in recent_events([event, newer], 1)] == ["default/web.1"]
    assert [r["key"] for r in recent_events([event, newer], 5)] == ["x/e2", "default/web.1"]


def test_overview_counts() -> None:
    body = overview([node("a"), node("b", ready="False")],
                    [pod("p"), pod("q", phase="Pending"), pod("r", phase="Failed")], 42,
                    {REQUESTS: {"kubelet": 3.0}, EVENTS: {}})
    assert body["revision"] == 42
    assert body["nodes"] == {"total": 2, "ready": 1, "notReady": 1}
    assert body["pods"] == {"total": 3, "Pending": 1, "Running": 1, "Succeeded": 0,
                            "Failed": 1, "Unknown": 0}
    assert body["rates"] == {REQUESTS: {"kubelet": 3.0}, EVENTS: {}}


def test_user_agents_map_to_the_diagram_boxes() -> None:
    assert box_of("kube-scheduler") == "scheduler"
    assert box_of("kube-controller-manager/replicaset-controller") == "controller-manager"
    assert box_of("kubelet/node-3") == "kubelet"
    assert box_of("minikube-py-informers") == "informers"
    assert box_of("kubectl/v1.31.0 (linux/amd64)") == "clients"
    assert box_of("") == "clients"


def _record(seq: int, at: float, agent: str, kind: str = REQUEST) -> Record:
    return Record(seq, at, kind, agent, "pods", "", "", "", ("get", "/", "", 200, 1.0))


def test_rates_average_whole_seconds_in_the_window() -> None:
    records = [_record(1, 100.2, "kubelet/node-0"), _record(2, 100.9, "kubelet/node-1"),
               _record(3, 101.5, "kube-scheduler"), _record(4, 101.6, "x", kind=STORE),
               _record(5, 101.7, "minikube-py-informers", kind=WATCH),
               _record(6, 104.1, "kubelet/node-0")]
    buckets = count_by_second(records)
    assert buckets[100][REQUESTS, "kubelet"] == 2
    assert buckets[101] == {(REQUESTS, "scheduler"): 1, (EVENTS, "informers"): 1}
    # the window [100, 104): 2 kubelet + 1 scheduler over 4 s; second 104 is not yet whole
    assert rates(buckets, now=104.5, since=90.0, window=4) == {
        REQUESTS: {"kubelet": 0.5, "scheduler": 0.2}, EVENTS: {"informers": 0.2}}
    # counting began at 102: only two seconds are averaged, not the whole window
    assert rates(buckets, now=104.5, since=102.0, window=4) == {REQUESTS: {}, EVENTS: {}}
    assert rates(buckets, now=102.0, since=100.0, window=4) == {
        REQUESTS: {"kubelet": 1.0, "scheduler": 0.5}, EVENTS: {"informers": 0.5}}


def test_sample_workload_shapes_a_deployment() -> None:
    namespace, deployment = sample_workload({"namespace": "demo", "name": "web", "replicas": 4,
                                             "image": "docker.io/library/nginx:1.27"})
    assert namespace == "demo"
    assert deployment["metadata"] == {"name": "web", "namespace": "demo",
                                      "labels": {"app": "web"}}
    spec = deployment["spec"]
    assert spec["replicas"] == 4
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["name"] == "nginx" and container["image"] == "docker.io/library/nginx:1.27"
    assert sample_workload({})[1]["spec"]["replicas"] == 3


@pytest.mark.parametrize("body, message", [
    ({"replicas": "3"}, "replicas: must be an integer"),
    ({"replicas": True}, "replicas: must be an integer"),
    ({"replicas": -1}, f"replicas: must be between 0 and {MAX_REPLICAS}"),
    ({"replicas": MAX_REPLICAS + 1}, f"replicas: must be between 0 and {MAX_REPLICAS}"),
    ({"name": 5}, "name: must be a string"),
])
def test_sample_workload_rejects_bad_input_with_400(body: dict, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        sample_workload(body)
    assert caught.value.code == 400 and caught.value.message == message


def test_a_slow_event_follower_is_dropped_not_buffered() -> None:
    from minikube_py.console.feeds import QUEUE_SIZE, EventFollower

    follower = EventFollower()
    for i in range(QUEUE_SIZE):
        follower.push({"key": str(i)})
    assert not follower.closed and follower.queue.qsize() == QUEUE_SIZE
    follower.push({"key": "one too many"})
    assert follower.closed and follower.queue.qsize() == QUEUE_SIZE
