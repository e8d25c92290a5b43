"""Simulated containers through the real kubectl against `minikube-py start` as a subprocess:
`kubectl run ... -- echo hi` logs `hi` and succeeds, deleting a server pod takes about a
second, a `sleep` that ignores SIGTERM takes its grace period, and a request through the pod's
proxy is an access line in `kubectl logs`."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import pytest

from tests.e2e import cluster_process
from tests.e2e.cluster_process import KUBECTL, ClusterProcesses

pytestmark = pytest.mark.slow

SLEEPER = """apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  terminationGracePeriodSeconds: 3
  containers: [{name: sleeper, image: busybox, command: [sleep, "3600"]}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    if not os.path.exists(KUBECTL):
        pytest.skip(f"kubectl not found at {KUBECTL}")
    # the pods' own grace periods: without the suite's --max-termination-grace-period cap
    timings, cluster_process.TIMINGS = cluster_process.TIMINGS, [
        t for t in cluster_process.TIMINGS if t not in ("--max-termination-grace-period", "500ms")]
    try:
        procs = ClusterProcesses(tmp_path_factory.mktemp("containers"), nodes=1).start()
    finally:
        cluster_process.TIMINGS = timings
    try:
        yield procs
    finally:
        procs.stop()


def phase(cluster: ClusterProcesses, name: str) -> str | None:
    return cluster.get(f"/api/v1/namespaces/default/pods/{name}").get("status", {}).get("phase")


def timed_delete(cluster: ClusterProcesses, name: str) -> float:
    started = time.monotonic()
    cluster.kubectl("delete", "pod", name, timeout=60)  # waits until the pod is gone
    return time.monotonic() - started


def test_run_echo_logs_hi_and_succeeds(cluster: ClusterProcesses) -> None:
    cluster.kubectl("run", "hi", "--image=busybox", "--restart=Never", "--", "echo", "hi")
    cluster.wait(lambda: phase(cluster, "hi") == "Succeeded", what="pod hi Succeeded")
    assert cluster.kubectl("logs", "hi").stdout == "hi\n"


def test_delete_a_server_pod_takes_about_a_second(cluster: ClusterProcesses) -> None:
    cluster.kubectl("run", "nginx", "--image=nginx")
    cluster.wait(lambda: phase(cluster, "nginx") == "Running", what="pod nginx Running")
    assert timed_delete(cluster, "nginx") < 2.5


def test_a_sleep_that_ignores_sigterm_takes_its_grace_period(cluster: ClusterProcesses) -> None:
    cluster.kubectl("apply", "-f", "-", input=SLEEPER)
    cluster.wait(lambda: phase(cluster, "sleeper") == "Running", what="pod sleeper Running")
    took = timed_delete(cluster, "sleeper")
    assert 2.8 <= took < 6, took


def test_a_request_through_the_proxy_is_an_access_line_in_kubectl_logs(
        cluster: ClusterProcesses) -> None:
    cluster.kubectl("run", "web", "--image=nginx", "--port=80")
    cluster.wait(lambda: phase(cluster, "web") == "Running", what="pod web Running")
    answer = cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web:80/proxy/hello")
    assert answer.stdout.startswith("pod web (")
    logs = cluster.kubectl("logs", "web").stdout
    assert logs.startswith("container web of pod default/web started\n")
    access = [line for line in logs.splitlines() if '"GET /hello' in line]
    assert len(access) == 1, logs
    assert re.fullmatch(r'\S+ - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] '
                        r'"GET /hello HTTP/1\.1" 200 \d+ "-" "kubectl/v1\.\d+\.\d+ .*"',
                        access[0]), access[0]
