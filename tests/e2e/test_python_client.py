"""The official `kubernetes` Python client against our API server, over a real socket.

CRUD on pods, services and namespaces; a watch resumed from a resourceVersion; 410 Gone after
compaction; 50 concurrent updates with one resourceVersion -> exactly one succeeds.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
from pathlib import Path

import pytest

kubernetes = pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from tests.apiserver_thread import ServerThread  # noqa: E402


def message(info: pytest.ExceptionInfo) -> str:
    """The Status message of a failed call."""
    return json.loads(info.value.body)["message"]


def pod(name: str, image: str = "nginx:1.25") -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": name}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image=image)]),
    )


def test_pod_crud(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    created = core.create_namespaced_pod(namespace, pod("web"))
    assert created.metadata.uid and created.metadata.resource_version
    assert created.status.phase == "Pending"
    assert created.spec.restart_policy == "Always" and created.spec.dns_policy == "ClusterFirst"
    assert created.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert created.spec.containers[0].termination_message_path == "/dev/termination-log"

    got = core.read_namespaced_pod("web", namespace)
    assert got.metadata.uid == created.metadata.uid

    got.metadata.labels["tier"] = "front"
    updated = core.replace_namespaced_pod("web", namespace, got)
    assert updated.metadata.labels == {"app": "web", "tier": "front"}
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)

    patched = core.patch_namespaced_pod("web", namespace, {"metadata": {"annotations": {"a": "b"}}})
    assert patched.metadata.annotations == {"a": "b"}

    listed = core.list_namespaced_pod(namespace, label_selector="tier in (front,back)")
    assert [p.metadata.name for p in listed.items] == ["web"]
    assert core.list_namespaced_pod(namespace, label_selector="tier!=front").items == []

    core.delete_namespaced_pod("web", namespace)  # unscheduled: deleted at once
    with pytest.raises(ApiException) as info:
        core.read_namespaced_pod("web", namespace)
    assert info.value.status == 404 and message(info) == 'pods "web" not found'


def test_invalid_pod_is_422_with_causes(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
            "spec": {"containers": [{"name": "c"}]}}
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod(namespace, body)
    assert info.value.status == 422
    assert "spec.containers[0].image: Required value" in info.value.body


def test_service_crud_allocates_cluster_ip(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    svc = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"}, ports=[client.V1ServicePort(port=80)],
                                  type="NodePort"),
    )
    created = core.create_namespaced_service(namespace, svc)
    assert created.spec.cluster_ip.startswith("10.0.0.")
    assert 30000 <= created.spec.ports[0].node_port <= 32767
    assert created.spec.ports[0].target_port == 80
    other = core.create_namespaced_service(namespace, client.V1Service(
        metadata=client.V1ObjectMeta(name="other"),
        spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=81)])))
    assert other.spec.cluster_ip != created.spec.cluster_ip
    with pytest.raises(ApiException) as info:
        core.create_namespaced_service(namespace, client.V1Service(
            metadata=client.V1ObjectMeta(name="dup"),
            spec=client.V1ServiceSpec(cluster_ip=created.spec.cluster_ip,
                                      ports=[client.V1ServicePort(port=80)])))
    assert info.value.status == 422 and "provided IP is already allocated" in info.value.body
    core.delete_namespaced_service("web", namespace)
    again = core.create_namespaced_service(namespace, client.V1Service(
        metadata=client.V1ObjectMeta(name="reuse"),
        spec=client.V1ServiceSpec(cluster_ip=created.spec.cluster_ip,
                                  ports=[client.V1ServicePort(port=80)])))
    assert again.spec.cluster_ip == created.spec.cluster_ip  # released on delete


def test_namespace_lifecycle(api: client.ApiClient):
    core = client.CoreV1Api(api)
    names = {n.metadata.name for n in core.list_namespace().items}
    assert {"default", "kube-system"} <= names
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod("missing-ns", pod("p"))
    assert info.value.status == 404 and message(info) == 'namespaces "missing-ns" not found'

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="doomed")))
    core.create_namespaced_config_map("doomed", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="cm"), data={"k": "v"}))
    core.delete_namespace("doomed")
    ns = core.read_namespace("doomed")
    assert ns.status.phase == "Terminating" and ns.metadata.deletion_timestamp is not None
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod("doomed", pod("late"))
    assert info.value.status == 403 and "being terminated" in info.value.body
    with pytest.raises(ApiException) as info:
        core.delete_namespace("kube-system")
    assert info.value.status == 403


def test_watch_resumes_from_resource_version(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(namespace, pod("a"))
    listed = core.list_namespaced_pod(namespace)
    rv = listed.metadata.resource_version
    core.create_namespaced_pod(namespace, pod("b"))
    core.patch_namespaced_pod("a", namespace, {"metadata": {"labels": {"x": "1"}}})
    core.delete_namespaced_pod("b", namespace)
    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, namespace, resource_version=rv,
                          timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]


def test_watch_after_compaction_is_410(tmp_path: Path):
    # a watch cache of 2 events, so an older resourceVersion is served by the store itself
    server = ServerThread(tmp_path / "data", watch_cache_size=2).start()
    config = client.Configuration()
    config.host = server.url
    try:
        with client.ApiClient(config) as api:
            _check_410(client.CoreV1Api(api), server)
    finally:
        server.stop()


def _check_410(core: client.CoreV1Api, server: ServerThread) -> None:
    namespace = "default"
    core.create_namespaced_pod(namespace, pod("old"))
    rv = int(core.list_namespaced_pod(namespace).metadata.resource_version)
    for i in range(3):
        core.patch_namespaced_pod("old", namespace, {"metadata": {"labels": {"i": str(i)}}})
    current = int(core.list_namespaced_pod(namespace).metadata.resource_version)
    server.call(server.store.compact(current))
    stream = core.list_namespaced_pod(namespace, resource_version=str(rv), watch=True,
                                      _preload_content=False, timeout_seconds=5)
    line = stream.readline()
    stream.release_conn()
    assert b'"type":"ERROR"' in line and b'"code":410' in line and b'"reason":"Expired"' in line
    with pytest.raises(ApiException) as info:
        core.list_namespaced_pod(namespace, resource_version=str(rv), resource_version_match="Exact")
    assert info.value.status == 410


def test_fifty_concurrent_updates_one_wins(api: client.ApiClient, namespace: str, server: ServerThread):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="race"), data={"n": "0"}))
    base = core.read_namespaced_config_map("race", namespace)
    barrier = threading.Barrier(50)

    def attempt(i: int) -> int:
        config = client.Configuration()
        config.host = server.url
        with client.ApiClient(config) as own:
            body = client.V1ConfigMap(metadata=client.V1ObjectMeta(
                name="race", resource_version=base.metadata.resource_version), data={"n": str(i)})
            barrier.wait()
            try:
                client.CoreV1Api(own).replace_namespaced_config_map("race", namespace, body)
                return 200
            except ApiException as exc:
                return exc.status

    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        # 1..50: an update writing the stored data again (n=0) would be a no-op, which keeps
        # the resourceVersion (upstream too), so a second update could then win as well
        codes = list(pool.map(attempt, range(1, 51)))
    assert codes.count(200) == 1 and codes.count(409) == 49


def test_graceful_delete_of_a_bound_pod(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(namespace, pod("bound"))
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="bound"),
                            target=client.V1ObjectReference(kind="Node", name="node-1"))
    core.create_namespaced_pod_binding("bound", namespace, body, _preload_content=False)
    got = core.read_namespaced_pod("bound", namespace)
    assert got.spec.node_name == "node-1"
    assert any(c.type == "PodScheduled" and c.status == "True" for c in got.status.conditions)
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod_binding("bound", namespace, client.V1Binding(
            metadata=client.V1ObjectMeta(name="bound"),
            target=client.V1ObjectReference(kind="Node", name="node-2")), _preload_content=False)
    assert info.value.status == 409 and 'already assigned to node "node-1"' in message(info)
    core.delete_namespaced_pod("bound", namespace)
    terminating = core.read_namespaced_pod("bound", namespace)
    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.deletion_grace_period_seconds == 30
    core.delete_namespaced_pod("bound", namespace, grace_period_seconds=0)
    with pytest.raises(ApiException):
        core.read_namespaced_pod("bound", namespace)
