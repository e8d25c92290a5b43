"""minikube_py.testing.Cluster with real clients: sync and async, ports, kubectl, wait_for,
node failure, the controllers' clock, the failure report."""

from __future__ import annotations

import asyncio
import math
import shutil
import time

import pytest

from minikube_py.client.resources import CRONJOBS, JOBS, NAMESPACES, NODES, PODS
from minikube_py.testing import Cluster, WaitTimeout, phase
from minikube_py.testing.options import ClusterOptions, start_argv


def pod(name: str, command: str = "sleep 3600") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "command": ["sh", "-c", command]}],
                     "terminationGracePeriodSeconds": 0}}


def test_sync_cluster_serves_the_official_client_and_stops_cleanly() -> None:
    import kubernetes

    with Cluster(nodes=2) as c:
        assert c.url.startswith("http://127.0.0.1:") and not c.url.endswith(":8080")
        api = kubernetes.client.CoreV1Api(c.kubernetes_client())
        nodes = api.list_node().items
        assert sorted(n.metadata.name for n in nodes) == ["node-0", "node-1"]
        assert all(any(cond.type == "Ready" and cond.status == "True"
                       for cond in n.status.conditions) for n in nodes)
        url, data_dir = c.url, c.kubeconfig_path.parent
        api.api_client.close()
    assert not data_dir.exists()
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/healthz", timeout=2)


def test_two_clusters_at_once_get_their_own_ports() -> None:
    with Cluster(nodes=1) as a, Cluster(nodes=1) as b:
        assert a.url != b.url
        a.create_namespace("only-in-a")
        names = [n["metadata"]["name"] for n in b.run(b.client.list(NAMESPACES))["items"]]
        assert "only-in-a" not in names


async def test_async_cluster_runs_on_the_callers_loop() -> None:
    async with Cluster(nodes=1) as c:
        ns = (await c.create_namespace())["metadata"]["name"]
        await c.client.create(PODS, pod("p"), ns)
        running = await c.wait_for(PODS, "p", phase("Running"), namespace=ns)
        assert running["spec"]["nodeName"] == "node-0"
        api = await c.kubernetes_asyncio_client()
        try:
            from kubernetes_asyncio import client as k8s

            got = await k8s.CoreV1Api(api).read_namespaced_pod("p", ns)
            assert got.status.phase == "Running"
        finally:
            await api.close()
        # raw aiohttp, rooted at the API server
        async with c.http_session() as session, \
                session.get(f"/api/v1/namespaces/{ns}/pods/p") as resp:
            assert resp.status == 200 and (await resp.json())["status"]["phase"] == "Running"
        if shutil.which("kubectl"):  # an asyncio subprocess: the loop keeps serving meanwhile
            out = await c.kubectl("-n", ns, "get", "pod", "p", "-o", "name")
            assert out.stdout.strip() == "pod/p"


def test_wait_for_times_out_naming_the_condition_and_last_state() -> None:
    with Cluster(nodes=0, components=frozenset({"controller-manager"})) as c:
        ns = c.create_namespace()["metadata"]["name"]
        c.run(c.client.create(PODS, pod("stuck"), ns))  # no scheduler: stays Pending
        began = time.perf_counter()
        with pytest.raises(WaitTimeout) as failed:
            c.wait_for("pods", "stuck", "Ready", namespace=ns, timeout=0.3)
        assert 0.3 <= time.perf_counter() - began < 2
        assert "Pod " + ns + "/stuck: not condition Ready=True after 0.3 s" in str(failed.value)
        assert "phase Pending" in str(failed.value)
        assert failed.value.last["metadata"]["name"] == "stuck"


def test_kubectl_and_deletion_wait() -> None:
    with Cluster(nodes=1) as c:
        ns = c.create_namespace()["metadata"]["name"]
        c.kubectl("-n", ns, "run", "web", "--image=nginx")
        c.wait_for("pod", "web", "Ready", namespace=ns)
        out = c.kubectl("-n", ns, "get", "pod", "web", "-o", "jsonpath={.status.phase}")
        assert out.stdout == "Running"
        c.kubectl("-n", ns, "delete", "pod", "web", "--wait=false")
        assert c.wait_for("pod", "web", "deleted", namespace=ns) is None
        failed = c.kubectl("-n", ns, "get", "pod", "nope", check=False)
        assert failed.returncode == 1 and 'pods "nope" not found' in failed.stderr


def test_secure_cluster_kubeconfig_carries_ca_and_token() -> None:
    with Cluster(nodes=1, secure=True) as c:
        assert c.url.startswith("https://127.0.0.1:")
        assert c.token and c.ca_data and b"BEGIN CERTIFICATE" in c.ca_data
        assert "node-0" in c.kubectl("get", "nodes").stdout
        lk = c.lightkube_client()
        from lightkube.resources.core_v1 import Node

        assert [n.metadata.name for n in lk.list(Node)] == ["node-0"]

        async def raw() -> int:  # the session carries the CA and the admin token
            async with c.http_session() as session, session.get("/api/v1/nodes") as resp:
                return resp.status
        assert asyncio.run(raw()) == 200


