"""`kubernetes_asyncio`, as its README and examples/ use it.

Against `minikube-py start` through its kubeconfig (HTTPS + token): the README's pod list,
examples/watch_namespaces.py (`watch.Watch().stream`, which sends `watch=True`),
examples/patch.py (create a Service, then JSON, strategic-merge and merge patches),
examples/create_deployment_from_yaml.py (utils.create_from_yaml), examples/pod_exec.py
(exec through `WsApiClient`) and examples/tail.py (logs, followed).
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

pytest.importorskip(
    "kubernetes_asyncio", reason="kubernetes_asyncio is not installed: pip install -e '.[test]'")
from kubernetes_asyncio import client, config, utils, watch
from kubernetes_asyncio.client.api_client import ApiClient
from kubernetes_asyncio.dynamic import DynamicClient
from kubernetes_asyncio.stream import WsApiClient

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


async def load(kubeconfig: Path) -> client.Configuration:
    """`await config.load_kube_config()`, as the README does, into a Configuration of its own."""
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig),
                                  client_configuration=configuration)
    return configuration


@pytest.fixture
async def api(kubeconfig: Path) -> AsyncIterator[ApiClient]:
    """`async with ApiClient()`: the README's way, sessions closed on exit."""
    async with ApiClient(await load(kubeconfig)) as api_client:
        yield api_client


@pytest.fixture
async def ws_api(kubeconfig: Path) -> AsyncIterator[WsApiClient]:
    """examples/pod_exec.py's WsApiClient, for exec."""
    async with WsApiClient(await load(kubeconfig)) as ws_client:
        yield ws_client


@pytest.fixture
async def pod(cluster: ClusterProcesses, api: ApiClient, namespace: str) -> str:
    await client.CoreV1Api(api).create_namespaced_pod(namespace, sleeper("busybox"))
    await asyncio.to_thread(wait_running, cluster, namespace, "busybox")
    return "busybox"


async def test_readme_list_pods(api: ApiClient, namespace: str, pod: str):
    async with asyncio.timeout(CALL_TIMEOUT):
        ret = await client.CoreV1Api(api).list_pod_for_all_namespaces()
    mine = [p for p in ret.items if p.metadata.namespace == namespace]
    assert [p.metadata.name for p in mine] == [pod] and mine[0].status.pod_ip


async def test_watch_namespaces_example(api: ApiClient, namespace: str):
    """`watch.Watch().stream(v1.list_namespace)` sends `watch=True`: it must stream."""
    v1 = client.CoreV1Api(api)
    w = watch.Watch()
    seen: set[str] = set()
    async with asyncio.timeout(CALL_TIMEOUT):
        async for event in w.stream(v1.list_namespace, timeout_seconds=CALL_TIMEOUT):
            assert event["type"] == "ADDED"
            seen.add(event["object"].metadata.name)
            if {namespace, "default", "kube-system"} <= seen:
                w.stop()
    await w.close()


async def test_watch_sees_changes(api: ApiClient, namespace: str):
    v1 = client.CoreV1Api(api)
    listed = await v1.list_namespaced_config_map(namespace)
    events = []

    async def follow() -> None:
        async with watch.Watch().stream(
                v1.list_namespaced_config_map, namespace,
                resource_version=listed.metadata.resource_version,
                timeout_seconds=CALL_TIMEOUT) as stream:
            async for event in stream:
                events.append((event["type"], event["object"].metadata.name))
                if event["type"] == "DELETED":
                    return

    async with asyncio.timeout(CALL_TIMEOUT):
        watcher = asyncio.create_task(follow())
        await v1.create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}})
        await v1.patch_namespaced_config_map("cm", namespace, {"data": {"a": "b"}})
        await v1.delete_namespaced_config_map("cm", namespace)
        await watcher
    assert events == [("ADDED", "cm"), ("MODIFIED", "cm"), ("DELETED", "cm")]


