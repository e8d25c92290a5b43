"""`kubectl top` and the HorizontalPodAutoscaler end to end, on `minikube-py start`.

The built-in metrics-server (metrics.k8s.io/v1beta1) scrapes the simulated kubelets'
/metrics/resource; the usage annotation makes pods busy (docs/_drafts/metrics.md).
"""

from __future__ import annotations

import json
import os

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found"),
              pytest.mark.slow]

HPA_FLAGS: list[str] = []

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: php-apache}
spec:
  selector: {matchLabels: {run: php-apache}}
  template:
    metadata: {labels: {run: php-apache}}
    spec:
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        ports: [{containerPort: 80}]
        resources: {limits: {cpu: 500m}, requests: {cpu: 200m}}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ClusterProcesses(tmp_path_factory.mktemp("metrics"), nodes=2, extra_args=[
        "--metric-resolution", "500ms", *HPA_FLAGS,
        ])
    c.start()
    yield c
    c.stop()


def test_kubectl_top_nodes_lists_every_node(cluster: ClusterProcesses):
    def top():
        done = cluster.kubectl("top", "nodes", "--no-headers", check=False)
        rows = [line.split() for line in done.stdout.splitlines()]
        return rows if done.returncode == 0 and len(rows) == 2 else None

    rows = cluster.wait(top, 30, "kubectl top nodes")
    assert sorted(r[0] for r in rows) == cluster.node_names
    for row in rows:  # NAME CPU(cores) CPU% MEMORY(bytes) MEMORY%
        assert row[1].endswith("m") and row[3].endswith("Mi"), row


def test_kubectl_top_pods_shows_the_annotated_usage(cluster: ClusterProcesses):
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT)
    cluster.wait(lambda: [p for p in cluster.pods("default", "run=php-apache") if running(p)],
                 30, "php-apache running")
    pod = cluster.pods("default", "run=php-apache")[0]["metadata"]["name"]
    cluster.kubectl("annotate", "pod", pod, "usage.minikube-py.dev/cpu=450m",
                    "usage.minikube-py.dev/memory=100Mi")

    def top():
        done = cluster.kubectl("top", "pods", "-l", "run=php-apache", "--containers",
                               "--no-headers", check=False)
        rows = [line.split() for line in done.stdout.splitlines()]
        return rows if done.returncode == 0 and rows and rows[0][2] == "450m" else None

    rows = cluster.wait(top, 30, "the annotated usage in kubectl top pods")
    assert rows[0][:4] == [pod, "php-apache", "450m", "100Mi"]
    everything = cluster.kubectl("top", "pods", "-A", "--no-headers").stdout
    assert pod in everything
    raw = json.loads(cluster.kubectl(
        "get", "--raw", f"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/{pod}").stdout)
    assert raw["kind"] == "PodMetrics" and raw["containers"][0]["usage"]["memory"] == "102400Ki"