def test_node_stop_makes_the_node_not_ready_and_start_brings_it_back() -> None:
    # the kubelets renew their Leases every 0.2 s; a node silent for 2 s is NotReady
    flags = {"node-monitor-grace-period": "2s", "node-monitor-period": "0.2s",
             "node-lease-renew-interval": "0.2s", "node-status-update-frequency": "0.2s"}
    with Cluster(nodes=2, flags=flags) as c:
        c.stop_node("node-1")
        c.wait_for(NODES, "node-1", lambda n: not _ready(n), timeout=10)
        assert _ready(c.run(c.client.get(NODES, "node-0")))
        c.start_node("node-1")
        c.wait_for(NODES, "node-1", "Ready", timeout=10)


def _ready(node: dict | None) -> bool:
    return any(x["type"] == "Ready" and x["status"] == "True"
               for x in ((node or {}).get("status") or {}).get("conditions") or ())


def test_advancing_the_clock_fires_a_cronjob_without_waiting_a_minute() -> None:
    with Cluster(nodes=1, controllers="cronjob,job") as c:
        ns = c.create_namespace()["metadata"]["name"]
        cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
                    "spec": {"containers": [{"name": "c", "image": "busybox",
                                             "command": ["true"]}],
                             "restartPolicy": "Never"}}}}}}
        c.run(c.client.create(CRONJOBS, cron, ns))
        time.sleep(0.2)
        assert c.run(c.client.list(JOBS, ns))["items"] == []
        now = c.clock()
        next_slot = math.floor(now / 300) * 300 + 300
        assert "cronjob" in c.advance_clock(next_slot - now + 1)
        c.wait_for(CRONJOBS, "tick", lambda cj: bool(((cj or {}).get("status") or {})
                                                      .get("lastScheduleTime")),
                   namespace=ns, timeout=5)
        jobs = c.run(c.client.list(JOBS, ns))["items"]
        assert len(jobs) == 1 and jobs[0]["metadata"]["name"].startswith("tick-")


def test_report_lists_events_and_writes_of_the_namespace_only() -> None:
    with Cluster(nodes=1) as c:
        other = c.create_namespace()["metadata"]["name"]
        created = c.create_namespace()
        ns, since = created["metadata"]["name"], int(created["metadata"]["resourceVersion"])
        c.run(c.client.create(PODS, pod("reported"), ns))
        c.run(c.client.create(PODS, pod("elsewhere"), other))
        c.wait_for(PODS, "reported", "Ready", namespace=ns)
        text = c.report(ns, since)
        assert f"/registry/pods/{ns}/reported" in text
        assert "create" in text and "update" in text
        assert "Scheduled" in text and "Pod/reported" in text
        assert "elsewhere" not in text


def test_a_bad_start_flag_is_a_value_error_not_an_exit() -> None:
    with pytest.raises(ValueError, match="unrecognized arguments: --no-such-flag"):
        Cluster(nodes=0, flags={"no-such-flag": "1"}).__enter__()
    from minikube_py.cli.storage_target import ConfigError

    with pytest.raises(ConfigError, match="--nodes: invalid"):  # start's own message
        Cluster(flags={"nodes": "many"}).__enter__()


def test_missing_component_is_a_clear_error() -> None:
    with Cluster(nodes=0, components=frozenset()) as c, \
            pytest.raises(RuntimeError, match="does not run the kubelet"):
        c.stop_node("node-0")


def test_options_map_onto_start_flags(tmp_path) -> None:
    argv = start_argv(ClusterOptions(nodes=5, components=frozenset({"kubelet"}),
                                     store="http://127.0.0.1:2379",
                                     flags={"node-heartbeat-mode": "status", "ingress": True}),
                      tmp_path, etcd_prefix="/x")
    assert argv[argv.index("--nodes") + 1] == "5"
    assert argv[argv.index("--etcd-servers") + 1] == "127.0.0.1:2379"
    assert "--data-dir" not in argv
    assert argv[argv.index("--disable") + 1] == "scheduler,controller-manager"
    assert argv[argv.index("--node-heartbeat-mode") + 1] == "status"
    assert "--ingress" in argv
    with pytest.raises(ValueError, match="unknown component 'etcd'"):
        ClusterOptions(components=frozenset({"etcd"}))
    with pytest.raises(ValueError, match="store must be"):
        ClusterOptions(store="nowhere")


def test_missing_client_library_names_the_package(monkeypatch) -> None:
    import sys

    from minikube_py.testing import MissingClientLibrary, clients

    monkeypatch.setitem(sys.modules, "lightkube", None)  # as if not installed
    with pytest.raises(MissingClientLibrary, match="pip install lightkube"):
        clients.lightkube_client(__import__("pathlib").Path("/nonexistent"))


def test_memory_store_uses_tmpfs_when_present() -> None:
    from pathlib import Path

    with Cluster(nodes=0, store="memory", components=frozenset()) as c:
        if Path("/dev/shm").is_dir():
            assert str(c.kubeconfig_path).startswith("/dev/shm/")
        assert asyncio.iscoroutinefunction(c.running.store.get)


@pytest.mark.etcd
def test_clusters_on_one_real_etcd_keep_apart(etcd_server) -> None:
    url = etcd_server.client_url
    with Cluster(nodes=1, store=url) as a, Cluster(nodes=0, store=url,
                                                    components=frozenset()) as b:
        assert a.running.backend == b.running.backend == "etcd"
        a.create_namespace("only-in-a")
        assert a.run(a.client.get(NAMESPACES, "only-in-a"))["status"]["phase"] == "Active"
        assert b.run(b.client.get_or_none(NAMESPACES, "only-in-a")) is None
        a.wait_for(NODES, "node-0", "Ready")
