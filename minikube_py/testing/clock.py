"""A wall clock a test can move forward, and the nudge that makes controllers look again.

Kubernetes piece: k8s.io/utils/clock's FakeClock, which controller unit tests inject. Our
controllers take their wall clock from `ControllerContext.clock` (controllers/base.py), so the
cluster hands the controller manager this clock at start (StartOptions.controller_clock).

What advancing moves: the decisions of the controllers built on `ctx.clock` — CronJob
schedules and missed-start deadlines, Job activeDeadlineSeconds, TTL-after-finished, podgc's
orphan quarantine. After a jump they are re-queued (`nudge`), because their own re-checks wait
in real time (`queue.add_after`). What it does NOT move: kubelets (grace periods of a pod's
termination, probes, heartbeats), node lifecycle (its monitor period and grace period use
their own clocks), the scheduler's backoff, leases, and the timestamps the API server writes
(creationTimestamp, deletionTimestamp are real time).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: controller name -> the attribute naming its informer of the objects whose keys it re-syncs
#: when the clock jumps (the controllers that read ctx.clock in sync())
NUDGED = {"cronjob": "cron_jobs", "job": "jobs", "ttl-after-finished": "jobs"}


class AdjustableClock:
    """time.time() plus an offset the test grows; thread-safe (the sync Cluster's caller
    advances it from the test thread while the loop thread reads it)."""

    def __init__(self, base: Callable[[], float] = time.time) -> None:
        self._base = base
        self._offset = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self._base() + self._offset

    @property
    def offset(self) -> float:
        return self._offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock only moves forward")
        with self._lock:
            self._offset += seconds


def nudge(controllers: list[Any]) -> list[str]:
    """Queue every object of the clock-driven controllers again so they judge it by the new
    time now rather than when their real-time requeue fires; returns the controllers nudged."""
    nudged = []
    for controller in controllers:
        attribute = NUDGED.get(getattr(controller, "name", ""))
        informer = getattr(controller, attribute, None) if attribute else None
        if informer is None:
            continue
        for key in informer.indexer.keys():  # noqa: SIM118 - an Indexer, not a dict
            controller.queue.add(key)
        nudged.append(controller.name)
    return nudged
