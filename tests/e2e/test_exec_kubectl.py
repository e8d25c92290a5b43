"""`kubectl exec`, `port-forward`, `logs`, `cp` and `get --raw .../proxy/` with the real kubectl
against `minikube-py start` as a subprocess: the API server proxies to the kubelet, which runs
the simulated shell and HTTP server. Every kubectl on the machine is driven: 1.27-1.29 speak
SPDY/3.1 for exec (and up to 1.30 for port-forward), 1.30+ WebSockets. kubectl binaries are
picked by version (the /usr/bin/kubectl dispatcher would pick by the server's version); a
missing one is skipped."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster_process import ClusterProcesses, running

pytestmark = pytest.mark.slow

SDK = Path("/usr/lib/google-cloud-sdk/bin")
NEW = SDK / "kubectl.1.32"  # WebSockets for exec (1.30+) and port-forward (1.31+)
#: every kubectl the machine image provides: SPDY (1.27-1.29 exec, 1.27-1.30 port-forward)
#: and WebSockets
ALL = [SDK / f"kubectl.1.{minor}" for minor in range(27, 34)]
VERSIONS = pytest.mark.parametrize("binary", ALL, ids=[b.name for b in ALL])
#: gcloud's dispatcher: runs the kubectl matching the server's reported version (1.31)
PLAIN = Path("/usr/bin/kubectl")

MANIFEST = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: node-0   # placed directly: this file is about streaming, not scheduling
  containers:
  - name: web
    image: nginx
    ports: [{containerPort: 80, name: http}]
    env: [{name: GREETING, value: hi-there}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 80}]
"""


def need(binary: Path) -> str:
    if not binary.exists():
        pytest.skip(f"{binary} not found (the machine image provides kubectl 1.27-1.33)")
    return str(binary)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    need(NEW)
    tmp = tmp_path_factory.mktemp("exec")
    procs = ClusterProcesses(tmp, nodes=1).start()
    try:
        kubectl(procs, NEW, "apply", "-f", "-", input=MANIFEST)
        procs.wait(lambda: running(procs.get("/api/v1/namespaces/default/pods/web")),
                   what="pod web running")
        yield procs
    finally:
        procs.stop()


def kubectl(cluster: ClusterProcesses, binary: Path, *args: str, input: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([need(binary), "-s", cluster.url, *args], input=input, text=True,
                          capture_output=True, timeout=60,
                          env={**os.environ, "HOME": str(cluster.tmp)})
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}): "
                             f"{done.stderr}{done.stdout}")
    return done


def pod_ip(cluster: ClusterProcesses) -> str:
    return cluster.get("/api/v1/namespaces/default/pods/web")["status"]["podIP"]


@VERSIONS
def test_exec_prints_the_output(cluster: ClusterProcesses, binary: Path) -> None:
    assert kubectl(cluster, binary, "exec", "web", "--", "echo", "hi").stdout == "hi\n"


def test_exec_through_the_dispatcher(cluster: ClusterProcesses) -> None:
    assert kubectl(cluster, PLAIN, "exec", "web", "--", "echo", "hi").stdout == "hi\n"


@VERSIONS
def test_exec_exit_code_is_kubectls(cluster: ClusterProcesses, binary: Path) -> None:
    done = kubectl(cluster, binary, "exec", "web", "--", "sh", "-c", "exit 3", check=False)
    assert done.returncode == 3
    assert "command terminated with exit code 3" in done.stderr


def test_exec_env_shows_the_containers_variables(cluster: ClusterProcesses) -> None:
    out = kubectl(cluster, NEW, "exec", "web", "--", "env").stdout
    assert "GREETING=hi-there\n" in out and "HOSTNAME=web\n" in out


@VERSIONS
def test_exec_with_stdin(cluster: ClusterProcesses, binary: Path) -> None:
    done = kubectl(cluster, binary, "exec", "-i", "web", "--", "sh",
                   input="echo one\nhostname\nexit 4\n", check=False)
    assert (done.stdout, done.returncode) == ("one\nweb\n", 4)


@VERSIONS
def test_exec_cat_echoes_what_arrives_without_a_newline(cluster: ClusterProcesses,
                                                        binary: Path) -> None:
    """`kubectl exec -i web -- cat` with stdin kept open: what is typed comes back before any
    newline or EOF, as a real cat writes what each read(2) returns (SPDY and WebSockets)."""
    proc = subprocess.Popen([need(binary), "-s", cluster.url, "exec", "-i", "web", "--", "cat"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "HOME": str(cluster.tmp)})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sent in (b"no newline", b"\x00\xff binary"):
            proc.stdin.write(sent)
            proc.stdin.flush()
            got = b""
            deadline = time.monotonic() + 10
            while len(got) < len(sent) and time.monotonic() < deadline:
                if select.select([proc.stdout], [], [], 0.2)[0]:
                    chunk = os.read(proc.stdout.fileno(), 4096)
                    if not chunk:
                        break
                    got += chunk
            assert got == sent, proc.stderr.read().decode() if proc.poll() is not None else got
        proc.stdin.close()
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("binary", [*ALL, PLAIN], ids=[*(b.name for b in ALL), "kubectl"])
def test_port_forward_then_http_get(cluster: ClusterProcesses, binary: Path) -> None:
    proc = subprocess.Popen([need(binary), "-s", cluster.url, "port-forward", "pod/web", ":80"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HOME": str(cluster.tmp)})
    try:
        line = proc.stdout.readline()  # Forwarding from 127.0.0.1:PORT -> 80
        match = re.search(r"127\.0\.0\.1:(\d+) -> 80", line)
        assert match, line + proc.stderr.read() if proc.poll() is not None else line
        url = f"http://127.0.0.1:{match.group(1)}/hello"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.read().decode() == f"pod web ({pod_ip(cluster)}) GET /hello\n"
    finally:
        proc.terminate()
        proc.wait(10)


def test_get_raw_pod_proxy(cluster: ClusterProcesses) -> None:
    done = kubectl(cluster, NEW, "get", "--raw", "/api/v1/namespaces/default/pods/web/proxy/")
    assert done.stdout == f"pod web ({pod_ip(cluster)}) GET /\n"


def test_get_raw_service_proxy(cluster: ClusterProcesses) -> None:
    cluster.wait(lambda: cluster.get("/api/v1/namespaces/default/endpoints/web").get("subsets"),
                 what="endpoints of web")
    done = kubectl(cluster, NEW, "get", "--raw",
                   "/api/v1/namespaces/default/services/web:http/proxy/x")
    assert done.stdout == f"pod web ({pod_ip(cluster)}) GET /x\n"


@VERSIONS
def test_logs(cluster: ClusterProcesses, binary: Path) -> None:
    out = kubectl(cluster, binary, "logs", "web", "--tail=1").stdout
    assert out.count("\n") == 1 and out.strip(), out


@VERSIONS
def test_cp_into_and_out_of_the_pod(cluster: ClusterProcesses, binary: Path,
                                    tmp_path: Path) -> None:
    """`kubectl cp` is tar over exec with stdin (SPDY before 1.30, WebSockets after): a few
    MiB of random bytes go in and come back identical."""
    data = os.urandom(3 << 20)
    source = tmp_path / "payload.bin"
    source.write_bytes(data)
    target = f"/tmp/{binary.name}.bin"
    kubectl(cluster, binary, "cp", str(source), f"web:{target}")
    assert kubectl(cluster, binary, "exec", "web", "--", "wc", "-c", target).stdout.split()[0] \
        == str(len(data))
    back = tmp_path / "back.bin"
    kubectl(cluster, binary, "cp", f"web:{target}", str(back))
    assert back.read_bytes() == data


@pytest.mark.parametrize("binary", [SDK / "kubectl.1.27", NEW], ids=["kubectl.1.27", "kubectl.1.32"])
def test_attach_shows_the_containers_output(cluster: ClusterProcesses, binary: Path) -> None:
    """attach over SPDY (1.27) and WebSockets (1.32): the container's output as it comes."""
    proc = subprocess.Popen([need(binary), "-s", cluster.url, "attach", "web"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HOME": str(cluster.tmp)})
    try:
        line = proc.stdout.readline()
        assert line.strip(), proc.stderr.read() if proc.poll() is not None else line
    finally:
        proc.kill()
        proc.wait(10)
