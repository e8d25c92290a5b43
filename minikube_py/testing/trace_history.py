"""The failure report's `ObjectTrace` read from the trace ring instead of the store history.

Kubernetes piece: as history.py — the audit log one reads after a failure — but from the
process's trace ring (minikube_py.trace): the store writes the API server's watch of the store
saw, kept while the ring records (a viewer attached, `start --trace`, or a test that holds the
ring). Unlike StoreHistory it needs no store watch from a past revision (so it still answers
after a compaction) and it costs nothing to read; it does not know the field managers (the
ring keeps no object bodies), so `Write.manager` is empty.
"""

from __future__ import annotations

from ..trace import STORE, TRACE, TraceRing
from .history import Write, in_namespace

VERBS = {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}


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
