"""A built-in metrics-server: `metrics.k8s.io/v1beta1` NodeMetrics and PodMetrics.

Upstream the resource metrics API is served by metrics-server (kubernetes-sigs/metrics-server),
an aggregated API server that scrapes every kubelet's `/metrics/resource`, keeps the last two
points per container and node, and answers with the rate between them. Here the same pipeline
runs inside the API server: `scrape.py` (parse the kubelet's Prometheus text), `storage.py`
(pure: points -> usage and window), `api.py` (the objects, list/get, label selectors), served
at `/apis/metrics.k8s.io/v1beta1` as a Local APIService when `--enable-metrics-server` is on
(`start` turns it on). See docs/_drafts/metrics.md.
"""
