"""The documentation's PodDisruptionBudget walk-through with every kubectl on the machine
(1.20 and 1.27..1.33), against a real two-node `minikube-py start`: a Deployment of 3 (nginx), a budget
with minAvailable 2, then `kubectl drain --ignore-daemonsets --delete-emptydir-data` of the
node that holds two of its pods. Drain must finish (it cordons, evicts through pods/eviction,
is told 429 for the second pod and retries until the replacement is Ready elsewhere), and a
watcher polling the pods meanwhile must never see fewer than 2 available.

The official Python client's PolicyV1Api and CoreV1Api.create_namespaced_pod_eviction are
exercised against the same cluster.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import pytest

from tests.e2e.cluster_process import ClusterProcesses, condition, running
from tests.e2e.kubectl_run import kubectl
from tests.e2e.test_openapi_v2_kubectl import BINARIES

#: kubectl 1.20 (when installed, see test_openapi_v2_kubectl) and every 1.27+
KUBECTLS = BINARIES
pytestmark = pytest.mark.skipif(not KUBECTLS, reason="needs kubectl binaries")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels: {app: nginx}
spec:
  replicas: 3
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
"""
PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: nginx-pdb
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: nginx
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    procs = ClusterProcesses(tmp_path_factory.mktemp("pdb"), nodes=2).start()
    try:
        yield procs
    finally:
        procs.stop()


def available(pod: dict) -> bool:
    return running(pod) and condition(pod, "Ready") == "True"


class AvailabilityWatch:
    """Polls the namespace's pods every 50 ms and remembers the fewest available seen."""

    def __init__(self, cluster: ClusterProcesses, namespace: str) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.fewest = 99
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pods = self.cluster.pods(self.namespace, "app=nginx")
            self.fewest = min(self.fewest, sum(available(p) for p in pods))
            time.sleep(0.05)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.mark.parametrize("binary", KUBECTLS, ids=[p.rsplit("/", 1)[1] for p in KUBECTLS])
def test_drain_respects_the_budget(cluster: ClusterProcesses, tmp_path: Path,
                                   binary: str) -> None:
    namespace = f"pdb-{KUBECTLS.index(binary)}"

    def run(*args: str, stdin: str | None = None, ok: bool = True):
        return kubectl(cluster.url, tmp_path, *args, stdin=stdin, ok=ok, binary=binary,
                       timeout=120)

    run("create", "namespace", namespace)
    run("apply", "-n", namespace, "-f", "-", stdin=DEPLOYMENT)
    run("apply", "-n", namespace, "-f", "-", stdin=PDB)

    def settled() -> list[dict] | None:
        pods = [p for p in cluster.pods(namespace, "app=nginx") if available(p)]
        pdb = cluster.get(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/"
                          "nginx-pdb")
        return pods if len(pods) == 3 and pdb["status"].get("disruptionsAllowed") == 1 else None
    pods = cluster.wait(settled, what="3 available pods and 1 allowed disruption")
    table = run("get", "pdb", "-n", namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                                "DISRUPTIONS", "AGE"]
    assert table[1].split()[:4] == ["nginx-pdb", "2", "N/A", "1"]

    node, count = Counter(p["spec"]["nodeName"] for p in pods).most_common(1)[0]
    assert count >= 2
    try:
        with AvailabilityWatch(cluster, namespace) as watch:
            drained = run("drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
                          "--timeout=90s")
        # kubectl 1.20 ends with `node/x evicted`, later ones with `node/x drained`
        assert (f"node/{node} drained" in drained.stdout
                or f"node/{node} evicted" in drained.stdout), drained
        assert f"node/{node} cordoned" in drained.stdout
        assert watch.fewest >= 2, f"only {watch.fewest} pods were available during the drain"
        # the second eviction had to wait for the first pod's replacement
        assert "Cannot evict pod as it would violate the pod's disruption budget." \
            in drained.stderr, drained
        left = [p for p in cluster.pods(namespace, "app=nginx") if running(p)]
        assert all(p["spec"]["nodeName"] != node for p in left)
    finally:
        run("uncordon", node)
        run("delete", "namespace", namespace, "--wait=false")