async def test_patch_example(api: ApiClient, namespace: str):
    """examples/patch.py: a Service patched with a JSON patch, a strategic-merge patch (ports
    merge by port) and a merge patch (the list replaced)."""
    v1 = client.CoreV1Api(api)
    spec = {
        "apiVersion": "v1", "kind": "Service",
        # the example's "resourceversion" is an unknown field: dropped, with a warning
        "metadata": {"labels": {"name": "example-service"}, "name": "example-service",
                     "resourceversion": "v1"},
        "spec": {"ports": [{"name": "port-80", "port": 80, "protocol": "TCP", "targetPort": 80}],
                 "selector": {"name": "example-service"}},
    }
    async with asyncio.timeout(CALL_TIMEOUT):
        _, code, headers = await v1.create_namespaced_service_with_http_info(namespace, spec)
        assert code == 201
        assert headers.getall("Warning") == ['299 - "unknown field \\"metadata.resourceversion\\""']
        await v1.patch_namespaced_service("example-service", namespace, [
            {"op": "replace", "path": "/spec/ports/0",
             "value": {"name": "port-1000", "protocol": "TCP", "port": 1000, "targetPort": 1000}}])
        svc = await v1.patch_namespaced_service("example-service", namespace, {"spec": {"ports": [
            {"name": "port-2000", "protocol": "TCP", "port": 2000, "targetPort": 2000}]}})
        assert sorted(p.name for p in svc.spec.ports) == ["port-1000", "port-2000"]
        svc = await v1.patch_namespaced_service(
            "example-service", namespace, {"spec": {"ports": [
                {"name": "port-3000", "protocol": "TCP", "port": 3000, "targetPort": 3000}]}},
            _content_type="application/merge-patch+json")
    assert [p.name for p in svc.spec.ports] == ["port-3000"]

    async with asyncio.timeout(CALL_TIMEOUT):
        await v1.delete_namespaced_service("example-service", namespace)
        with pytest.raises(client.exceptions.ApiException) as info:
            await v1.read_namespaced_service("example-service", namespace)
    assert info.value.status == 404


async def test_dynamic_client_configmap_example(api: ApiClient, namespace: str):
    """examples/dynamic-client/configmap.py: discovery, create, get, patch, delete."""
    dyn = await DynamicClient(api)
    cms = await dyn.resources.get(api_version="v1", kind="ConfigMap")
    manifest = {
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "test-configmap", "labels": {"foo": "bar"}},
        "data": {"config.json": '{"command":"/usr/bin/mysqld_safe"}',
                 "frontend.cnf": "[mysqld]\nbind-address = 10.0.0.3\n"},
    }
    async with asyncio.timeout(CALL_TIMEOUT):
        await cms.create(body=manifest, namespace=namespace)
        got = await cms.get(name="test-configmap", namespace=namespace, label_selector="foo=bar")
        assert got.metadata.name == "test-configmap"
        manifest["data"]["config.json"] = "{}"
        patched = await cms.patch(name="test-configmap", namespace=namespace, body=manifest)
        assert patched.data["config.json"] == "{}"
        deleted = await cms.delete(name="test-configmap", body={}, namespace=namespace)
        # a ConfigMap is deleted at once and its store has no ReturnDeletedObject: a Status
        assert deleted.kind == "Status" and deleted.status == "Success"
        assert deleted.details.name == "test-configmap" and deleted.details.kind == "configmaps"
        # this client's dynamic layer reads responses unpreloaded and so does not raise on an
        # error status: it hands back the Status body
        gone = await cms.get(name="test-configmap", namespace=namespace)
    assert (gone.kind, gone.code, gone.reason) == ("Status", 404, "NotFound")


async def test_create_from_yaml_example(cluster: ClusterProcesses, api: ApiClient,
                                        namespace: str, tmp_path: Path):
    manifest = tmp_path / "nginx-deployment.yaml"
    manifest.write_text(NGINX_DEPLOYMENT)
    async with asyncio.timeout(CALL_TIMEOUT):
        created = await utils.create_from_yaml(api, str(manifest), namespace=namespace)
    assert [type(obj).__name__ for group in created for obj in group] == [
        "V1Deployment", "V1Service"]
    apps = client.AppsV1Api(api)

    async def available() -> None:
        while (await apps.read_namespaced_deployment_status(
                "nginx-deployment", namespace)).status.available_replicas != 2:
            await asyncio.sleep(0.1)
    async with asyncio.timeout(CALL_TIMEOUT):
        await available()


