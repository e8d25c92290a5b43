"""The scheduler's Prometheus metrics (upstream scheduler_* names).

Kubernetes piece: plugin/pkg/scheduler/metrics (E2eSchedulingLatency,
SchedulingAlgorithmLatency, BindingLatency) plus the later attempts counter and pending-pods
gauge. One instance per process (prometheus_client refuses duplicate names).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10)


class SchedulerMetrics:
    _instance: SchedulerMetrics | None = None

    def __init__(self) -> None:
        self.e2e = Histogram("scheduler_e2e_scheduling_duration_seconds",
                             "From the start of a decision to the end of its binding.",
                             buckets=_BUCKETS)
        self.algorithm = Histogram("scheduler_scheduling_algorithm_duration_seconds",
                                   "Predicates, priorities and host selection for one pod.",
                                   buckets=_BUCKETS)
        self.binding = Histogram("scheduler_binding_duration_seconds",
                                 "The binding request to the API server.", buckets=_BUCKETS)
        self.attempts = Counter("scheduler_schedule_attempts_total",
                                "Number of attempts to schedule pods, by the result. "
                                "'unschedulable' means a pod could not be scheduled, while "
                                "'error' means an internal scheduler problem.",
                                ["result", "profile"])
        self.pending = Gauge("scheduler_pending_pods",
                             "Number of pending pods, by the queue type. 'active' means number of "
                             "pods in activeQ; 'backoff' means number of pods in backoffQ; "
                             "'unschedulable' means number of pods in unschedulablePods that the "
                             "scheduler attempted to schedule and failed; 'gated' is the number of "
                             "unschedulable pods that the scheduler never attempted to schedule "
                             "because they are gated.", ["queue"])
        self.queue_incoming = Counter("scheduler_queue_incoming_pods_total",
                                      "Number of pods added to scheduling queues by event and "
                                      "queue type.", ["queue", "event"])
        self.preemption_attempts = Counter("scheduler_preemption_attempts_total",
                                           "Total preemption attempts in the cluster till now")
        self.preemption_victims = Histogram("scheduler_preemption_victims",
                                            "Number of selected preemption victims",
                                            buckets=(1, 2, 4, 8, 16, 32, 64))

    @classmethod
    def instance(cls) -> SchedulerMetrics:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance
