"""Prometheus metrics of the storage layer.

Kubernetes v1.0 piece: the etcd metrics the v1.0 apiserver scraped beside its own
(etcd_wal_fsync_durations_seconds, etcd_debugging_mvcc_*). Names follow etcd's where one
exists, prefixed `minikube_storage_` so they never clash with a real etcd's.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily

WAL_FSYNC_SECONDS = Histogram(
    "minikube_storage_wal_fsync_duration_seconds",
    "Latency of one WAL fsync (one group-commit round).",
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.5, 1.0),
)
WAL_ROUND_BYTES = Histogram(
    "minikube_storage_wal_round_bytes",
    "Bytes written by one group-commit round.",
    buckets=(256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304),
)
#: Acknowledged writes by operation. A plain dict bumped by the event-loop thread and read by a
#: collector at scrape time: a prometheus Counter takes a lock per increment, which on the
#: durable write path cost as much as the fsync bookkeeping.
WRITES_BY_OPERATION: dict[str, int] = dict.fromkeys(
    ("create", "update", "delete", "txn", "lease_grant", "lease_revoke", "compact"), 0
)


class _WritesCollector:
    def collect(self):
        family = CounterMetricFamily(
            "minikube_storage_writes", "Acknowledged writes by operation.", labels=["operation"]
        )
        for operation, count in WRITES_BY_OPERATION.items():
            family.add_metric([operation], count)
        yield family


REGISTRY.register(_WritesCollector())
REVISION = Gauge("minikube_storage_revision", "Last durable revision of the embedded store.")
COMPACT_REVISION = Gauge("minikube_storage_compact_revision", "Revision history is compacted to.")
KEYS = Gauge("minikube_storage_keys", "Live keys in the embedded store.")
WATCHERS = Gauge("minikube_storage_watchers", "Open watchers on the embedded store.")
HISTORY_EVENTS = Gauge("minikube_storage_history_events", "Events retained for watch catch-up.")
SNAPSHOT_SECONDS = Histogram(
    "minikube_storage_snapshot_duration_seconds",
    "Time to write one snapshot.",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RECOVERY_SECONDS = Gauge("minikube_storage_recovery_seconds", "Time the last open spent recovering.")
