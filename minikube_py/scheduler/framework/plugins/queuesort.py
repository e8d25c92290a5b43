"""PrioritySort: the default QueueSort plugin — higher priority first, then the earlier enqueued.

Kubernetes piece: pkg/scheduler/framework/plugins/queuesort/priority_sort.go (1.31). Exactly one
QueueSort plugin runs per profile (the runtime enforces it); every profile of one scheduler
must use the same one, since they share one queue (upstream validation, fw-config's job).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..interface import Handle, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """upstream Less: p1 > p2, or equal priority and a was queued first."""
        p1, p2 = a.priority, b.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def new(args: Mapping[str, Any], handle: Handle) -> PrioritySort:
    return PrioritySort()
