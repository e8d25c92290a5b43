"""The scheduling framework's Prometheus metrics, with upstream's names, labels and buckets.

Kubernetes piece: pkg/scheduler/metrics/metrics.go (1.31) — FrameworkExtensionPointDuration
(`scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}`,
every cycle) and PluginExecutionDuration (`scheduler_plugin_execution_duration_seconds
{plugin,extension_point,status}`, observed only in the cycles a CycleState was sampled for:
upstream's pluginMetricsSamplePercent, 10%). One instance per process (prometheus_client
refuses a second registration of a name); the label children are cached so an observation
costs a dict lookup and a bucket search, not a label resolution.
"""

from __future__ import annotations

import random

from prometheus_client import Histogram

#: upstream pluginMetricsSamplePercent
PLUGIN_METRICS_SAMPLE_PERCENT = 10
#: upstream metrics.ExponentialBuckets(0.0001, 2, 12) and (0.00001, 1.5, 20)
_EXTENSION_POINT_BUCKETS = tuple(0.0001 * 2**i for i in range(12))
_PLUGIN_BUCKETS = tuple(0.00001 * 1.5**i for i in range(20))


class FrameworkMetrics:
    _instance: FrameworkMetrics | None = None

    def __init__(self) -> None:
        self.extension_point = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], buckets=_EXTENSION_POINT_BUCKETS)
        self.plugin = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], buckets=_PLUGIN_BUCKETS)
        self._points: dict[tuple[str, str, str], Histogram] = {}
        self._plugins: dict[tuple[str, str, str], Histogram] = {}

    @classmethod
    def instance(cls) -> FrameworkMetrics:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def observe_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        key = (point, status, profile)
        child = self._points.get(key)
        if child is None:
            child = self._points[key] = self.extension_point.labels(*key)
        child.observe(seconds)

    def observe_plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        key = (plugin, point, status)
        child = self._plugins.get(key)
        if child is None:
            child = self._plugins[key] = self.plugin.labels(*key)
        child.observe(seconds)


def sample_plugin_metrics(rng: random.Random = random._inst) -> bool:  # type: ignore[attr-defined]
    """Whether this cycle times each plugin (upstream: rand.Intn(100) < 10)."""
    return rng.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT
