"""The operator-testing recipes of docs/testing.md, each run as a test on the plugin's
fixtures: a kopf operator under KopfRunner, a kubernetes_asyncio controller, a lightkube
script, a CLI tool as a subprocess with the kubeconfig, and an injected node failure."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from minikube_py.testing import Cluster, exists

OPERATOR = str(Path(__file__).with_name("recipe_kopf_operator.py"))


# -- recipe 1: a kopf operator, run with kopf.testing.KopfRunner -------------------------------
@pytest.fixture
def restore_logging() -> Iterator[None]:
    """`kopf run` configures logging process-wide; put it back for the tests after this."""
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    saved = (root.handlers[:], root.level, aio.handlers[:], aio.propagate)
    yield
    root.handlers[:], aio.handlers[:] = saved[0], saved[2]
    root.setLevel(saved[1])
    aio.propagate = saved[3]


@pytest.mark.usefixtures("restore_logging")
def test_kopf_operator(kube_cluster: Cluster, kube_namespace: str, kubeconfig: str,
                       kube_client, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("kopf", reason="kopf is not installed: pip install kopf")
    from kopf.testing import KopfRunner
    from kubernetes import client

    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    core = client.CoreV1Api(kube_client)
    with KopfRunner(["run", "--standalone", "--namespace", kube_namespace, OPERATOR],
                    timeout=30) as runner:
        core.create_namespaced_config_map(kube_namespace, {
            "metadata": {"name": "world", "labels": {"greet": "yes"}}})
        greeted = kube_cluster.wait_for(
            "configmaps", "world",
            lambda cm: bool(cm and (cm["metadata"].get("annotations") or {})
                            .get("example.com/greeting")),
            namespace=kube_namespace, timeout=20)
    assert runner.exit_code == 0 and runner.exception is None
    assert greeted["metadata"]["annotations"]["example.com/greeting"] == "hello world"
    events = core.list_namespaced_event(kube_namespace).items
    assert any(e.reason == "Greeted" and e.involved_object.name == "world" for e in events)


# -- recipe 2: a controller written with kubernetes_asyncio ------------------------------------
async def mirror_controller(api_client, namespace: str) -> None:
    """For every ConfigMap labelled `mirror=yes`, keep a Secret `<name>-mirror` with its
    data (a reconcile loop: list, then watch from that resourceVersion)."""
    from kubernetes_asyncio import client, watch

    core = client.CoreV1Api(api_client)

    async def reconcile(cm) -> None:
        body = {"metadata": {"name": f"{cm.metadata.name}-mirror"},
                "stringData": dict(cm.data or {})}
        try:
            await core.create_namespaced_secret(namespace, body)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            await core.patch_namespaced_secret(f"{cm.metadata.name}-mirror", namespace, body)

    listed = await core.list_namespaced_config_map(namespace, label_selector="mirror=yes")
    for cm in listed.items:
        await reconcile(cm)
    async with watch.Watch().stream(core.list_namespaced_config_map, namespace,
                                    label_selector="mirror=yes",
                                    resource_version=listed.metadata.resource_version) as events:
        async for event in events:
            if event["type"] in ("ADDED", "MODIFIED"):
                await reconcile(event["object"])


async def test_kubernetes_asyncio_controller(kube_cluster: Cluster, kube_namespace: str,
                                             kube_asyncio_client) -> None:
    from kubernetes_asyncio import client

    controller = asyncio.create_task(mirror_controller(kube_asyncio_client, kube_namespace))
    try:
        core = client.CoreV1Api(kube_asyncio_client)
        await core.create_namespaced_config_map(kube_namespace, {
            "metadata": {"name": "settings", "labels": {"mirror": "yes"}},
            "data": {"colour": "blue"}})
        # the session cluster's helpers block: off this loop, where the controller runs
        await asyncio.to_thread(kube_cluster.wait_for, "secrets", "settings-mirror", exists,
                                namespace=kube_namespace)
        secret = await core.read_namespaced_secret("settings-mirror", kube_namespace)
        import base64

        assert base64.b64decode(secret.data["colour"]) == b"blue"
    finally:
        controller.cancel()
        await asyncio.gather(controller, return_exceptions=True)


# -- recipe 3: a lightkube script --------------------------------------------------------------
def scale_deployments(lk, namespace: str, replicas: int) -> list[str]:
    """The script under test: scale every Deployment in `namespace` (lightkube)."""
    from lightkube.models.autoscaling_v1 import ScaleSpec
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.apps_v1 import Deployment

    names = []
    for deployment in lk.list(Deployment, namespace=namespace):
        name = deployment.metadata.name
        lk.replace(Deployment.Scale(metadata=ObjectMeta(name=name, namespace=namespace),
                                    spec=ScaleSpec(replicas=replicas)))
        names.append(name)
    return names


def test_lightkube_script(kube_cluster: Cluster, kube_namespace: str,
                          kube_lightkube_client) -> None:
    from lightkube.resources.apps_v1 import Deployment

    lk = kube_lightkube_client
    lk.create(Deployment.from_dict({
        "metadata": {"name": "web", "namespace": kube_namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}))
    assert scale_deployments(lk, kube_namespace, 3) == ["web"]
    done = kube_cluster.wait_for(
        "deployments", "web",
        lambda d: ((d or {}).get("status") or {}).get("readyReplicas") == 3,
        namespace=kube_namespace, timeout=20)
    assert done["spec"]["replicas"] == 3


# -- recipe 4: a CLI tool as a subprocess, pointed at the cluster by its kubeconfig --------------
MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: nginx}]}
"""


