"""`lightkube` (sync `Client` and `AsyncClient`), as its README's Usage section shows.

Against `minikube-py start` through its kubeconfig (HTTPS + token): get, list, create,
create from YAML (codecs.load_all_yaml), replace, patch (strategic and merge), set labels,
scale through the Scale subresource, server-side apply (create, then a changed apply that
drops a key), watch, wait for a condition, logs, exec (stdout, exit code, stdin over
v5.channel.k8s.io with its close signal) and delete.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

pytest.importorskip("lightkube", reason="lightkube is not installed: pip install -e '.[test]'")
from lightkube import ApiError, AsyncClient, Client, KubeConfig, codecs
from lightkube.models.apps_v1 import DeploymentStatus
from lightkube.models.autoscaling_v1 import ScaleSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Namespace, Node, Pod
from lightkube.types import PatchType

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    NGINX_DEPLOYMENT,
    cluster,
    deadline,
    kubeconfig,
    namespace,
    sleeper,
    ticker,
    wait_running,
)
from tests.e2e.cluster_process import ClusterProcesses

MANAGER = "my-manager"


@pytest.fixture
def lk(kubeconfig: Path, namespace: str) -> Iterator[Client]:
    """`Client(field_manager="my-manager")` on the kubeconfig, defaulting to the test's namespace."""
    with Client(KubeConfig.from_file(kubeconfig), namespace=namespace,
                field_manager=MANAGER) as client:
        yield client


@pytest.fixture
async def alk(kubeconfig: Path, namespace: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(KubeConfig.from_file(kubeconfig), namespace=namespace,
                           field_manager=MANAGER) as client:
        yield client


@pytest.fixture
def pod(cluster: ClusterProcesses, lk: Client, namespace: str) -> str:
    lk.create(codecs.from_dict(sleeper("my-pod")))
    wait_running(cluster, namespace, "my-pod")
    return "my-pod"


def test_read_and_list(lk: Client, namespace: str, pod: str):
    got = lk.get(Pod, name=pod, namespace=namespace)
    assert got.metadata.uid and got.status.phase == "Running"
    assert [n.metadata.name for n in lk.list(Node)] == ["node-0"]
    assert namespace in {ns.metadata.name for ns in lk.list(Namespace)}
    assert [p.metadata.name for p in lk.list(Pod, labels={"app": "sleeper"})] == [pod]


def test_list_paginates(lk: Client, namespace: str):
    """lightkube follows `continue` tokens: chunk_size=2 over 5 objects is 3 requests."""
    for i in range(5):
        lk.create(ConfigMap(metadata=ObjectMeta(name=f"page-{i}")))
    names = [cm.metadata.name for cm in lk.list(ConfigMap, chunk_size=2)]
    assert names == [cm.metadata.name for cm in lk.list(ConfigMap)]  # (with kube-root-ca.crt)
    assert [n for n in names if n.startswith("page-")] == [f"page-{i}" for i in range(5)]


def test_config_map_lifecycle(lk: Client, namespace: str):
    """README: create, replace, patch, merge-patch a key away, set/remove a label, delete."""
    config = ConfigMap(metadata=ObjectMeta(name="my-config", namespace=namespace),
                       data={"key1": "value1", "key2": "value2"})
    created = lk.create(config)
    assert created.metadata.resourceVersion

    created.data["key1"] = "new value"
    replaced = lk.replace(created)
    assert replaced.data == {"key1": "new value", "key2": "value2"}

    patched = lk.patch(ConfigMap, name="my-config", obj={"data": {"key3": "value3"}})
    assert patched.data["key3"] == "value3"
    patched = lk.patch(ConfigMap, name="my-config", namespace=namespace,
                       obj={"data": {"key3": None}}, patch_type=PatchType.MERGE)
    assert "key3" not in patched.data

    assert lk.set(ConfigMap, name="my-config", labels={"env": "prod"}).metadata.labels == {
        "env": "prod"}
    assert not lk.set(ConfigMap, name="my-config", labels={"env": None}).metadata.labels

    lk.delete(ConfigMap, name="my-config", namespace=namespace)
    with pytest.raises(ApiError) as info:
        lk.get(ConfigMap, name="my-config")
    assert info.value.status.code == 404 and info.value.status.reason == "NotFound"


def test_server_side_apply(lk: Client, namespace: str):
    """README's server-side apply: a second apply without key1 removes it (field ownership)."""
    config = ConfigMap(apiVersion="v1", kind="ConfigMap",
                       metadata=ObjectMeta(name="my-config", namespace=namespace),
                       data={"key1": "value1", "key2": "value2"})
    res = lk.apply(config)
    assert res.data == {"key1": "value1", "key2": "value2"}
    assert [m.manager for m in res.metadata.managedFields] == [MANAGER]
    assert res.metadata.managedFields[0].operation == "Apply"

    del config.data["key1"]
    config.data["key3"] = "value3"
    res = lk.apply(config)
    assert res.data == {"key2": "value2", "key3": "value3"}


def test_create_from_yaml_and_scale(cluster: ClusterProcesses, lk: Client, namespace: str):
    for obj in codecs.load_all_yaml(io.StringIO(NGINX_DEPLOYMENT)):
        lk.create(obj)
    scale = Deployment.Scale(metadata=ObjectMeta(name="nginx-deployment", namespace=namespace),
                             spec=ScaleSpec(replicas=1))
    lk.replace(scale)
    assert lk.get(Deployment.Scale, "nginx-deployment").spec.replicas == 1
    cluster.wait(lambda: len(cluster.pods(namespace, "app=nginx")) == 1, CALL_TIMEOUT,
                 "one nginx pod")
    done = lk.wait(Deployment, "nginx-deployment", for_conditions=["Available"])
    assert done.status.availableReplicas == 1


def test_server_side_apply_status(cluster: ClusterProcesses, lk: Client, namespace: str):
    """README "Update Status of a deployment": apply a Deployment.Status. The deployment
    controller owns status.observedGeneration once it has synced (an Update on the status
    subresource), so, as against a real cluster, the apply takes it over with force."""
    for obj in codecs.load_all_yaml(io.StringIO(NGINX_DEPLOYMENT)):
        if obj.kind == "Deployment":
            obj.spec.replicas = 0
            lk.create(obj)
    res = lk.apply(Deployment.Status(status=DeploymentStatus(observedGeneration=99)),
                   name="nginx-deployment", namespace=namespace, force=True)
    assert res.status.observedGeneration == 99
    assert res.spec.replicas == 0
    (mine,) = [m for m in res.metadata.managedFields
               if m.manager == MANAGER and m.operation == "Apply"]
    assert mine.subresource == "status" and mine.apiVersion == "apps/v1"
    assert mine.fieldsV1 == {"f:status": {"f:observedGeneration": {}}}


def test_watch(lk: Client, namespace: str):
    listed = lk.list(ConfigMap)
    assert [cm.metadata.name for cm in listed if cm.metadata.name == "watched"] == []
    start = listed.resourceVersion  # the list's resourceVersion, known once iterated
    lk.create(ConfigMap(metadata=ObjectMeta(name="watched"), data={"a": "1"}))
    lk.patch(ConfigMap, "watched", {"data": {"a": "2"}})
    lk.delete(ConfigMap, "watched")
    events = []
    for op, cm in lk.watch(ConfigMap, namespace=namespace, resource_version=start,
                           server_timeout=CALL_TIMEOUT):
        events.append((op, cm.data["a"]))
        if op == "DELETED":
            break
    assert events == [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "2")]


