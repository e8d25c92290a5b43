"""The shared cluster of the client compatibility suite (tests/e2e/test_clients_*.py).

Each client module gets one `minikube-py start` subprocess (one node, shortened timings, see
`cluster_process.py`) and reaches it the way its users reach a cluster: through the kubeconfig
that `start --kubeconfig-out` writes — HTTPS with the cluster CA and a bearer token, exactly as
a kubeadm or minikube kubeconfig would. Nothing here talks to the clients under test; the
helpers only prepare and observe through the plain insecure port, so a client's own failure is
never hidden by the fixture.

Import the fixtures into a test module with
`from tests.e2e.client_cluster import cluster, deadline, kubeconfig, namespace  # noqa: F401`
(`deadline` is autouse: importing it arms it for every test of the module).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cluster_process import ClusterProcesses, running

#: the bound on any single client call in the suite: a wire defect must fail, never hang
CALL_TIMEOUT = 20
#: the bound on a whole test, for client loops that retry for ever (lightkube's and kr8s's
#: watch reconnects, kopf's retries): SIGALRM interrupts even a blocking read
TEST_DEADLINE = 60

#: a pod whose container runs until deleted, so exec and logs have something to talk to
SLEEPER = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"labels": {"app": "sleeper"}},
    "spec": {"terminationGracePeriodSeconds": 0,
             "containers": [{"name": "main", "image": "busybox:1.36",
                             "command": ["sh", "-c", "echo started; sleep 3600"]}]},
}

#: the Deployment + Service of the clients' create_from_yaml examples (nginx-deployment.yaml)
NGINX_DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: nginx-deployment
      labels: {app: nginx}
    spec:
      replicas: 2
      selector:
        matchLabels: {app: nginx}
      template:
        metadata:
          labels: {app: nginx}
        spec:
          containers:
          - name: nginx
            image: nginx:1.15.4
            ports:
            - containerPort: 80
    ---
    apiVersion: v1
    kind: Service
    metadata:
      name: nginx
    spec:
      selector: {app: nginx}
      ports:
      - port: 80
    """)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    """One all-in-one cluster per client module (one node: pods run, exec and logs work)."""
    procs = ClusterProcesses(tmp_path_factory.mktemp("clients"), nodes=1).start()
    try:
        yield procs
    finally:
        stop_within(procs, STOP_TIMEOUT)


#: how long a cluster may take to exit on SIGTERM before it is killed. A log follower that a
#: client abandoned can hold the API server's shutdown for a minute (see
#: test_abandoned_log_follower_does_not_hold_the_server); the suite does not wait for it.
STOP_TIMEOUT = 5.0


def stop_within(procs: ClusterProcesses, timeout: float) -> bool:
    """SIGTERM every process, kill what has not exited after `timeout` s; True if all exited."""
    for proc in procs.procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    exited = True
    for proc in procs.procs.values():
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            exited = False
    procs.kill9()
    return exited


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    """Fail a test that runs past TEST_DEADLINE instead of hanging the suite."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"test still running after {TEST_DEADLINE} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_DEADLINE)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def kubeconfig(cluster: ClusterProcesses) -> Path:
    """The kubeconfig `minikube-py start` wrote: HTTPS, CA data, a bearer token."""
    return cluster.tmp / "kubeconfig"


@pytest.fixture(scope="module")
def kubeconfig_env(kubeconfig: Path) -> Iterator[Path]:
    """`KUBECONFIG` points at the cluster, as the user's shell would (kr8s and kopf find
    their cluster that way); restored after the module."""
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    try:
        yield kubeconfig
    finally:
        if previous is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = previous


@pytest.fixture
def namespace(cluster: ClusterProcesses) -> str:
    """A fresh namespace per test, so tests never see each other's objects."""
    name = f"c-{uuid.uuid4().hex[:8]}"
    send(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def send(cluster: ClusterProcesses, method: str, path: str,
         body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON request on the insecure port (fixture-side setup, not the client under test);
    a PATCH is a merge patch."""
    data = json.dumps(body).encode() if body is not None else None
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    request = urllib.request.Request(cluster.url + path, data=data, method=method,
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=CALL_TIMEOUT) as response:
        return json.loads(response.read())


def sleeper(name: str) -> dict[str, Any]:
    """The SLEEPER manifest named `name` (a fresh copy: clients may mutate what they send)."""
    manifest = json.loads(json.dumps(SLEEPER))
    manifest["metadata"]["name"] = name
    return manifest


def ticker(name: str) -> dict[str, Any]:
    """A pod that prints `started`, then `tick` every 0.2 s: a followed log gets new lines,
    and a follower that goes away is noticed at the next one (see the abandoned-follower test
    in test_clients_kubernetes.py for a quiet container)."""
    manifest = sleeper(name)
    manifest["spec"]["containers"][0]["command"] = [
        "sh", "-c", "echo started; while true; do sleep 0.2; echo tick; done"]
    return manifest


def wait_running(cluster: ClusterProcesses, namespace: str, name: str,
                 timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
    """Wait (on the insecure port) until the pod runs; returns it."""
    return cluster.wait(lambda: _running_pod(cluster, namespace, name), timeout,
                        f"pod {namespace}/{name} Running")


def _running_pod(cluster: ClusterProcesses, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    except urllib.error.HTTPError:
        return None
    return pod if running(pod) else None


def events_for(cluster: ClusterProcesses, namespace: str, name: str) -> list[dict[str, Any]]:
    """core/v1 Events whose involvedObject is `name` in `namespace`."""
    items = cluster.get(f"/api/v1/namespaces/{namespace}/events")["items"]
    return [e for e in items if (e.get("involvedObject") or {}).get("name") == name]
