"""DaemonSets and StatefulSets with the real kubectl against `minikube-py start` (3 nodes).

The Kubernetes documentation's examples, as a reader runs them: the fluentd-elasticsearch
DaemonSet (concepts/workloads/controllers/daemonset) puts one pod on each node; the `web`
StatefulSet (tutorials/stateful-application/basic-stateful-set) with its headless Service and
volumeClaimTemplates starts web-0, then web-1, each with its own bound claim (provisioned
through `start`'s default StorageClass, as on minikube or kind: test_storage_kubectl.py checks
the volumes). Then the `rollout` commands on both: status,
history, an image change, undo. Older and newer kubectl list and explain the new kinds.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import time
from typing import Any

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found "
                                 "(the machine image provides it)"), pytest.mark.slow]

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"))

FLUENTD = """apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fluentd-elasticsearch
  namespace: kube-system
  labels:
    k8s-app: fluentd-logging
spec:
  selector:
    matchLabels:
      name: fluentd-elasticsearch
  template:
    metadata:
      labels:
        name: fluentd-elasticsearch
    spec:
      tolerations:
      # these tolerations are to have the daemonset runnable on control plane nodes
      # remove them if your control plane nodes should not run pods
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      containers:
      - name: fluentd-elasticsearch
        image: quay.io/fluentd_elasticsearch/fluentd:v2.5.2
        resources:
          limits:
            memory: 200Mi
          requests:
            cpu: 100m
            memory: 200Mi
        volumeMounts:
        - name: varlog
          mountPath: /var/log
      # it may be desirable to set a high priority class to ensure that a DaemonSet Pod
      # preempts running Pods
      # priorityClassName: important
      terminationGracePeriodSeconds: 30
      volumes:
      - name: varlog
        hostPath:
          path: /var/log
"""

WEB = """apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: "nginx"
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.21
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ClusterProcesses(tmp_path_factory.mktemp("apps"), nodes=3)
    c.start()
    yield c
    c.stop()


def get_json(c: ClusterProcesses, *args: str) -> Any:
    return json.loads(c.kubectl("get", *args, "-o", "json").stdout)


def wait(predicate, timeout: float = 30.0, what: str = "condition") -> Any:
    return ClusterProcesses.wait(predicate, timeout, what)


def rows(output: str) -> list[list[str]]:
    return [line.replace("NODE SELECTOR", "NODE_SELECTOR").replace(
        "CHANGE-CAUSE", "CHANGE_CAUSE").split() for line in output.splitlines() if line.strip()]


def test_fluentd_daemonset_runs_one_pod_per_node_and_rolls_back(cluster: ClusterProcesses) -> None:
    cluster.kubectl("apply", "-f", "-", input=FLUENTD)

    def one_per_node() -> list[dict] | None:
        pods = [p for p in cluster.pods("kube-system", "name=fluentd-elasticsearch")
                if running(p)]
        return pods if len(pods) == 3 else None

    pods = wait(one_per_node, what="a running fluentd pod on each node")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-0", "node-1", "node-2"]
    # placed by the scheduler through a required node affinity, as upstream since 1.12
    terms = pods[0]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchFields"][0]["key"] == "metadata.name"
    assert {"node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready"} <= {
        t.get("key") for t in pods[0]["spec"]["tolerations"]}
    status = cluster.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n",
                             "kube-system", "--timeout", "30s").stdout
    assert 'daemon set "fluentd-elasticsearch" successfully rolled out' in status
    table = rows(cluster.kubectl("get", "ds", "-n", "kube-system").stdout)
    assert table[0] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE",
                        "NODE_SELECTOR", "AGE"]
    assert table[1][:7] == ["fluentd-elasticsearch", "3", "3", "3", "3", "3", "<none>"]
    described = cluster.kubectl("describe", "ds", "fluentd-elasticsearch", "-n",
                                "kube-system").stdout
    assert "Desired Number of Nodes Scheduled: 3" in described
    assert "3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described
    assert "daemonset.apps/fluentd-elasticsearch" in cluster.kubectl(
        "get", "all", "-n", "kube-system").stdout

    cluster.kubectl("set", "image", "ds/fluentd-elasticsearch", "-n", "kube-system",
                    "fluentd-elasticsearch=quay.io/fluentd_elasticsearch/fluentd:v2.6.0")
    cluster.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system",
                    "--timeout", "60s")
    images = {p["spec"]["containers"][0]["image"] for p in one_per_node() or ()}
    assert images == {"quay.io/fluentd_elasticsearch/fluentd:v2.6.0"}
    history = rows(cluster.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n",
                                   "kube-system").stdout)
    assert [r[0] for r in history[-2:]] == ["1", "2"]
    first = cluster.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n",
                            "kube-system", "--revision=1").stdout
    assert "quay.io/fluentd_elasticsearch/fluentd:v2.5.2" in first
    revisions = rows(cluster.kubectl("get", "controllerrevisions", "-n", "kube-system").stdout)
    assert revisions[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert {r[1] for r in revisions[1:]} == {"daemonset.apps/fluentd-elasticsearch"}

    cluster.kubectl("rollout", "undo", "ds/fluentd-elasticsearch", "-n", "kube-system")
    cluster.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system",
                    "--timeout", "60s")

    def rolled_back() -> bool:
        pods = one_per_node() or ()
        return {p["spec"]["containers"][0]["image"] for p in pods} == {
            "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"}

    wait(rolled_back, what="the old image back on every node")
    # the undone-to revision becomes the newest (3), as upstream renumbers it
    history = rows(cluster.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n",
                                   "kube-system").stdout)
    assert [r[0] for r in history[-2:]] == ["2", "3"]

    # kubectl drain knows daemon pods by their controller (it GETs the DaemonSet): refused
    # without --ignore-daemonsets, left in place with it; the cordon is tolerated
    refused = cluster.kubectl("drain", "node-2", "--timeout", "30s", check=False)
    assert refused.returncode != 0 and "DaemonSet-managed Pods" in refused.stderr
    cluster.kubectl("drain", "node-2", "--ignore-daemonsets", "--timeout", "30s")
    time.sleep(0.5)
    assert len(one_per_node() or ()) == 3
    cluster.kubectl("uncordon", "node-2")