def test_wait_for_pod_ready(lk: Client, namespace: str):
    lk.create(codecs.from_dict(sleeper("waited")))
    pod = lk.wait(Pod, "waited", for_conditions=["Ready"], raise_for_conditions=["Failed"])
    assert pod.status.phase == "Running"


def test_logs(lk: Client, pod: str):
    assert list(lk.log(pod)) == ["started\n"]


def test_logs_follow(cluster: ClusterProcesses, lk: Client, namespace: str):
    """README "Stream pod logs": `client.log(name, follow=True)` yields lines as printed."""
    lk.create(codecs.from_dict(ticker("ticker")))
    wait_running(cluster, namespace, "ticker")
    lines = iter(lk.log("ticker", follow=True))
    assert [next(lines) for _ in range(3)] == ["started\n", "tick\n", "tick\n"]


def test_exec(lk: Client, namespace: str, pod: str):
    res = lk.exec(pod, namespace=namespace, container="main", command=["ls", "/"],
                  stdout=True, raise_on_error=True, timeout=CALL_TIMEOUT)
    assert "etc" in res.stdout.split() and res.exit_code == 0
    res = lk.exec(pod, container="main", command=["sh", "-c", "echo oops; exit 2"],
                  stdout=True, timeout=CALL_TIMEOUT)
    assert (res.stdout, res.exit_code) == ("oops\n", 2)


def test_exec_stdin(lk: Client, namespace: str, pod: str):
    """README: `command=['cat'], stdin='hello\\n'` — stdin, then v5's close signal ends cat."""
    res = lk.exec(pod, namespace=namespace, container="main", command=["cat"],
                  stdin="hello\n", stdout=True, timeout=CALL_TIMEOUT)
    assert (res.stdout, res.exit_code) == ("hello\n", 0)


async def test_async_client(cluster: ClusterProcesses, alk: AsyncClient, namespace: str):
    """The same calls through AsyncClient: create, get, list, apply, watch, wait, exec, delete."""
    await alk.create(ConfigMap(metadata=ObjectMeta(name="a"), data={"k": "v"}))
    assert (await alk.get(ConfigMap, "a")).data == {"k": "v"}
    assert "a" in [cm.metadata.name async for cm in alk.list(ConfigMap)]
    applied = await alk.apply(ConfigMap(apiVersion="v1", kind="ConfigMap",
                                        metadata=ObjectMeta(name="b"), data={"x": "y"}))
    assert applied.data == {"x": "y"}

    await alk.create(codecs.from_dict(sleeper("apod")))
    ready = await alk.wait(Pod, "apod", for_conditions=["Ready"])
    assert ready.status.podIP
    res = await alk.exec("apod", command=["echo", "async"], stdout=True, timeout=CALL_TIMEOUT)
    assert res.stdout == "async\n"

    start = applied.metadata.resourceVersion  # the namespace's last ConfigMap write
    await alk.delete(ConfigMap, "a")
    async for op, cm in alk.watch(ConfigMap, resource_version=start,
                                  server_timeout=CALL_TIMEOUT):
        assert (op, cm.metadata.name) == ("DELETED", "a")
        break
