"""The kubelet API secured, end to end (issue 14): `minikube-py start` with the secure port on
serves its kubelets over HTTPS with authentication; the real kubectl (through the secure port,
with the kubeconfig `start` writes) still execs and follows logs, the learner's `node stop`
works with the kubeconfig's admin credentials, and a request without credentials gets 401.
The separate-process layout is secured with the upstream flags (--tls-cert-file,
--client-ca-file on the kubelet; --kubelet-client-certificate, --kubelet-certificate-authority
on the API server)."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_process import CLI, REPO, ClusterProcesses, running
from tests.etcd_server import free_port
from tests.integration.test_cli import Lines

pytestmark = pytest.mark.slow

KUBECTL = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.32")  # WebSocket exec (1.30+)
POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeName: node-0
  containers: [{name: web, image: nginx, ports: [{containerPort: 80}]}]
"""


def need_kubectl() -> str:
    if not KUBECTL.exists():
        pytest.skip(f"{KUBECTL} not found (the machine image provides kubectl 1.27-1.33)")
    return str(KUBECTL)


def call(url: str, ca: Path, token: str | None = None, method: str = "GET") -> tuple[int, str]:
    """One HTTPS request to the kubelet port, verifying it with the cluster CA."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None,
                                     headers={"Authorization": f"Bearer {token}"} if token else {})
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    need_kubectl()
    procs = ClusterProcesses(tmp_path_factory.mktemp("kubelet-auth"), nodes=1).start()
    try:
        procs.kubectl("apply", "-f", "-", input=POD)
        procs.wait(lambda: running(procs.get("/api/v1/namespaces/default/pods/web")),
                   what="pod web running")
        yield procs
    finally:
        procs.stop()


def admin_token(cluster: ClusterProcesses) -> str:
    config = yaml.safe_load((cluster.tmp / "kubeconfig").read_text())
    return config["users"][0]["user"]["token"]


def secure_kubectl(cluster: ClusterProcesses, *args: str, timeout: float = 60
                   ) -> subprocess.CompletedProcess:
    """kubectl through the secure port with the kubeconfig `start` wrote."""
    return subprocess.run([need_kubectl(), "--kubeconfig", str(cluster.tmp / "kubeconfig"),
                           *args], text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, "HOME": str(cluster.tmp)})


def test_the_kubelet_port_is_https_and_needs_credentials(cluster: ClusterProcesses) -> None:
    ca = cluster.tmp / "certs" / "ca.crt"
    base = f"https://127.0.0.1:{cluster.kubelet_port}"
    assert call(f"{base}/pods", ca) == (401, "Unauthorized")
    assert call(f"{base}/nodes/node-0/stop", ca, method="POST") == (401, "Unauthorized")
    status, body = call(f"{base}/pods", ca, admin_token(cluster))
    assert status == 200 and json.loads(body)["kind"] == "PodList"
    with pytest.raises(OSError):  # plain HTTP does not reach it
        urllib.request.urlopen(f"http://127.0.0.1:{cluster.kubelet_port}/pods", timeout=5)


def test_kubectl_exec_and_logs_follow_through_the_secure_port(cluster: ClusterProcesses) -> None:
    done = secure_kubectl(cluster, "exec", "web", "--", "echo", "secured")
    assert (done.returncode, done.stdout) == (0, "secured\n"), done.stderr
    follow = subprocess.Popen([need_kubectl(), "--kubeconfig", str(cluster.tmp / "kubeconfig"),
                               "logs", "-f", "web"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "HOME": str(cluster.tmp)})
    try:
        first = Lines(follow.stdout).next(timeout=20)
        assert first.strip(), "kubectl logs -f printed an empty line"
    finally:
        follow.kill()
        follow.wait()


def test_spdy_exec_reaches_the_https_kubelet(cluster: ClusterProcesses) -> None:
    """kubectl 1.27 speaks SPDY/3.1: the API server dials the kubelet's TLS port with its
    kubelet-client certificate and relays the upgraded connection."""
    old = KUBECTL.with_name("kubectl.1.27")
    if not old.exists():
        pytest.skip(f"{old} not found (the machine image provides kubectl 1.27-1.33)")
    done = subprocess.run([str(old), "--kubeconfig", str(cluster.tmp / "kubeconfig"), "exec",
                           "-i", "web", "--", "cat"], input="over spdy\n", text=True,
                          capture_output=True, timeout=60,
                          env={**os.environ, "HOME": str(cluster.tmp)})
    assert (done.returncode, done.stdout) == (0, "over spdy\n"), done.stderr


def test_node_stop_and_start_with_the_kubeconfigs_admin_credentials(
        cluster: ClusterProcesses) -> None:
    kubeconfig = str(cluster.tmp / "kubeconfig")
    for action, word in (("stop", "stopped"), ("start", "started")):
        done = subprocess.run([*CLI, "node", action, "node-0", "--kubeconfig", kubeconfig],
                              capture_output=True, text=True, timeout=30, cwd=REPO)
        assert (done.returncode, done.stdout) == (0, f"node node-0: kubelet {word}\n"), done.stderr
    missing = subprocess.run([*CLI, "node", "stop", "node-9", "--kubeconfig", kubeconfig],
                             capture_output=True, text=True, timeout=30, cwd=REPO)
    assert missing.returncode != 0 and 'nodes "node-9" not found' in missing.stderr


def test_separate_processes_secured_with_upstream_flags(tmp_path: Path) -> None:
    from minikube_py.cli import kubelet_tls

    certs = tmp_path / "certs"
    cert, key, ca = kubelet_tls.ensure_kubelet_serving_cert(certs, ["127.0.0.1"])
    client_cert, client_key = kubelet_tls.ensure_kubelet_client_cert(certs)
    api_port, kubelet_port = free_port(), free_port()
    procs: list[subprocess.Popen] = []

    def spawn(*argv: str) -> Lines:
        proc = subprocess.Popen([*CLI, *argv, "--log-format", "json"], cwd=REPO, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(proc)
        return Lines(proc.stderr)

    try:
        spawn("apiserver", "--data-dir", str(tmp_path / "data"), "--fsync", "never",
              "--insecure-port", str(api_port), "--secure-port", "0",
              "--kubelet-client-certificate", str(client_cert), "--kubelet-client-key",
              str(client_key), "--kubelet-certificate-authority", str(ca)).until('"ready"', 30)
        spawn("kubelet", "--master", f"http://127.0.0.1:{api_port}", "--hostname-override",
              "solo", "--port", str(kubelet_port), "--node-status-update-frequency", "200ms",
              "--tls-cert-file", str(cert), "--tls-private-key-file", str(key),
              "--client-ca-file", str(ca)).until('"kubelet pool started"', 30)
        ClusterProcesses.wait(lambda: call(f"https://127.0.0.1:{kubelet_port}/healthz", ca)[0]
                              == 401, 10, "the kubelet's TLS port")
        api = ClusterProcesses(tmp_path)
        api.url = f"http://127.0.0.1:{api_port}"
        api.wait(lambda: api.get("/api/v1/nodes/solo"), 15, "node solo registered")
        done = subprocess.run([*CLI, "node", "stop", "solo", "--master", api.url],
                              capture_output=True, text=True, timeout=30, cwd=REPO)
        assert (done.returncode, done.stdout) == (0, "node solo: kubelet stopped\n"), done.stderr
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
