"""The API server's Prometheus metrics (upstream apiserver_* names where they exist).

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/metrics (apiserver_request_total,
apiserver_request_duration_seconds, apiserver_registered_watchers,
apiserver_current_inflight_requests). One instance per process, registered on the default
registry that `/metrics` serves alongside the store's minikube_storage_* metrics.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram


class APIServerMetrics:
    def __init__(self) -> None:
        self.requests = Counter(
            "apiserver_request_total",
            "Requests, by verb, group, resource, subresource and HTTP code.",
            ["verb", "group", "resource", "subresource", "code"])
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency by verb and resource (watches: time to set up the stream).",
            ["verb", "group", "resource", "subresource"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                     10, 30, 60))
        self.watchers = Gauge("apiserver_registered_watchers",
                              "Watch streams open, by resource.", ["resource"])
        self.inflight = Gauge("apiserver_current_inflight_requests",
                              "Requests being served, by kind (readOnly/mutating).",
                              ["request_kind"])
        self.rejected = Counter("apiserver_dropped_requests_total",
                                "Requests refused with 429 by the max-in-flight filter.",
                                ["request_kind"])


_INSTANCE: APIServerMetrics | None = None


def metrics() -> APIServerMetrics:
    """The process-wide metrics (prometheus_client refuses to register a name twice)."""
    global _INSTANCE
    if _INSTANCE is None:
        _INSTANCE = APIServerMetrics()
    return _INSTANCE
