"""What the trace ring saw of a test's namespace: store writes (`TraceHistory`) and the
timeline a failure report shows.

Kubernetes piece: as history.py — the audit log one reads after a failure — but from the
process's trace ring (minikube_py.trace), which records while someone holds it: the pytest
plugin's `kube_namespace` holds it for the test's duration only (so passing tests between
failures, and the cluster's idle time, are not recorded), `start --trace`, or a viewer. Unlike
StoreHistory it needs no store watch from a past revision (so it still answers after a
compaction) and it costs nothing to read; it does not keep object bodies, so a store write's
field manager is unknown (`Write.manager` is empty) — the request that made it, with its
client's User-Agent, is on the timeline instead.

The timeline is every record about an object of the namespace (or the namespace itself):
API requests, store writes, scheduling decisions, kubelet transitions and controller
reconciles — one line each, rendered by the same `trace.journey` code `minikube-py trace pod`
uses. Watch deliveries are left out (one per informer per write: noise in a report), and so
are the Events' own writes (the report lists the Events first).
"""

from __future__ import annotations

from ..client import Client
from ..trace import STORE, TRACE, WATCH, Record, TraceRing, to_json
from ..trace.journey import Timeline
from .history import Write, events_section, in_namespace

VERBS = {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}
#: a report's timeline keeps the last this many lines (a test that writes thousands of
#: objects gets its end, which is where a failure usually is)
TIMELINE_LIMIT = 300


class TraceHistory:
    """ObjectTrace over a trace ring (the process's by default)."""

    def __init__(self, ring: TraceRing = TRACE, prefix: str = "/registry") -> None:
        self.ring = ring
        self.prefix = prefix

    async def writes(self, namespace: str, since_revision: int, limit: int = 200) -> list[Write]:
        records, _ = self.ring.since(0)
        out = []
        for record in records:
            if record.kind != STORE:
                continue
            kind, key, revision, _prev = record.detail
            if revision >= since_revision and in_namespace(key, self.prefix, namespace):
                out.append(Write(revision, VERBS.get(kind, kind.lower()), key, ""))
        return out[-limit:]


def about(record: Record, namespace: str) -> bool:
    """Is the record about an object in `namespace`, or about the namespace itself (its
    creation, deletion, the namespace controller's reconciles of it)?"""
    if record.namespace == namespace:
        return True
    return record.namespace == "" and record.name == namespace and \
        record.resource in ("namespaces", "")


#: resources whose records a timeline leaves out: the report lists the Events above it
SHOWN_ELSEWHERE = frozenset({"events"})


def namespace_records(ring: TraceRing, namespace: str, since_seq: int
                      ) -> tuple[list[Record], int]:
    """The records after `since_seq` about `namespace` (watch deliveries and the Events'
    own writes left out), and how many records after `since_seq` the ring no longer holds."""
    records, missed = ring.since(since_seq)
    return [r for r in records if r.kind != WATCH and r.resource not in SHOWN_ELSEWHERE
            and about(r, namespace)], missed


def timeline(records: list[Record], limit: int = TIMELINE_LIMIT) -> list[str]:
    """One line per record: time since the first, the object, the step and what happened;
    only the last `limit` records are rendered (a scheduling attempt's full explanation is
    the costly part of a line)."""
    clock = Timeline(watches=False)
    if records:
        clock.start = records[0].time
    lines = []
    for record in records[-limit:]:
        line = clock.line(to_json(record))  # full: an unschedulable pod shows why
        if line is None:
            continue
        what = "/".join(part for part in (record.resource, record.name) if part) or "-"
        lines.append(f"{line.offset * 1000:>9.1f} ms  {what:<32} {line.label:<13} {line.text}")
    return lines[-limit:]


def timeline_section(ring: TraceRing, namespace: str, since_seq: int) -> list[str]:
    """The report's trace section: a heading and the timeline (indented)."""
    records, missed = namespace_records(ring, namespace, since_seq)
    lines = timeline(records)
    head = f"trace of objects in {namespace} while the test ran ({len(records)} record(s)"
    if len(lines) < len(records):
        head += f", the last {len(lines)} shown"
    if missed:
        head += f"; {missed} record(s) of the test's time already dropped by the ring"
    lines = [f"  {line}" for line in lines] or ["  (none)"]
    return [head + "):", *lines]


async def trace_report(client: Client, ring: TraceRing, namespace: str, since_seq: int) -> str:
    """The text of a failure report section for `namespace` when the ring recorded the test
    from `since_seq` on: its Events, then the timeline."""
    trace = timeline_section(ring, namespace, since_seq)  # before the report's own requests
    return "\n".join(await events_section(client, namespace) + trace)
