"""The official `kubernetes` Python client (sync), as its README and examples/ use it.

Against `minikube-py start` through its kubeconfig (HTTPS + token): the README's list and
namespace watch, examples/deployment_crud.py (create, patch the image, delete in the
foreground), utils.create_from_yaml, examples/pod_exec.py (one-shot exec, an interactive
shell with stdin as TEXT frames, and `binary=True` with BINARY frames), and pod logs.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client, config, utils, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.stream import portforward, stream
from kubernetes.stream.ws_client import WSClient

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    NGINX_DEPLOYMENT,
    STOP_TIMEOUT,
    cluster,
    deadline,
    kubeconfig,
    namespace,
    send,
    sleeper,
    stop_within,
    ticker,
    wait_running,
)
from tests.e2e.cluster_process import ClusterProcesses


@pytest.fixture(scope="module")
def api(kubeconfig: Path) -> client.ApiClient:
    """`config.load_kube_config()` as the README does, on the cluster's kubeconfig."""
    with config.new_client_from_config(config_file=str(kubeconfig)) as api_client:
        yield api_client


@pytest.fixture
def pod(cluster: ClusterProcesses, api: client.ApiClient, namespace: str) -> str:
    """A running pod to exec into and read logs from."""
    client.CoreV1Api(api).create_namespaced_pod(namespace, sleeper("shell"),
                                                _request_timeout=CALL_TIMEOUT)
    wait_running(cluster, namespace, "shell")
    return "shell"


def test_readme_list_pods_for_all_namespaces(api: client.ApiClient, namespace: str,
                                             pod: str):
    ret = client.CoreV1Api(api).list_pod_for_all_namespaces(watch=False,
                                                            _request_timeout=CALL_TIMEOUT)
    mine = [p for p in ret.items if p.metadata.namespace == namespace]
    assert [p.metadata.name for p in mine] == [pod]
    assert mine[0].status.pod_ip


def test_readme_watch_namespaces(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    w = watch.Watch()
    seen = []
    for event in w.stream(core.list_namespace, timeout_seconds=CALL_TIMEOUT,
                          _request_timeout=CALL_TIMEOUT):
        seen.append((event["type"], event["object"].metadata.name))
        if {namespace, "default", "kube-system"} <= {name for _, name in seen}:
            w.stop()
    assert ("ADDED", namespace) in seen
    assert {"default", "kube-system"} <= {name for _, name in seen}


def test_watch_resumes_from_resource_version(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    listed = core.list_namespaced_config_map(namespace, _request_timeout=CALL_TIMEOUT)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "one"}, "data": {"k": "1"}})
    core.patch_namespaced_config_map("one", namespace, {"data": {"k": "2"}})
    core.delete_namespaced_config_map("one", namespace)
    w = watch.Watch()
    events = []
    for event in w.stream(core.list_namespaced_config_map, namespace,
                          resource_version=listed.metadata.resource_version,
                          timeout_seconds=CALL_TIMEOUT, _request_timeout=CALL_TIMEOUT):
        events.append((event["type"], (event["object"].data or {}).get("k")))
        if event["type"] == "DELETED":
            w.stop()
    assert events == [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "2")]


