"""A pod's journey as timeline lines: created -> scheduled -> bound -> kubelet states -> Running.

Kubernetes piece: what one pieces together on a real cluster from `kubectl describe pod`'s
Events, the scheduler's logs at -v=10 and the API server's audit log; here it is one ordered
stream (the trace records of the pod, as `/debug/trace` serves them). Pure: a JSON record in,
a line (or None for a record the timeline skips) out; the CLI (cli/trace.py) does the I/O.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

Rec = dict[str, Any]

#: how many of the best-scored nodes a scheduling summary names
TOP_NODES = 3


@dataclass(frozen=True)
class Line:
    """One timeline line: seconds since the first record shown, the step's label (what the
    timeline is about: created, scheduled, bound, kubelet, ...), and the text."""

    offset: float
    label: str
    text: str

    def plain(self) -> str:
        return f"{self.offset * 1000:>9.1f} ms  {self.label:<13} {self.text}"


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


class Timeline:
    """Turns records into Lines, timed from the first one it saw."""

    def __init__(self, *, watches: bool = True) -> None:
        self.start: float | None = None
        self.watches = watches

    def line(self, rec: Rec) -> Line | None:
        if rec.get("kind") == "watch" and not self.watches:
            return None
        described = describe(rec)
        if described is None:
            return None
        when = float(rec.get("time") or 0.0)
        if self.start is None:
            self.start = when
        return Line(when - self.start, *described)
