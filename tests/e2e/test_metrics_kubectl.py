"""`kubectl top` and the HorizontalPodAutoscaler end to end, on `minikube-py start`.

The built-in metrics-server (metrics.k8s.io/v1beta1) scrapes the simulated kubelets'
/metrics/resource; the usage annotation makes pods busy (docs/_drafts/metrics.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running
from tests.e2e.test_kubectl import KUBECTLS

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found"),
              pytest.mark.slow]

#: the HPA reconciles every second; a shrink waits 3 s of lower recommendations, not 5 min
HPA_FLAGS = ["--horizontal-pod-autoscaler-sync-period", "1s",
             "--horizontal-pod-autoscaler-downscale-stabilization", "3s"]

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
    # what metrics-server scrapes, through the node proxy (a pool serves both nodes: ?node=)
    text = cluster.kubectl("get", "--raw",
                           "/api/v1/nodes/node-1/proxy/metrics/resource?node=node-1").stdout
    assert "# TYPE node_cpu_usage_seconds_total counter" in text
    summary = json.loads(cluster.kubectl(
        "get", "--raw", "/api/v1/nodes/node-1/proxy/stats/summary?node=node-1").stdout)
    assert summary["node"]["nodeName"] == "node-1"
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


def _hpa(cluster: ClusterProcesses) -> dict:
    return json.loads(cluster.kubectl("get", "hpa", "php-apache", "-o", "json").stdout)


def _replicas(cluster: ClusterProcesses) -> int:
    return json.loads(cluster.kubectl("get", "deployment", "php-apache", "-o", "json").stdout
                      )["spec"]["replicas"]


def test_php_apache_walkthrough_scales_up_under_load_and_back_down(cluster: ClusterProcesses):
    """kubernetes.io's HorizontalPodAutoscaler walkthrough, load simulated by the usage
    annotation on the pod template."""
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT)
    cluster.kubectl("annotate", "pod", "-l", "run=php-apache", "--overwrite",
                    "usage.minikube-py.dev/cpu-")  # the other test's busy pod
    cluster.kubectl("autoscale", "deployment", "php-apache", "--cpu-percent=50", "--min=1",
                    "--max=10")
    table = cluster.kubectl("get", "hpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS",
                                "REPLICAS", "AGE"]
    # idle: 10 % of the request, below the 50 % target -> stays at 1, a reading shows up
    cluster.wait(lambda: (_hpa(cluster).get("status") or {}).get("currentMetrics"), 30,
                 "a current metric")
    # 10 % of the request, ±10 % of that on the model's wave
    assert re.search(r"cpu: (9|10|11)%/50%", cluster.kubectl("get", "hpa", "php-apache").stdout)
    # load: every pod of the template at 250m = 125 % of its request
    cluster.kubectl("patch", "deployment", "php-apache", "-p",
                    '{"spec":{"template":{"metadata":{"annotations":'
                    '{"usage.minikube-py.dev/cpu":"250m"}}}}}')
    cluster.wait(lambda: _replicas(cluster) >= 3, 60, "scale up under load")
    status = _hpa(cluster)["status"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["ScalingActive"]["reason"] == "ValidMetricFound"
    events = cluster.kubectl("get", "events", "--field-selector",
                             "involvedObject.kind=HorizontalPodAutoscaler", "-o", "json").stdout
    reasons = [e["reason"] for e in json.loads(events)["items"]]
    assert "SuccessfulRescale" in reasons
    described = cluster.kubectl("describe", "hpa", "php-apache").stdout
    assert re.search(r"ScalingActive\s+True\s+ValidMetricFound", described), described
    assert re.search(r"resource cpu on pods\s+\(as a percentage of request\):\s+\d+% \(\d+m\) / 50%",
                     described), described
    # load removed: back to 1 once the (3 s) stabilization window has passed
    cluster.kubectl("patch", "deployment", "php-apache", "--type", "json", "-p",
                    '[{"op":"remove","path":"/spec/template/metadata/annotations"}]')
    cluster.wait(lambda: _replicas(cluster) == 1, 90, "scale down after the load")


@pytest.mark.parametrize("binary", KUBECTLS)
def test_every_kubectl_tops_and_autoscales(cluster: ClusterProcesses, binary: str, tmp_path):
    """kubectl 1.27-1.33: `top nodes`, `top pods -A --containers`, `autoscale` (v1 or v2,
    as each version writes it) and the HPA table."""
    def run(*args: str, check: bool = True) -> str:
        done = subprocess.run([binary, "-s", cluster.url, *args], check=False, capture_output=True,
                              text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)})
        if check:
            assert done.returncode == 0, (binary, args, done.stderr)
        return done.stdout if done.returncode == 0 else ""

    # until the first scrapes, kubectl says "metrics not available yet" (exit 1)
    cluster.wait(lambda: "node-0" in run("top", "nodes", check=False), 30, "top nodes")
    version = binary.rsplit("kubectl", 1)[1].strip(".").replace(".", "-")
    name = f"k{version}" if version else "k-dispatcher"
    run("create", "deployment", name, "--image=nginx")
    cluster.wait(lambda: name in run("top", "pods", "-A", "--containers", check=False), 30,
                 "top pods")
    run("autoscale", "deployment", name, "--cpu-percent=50", "--min=1", "--max=3")
    row = run("get", "hpa", name, "--no-headers").split()
    # NAME REFERENCE TARGETS (`cpu: <unknown>/50%`, two words) MINPODS MAXPODS REPLICAS AGE
    assert row[1] == f"Deployment/{name}" and row[-4:-2] == ["1", "3"], row