def test_deployment_crud_example(cluster: ClusterProcesses, api: client.ApiClient,
                                 namespace: str):
    """examples/deployment_crud.py: create, patch the image, delete in the foreground."""
    apps = client.AppsV1Api(api)
    container = client.V1Container(
        name="nginx", image="nginx:1.15.4", ports=[client.V1ContainerPort(container_port=80)],
        resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "200Mi"},
                                                limits={"cpu": "500m", "memory": "500Mi"}))
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "nginx"}),
        spec=client.V1PodSpec(containers=[container]))
    deployment = client.V1Deployment(
        api_version="apps/v1", kind="Deployment",
        metadata=client.V1ObjectMeta(name="deployment-example"),
        spec=client.V1DeploymentSpec(replicas=3, template=template,
                                     selector={"matchLabels": {"app": "nginx"}}))
    created = apps.create_namespaced_deployment(namespace, deployment,
                                                _request_timeout=CALL_TIMEOUT)
    assert created.spec.strategy.type == "RollingUpdate"

    # the example patches with its local object (no resourceVersion: no precondition)
    deployment.spec.template.spec.containers[0].image = "nginx:1.16.0"
    patched = apps.patch_namespaced_deployment("deployment-example", namespace, deployment)
    assert patched.spec.template.spec.containers[0].image == "nginx:1.16.0"
    assert patched.metadata.generation == 2

    def rolled_out():
        d = apps.read_namespaced_deployment_status("deployment-example", namespace)
        return (d.status.updated_replicas == 3 and d.status.ready_replicas == 3
                and d.status.observed_generation == 2)
    cluster.wait(rolled_out, CALL_TIMEOUT, "deployment rolled out")

    status = apps.delete_namespaced_deployment(
        "deployment-example", namespace,
        body=client.V1DeleteOptions(propagation_policy="Foreground", grace_period_seconds=5))
    # foreground: 200 with the object itself (the API's declared type is `object`: a dict)
    assert status["kind"] == "Deployment" and status["metadata"]["deletionTimestamp"]
    assert status["metadata"]["finalizers"] == ["foregroundDeletion"]

    def gone():
        try:
            apps.read_namespaced_deployment("deployment-example", namespace)
        except ApiException as exc:
            return exc.status == 404
        return False
    cluster.wait(gone, CALL_TIMEOUT, "deployment deleted")


def test_create_from_yaml(cluster: ClusterProcesses, api: client.ApiClient, namespace: str,
                          tmp_path: Path):
    manifest = tmp_path / "nginx-deployment.yaml"
    manifest.write_text(NGINX_DEPLOYMENT)
    created = utils.create_from_yaml(api, str(manifest), namespace=namespace)
    kinds = [type(obj).__name__ for group in created for obj in group]
    assert kinds == ["V1Deployment", "V1Service"]
    assert created[1][0].spec.cluster_ip

    apps = client.AppsV1Api(api)
    cluster.wait(lambda: apps.read_namespaced_deployment(
        "nginx-deployment", namespace).status.available_replicas == 2, CALL_TIMEOUT,
        "two nginx replicas available")
    with pytest.raises(utils.FailToCreateError) as info:
        utils.create_from_yaml(api, str(manifest), namespace=namespace)
    assert {e.status for e in info.value.api_exceptions} == {409}


def test_dynamic_client(api: client.ApiClient, namespace: str):
    """README's dynamic client: discovery, then create, get, patch and server-side apply."""
    dyn = DynamicClient(api)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    assert (cms.name, cms.namespaced) == ("configmaps", True)
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.subresources["scale"].kind == "Scale"
    cms.create(body={"metadata": {"name": "d"}, "data": {"a": "1"}}, namespace=namespace)
    assert cms.get(name="d", namespace=namespace).data.to_dict() == {"a": "1"}
    cms.patch(body={"data": {"c": "3"}}, name="d", namespace=namespace,
              content_type="application/merge-patch+json")
    applied = cms.server_side_apply(
        body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"},
              "data": {"b": "2"}},
        namespace=namespace, field_manager="me")
    # the other managers' keys stay: apply owns only what it sets
    assert applied.data.to_dict() == {"a": "1", "b": "2", "c": "3"}
    assert {m.manager: m.operation for m in applied.metadata.managedFields}["me"] == "Apply"


def test_pod_exec_one_shot(api: client.ApiClient, namespace: str, pod: str):
    """examples/pod_exec.py, first part: a command, its output as one string."""
    core = client.CoreV1Api(api)
    resp = stream(core.connect_get_namespaced_pod_exec, pod, namespace,
                  command=["/bin/sh", "-c",
                           "echo This message goes to stderr; echo This message goes to stdout"],
                  stderr=True, stdin=False, stdout=True, tty=False,
                  _request_timeout=CALL_TIMEOUT)
    assert resp == "This message goes to stderr\nThis message goes to stdout\n"


