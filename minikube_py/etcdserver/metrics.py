"""Prometheus metrics of the etcd server: requests by method and code, open watches.

etcd piece: grpc_server_handled_total{grpc_method, grpc_code} (go-grpc-prometheus, which etcd
wires into its gRPC server) and etcd_debugging_mvcc_watcher_total. Prefixed
`minikube_etcdserver_` so they never clash with a real etcd's. Like storage/metrics.py, the
hot counters are plain dicts bumped on the event loop and turned into metric families at
scrape time (a prometheus Counter takes a lock per increment).
"""

from __future__ import annotations

from collections import Counter

from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

#: (service/method, gRPC code name) -> handled RPCs (a stream counts once, when it ends)
HANDLED: Counter[tuple[str, str]] = Counter()
#: etcd watches open on all streams
WATCHES = {"open": 0}


class _Collector:
    def collect(self):
        handled = CounterMetricFamily(
            "minikube_etcdserver_handled", "etcd v3 RPCs completed, by method and gRPC code.",
            labels=["grpc_method", "grpc_code"])
        for (method, code), count in sorted(HANDLED.items()):
            handled.add_metric([method, code], count)
        yield handled
        yield GaugeMetricFamily("minikube_etcdserver_watches", "Open etcd watches.",
                                value=WATCHES["open"])


REGISTRY.register(_Collector())
