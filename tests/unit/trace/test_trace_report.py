"""The failure report's timeline from the trace ring: which records are about a namespace,
and how they are printed."""

from __future__ import annotations

from minikube_py.testing.trace_history import (
    namespace_records,
    timeline,
    timeline_section,
)
from minikube_py.trace import KUBELET, RECONCILE, REQUEST, STORE, WATCH, TraceRing


def filled_ring() -> tuple[TraceRing, int]:
    ring = TraceRing()
    ring.emit(STORE, "storage", "pods", "old", "p", "", ("ADDED", "/registry/pods/old/p", 3, 0))
    start = ring.last_seq
    ring.emit(STORE, "storage", "namespaces", "", "a", "", ("ADDED", "/registry/namespaces/a",
                                                             4, 0))
    ring.emit(STORE, "storage", "pods", "a", "p", "", ("ADDED", "/registry/pods/a/p", 5, 0))
    ring.emit(WATCH, "kube-scheduler", "pods", "a", "p", "", (5, "ADDED"))
    ring.emit(REQUEST, "kubectl/v1.31", "pods", "a", "p", "u1",
              ("create", "/api/v1/namespaces/a/pods", "", 201, 1.5))
    ring.emit(STORE, "storage", "pods", "b", "q", "", ("ADDED", "/registry/pods/b/q", 6, 0))
    ring.emit(RECONCILE, "namespace", "", "", "a", "", ("namespace", "a", 0.002, 0.001, None))
    ring.emit(RECONCILE, "namespace", "", "", "b", "", ("namespace", "b", 0.002, 0.001, None))
    ring.emit(KUBELET, "kubelet/node-1", "pods", "a", "p", "",
              ("node-1", "Running", "", "10.0.0.2"))
    ring.emit(STORE, "storage", "events", "a", "p.1", "", ("ADDED", "/registry/events/a/p.1",
                                                          7, 0))  # listed apart in a report
    return ring, start


def test_records_about_the_namespace_since_a_seq_without_watch_deliveries() -> None:
    ring, start = filled_ring()
    records, missed = namespace_records(ring, "a", start)
    assert missed == 0
    assert [(r.kind, r.resource, r.name) for r in records] == [
        (STORE, "namespaces", "a"), (STORE, "pods", "p"), (REQUEST, "pods", "p"),
        (RECONCILE, "", "a"), (KUBELET, "pods", "p")]
    assert namespace_records(ring, "a", ring.last_seq) == ([], 0)


def test_timeline_lines_name_the_object_and_the_step() -> None:
    ring, start = filled_ring()
    lines = timeline(namespace_records(ring, "a", start)[0])
    assert len(lines) == 5
    assert lines[0].split()[2:] == ["namespaces/a", "created", "rv=4",
                                    "/registry/namespaces/a"]
    assert lines[0].startswith("      0.0 ms")
    assert lines[2].split()[2:] == ["pods/p", "request", "create", "->", "201", "in", "1.5",
                                    "ms", "by", "kubectl/v1.31"]
    assert lines[3].split()[2:5] == ["a", "reconcile", "namespace"]
    assert lines[4].split()[2:] == ["pods/p", "running", "node-1:", "Running", "ip",
                                    "10.0.0.2"]
    assert timeline(namespace_records(ring, "a", start)[0], limit=2) == lines[-2:]


def test_section_says_what_the_ring_dropped() -> None:
    ring = TraceRing(capacity=2)
    for revision in range(1, 6):
        ring.emit(STORE, "storage", "pods", "a", f"p{revision}", "",
                  ("ADDED", f"/registry/pods/a/p{revision}", revision, 0))
    head, *lines = timeline_section(ring, "a", 0)
    assert head == ("trace of objects in a while the test ran (2 record(s); 3 record(s) of "
                    "the test's time already dropped by the ring):")
    assert [line.split()[2] for line in lines] == ["pods/p4", "pods/p5"]
    assert timeline_section(TraceRing(), "a", 0)[1:] == ["  (none)"]


def test_trace_recording_holds_the_ring_and_empties_it_after_unless_still_recording() -> None:
    from minikube_py.testing import Cluster
    from minikube_py.trace import TRACE

    with TRACE.viewer():  # someone else records: the block leaves the records alone
        with Cluster.trace_recording() as since:
            TRACE.emit(STORE, "storage", "pods", "a", "p", "", ("ADDED", "/registry/pods/a/p",
                                                                 1, 0))
            assert TRACE.active and TRACE.last_seq == since + 1
        assert TRACE.since(since)[0]
    assert not TRACE.active
    with Cluster.trace_recording() as since:
        TRACE.emit(STORE, "storage", "pods", "a", "q", "", ("ADDED", "/registry/pods/a/q",
                                                             2, 0))
        assert [r.name for r in TRACE.since(since)[0]] == ["q"]
    assert not TRACE.active and TRACE.since(since) == ([], 1)  # emptied; the seq goes on
