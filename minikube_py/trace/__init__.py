"""The trace: one bounded in-process ring of what the control plane does.

Every component writes to the process's `TRACE` through hooks of the form
`if TRACE.active: TRACE.emit(...)`, so the trace costs one attribute check while nobody
reads it. Viewers — `/debug/trace` (Server-Sent Events), `minikube-py trace pod NAME`, the
testing package's failure reports — read the same records.
"""

from __future__ import annotations

from .filters import TraceFilter
from .records import (
           KINDS,
           KUBELET,
           PAUSE,
           RECONCILE,
           REQUEST,
           SCHEDULE,
           STORE,
           WATCH,
           Record,
           to_json,
)
from .ring import TraceRing

#: the process's ring (every component in one process shares it, as they share the loop)
TRACE = TraceRing()

__all__ = ["KINDS", "KUBELET", "PAUSE", "RECONCILE", "REQUEST", "SCHEDULE", "STORE", "TRACE",
           "WATCH", "Record", "TraceFilter", "TraceRing", "to_json"]