def test_pod_exec_separates_stderr_and_exit_code(api: client.ApiClient, namespace: str,
                                                 pod: str):
    core = client.CoreV1Api(api)
    resp = stream(core.connect_get_namespaced_pod_exec, pod, namespace,
                  command=["sh", "-c", "echo out; ls /nonexistent; exit 3"],
                  stderr=True, stdin=False, stdout=True, tty=False,
                  _preload_content=False)
    resp.run_forever(timeout=CALL_TIMEOUT)
    assert resp.read_stdout() == "out\n"
    assert "nonexistent" in resp.read_stderr()
    assert resp.returncode == 3


def interactive(api: client.ApiClient, namespace: str, pod: str, command: list[str], *,
                binary: bool = False) -> WSClient:
    """An exec session as examples/pod_exec.py opens it: stdin, stdout and stderr, no tty,
    `_preload_content=False` (binary=True: bytes in and out, BINARY frames)."""
    return stream(client.CoreV1Api(api).connect_get_namespaced_pod_exec, pod, namespace,
                  command=command, stderr=True, stdin=True, stdout=True, tty=False,
                  _preload_content=False, binary=binary)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_pod_exec_interactive(api: client.ApiClient, namespace: str, pod: str, binary: bool):
    """examples/pod_exec.py, second part: `sh` fed line by line — str stdin goes as TEXT
    frames; with `binary=True`, bytes go as BINARY frames and come back as bytes."""
    encode = str.encode if binary else str
    resp = interactive(api, namespace, pod, ["/bin/sh"], binary=binary)
    try:
        resp.write_stdin(encode("echo This message goes to stdout\n"))
        assert resp.readline_stdout(timeout=5) == encode("This message goes to stdout")
        resp.write_stdin(encode("whoami\n"))
        assert resp.readline_stdout(timeout=5) == encode("root")
        resp.write_stdin(encode("exit 4\n"))
        resp.run_forever(timeout=5)
        assert resp.returncode == 4
    finally:
        resp.close()


def test_pod_exec_binary_stdin_round_trip(api: client.ApiClient, namespace: str, pod: str):
    """Every byte value through `cat` in binary mode, stdin ended by v5's close signal."""
    resp = interactive(api, namespace, pod, ["cat"], binary=True)
    try:
        assert resp.subprotocol == "v5.channel.k8s.io"
        data = bytes(range(256)) * 4
        resp.write_stdin(data)
        resp.close_channel(0)
        resp.run_forever(timeout=CALL_TIMEOUT)
        assert resp.read_stdout() == data
        assert resp.returncode == 0
    finally:
        resp.close()


def test_pod_exec_cat_echoes_without_newline(api: client.ApiClient, namespace: str, pod: str):
    resp = interactive(api, namespace, pod, ["cat"], binary=True)
    try:
        resp.write_stdin(b"no newline")
        out = b""
        deadline = time.monotonic() + 3
        while out != b"no newline" and time.monotonic() < deadline:
            resp.update(timeout=0.5)
            out += resp.read_stdout(timeout=0) or b""
        assert out == b"no newline"
    finally:
        resp.close()


def test_pod_exec_binary_one_shot_returns_bytes(api: client.ApiClient, namespace: str,
                                                pod: str):
    core = client.CoreV1Api(api)
    resp = stream(core.connect_get_namespaced_pod_exec, pod, namespace,
                  command=["echo", "bytes"], stderr=True, stdin=False, stdout=True, tty=False,
                  binary=True, _request_timeout=CALL_TIMEOUT)
    assert resp == b"bytes\n"


def test_pod_logs(api: client.ApiClient, namespace: str, pod: str):
    core = client.CoreV1Api(api)
    log = core.read_namespaced_pod_log(pod, namespace, _request_timeout=CALL_TIMEOUT)
    assert log.splitlines()[0] == "started"
    assert core.read_namespaced_pod_log(pod, namespace, container="main", tail_lines=1,
                                        _request_timeout=CALL_TIMEOUT).count("\n") == 1