def test_web_statefulset_starts_in_order_with_bound_claims_and_rolls_back(
        cluster: ClusterProcesses) -> None:
    cluster.kubectl("apply", "-f", "-", input=WEB)

    def both_ready() -> list[dict] | None:
        pods = [p for p in cluster.pods("default", "app=nginx") if running(p)
                and any(c["type"] == "Ready" and c["status"] == "True"
                        for c in p["status"].get("conditions") or ())]
        return pods if len(pods) == 2 else None

    pods = sorted(wait(both_ready, what="web-0 and web-1 Ready"),
                  key=lambda p: p["metadata"]["name"])
    assert [p["metadata"]["name"] for p in pods] == ["web-0", "web-1"]
    # OrderedReady: web-1 was created only once web-0 was Ready
    ready_0 = next(c["lastTransitionTime"] for c in pods[0]["status"]["conditions"]
                   if c["type"] == "Ready")
    assert pods[1]["metadata"]["creationTimestamp"] >= ready_0
    for i, pod in enumerate(pods):
        assert pod["spec"]["hostname"] == f"web-{i}" and pod["spec"]["subdomain"] == "nginx"
        assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == f"web-{i}"
        assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == str(i)
    claims = {c["metadata"]["name"]: c["status"]["phase"]
              for c in get_json(cluster, "pvc")["items"]}
    assert claims == {"www-web-0": "Bound", "www-web-1": "Bound"}
    table = rows(cluster.kubectl("get", "sts").stdout)
    assert table[0] == ["NAME", "READY", "AGE"] and table[1][:2] == ["web", "2/2"]
    status = cluster.kubectl("rollout", "status", "sts/web", "--timeout", "30s").stdout
    described = cluster.kubectl("describe", "sts", "web").stdout
    assert "Update Strategy:    RollingUpdate" in described and "Volume Claims:" in described
    assert "2 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described
    assert "partitioned roll out complete: 2 new pods have been updated" in status

    cluster.kubectl("scale", "sts", "web", "--replicas=3")
    wait(lambda: get_json(cluster, "sts", "web")["status"].get("readyReplicas") == 3,
         what="web-2 Ready after kubectl scale")
    cluster.kubectl("set", "image", "sts/web", "nginx=registry.k8s.io/nginx-slim:0.24")
    cluster.kubectl("rollout", "status", "sts/web", "--timeout", "60s")

    def images() -> set[str]:
        return {p["spec"]["containers"][0]["image"] for p in cluster.pods("default", "app=nginx")
                if running(p)}

    wait(lambda: images() == {"registry.k8s.io/nginx-slim:0.24"}, what="all pods updated")
    history = rows(cluster.kubectl("rollout", "history", "sts/web").stdout)
    assert [r[0] for r in history[-2:]] == ["1", "2"]
    cluster.kubectl("rollout", "undo", "sts/web")
    cluster.kubectl("rollout", "status", "sts/web", "--timeout", "60s")
    wait(lambda: images() == {"registry.k8s.io/nginx-slim:0.21"} and len(
        cluster.pods("default", "app=nginx")) == 3, what="the old image back on web-0..2")
    sts = get_json(cluster, "sts", "web")
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]


@pytest.mark.parametrize("binary", KUBECTLS, ids=lambda b: b.rsplit("kubectl.", 1)[-1])
def test_every_kubectl_lists_and_explains_the_new_kinds(cluster: ClusterProcesses,
                                                        binary: str) -> None:
    def run(*args: str) -> str:
        done = subprocess.run([binary, "-s", cluster.url, *args], check=False, text=True,
                              capture_output=True, timeout=60,
                              env={**os.environ, "HOME": str(cluster.tmp)})
        assert done.returncode == 0, f"{binary} {' '.join(args)}: {done.stderr}{done.stdout}"
        return done.stdout

    listed = run("get", "ds,sts,controllerrevisions", "-A")
    assert "daemonset.apps/fluentd-elasticsearch" in listed or "fluentd-elasticsearch" in listed
    explained = run("explain", "daemonset.spec.updateStrategy")
    assert "rollingUpdate" in explained
    explained = run("explain", "sts.spec.persistentVolumeClaimRetentionPolicy")
    assert "whenScaled" in explained
    short = run("get", "ds", "-n", "kube-system", "-o", "name")
    assert short.strip() == "daemonset.apps/fluentd-elasticsearch"
    # the rollout commands read the same status fields and revisions in every version
    history = run("rollout", "history", "ds/fluentd-elasticsearch", "-n", "kube-system")
    assert [r[0] for r in rows(history)[-2:]] == ["2", "3"]
    assert "successfully rolled out" in run("rollout", "status", "ds/fluentd-elasticsearch",
                                            "-n", "kube-system", "--timeout", "30s")
    assert "partitioned roll out complete" in run("rollout", "status", "sts/web",
                                                  "--timeout", "30s")
