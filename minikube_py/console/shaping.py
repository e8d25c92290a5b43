"""Pure JSON shaping for the console's cluster views: overview, nodes, pods, events.

Kubernetes piece: the printers behind `kubectl get nodes|pods|events` and `kubectl describe
node`'s "Allocated resources" (pkg/printers/internalversion, describe.go) — what the views
show is what those show, computed here from the shared informers' cached objects, with no I/O,
so it is unit-tested and, for large clusters, run off the loop (offload.py).
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..api.quantity import milli_value, value
from ..scheduler.nodeinfo import pod_requests

Obj = dict[str, Any]
#: pod phases in the order the views list them (upstream's PodPhase values)
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
#: a pod in these phases no longer holds its node's resources (the scheduler's rule)
TERMINAL = frozenset({"Succeeded", "Failed"})


def parse_time(text: str | None) -> float | None:
    """An RFC 3339 timestamp as the API writes them, as epoch seconds; None when absent."""
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def condition(obj: Obj, kind: str) -> str:
    """The status of condition `kind` ("True", "False", "Unknown"); "Unknown" when absent."""
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return str(cond.get("status", "Unknown"))
    return "Unknown"


def phase_of(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _allocatable(node: Obj) -> dict[str, int]:
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    out = {"cpu": 0, "memory": 0, "pods": 0}
    try:
        out["cpu"] = milli_value(alloc.get("cpu", 0))
        out["memory"] = value(alloc.get("memory", 0))
        out["pods"] = value(alloc.get("pods", 0))
    except (ValueError, TypeError):
        pass  # a node that reports nonsense shows zeros rather than failing the view
    return out


def pods_by_node(pods: Iterable[Obj]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            out.setdefault(node, []).append(pod)
    return out


def node_row(node: Obj, pods: list[Obj]) -> Obj:
    """One node: Ready, schedulable, its pods, requests against allocatable (cpu in
    millicores, memory in bytes, pods) counting the pods that are not terminated."""
    holding = [p for p in pods if phase_of(p) not in TERMINAL]
    cpu = memory = 0
    for pod in holding:
        req = pod_requests(pod)
        cpu += req.milli_cpu
        memory += req.memory
    meta = node.get("metadata") or {}
    return {
        "name": meta.get("name", ""),
        "ready": condition(node, "Ready"),
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "allocatable": _allocatable(node),
        "requested": {"cpu": cpu, "memory": memory, "pods": len(holding)},
        "pods": sorted(f"{p['metadata'].get('namespace', '')}/{p['metadata']['name']}"
                       for p in pods),
    }


def nodes_view(nodes: Iterable[Obj], pods: Iterable[Obj]) -> list[Obj]:
    by_node = pods_by_node(pods)
    rows = [node_row(n, by_node.get(n["metadata"]["name"], [])) for n in nodes]
    rows.sort(key=lambda r: _natural(r["name"]))
    return rows


def pod_row(pod: Obj, now: float) -> Obj:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    created = parse_time(meta.get("creationTimestamp"))
    return {
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "phase": phase_of(pod),
        "deleting": bool(meta.get("deletionTimestamp")),
        "conditions": {c.get("type", ""): c.get("status", "")
                       for c in status.get("conditions") or ()},
        "node": (pod.get("spec") or {}).get("nodeName") or "",
        "age": round(now - created, 1) if created is not None else None,
    }


def pods_view(pods: Iterable[Obj], now: float, namespace: str = "") -> list[Obj]:
    rows = [pod_row(p, now) for p in pods
            if not namespace or (p.get("metadata") or {}).get("namespace") == namespace]
    rows.sort(key=lambda r: (r["namespace"], _natural(r["name"])))
    return rows


def event_row(event: Obj) -> Obj:
    """An Event as `kubectl get events` prints it: last seen, type, reason, object, message."""
    meta = event.get("metadata") or {}
    involved = event.get("involvedObject") or {}
    last = (event.get("lastTimestamp") or event.get("eventTime")
            or (event.get("series") or {}).get("lastObservedTime")
            or meta.get("creationTimestamp"))
    return {
        "key": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
        "namespace": meta.get("namespace", ""),
        "time": parse_time(last),
        "type": event.get("type", ""),
        "reason": event.get("reason", ""),
        "object": f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        "source": (event.get("source") or {}).get("component") or event.get(
            "reportingComponent", ""),
        "message": event.get("message", ""),
        "count": event.get("count") or (event.get("series") or {}).get("count") or 1,
    }


def recent_events(events: Iterable[Obj], limit: int) -> list[Obj]:
    """The newest `limit` events, oldest first (the order a live list appends in)."""
    rows = [event_row(e) for e in events]
    rows.sort(key=lambda r: (r["time"] or 0.0, r["key"]))
    return rows[-limit:] if limit else rows


def overview(nodes: Iterable[Obj], pods: Iterable[Obj], revision: int,
             rates: Mapping[str, Any]) -> Obj:
    """The overview's one JSON: counts of nodes by Ready and pods by phase, the store's
    revision, and requests and watch events per second per component (rates.py)."""
    ready = Counter(condition(n, "Ready") for n in nodes)
    phases = Counter(phase_of(p) for p in pods)
    return {
        "revision": revision,
        "nodes": {"total": sum(ready.values()), "ready": ready.get("True", 0),
                  "notReady": sum(ready.values()) - ready.get("True", 0)},
        "pods": {"total": sum(phases.values()),
                 **{phase: phases.get(phase, 0) for phase in PHASES}},
        "rates": dict(rates),
    }


def _natural(name: str) -> tuple:
    """node-2 before node-10 (what a person expects of numbered names)."""
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return (head, int(tail) if tail else -1, name)