def test_pod_logs_follow_with_watch(cluster: ClusterProcesses, api: client.ApiClient,
                                    namespace: str):
    """`watch.Watch().stream(read_namespaced_pod_log, ...)` yields the log line by line, new
    lines as the container prints them."""
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(namespace, ticker("ticker"), _request_timeout=CALL_TIMEOUT)
    wait_running(cluster, namespace, "ticker")
    w = watch.Watch()
    lines = []
    for line in w.stream(core.read_namespaced_pod_log, name="ticker", namespace=namespace,
                         _request_timeout=CALL_TIMEOUT):
        lines.append(line)
        if len(lines) == 3:
            w.stop()
    assert lines == ["started", "tick", "tick"]


def test_port_forward_example(cluster: ClusterProcesses, api: client.ApiClient,
                              namespace: str):
    """examples/pod_portforward.py: `portforward(...)`, then an HTTP request on the socket."""
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(namespace, {
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx",
                                 "ports": [{"containerPort": 80}]}]}})
    wait_running(cluster, namespace, "web")
    pf = portforward(core.connect_get_namespaced_pod_portforward, "web", namespace, ports="80",
                     _request_timeout=CALL_TIMEOUT)
    try:
        sock = pf.socket(80)
        sock.settimeout(5)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        response = b""
        while chunk := sock.recv(1024):
            response += chunk
        sock.close()
        assert response.startswith(b"HTTP/1.1 200 OK")
        assert pf.error(80) is None
    finally:
        pf.close()


def test_list_pagination(api: client.ApiClient, namespace: str):
    """`limit` and `_continue`: chunks of a list, as client-go's pager asks for them."""
    core = client.CoreV1Api(api)
    for i in range(5):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": f"page-{i}"}})
    names, token = [], None
    while True:
        page = core.list_namespaced_config_map(namespace, limit=2, _continue=token,
                                               _request_timeout=CALL_TIMEOUT)
        assert len(page.items) <= 2
        names += [cm.metadata.name for cm in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count > 0
    assert [n for n in names if n.startswith("page-")] == [f"page-{i}" for i in range(5)]


def test_delete_answers_a_success_status(api: client.ApiClient, namespace: str):
    """Upstream's Store.finalizeDelete: kinds without ReturnDeletedObject answer a Success
    Status whose details name the resource (`kind` is the resource, as upstream sets it)."""
    core = client.CoreV1Api(api)
    created = core.create_namespaced_config_map(namespace, {"metadata": {"name": "gone"}})
    status = core.delete_namespaced_config_map("gone", namespace, _request_timeout=CALL_TIMEOUT)
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {"name": "gone", "kind": "configmaps",
                                 "uid": created.metadata.uid}


def test_not_found_is_an_api_exception_with_status(api: client.ApiClient, namespace: str):
    with pytest.raises(ApiException) as info:
        client.CoreV1Api(api).read_namespaced_pod("missing", namespace,
                                                  _request_timeout=CALL_TIMEOUT)
    assert info.value.status == 404
    assert info.value.reason == "Not Found"
    assert '"reason":"NotFound"' in info.value.body


def test_abandoned_log_follower_does_not_hold_the_server(tmp_path: Path):
    """Follow a quiet container's log, read a line, go away (as `kubectl logs -f` on ^C or a
    script that stops reading): the server must let go of the stream, so SIGTERM ends it."""
    procs = ClusterProcesses(tmp_path, nodes=1).start()
    try:
        send(procs, "POST", "/api/v1/namespaces/default/pods", sleeper("quiet"))
        wait_running(procs, "default", "quiet")
        with config.new_client_from_config(config_file=str(tmp_path / "kubeconfig")) as api:
            resp = client.CoreV1Api(api).read_namespaced_pod_log(
                "quiet", "default", follow=True, _preload_content=False,
                _request_timeout=CALL_TIMEOUT)
            assert resp.readline() == b"started\n"
            resp.close()
        time.sleep(1)  # the connection is closed: upstream has let go of the stream by now
    finally:
        exited = stop_within(procs, STOP_TIMEOUT)
    assert exited, f"minikube-py start still running {STOP_TIMEOUT} s after SIGTERM"
