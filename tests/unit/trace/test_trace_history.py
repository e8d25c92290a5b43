"""The failure report's ObjectTrace served from the trace ring."""

from __future__ import annotations

from minikube_py.testing.history import Write
from minikube_py.testing.trace_history import TraceHistory
from minikube_py.trace import REQUEST, STORE, TraceRing


async def test_writes_of_a_namespace_since_a_revision() -> None:
    ring = TraceRing()
    ring.emit(STORE, "storage", "pods", "a", "p", "", ("ADDED", "/registry/pods/a/p", 4, 0))
    ring.emit(REQUEST, "kubectl", "pods", "a", "p", "", ("get", "/api", "", 200, 0.1))
    ring.emit(STORE, "storage", "pods", "a", "p", "", ("MODIFIED", "/registry/pods/a/p", 6, 4))
    ring.emit(STORE, "storage", "pods", "b", "q", "", ("ADDED", "/registry/pods/b/q", 7, 0))
    ring.emit(STORE, "storage", "namespaces", "", "a", "", ("DELETED", "/registry/namespaces/a",
                                                             9, 1))
    history = TraceHistory(ring)
    assert await history.writes("a", 5) == [
        Write(6, "update", "/registry/pods/a/p", ""), Write(9, "delete", "/registry/namespaces/a", "")]
    assert [w.revision for w in await history.writes("a", 0)] == [4, 6, 9]
    assert [w.revision for w in await history.writes("a", 0, limit=1)] == [9]
    assert await history.writes("c", 0) == []
