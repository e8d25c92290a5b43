"""The resource metrics API's kinds: metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics.

Upstream these are not in kube-apiserver at all: metrics-server serves them (its pkg/api
registers `nodes` and `pods`, get and list, read-only, short of storage). Here they are two
virtual strategies the API server serves when its built-in metrics-server is enabled
(apiserver/metrics_server/); nothing is stored under them.
"""

from __future__ import annotations

from .strategy import Strategy

GROUP, VERSION = "metrics.k8s.io", "v1beta1"

NODE_METRICS = Strategy(
    group=GROUP, version=VERSION, resource="nodes", kind="NodeMetrics", namespaced=False,
    key_root="", verbs=("get", "list"), spec_fields=(), singular="",
)
POD_METRICS = Strategy(
    group=GROUP, version=VERSION, resource="pods", kind="PodMetrics", namespaced=True,
    key_root="", verbs=("get", "list"), spec_fields=(), singular="",
)
STRATEGIES = (NODE_METRICS, POD_METRICS)
