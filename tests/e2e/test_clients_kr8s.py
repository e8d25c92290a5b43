"""`kr8s` (sync and `kr8s.asyncio`), as its README and examples documentation show.

kr8s finds its cluster as kubectl does, through `KUBECONFIG` (here the HTTPS + token
kubeconfig `minikube-py start` wrote). Its first call is `GET /version/` (trailing slash).
Covered: list nodes, `kr8s.get("pods")` with a label selector, create a Pod from a dict and
with `Pod.gen`, label, patch, wait for a condition, exec, logs, scale a Deployment, cordon a
Node, port-forward, delete — then the same core steps through `kr8s.asyncio`.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import errno
import urllib.request

import pytest

pytest.importorskip("kr8s", reason="kr8s is not installed: pip install -e '.[test]'")
import kr8s
import kr8s.asyncio
from kr8s.objects import Deployment, Node, Pod

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    cluster,
    deadline,
    kubeconfig,
    kubeconfig_env,
    namespace,
    sleeper,
    ticker,
    wait_running,
)
from tests.e2e.cluster_process import ClusterProcesses

#: kr8s finds the cluster through `KUBECONFIG`, as a kr8s user's shell would
pytestmark = pytest.mark.usefixtures("kubeconfig_env")


@pytest.fixture
def pod(cluster: ClusterProcesses, namespace: str) -> Pod:
    """README "Create a Pod": a Pod from a dict, created, running."""
    pod = Pod(sleeper("my-pod"), namespace=namespace)
    pod.create()
    wait_running(cluster, namespace, "my-pod")
    return pod


def test_api_version_and_list_nodes():
    assert kr8s.api().version()["gitVersion"].startswith("v1.31")
    assert [node.name for node in kr8s.get("nodes")] == ["node-0"]


def test_whoami():
    """kr8s.whoami() POSTs a TokenReview of its own token (authentication.k8s.io/v1)."""
    assert kr8s.whoami() == "admin"


def test_get_pods_by_label_selector(namespace: str, pod: Pod):
    pods = kr8s.get("pods", namespace=kr8s.ALL, label_selector={"app": "sleeper"})
    assert (namespace, "my-pod") in {(p.namespace, p.name) for p in pods}
    assert [p.name for p in kr8s.get("po", namespace=namespace)] == ["my-pod"]


def test_pod_gen_create_wait_label_patch_delete(namespace: str):
    pod = Pod.gen(name="example-1", image="nginx:latest", namespace=namespace, ports=[80])
    pod.create()
    pod.wait("condition=Ready", timeout=CALL_TIMEOUT)
    assert pod.ready()
    pod.label({"foo": "bar"})
    pod.patch({"metadata": {"annotations": {"note": "patched"}}})
    got = Pod.get("example-1", namespace=namespace)
    assert got.labels["foo"] == "bar" and got.annotations["note"] == "patched"
    assert got.spec.containers[0].ports[0].containerPort == 80
    pod.delete()
    pod.wait("delete", timeout=CALL_TIMEOUT)
    assert not pod.exists()


def test_exec(pod: Pod):
    """README "Pod Exec": `pod.exec(["uptime"])` and its stdout."""
    done = pod.exec(["echo", "hello from kr8s"], timeout=CALL_TIMEOUT)
    assert done.stdout.decode() == "hello from kr8s\n" and done.returncode == 0
    failed = pod.exec(["sh", "-c", "exit 7"], check=False, timeout=CALL_TIMEOUT)
    assert failed.returncode == 7
    with pytest.raises(BaseExceptionGroup) as info:  # httpx-ws's task group wraps it
        pod.exec(["sh", "-c", "exit 7"], timeout=CALL_TIMEOUT)
    assert info.group_contains(kr8s.ExecError, match="exit code 7")


def test_exec_uptime(pod: Pod):
    """The README's exact command."""
    done = pod.exec(["uptime"], timeout=CALL_TIMEOUT)
    assert " up " in done.stdout.decode() and "load average" in done.stdout.decode()


def test_logs(pod: Pod):
    assert list(pod.logs()) == ["started"]


def test_logs_follow(cluster: ClusterProcesses, namespace: str):
    pod = Pod(ticker("ticker"), namespace=namespace)
    pod.create()
    wait_running(cluster, namespace, "ticker")
    lines = []
    for line in pod.logs(follow=True, timeout=CALL_TIMEOUT):
        lines.append(line)
        if len(lines) == 3:
            break
    assert lines == ["started", "tick", "tick"]


def test_scale_deployment(cluster: ClusterProcesses, namespace: str):
    """README "Scale a Deployment": `deploy.scale(1)`."""
    deploy = Deployment({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    })
    deploy.create()
    deploy.wait("condition=Available", timeout=CALL_TIMEOUT)
    Deployment.get("web", namespace=namespace).scale(1)
    assert deploy.replicas == 3  # the local copy until refreshed
    deploy.refresh()
    assert deploy.replicas == 1
    cluster.wait(lambda: len(cluster.pods(namespace, "app=web")) == 1, CALL_TIMEOUT,
                 "scaled down to one pod")


def test_cordon_node():
    node = Node("node-0")
    node.cordon()
    try:
        assert Node.get("node-0").unschedulable
    finally:
        node.uncordon()
    assert not Node.get("node-0").unschedulable


def test_port_forward(cluster: ClusterProcesses, namespace: str):
    """README "Port forward a Pod": a background thread serving a local port."""
    web = Pod.gen(name="web", image="nginx", namespace=namespace, ports=[80])
    web.create()
    wait_running(cluster, namespace, "web")
    for attempt in range(3):
        try:
            # "auto": kr8s picks a free port, then binds it in its thread — on a shared machine
            # another process may take it in between (kr8s's race, not ours): try again
            with web.portforward(remote_port=80, local_port="auto") as local_port:
                url = f"http://127.0.0.1:{local_port}/"
                with urllib.request.urlopen(url, timeout=CALL_TIMEOUT) as response:
                    assert response.status == 200
                    assert b"pod web" in response.read()  # the simulated web server's page
            return
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or attempt == 2:
                raise


async def test_asyncio_api(cluster: ClusterProcesses, namespace: str):
    """The same core steps through `kr8s.asyncio`."""
    from kr8s.asyncio.objects import Pod as AsyncPod

    api = await kr8s.asyncio.api()
    assert (await api.version())["major"] == "1"
    assert [n.name async for n in kr8s.asyncio.get("nodes")] == ["node-0"]
    pod = await AsyncPod.gen(name="apod", image="busybox", namespace=namespace,
                             command=["sh", "-c", "echo async; sleep 3600"])
    await pod.create()
    await pod.wait("condition=Ready", timeout=CALL_TIMEOUT)
    done = await pod.exec(["echo", "from asyncio"], timeout=CALL_TIMEOUT)
    assert done.stdout == b"from asyncio\n"
    names = [p.name async for p in kr8s.asyncio.get("pods", namespace=namespace)]
    assert names == ["apod"]
    await pod.delete()
    await pod.wait("delete", timeout=CALL_TIMEOUT)
