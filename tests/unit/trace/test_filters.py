"""What a /debug/trace viewer selects, the SSE parser and the pod timeline lines."""

from __future__ import annotations

import pytest

from minikube_py.trace import KUBELET, STORE, TraceFilter, TraceRing
from minikube_py.trace.eventstream import EventParser, ServerEvent
from minikube_py.trace.filters import from_query, parse_since
from minikube_py.trace.journey import Timeline, describe, schedule_summary


def records():
    ring = TraceRing()
    ring.emit(STORE, "storage", "pods", "a", "web", "", ("ADDED", "/registry/pods/a/web", 5, 0))
    ring.emit(STORE, "storage", "services", "a", "web", "", ("ADDED", "/s", 6, 0))
    ring.emit(KUBELET, "kubelet/n", "pods", "a", "web", "uid-1", ("n", "Running", None, "10.0.0.2"))
    ring.emit(STORE, "storage", "pods", "b", "web", "", ("ADDED", "/registry/pods/b/web", 7, 0))
    return list(ring.records)


def test_filter_by_object_kind_and_uid() -> None:
    recs = records()
    seqs = lambda f: [r.seq for r in recs if f.matches(r)]
    assert seqs(TraceFilter()) == [1, 2, 3, 4]
    assert seqs(from_query({"object": "a/web"})) == [1, 2, 3]
    assert seqs(from_query({"object": "a/web", "resource": "pods"})) == [1, 3]
    assert seqs(from_query({"kind": "kubelet"})) == [3]
    assert seqs(from_query({"uid": "uid-1"})) == [3]
    assert seqs(from_query({"namespace": "b"})) == [4]
    assert seqs(from_query({"object": "web"})) == []  # cluster-scoped web: none here


@pytest.mark.parametrize("query, message", [
    ({"kind": "requests"}, "kind: unknown trace record kind 'requests'"),
    ({"object": "a/b/c"}, "object: want namespace/name or name"),
])
def test_bad_queries(query: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_query(query)


def test_parse_since() -> None:
    assert parse_since("0") == 0 and parse_since("42") == 42
    for bad in ("-1", "x", ""):
        with pytest.raises(ValueError, match="since: must be a non-negative"):
            parse_since(bad)


def test_event_parser() -> None:
    parser = EventParser()
    lines = [": keepalive", "", "id: 3", "data: {\"a\": 1}", "", "event: lost", "data: 4", "",
             "data: x\r", "data: y", ""]
    events = [e for e in map(parser.feed, lines) if e is not None]
    assert events == [ServerEvent("message", '{"a": 1}', "3"), ServerEvent("lost", "4", "3"),
                      ServerEvent("message", "x\ny", "3")]


def test_schedule_summary() -> None:
    text = schedule_summary({"result": "scheduled", "node": "node-2", "feasible": 2,
                             "total": 3, "scores": {"node-1": 5, "node-2": 9},
                             "failed": {"node-0": ["node(s) were unschedulable"]}})
    assert text == ("-> node-2 (2/3 nodes fit; best node-2=9, node-1=5; 1 filtered out "
                    "(most: node(s) were unschedulable x1))")
    text = schedule_summary({"result": "unschedulable", "message": "0/1 nodes are available",
                             "feasible": 0, "total": 1})
    assert text == "unschedulable: 0/1 nodes are available (0/1 nodes fit)"


def test_timeline_lines() -> None:
    timeline = Timeline(watches=False)
    first = timeline.line({"kind": "store", "time": 10.0, "type": "ADDED", "revision": 5,
                           "prev_revision": 0, "key": "/registry/pods/a/web"})
    assert first is not None and first.label == "created" and first.offset == 0
    bound = timeline.line({"kind": "request", "time": 10.25, "verb": "create",
                           "subresource": "binding", "status": 201, "latency_ms": 1.0,
                           "component": "kube-scheduler"})
    assert bound is not None and bound.label == "bound" and bound.offset == 0.25
    assert "250.0 ms  bound" in bound.plain()
    assert timeline.line({"kind": "watch", "time": 11, "revision": 5}) is None
    assert describe({"kind": "kubelet", "node": "n", "phase": "Running", "pod_ip": "1.2.3.4"}) \
        == ("running", "n: Running ip 1.2.3.4")
    assert describe({"kind": "nonsense"}) is None


def test_detail_full_for_one_object_else_summary() -> None:
    from minikube_py.trace.filters import full_detail

    assert full_detail({}, from_query({})) is False
    assert full_detail({}, from_query({"object": "a/web"})) is True
    assert full_detail({}, from_query({"uid": "u"})) is True
    assert full_detail({"detail": "full"}, from_query({})) is True
    assert full_detail({"detail": "summary"}, from_query({"object": "a/web"})) is False
    with pytest.raises(ValueError, match="detail: must be full or summary"):
        full_detail({"detail": "some"}, from_query({}))