async def test_pod_exec_example(ws_api: WsApiClient, namespace: str, pod: str):
    """examples/pod_exec.py: exec through WsApiClient (sends `stdout=True`, `stdin=False`)."""
    v1_ws = client.CoreV1Api(api_client=ws_api)
    async with asyncio.timeout(CALL_TIMEOUT):
        resp = await v1_ws.connect_get_namespaced_pod_exec(
            pod, namespace, command=["/bin/sh", "-c", "echo This message goes to stdout"],
            stderr=True, stdin=False, stdout=True, tty=False)
    assert resp == "This message goes to stdout\n"


async def test_pod_exec_stderr_redirect_example(ws_api: WsApiClient, namespace: str, pod: str):
    """The example's exact command, with `>&2` (the simulated shell's redirections)."""
    v1_ws = client.CoreV1Api(api_client=ws_api)
    async with asyncio.timeout(CALL_TIMEOUT):
        resp = await v1_ws.connect_get_namespaced_pod_exec(
            pod, namespace,
            command=["/bin/sh", "-c",
                     "echo This message goes to stderr >&2; echo This message goes to stdout"],
            stderr=True, stdin=False, stdout=True, tty=False)
    assert sorted(resp.splitlines()) == ["This message goes to stderr",
                                         "This message goes to stdout"]


async def test_pod_exec_interactive_and_exit_code(ws_api: WsApiClient, namespace: str,
                                                  pod: str):
    """`_preload_content=False` gives the aiohttp WebSocket: stdin on channel 0, the exit
    status as a Status on channel 3 (WsApiClient.parse_error_data)."""
    v1_ws = client.CoreV1Api(api_client=ws_api)
    out, error = b"", b""
    async with asyncio.timeout(CALL_TIMEOUT):
        ws = await v1_ws.connect_get_namespaced_pod_exec(
            pod, namespace, command=["sh"], stderr=True, stdin=True, stdout=True, tty=False,
            _preload_content=False)
        async with ws as session:
            await session.send_bytes(b"\x00echo interactive\nexit 5\n")
            async for msg in session:
                channel, data = msg.data[0], msg.data[1:]
                if channel == 1:
                    out += data
                elif channel == 3:
                    error += data
    assert out == b"interactive\n"
    assert WsApiClient.parse_error_data(error) == 5
    assert json.loads(error)["reason"] == "NonZeroExitCode"


async def test_tail_example(api: ApiClient, namespace: str, pod: str):
    v1 = client.CoreV1Api(api)
    async with asyncio.timeout(CALL_TIMEOUT):
        log = await v1.read_namespaced_pod_log(pod, namespace, container="main", tail_lines=10)
    assert log == "started\n"


async def test_tail_follow_example(cluster: ClusterProcesses, api: ApiClient, namespace: str):
    """examples/tail.py -f: `follow=True, _preload_content=False`, then readline() as the
    container prints."""
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod(namespace, ticker("ticker"))
    await asyncio.to_thread(wait_running, cluster, namespace, "ticker")
    async with asyncio.timeout(CALL_TIMEOUT):
        resp = await v1.read_namespaced_pod_log("ticker", namespace, container="main",
                                                tail_lines=10, follow=True,
                                                _preload_content=False)
        try:
            lines = [await resp.content.readline() for _ in range(3)]
        finally:
            resp.release()
    assert lines == [b"started\n", b"tick\n", b"tick\n"]


async def test_errors_are_api_exceptions(api: ApiClient, namespace: str):
    v1 = client.CoreV1Api(api)
    async with asyncio.timeout(CALL_TIMEOUT):
        with pytest.raises(client.exceptions.ApiException) as info:
            await v1.read_namespaced_pod("missing", namespace)
    assert info.value.status == 404
    assert json.loads(info.value.body)["details"] == {"name": "missing", "kind": "pods"}