def test_cli_tool_as_subprocess(kube_namespace: str, kubeconfig: str, tmp_path: Path) -> None:
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH")
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run([kubectl, "-n", kube_namespace, *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    assert "deployment.apps/api created" in run("apply", "-f", "-", stdin=MANIFEST)
    assert "successfully rolled out" in run("rollout", "status", "deployment/api",
                                            "--timeout=30s")
    assert run("get", "pods", "-l", "app=api", "-o", "name").count("pod/api-") == 2


# -- recipe 5: inject a node failure -----------------------------------------------------------
FAST_NODE_FAILURE = {"node-monitor-grace-period": "2s", "node-monitor-period": "0.2s",
                     "node-lease-renew-interval": "0.2s",
                     "node-status-update-frequency": "0.2s"}
GONE_AT_ONCE = [{"key": f"node.kubernetes.io/{taint}", "operator": "Exists",
                 "effect": "NoExecute", "tolerationSeconds": 0}
                for taint in ("unreachable", "not-ready")]


@pytest.mark.kube_cluster(nodes=2, flags=FAST_NODE_FAILURE)
def test_node_failure_moves_the_pod(kube_cluster: Cluster, kube_namespace: str,
                                    kube_client) -> None:
    from kubernetes import client

    apps, core = client.AppsV1Api(kube_client), client.CoreV1Api(kube_client)
    assert len(kube_cluster.node_names) == 2  # the marker's dedicated cluster
    apps.create_namespaced_deployment(kube_namespace, {
        "metadata": {"name": "svc"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "svc"}},
                 "template": {"metadata": {"labels": {"app": "svc"}},
                              "spec": {"containers": [{"name": "svc", "image": "nginx"}],
                                       "tolerations": GONE_AT_ONCE}}}})
    kube_cluster.wait_for("deployments", "svc", "Available", namespace=kube_namespace,
                          timeout=20)
    (first,) = core.list_namespaced_pod(kube_namespace).items
    kube_cluster.stop_node(first.spec.node_name)
    kube_cluster.wait_for("nodes", first.spec.node_name,
                          lambda n: not any(c["type"] == "Ready" and c["status"] == "True"
                                            for c in n["status"]["conditions"]), timeout=10)
    kube_cluster.wait_for("pods", first.metadata.name,
                          lambda p: p is None or bool(p["metadata"].get("deletionTimestamp")),
                          namespace=kube_namespace, timeout=10)
    replacement = None
    for _ in range(2):
        pods = [p for p in core.list_namespaced_pod(kube_namespace).items
                if p.metadata.name != first.metadata.name]
        if pods:
            replacement = pods[0]
            break
        kube_cluster.wait_for("deployments", "svc",
                              lambda d: (d["status"].get("replicas") or 0) >= 1,
                              namespace=kube_namespace, timeout=5)
    assert replacement is not None
    running = kube_cluster.wait_for("pods", replacement.metadata.name, "Ready",
                                    namespace=kube_namespace, timeout=20)
    assert running["spec"]["nodeName"] != first.spec.node_name
