"""The journey view's data: a pod's hops, its current state, and a scheduling attempt's
decision table.

Kubernetes piece: none upstream shows this in one place. The hops are the trace ring's
records of the pod (`minikube_py.trace`), turned into hops by the same function the CLI's
`minikube-py trace pod` prints (trace/journey.py). The decision table is what
kube-scheduler-simulator's UI shows and what the scheduler's `-v=10` logs spell out: per node,
which Filter plugin (v1.x: predicate) rejected it and why; per feasible node, each Score
plugin's (v1.x: priority's) score, its weight and the product; the total
and the chosen node — read from the attempt's `to_dict()` (scheduler.Attempt and
framework/explain.py). Pure: records and dicts in, JSON out; routes_journey.py does the I/O.
"""

from __future__ import annotations

from typing import Any

from ..trace.filters import TraceFilter
from ..trace.journey import LANES, Timeline
from ..trace.records import SCHEDULE, to_json
from ..trace.ring import TraceRing

Obj = dict[str, Any]

#: rows of a decision table at most (the chosen node is always among them)
MAX_NODES = 500


def pod_filter(namespace: str, name: str) -> TraceFilter:
    """The records of one pod: by namespace/name (a uid is not known to every hook — the
    store and watch records carry none)."""
    return TraceFilter(namespace=namespace, name=name, resource="pods")


def ring_records(ring: TraceRing, selected: TraceFilter, since: int = 0,
                 ) -> tuple[list[Obj], int, int]:
    """The ring's records after `since` that `selected` matches, as JSON (scheduling
    attempts with their per-node explanation), how many after `since` the ring no longer
    holds, and the last sequence number looked at (where a live stream resumes)."""
    records, lost = ring.since(since)
    last = records[-1].seq if records else max(since, ring.last_seq)
    return [to_json(r, full=True) for r in records if selected.matches(r)], lost, last


def hops(records: list[Obj]) -> list[Obj]:
    """The journey's hops, timed from the first record."""
    timeline = Timeline(watches=True, reads=False)
    out = []
    for rec in records:
        hop = timeline.hop(rec)
        if hop is not None:
            out.append(hop.to_json())
    return out


def pod_state(pod: Obj | None) -> Obj | None:
    """What the pod is now (the journey's last word when the ring missed its start)."""
    if pod is None:
        return None
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    ready = sum(1 for c in containers if c.get("ready"))
    return {
        "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", ""),
        "creationTimestamp": meta.get("creationTimestamp"), "node": spec.get("nodeName", ""),
        "phase": status.get("phase", ""), "podIP": status.get("podIP", ""),
        "ready": f"{ready}/{len(spec.get('containers') or [])}",
        "conditions": [{"type": c.get("type"), "status": c.get("status"),
                        "reason": c.get("reason", ""), "time": c.get("lastTransitionTime")}
                       for c in status.get("conditions") or []],
    }


def journey(namespace: str, name: str, records: list[Obj], lost: int, last_seq: int,
            pod: Obj | None, key: str, history: list[Obj]) -> Obj:
    """The journey view's first answer; the live stream (routes_journey.py) then sends hops
    after `last_seq`."""
    return {"namespace": namespace, "name": name, "lanes": list(LANES),
            "hops": hops(records), "lost": lost, "last_seq": last_seq,
            "pod": pod_state(pod), "key": key, "history": history}


def find_schedule(records: list[Obj], seq: int | None) -> Obj | None:
    """The attempt's explanation: the scheduling record `seq`, else the pod's latest one."""
    attempts = [r for r in records if r.get("kind") == SCHEDULE]
    if seq is not None:
        attempts = [r for r in attempts if r.get("seq") == seq]
    return attempts[-1].get("detail") if attempts else None


def _framework_rows(detail: Obj) -> tuple[dict[str, dict[str, list[str]]],
                                          dict[str, dict[str, Obj]]]:
    rejected = {node: {entry.get("plugin", "?"): list(entry.get("reasons") or [])
                       for entry in entries}
                for node, entries in (detail.get("filters") or {}).items()}
    return rejected, detail.get("pluginScores") or {}


def _v1_rows(detail: Obj) -> tuple[dict[str, dict[str, list[str]]], dict[str, dict[str, Obj]]]:
    rejected = {node: {"predicates": list(reasons or [])}
                for node, reasons in (detail.get("failed") or {}).items()}
    return rejected, detail.get("priorityScores") or {}


def decision_table(detail: Obj) -> Obj:
    """Nodes x filters (pass, or the plugin's reasons) and nodes x scores (per plugin: score,
    weight, weighted; the total), the chosen node first, then the feasible ones by total,
    then the rejected ones by name."""
    framework = "profile" in detail
    rejected, plugin_scores = (_framework_rows if framework else _v1_rows)(detail)
    totals: dict[str, int] = detail.get("scores") or {}
    chosen = detail.get("node", "") if detail.get("result") == "scheduled" else ""
    filters = sorted({plugin for plugins in rejected.values() for plugin in plugins})
    weights: dict[str, int] = {}
    for parts in plugin_scores.values():
        for plugin, part in parts.items():
            weights.setdefault(plugin, int(part.get("weight", 0)))
    names = set(rejected) | set(totals) | set(plugin_scores)
    rows = [{"name": node, "feasible": node not in rejected, "chosen": node == chosen,
             "rejected": rejected.get(node, {}), "scores": plugin_scores.get(node, {}),
             "total": totals.get(node)} for node in names]
    rows.sort(key=lambda r: (not r["chosen"], not r["feasible"], -(r["total"] or 0), r["name"]))
    shown = rows[:MAX_NODES]
    out: Obj = {
        "pod": detail.get("pod", ""), "time": detail.get("time", ""),
        "result": detail.get("result", ""), "node": detail.get("node", ""),
        "message": detail.get("message", ""), "feasible": detail.get("feasible", 0),
        "total": detail.get("total", 0), "seconds": detail.get("seconds", 0.0),
        "algorithm": "framework" if framework else "v1",
        "profile": detail.get("profile", ""), "filters": filters,
        "scorers": [{"name": plugin, "weight": weight} for plugin, weight in weights.items()],
        "nodes": shown, "omitted": len(rows) - len(shown),
    }
    for extra in ("unschedulablePlugins", "postFilter", "extensionPoints", "extenderScores",
                  "preemption"):
        if extra in detail:
            out[extra] = detail[extra]
    return out
