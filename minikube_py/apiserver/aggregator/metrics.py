"""The availability controller's metric, upstream's name.

Kubernetes piece: kube-aggregator's pkg/controllers/status/metrics.go
(`aggregator_unavailable_apiservice`: 1 while an APIService is not Available). Its companion
counter `aggregator_unavailable_apiservice_total` cannot be served beside it by
prometheus_client (a Counter named X_total claims the family name X, the gauge's), so
transitions are counted as `aggregator_unavailable_apiservice_transitions_total` instead. One
process-wide instance on the default registry `/metrics` serves (prometheus_client refuses a
name twice, and tests start several API servers in one process).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge


class AvailabilityMetrics:
    def __init__(self) -> None:
        self.unavailable = Gauge("aggregator_unavailable_apiservice",
                                 "Gauge of APIServices which are marked as unavailable broken "
                                 "down by APIService name.", ["name"])
        self.transitions = Counter("aggregator_unavailable_apiservice_transitions",
                                   "Counter of APIServices which are marked as unavailable "
                                   "broken down by APIService name and reason.",
                                   ["name", "reason"])

    def observe(self, name: str, was_available: bool, available: bool, reason: str) -> None:
        """After a sync: the gauge always, the counter on a transition to unavailable."""
        self.unavailable.labels(name).set(0 if available else 1)
        if was_available and not available:
            self.transitions.labels(name, reason or "UnknownReason").inc()

    def forget(self, name: str) -> None:
        try:
            self.unavailable.remove(name)
        except KeyError:
            pass


_INSTANCE: AvailabilityMetrics | None = None


def availability_metrics() -> AvailabilityMetrics:
    global _INSTANCE
    if _INSTANCE is None:
        _INSTANCE = AvailabilityMetrics()
    return _INSTANCE