def test_official_client_policy_v1_and_eviction(cluster: ClusterProcesses) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="kubernetes is not installed: pip install -e '.[test]'")
    client = kubernetes.client
    config = client.Configuration()
    config.host = cluster.url
    with client.ApiClient(config) as api:
        core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
        namespace = "pdb-python"
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
        labels = {"app": "py"}
        for i in range(2):
            core.create_namespaced_pod(namespace, client.V1Pod(
                metadata=client.V1ObjectMeta(name=f"py-{i}", labels=labels),
                spec=client.V1PodSpec(termination_grace_period_seconds=0, containers=[
                    client.V1Container(name="c", image="busybox",
                                       command=["sh", "-c", "sleep 3600"])])))
        policy.create_namespaced_pod_disruption_budget(namespace, client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="py-pdb"),
            spec=client.V1PodDisruptionBudgetSpec(
                max_unavailable=1, selector=client.V1LabelSelector(match_labels=labels))))

        def counted():
            status = policy.read_namespaced_pod_disruption_budget_status(
                "py-pdb", namespace).status
            return status if status.current_healthy == 2 else None
        status = cluster.wait(counted, what="the budget counting both pods")
        # unmanaged pods with maxUnavailable: no controller gives a scale, so no pod is
        # expected and nothing may be disrupted (upstream warns UnmanagedPods)
        assert (status.expected_pods, status.disruptions_allowed) == (0, 0)
        assert [c.reason for c in status.conditions] == ["InsufficientPods"]
        with pytest.raises(client.ApiException) as refused:
            core.create_namespaced_pod_eviction("py-0", namespace, client.V1Eviction(
                metadata=client.V1ObjectMeta(name="py-0", namespace=namespace)))
        assert refused.value.status == 429

        budget = policy.read_namespaced_pod_disruption_budget("py-pdb", namespace)
        budget.spec.max_unavailable = None
        budget.spec.min_available = 1  # an integer: no scale needed
        policy.replace_namespaced_pod_disruption_budget("py-pdb", namespace, budget)

        def allowed():
            status = policy.read_namespaced_pod_disruption_budget("py-pdb", namespace).status
            return status.disruptions_allowed == 1 and status.observed_generation == 2
        cluster.wait(allowed, what="one allowed disruption")
        core.create_namespaced_pod_eviction("py-0", namespace, client.V1Eviction(
            metadata=client.V1ObjectMeta(name="py-0", namespace=namespace),
            delete_options=client.V1DeleteOptions(grace_period_seconds=0)))
        listed = policy.list_namespaced_pod_disruption_budget(namespace).items
        assert [b.metadata.name for b in listed] == ["py-pdb"]
        assert policy.list_pod_disruption_budget_for_all_namespaces().items
        cluster.wait(lambda: not [p for p in cluster.pods(namespace) if
                                  p["metadata"]["name"] == "py-0"], what="py-0 deleted")
        core.delete_namespace(namespace)


def test_lightkube_budget_and_eviction(cluster: ClusterProcesses) -> None:
    """lightkube's typed PodDisruptionBudget and its `Pod.Eviction` subresource model."""
    lightkube = pytest.importorskip(
        "lightkube", reason="lightkube is not installed: pip install -e '.[test]'")
    from lightkube.models.core_v1 import Container, PodSpec
    from lightkube.models.meta_v1 import LabelSelector, ObjectMeta
    from lightkube.models.policy_v1 import PodDisruptionBudgetSpec
    from lightkube.resources.core_v1 import Namespace, Pod
    from lightkube.resources.policy_v1 import PodDisruptionBudget

    namespace = "pdb-lightkube"
    # through the kubeconfig `start` wrote: HTTPS, the cluster CA, a bearer token (RBAC)
    client = lightkube.Client(config=lightkube.KubeConfig.from_file(cluster.tmp / "kubeconfig"),
                              namespace=namespace)
    client.create(Namespace(metadata=ObjectMeta(name=namespace)))
    client.create(Pod(metadata=ObjectMeta(name="lk", labels={"app": "lk"}), spec=PodSpec(
        terminationGracePeriodSeconds=0,
        containers=[Container(name="c", image="busybox", command=["sh", "-c", "sleep 3600"])])))
    client.create(PodDisruptionBudget(metadata=ObjectMeta(name="lk-pdb"),
                                      spec=PodDisruptionBudgetSpec(
                                          minAvailable=1,
                                          selector=LabelSelector(matchLabels={"app": "lk"}))))
    status = cluster.wait(lambda: (s := client.get(PodDisruptionBudget, "lk-pdb").status)
                          and s.currentHealthy == 1 and s, what="the pod counted")
    assert (status.desiredHealthy, status.disruptionsAllowed) == (1, 0)
    with pytest.raises(lightkube.ApiError) as refused:
        client.create(Pod.Eviction(metadata=ObjectMeta(name="lk", namespace=namespace)),
                      name="lk")
    assert refused.value.status.code == 429
    assert refused.value.status.message == ("Cannot evict pod as it would violate the pod's "
                                            "disruption budget.")
    client.patch(PodDisruptionBudget, "lk-pdb", {"spec": {"minAvailable": 0}})
    cluster.wait(lambda: client.get(PodDisruptionBudget, "lk-pdb").status.disruptionsAllowed
                 == 1, what="one allowed disruption")
    client.create(Pod.Eviction(metadata=ObjectMeta(name="lk", namespace=namespace)), name="lk")
    cluster.wait(lambda: not cluster.pods(namespace), what="the pod evicted")
    client.delete(Namespace, namespace)
