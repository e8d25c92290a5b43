"""The controller manager's Prometheus metrics (upstream workqueue_* names plus a sync
histogram).

Kubernetes piece: client-go's workqueue metrics provider (workqueue_depth, workqueue_adds_total,
workqueue_retries_total, labelled by queue name) as kube-controller-manager exposes them on
/metrics; plus each controller's sync wall time and sync CPU time (sync_cpu.py). One instance
per process (prometheus_client refuses duplicate names).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10)


class ControllerMetrics:
    _instance: ControllerMetrics | None = None

    def __init__(self) -> None:
        self.depth = Gauge("workqueue_depth", "Keys waiting in a controller's queue.", ["name"])
        self.adds = Counter("workqueue_adds_total", "Keys handed to a controller's workers.",
                            ["name"])
        self.retries = Counter("workqueue_retries_total", "Syncs that failed and were requeued.",
                               ["name"])
        self.sync = Histogram("controller_sync_duration_seconds",
                              "One sync of one key, by controller.", ["name"], buckets=_BUCKETS)
        self.sync_cpu = Histogram(
            "controller_sync_cpu_seconds",
            "CPU time of one sync of one key, by controller, including the in-process API "
            "server's work for its requests (sync_cpu.py).", ["name"], buckets=_BUCKETS)

    @classmethod
    def instance(cls) -> ControllerMetrics:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance
