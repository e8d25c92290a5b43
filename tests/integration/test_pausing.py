"""Pausing components in a running all-in-one (minikube_py/pausing.py): the scheduler stops
taking pods (they pile up Pending, the queue's gauge rises) and schedules them on resume; the
ReplicaSet controller ignores a `kubectl scale` until resumed; `/debug/components` over the
secure port (401 without credentials, 404 Status for an unknown component) and
`minikube-py component` over a real socket."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import REGISTRY as PROMETHEUS

from minikube_py.cli.main import main
from minikube_py.client.resources import NODES, PODS, REPLICASETS
from minikube_py.controllers.options import ALL_CONTROLLERS
from minikube_py.testing import Cluster

CLI = [sys.executable, "-m", "minikube_py.cli.main"]
#: long enough for a running component to have acted (scheduling or syncing takes ms here)
SETTLE = 1.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=2, secure=True) as c:
        yield c


def call(cluster: Cluster, method: str, path: str, *, token: str | None = "admin"
         ) -> tuple[int, Any]:
    """One request over the secure port's socket; (status, decoded JSON body)."""
    context = ssl.create_default_context(cadata=cluster.ca_data.decode())
    request = urllib.request.Request(cluster.url + path, method=method, data=b"" if method ==
                                     "POST" else None)
    if token is not None:
        bearer = cluster.token if token == "admin" else token
        request.add_header("Authorization", f"Bearer {bearer}")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, body.decode()


def pending_gauge(queue: str = "active") -> float:
    return PROMETHEUS.get_sample_value("scheduler_pending_pods", {"queue": queue}) or 0.0


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def pods_in(cluster: Cluster, namespace: str) -> list[dict]:
    return cluster.run(cluster.client.list(PODS, namespace))["items"]


def wait_until(check: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s")
        time.sleep(0.05)


def test_every_controller_and_the_scheduler_have_a_gate(cluster: Cluster) -> None:
    status, doc = call(cluster, "GET", "/debug/components")
    assert status == 200
    names = {c["name"]: c for c in doc["components"]}
    assert set(names) == {"scheduler", *ALL_CONTROLLERS}
    assert names["scheduler"]["kind"] == "scheduler"
    assert names["replicaset"] == {"name": "replicaset", "kind": "controller", "paused": False,
                                   "since": names["replicaset"]["since"]}
    assert [c["name"] for c in doc["components"]] == sorted(names)
    assert cluster.running.pauses.get("nodelifecycle").kind == "controller"


def test_paused_scheduler_leaves_pods_pending_until_resumed(cluster: Cluster) -> None:
    namespace = cluster.create_namespace()["metadata"]["name"]
    status, doc = call(cluster, "POST", "/debug/components/scheduler/pause")
    assert (status, doc["name"], doc["paused"]) == (200, "scheduler", True)
    try:
        before = pending_gauge()
        for i in range(4):
            cluster.run(cluster.client.create(PODS, pod(f"p{i}"), namespace))
        # the informers keep feeding the queue: its gauge rises by every pod
        wait_until(lambda: pending_gauge() == before + 4)
        time.sleep(SETTLE)
        assert [p["spec"].get("nodeName") for p in pods_in(cluster, namespace)] == [None] * 4
        assert call(cluster, "GET", "/debug/components/scheduler")[1]["paused"] is True
    finally:
        status, doc = call(cluster, "POST", "/debug/components/scheduler/resume")
    assert (status, doc["paused"]) == (200, False)
    wait_until(lambda: all(p["spec"].get("nodeName") for p in pods_in(cluster, namespace)))
    assert pending_gauge() == 0


def test_paused_replicaset_controller_ignores_a_scale_until_resumed(cluster: Cluster) -> None:
    namespace = cluster.create_namespace()["metadata"]["name"]
    labels = {"app": "web"}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
          "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                   "template": {"metadata": {"labels": labels},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    cluster.run(cluster.client.create(REPLICASETS, rs, namespace))
    wait_until(lambda: len(pods_in(cluster, namespace)) == 1)
    assert call(cluster, "POST", "/debug/components/replicaset/pause")[0] == 200
    try:
        cluster.kubectl("scale", "replicaset/web", "--replicas=3", "-n", namespace)
        time.sleep(SETTLE)
        assert len(pods_in(cluster, namespace)) == 1
    finally:
        assert call(cluster, "POST", "/debug/components/replicaset/resume")[0] == 200
    wait_until(lambda: len(pods_in(cluster, namespace)) == 3)


def test_unknown_component_or_action_is_a_404_status(cluster: Cluster) -> None:
    status, doc = call(cluster, "POST", "/debug/components/kube-proxy/pause")
    assert status == 404
    assert doc == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": 'components "kube-proxy" not found', "reason": "NotFound",
                   "details": {"name": "kube-proxy", "kind": "components"}, "code": 404}
    status, doc = call(cluster, "POST", "/debug/components/scheduler/stop")
    assert (status, doc["reason"]) == (404, "NotFound")
    assert call(cluster, "GET", "/debug/components/scheduler")[1]["paused"] is False


def test_debug_components_needs_credentials(cluster: Cluster) -> None:
    status, _ = call(cluster, "GET", "/debug/components", token=None)
    assert status == 401
    status, _ = call(cluster, "POST", "/debug/components/scheduler/pause",
                     token=f"bogus-{uuid.uuid4().hex}")
    assert status == 401
    assert call(cluster, "GET", "/debug/components/scheduler")[1]["paused"] is False


def cli(cluster: Cluster, *args: str) -> subprocess.CompletedProcess:
    """`minikube-py component ...` as a user runs it: a process of its own."""
    return subprocess.run([*CLI, "component", *args, "--kubeconfig",
                           str(cluster.kubeconfig_path)], capture_output=True, text=True,
                          timeout=30)


def cli_here(cluster: Cluster, capsys: pytest.CaptureFixture, *args: str
             ) -> tuple[int, str, str]:
    """The same command run in this process (its own loop, the same socket; no start-up
    cost): (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main(["component", *args, "--kubeconfig", str(cluster.kubeconfig_path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_lists_pauses_and_resumes(cluster: Cluster, capsys: pytest.CaptureFixture) -> None:
    done = cli(cluster, "pause", "deployment")
    assert (done.returncode, done.stdout) == (0, "component deployment: paused\n"), done.stderr
    try:
        assert cluster.running.pauses.get("deployment").paused
        code, out, err = cli_here(cluster, capsys, "list")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].split() == ["NAME", "KIND", "STATUS", "SINCE"]
        rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
        assert rows["deployment"] == ["controller", "Paused"]
        assert rows["scheduler"] == ["scheduler", "Running"]
    finally:
        code, out, err = cli_here(cluster, capsys, "resume", "deployment")
    assert (code, out) == (0, "component deployment: resumed\n"), err
    assert not cluster.running.pauses.get("deployment").paused
    code, _, err = cli_here(cluster, capsys, "pause", "kube-proxy")
    assert code == 1
    assert 'component kube-proxy: components "kube-proxy" not found' in err
    code, _, err = cli_here(cluster, capsys, "pause")
    assert code == 1 and "which component?" in err


#: a monitor pass and grace period short enough to see a silent node judged (the node monitor
#: uses real time: testing/clock.py does not move it)
GRACE = 1.5


@pytest.fixture(scope="module")
def legacy() -> Iterator[Cluster]:
    """A second cluster in this process: the v1.x scheduler (--algorithm-provider), one node,
    a fast node monitor."""
    with Cluster(nodes=1, controllers="nodelifecycle,serviceaccount",
                 flags={"algorithm-provider": "DefaultProvider", "node-monitor-period": "200ms",
                        "node-monitor-grace-period": f"{GRACE}s",
                        "node-status-update-frequency": "200ms"}) as c:
        yield c


def test_v1x_scheduler_pauses_and_clusters_do_not_share_gates(cluster: Cluster,
                                                               legacy: Cluster) -> None:
    """The v1.x loop pauses too; the second cluster has its own `scheduler` gate, untouched
    by the first's."""
    assert legacy.running.component("scheduler").handle.framework is None
    gate = legacy.running.pauses.get("scheduler")
    assert gate is not cluster.running.pauses.get("scheduler")
    namespace = legacy.create_namespace()["metadata"]["name"]
    gate.pause()
    assert not cluster.running.pauses.get("scheduler").paused
    try:
        for i in range(2):
            legacy.run(legacy.client.create(PODS, pod(f"p{i}"), namespace))
        wait_until(lambda: pending_gauge() >= 2)
        time.sleep(SETTLE)
        assert [p["spec"].get("nodeName") for p in pods_in(legacy, namespace)] == [None] * 2
    finally:
        gate.resume()
    wait_until(lambda: all(p["spec"].get("nodeName") for p in pods_in(legacy, namespace)))


def ready(node: dict | None) -> str | None:
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "Ready"), None)


def test_paused_node_lifecycle_controller_does_not_judge_a_silent_node(legacy: Cluster
                                                                         ) -> None:
    """A controller whose work is a periodic pass (the node monitor), not a queue, waits at
    the top of each pass while paused. (Runs last on `legacy`: its node stays stopped.)"""
    (name,) = legacy.node_names
    gate = legacy.running.pauses.get("nodelifecycle")
    gate.pause()
    try:
        legacy.stop_node(name)
        time.sleep(GRACE + SETTLE)  # silent past the grace period
        assert ready(legacy.run(legacy.client.get(NODES, name))) == "True"
    finally:
        gate.resume()
    legacy.wait_for(NODES, name, lambda n: ready(n) == "Unknown", timeout=10)
