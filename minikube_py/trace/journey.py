"""A pod's journey as hops: created -> stored -> watched -> scheduled -> bound -> kubelet states -> Running.

Kubernetes piece: what one pieces together on a real cluster from `kubectl describe pod`'s
Events, the scheduler's logs at -v=10 and the API server's audit log; here it is one ordered
stream (the trace records of the pod, as `/debug/trace` serves them). Pure: a JSON record in,
a `Hop` (or None for a record the timeline skips) out. Both viewers share this one function:
`minikube-py trace pod` (cli/trace.py) prints a hop as a line, the console's journey view
(console/journey.py) draws it in its component's lane and links it to what it refers to (a
store revision, the scheduler's decision).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

Rec = dict[str, Any]

#: how many of the best-scored nodes a scheduling summary names
TOP_NODES = 3

#: the lanes of the journey view, in the order the DESIGN's flow crosses them
LANES: tuple[str, ...] = ("client", "apiserver", "store", "informers", "scheduler",
                          "controllers", "kubelet")


@dataclass(frozen=True)
class Hop:
    """One step of the journey: seconds since the first record shown, the step's label (what
    the timeline is about: created, scheduled, bound, kubelet, ...), the text, and for the
    console the record's sequence and time, the component lane it happened in and what it
    links to (`{"store": {key, revision, prev_revision}}` or `{"decision": seq}`)."""

    offset: float
    label: str
    text: str
    seq: int = 0
    time: float = 0.0
    lane: str = ""
    link: dict[str, Any] = field(default_factory=dict)

    def plain(self) -> str:
        return f"{self.offset * 1000:>9.1f} ms  {self.label:<13} {self.text}"

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": self.time, "offset_ms": round(self.offset * 1000, 3),
                "lane": self.lane, "label": self.label, "text": self.text, "link": self.link}


#: the name cli/trace.py knew a timeline entry by
Line = Hop


def schedule_summary(detail: Rec) -> str:
    """The decision in one line: the node, how many fit, the best scores, why others did not."""
    result = detail.get("result", "")
    feasible, total = detail.get("feasible", 0), detail.get("total", 0)
    parts = [f"{feasible}/{total} nodes fit"]
    scores = detail.get("scores") or {}
    if scores:
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_NODES]
        parts.append("best " + ", ".join(f"{node}={score}" for node, score in best))
    failed = detail.get("failed") or {}
    if failed:
        reasons = collections.Counter(r for rs in failed.values() for r in (rs or ["?"]))
        reason, count = reasons.most_common(1)[0]
        parts.append(f"{len(failed)} filtered out (most: {reason} x{count})")
    head = f"-> {detail.get('node')}" if result == "scheduled" else result
    message = f": {detail['message']}" if detail.get("message") else ""
    return f"{head}{message} ({'; '.join(parts)})"


def describe(rec: Rec) -> tuple[str, str] | None:
    """(label, text) of a record on a pod's timeline; None when it is not worth a line."""
    kind = rec.get("kind")
    if kind == "store":
        step = {"ADDED": "created", "DELETED": "deleted"}.get(rec.get("type", ""), "stored")
        prev = f" (prev {rec['prev_revision']})" if rec.get("prev_revision") else ""
        return step, f"rv={rec.get('revision')}{prev} {rec.get('key', '')}"
    if kind == "request":
        verb, sub, status = rec.get("verb", ""), rec.get("subresource", ""), rec.get("status")
        label = "bound" if sub == "binding" and status in (200, 201) else "request"
        what = f"{verb} {sub}".strip()
        return label, (f"{what} -> {status} in {rec.get('latency_ms')} ms "
                       f"by {rec.get('component') or '?'}")
    if kind == "schedule":
        detail = rec.get("detail") or {}
        label = "scheduled" if detail.get("result") == "scheduled" else "unschedulable"
        return label, schedule_summary(detail)
    if kind == "kubelet":
        reason = f" ({rec['reason']})" if rec.get("reason") else ""
        ip = f" ip {rec['pod_ip']}" if rec.get("pod_ip") else ""
        label = "running" if rec.get("phase") == "Running" else "kubelet"
        return label, f"{rec.get('node')}: {rec.get('phase')}{reason}{ip}"
    if kind == "watch":
        return "watch", f"rv={rec.get('revision')} {rec.get('type')} -> {rec.get('component')}"
    if kind == "reconcile":
        error = f" error: {rec['error']}" if rec.get("error") else ""
        return "reconcile", (f"{rec.get('controller')} {rec.get('key')} in "
                             f"{float(rec.get('seconds') or 0) * 1000:.1f} ms{error}")
    return None


def component_lane(component: str) -> str:
    """The lane of a watcher or caller, from the name it gave (its User-Agent or component
    name): `kube-scheduler`, `kubelet/node-1`, `kube-controller-manager/...`, the
    all-in-one's shared informers; anything else (kubectl, a client library) is a client."""
    name = component.lower()
    if "scheduler" in name:
        return "scheduler"
    if name.startswith("kubelet"):
        return "kubelet"
    if "controller" in name:
        return "controllers"
    if "informers" in name:
        return "informers"
    return "client"


def lane(rec: Rec) -> str:
    """Where a record happened: requests in the API server, writes in the store, the
    scheduler's decision in the scheduler, a delivery at its receiver."""
    kind = rec.get("kind")
    if kind == "request":
        return "apiserver"
    if kind == "store":
        return "store"
    if kind == "schedule":
        return "scheduler"
    if kind == "kubelet":
        return "kubelet"
    if kind == "reconcile":
        return "controllers"
    return component_lane(str(rec.get("component") or ""))


def link(rec: Rec) -> dict[str, Any]:
    """What a hop points at: a store write -> its key and revision (the value and the diff
    against the key's previous revision); a scheduling attempt -> its record (the decision
    table)."""
    kind = rec.get("kind")
    if kind == "store" and rec.get("key"):
        return {"store": {"key": rec["key"], "revision": rec.get("revision"),
                          "prev_revision": rec.get("prev_revision") or 0}}
    if kind == "schedule":
        return {"decision": rec.get("seq")}
    return {}


#: requests that change nothing: a journey without them shows the writes and decisions
READ_VERBS = frozenset({"get", "list", "watch"})


class Timeline:
    """Turns records into Hops, timed from the first one it saw. `watches=False` leaves out
    watch deliveries, `reads=False` the requests that only read the pod (a viewer's own
    GETs would otherwise appear in the journey it is showing)."""

    def __init__(self, *, watches: bool = True, reads: bool = True,
                 start: float | None = None) -> None:
        self.start = start
        self.watches = watches
        self.reads = reads

    def hop(self, rec: Rec) -> Hop | None:
        kind = rec.get("kind")
        if kind == "watch" and not self.watches:
            return None
        if kind == "request" and not self.reads and rec.get("verb") in READ_VERBS:
            return None
        described = describe(rec)
        if described is None:
            return None
        when = float(rec.get("time") or 0.0)
        if self.start is None:
            self.start = when
        return Hop(when - self.start, *described, seq=int(rec.get("seq") or 0), time=when,
                   lane=lane(rec), link=link(rec))

    #: the CLI's name for it
    line = hop
