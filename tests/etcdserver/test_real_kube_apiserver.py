"""The real kube-apiserver on the embedded store, through our etcd v3 server (issue 23 item 1's
acceptance: kube-apiserver with `--etcd-servers` pointing at `minikube-py etcd-server`, the way
kine serves k3s).

Needs a kube-apiserver binary: `KUBE_APISERVER=/path/to/kube-apiserver`, or one on PATH. CI has
none (building one takes ~20 minutes); hack/build-kube-apiserver.sh builds v1.20.2 from
Debian's `kubernetes` source package, the version the project's reference figures were
measured with. Skips, saying so, without it.

Everything is real: our etcd server in its own process on an ephemeral port, kube-apiserver in
its own (its secure port picked free and retried on a lost race, tests/port_race.py), the real
kubectl, Debian's etcdctl reading what kube-apiserver wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.etcd_server import free_port
from tests.port_race import PORT_IN_USE, start_retrying_port_races

KUBE_APISERVER = os.environ.get("KUBE_APISERVER") or shutil.which("kube-apiserver")
KUBECTL = shutil.which("kubectl")
ETCDCTL = shutil.which("etcdctl")
TOKEN = "acceptance-token"

pytestmark = [
    pytest.mark.skipif(KUBE_APISERVER is None or not os.access(KUBE_APISERVER, os.X_OK),
                       reason="no kube-apiserver binary: build one with "
                              "hack/build-kube-apiserver.sh and set KUBE_APISERVER"),
    pytest.mark.skipif(KUBECTL is None, reason="kubectl not found"),
    pytest.mark.slow,
]


def our_etcd(tmp: Path) -> tuple[subprocess.Popen, str]:
    """`minikube-py etcd-server` on an ephemeral port; (process, endpoint URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", "etcd-server", "--data-dir",
         str(tmp / "store"), "--fsync", "never", "--listen-client-urls", "http://127.0.0.1:0",
         "--log-format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("etcd v3 API serving"):
            return proc, line.split(" at ", 1)[1].split()[0]
    proc.kill()
    raise AssertionError("our etcd server did not start")


def service_account_key(tmp: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp / "sa.key"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))
    return path


class KubeApiserver:
    def __init__(self, tmp: Path, etcd: str) -> None:
        self.tmp, self.etcd = tmp, etcd
        self.proc: subprocess.Popen | None = None
        self.port = 0
        (tmp / "tokens.csv").write_text(f'{TOKEN},admin,admin,"system:masters"\n')
        self.key = service_account_key(tmp)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> KubeApiserver:
        self.port = free_port()
        log = open(self.tmp / "kube-apiserver.log", "w")  # noqa: SIM115 - the process owns it
        assert KUBE_APISERVER is not None
        self.proc = subprocess.Popen([
            KUBE_APISERVER, f"--etcd-servers={self.etcd}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            f"--cert-dir={self.tmp / 'certs'}", f"--token-auth-file={self.tmp / 'tokens.csv'}",
            "--authorization-mode=RBAC", "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-key-file={self.key}",
            f"--service-account-signing-key-file={self.key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--disable-admission-plugins=ServiceAccount",
            # its own endpoint would be 127.0.0.1, which Endpoints validation refuses
            "--endpoint-reconciler-type=none", "--v=1"],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = (self.tmp / "kube-apiserver.log").read_text()[-3000:]
                if PORT_IN_USE in tail.lower():
                    raise RuntimeError(f"kube-apiserver: {PORT_IN_USE}")
                raise AssertionError(f"kube-apiserver exited {self.proc.returncode}:\n{tail}")
            try:
                if self.get("/readyz") == "ok":
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("kube-apiserver not ready in 90 s:\n"
                             + (self.tmp / "kube-apiserver.log").read_text()[-3000:])

    def get(self, path: str) -> str:
        request = urllib.request.Request(self.url + path,
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        context = ssl._create_unverified_context()  # its self-signed serving certificate
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.read().decode()

    def kubectl(self, *args: str) -> str:
        assert KUBECTL is not None
        done = subprocess.run(
            [KUBECTL, f"--server={self.url}", f"--token={TOKEN}", "--insecure-skip-tls-verify",
             *args], capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "HOME": str(self.tmp), "KUBECONFIG": "/dev/null"})
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[tuple[KubeApiserver, str]]:
    etcd_proc, endpoint = our_etcd(tmp_path)
    server = KubeApiserver(tmp_path, endpoint)
    try:
        yield start_retrying_port_races(server.start, cleanup=server.stop), endpoint
    finally:
        server.stop()
        etcd_proc.terminate()
        etcd_proc.wait(20)


def test_kube_apiserver_serves_from_the_embedded_store(apiserver) -> None:
    server, endpoint = apiserver
    # its storage health check goes through our server (etcd's Range on the health key)
    assert "[+]etcd ok" in server.get("/readyz?verbose")
    # bootstrap: kube-apiserver created its namespaces, RBAC policy, priority classes
    namespaces = server.kubectl("get", "namespaces", "-o", "name").split()
    assert {"namespace/default", "namespace/kube-system"} <= set(namespaces)
    assert "cluster-admin" in server.kubectl("get", "clusterroles", "-o", "name")
    # writes: create, update (a Txn comparing mod revisions), read back, delete
    server.kubectl("create", "namespace", "acceptance")
    server.kubectl("-n", "acceptance", "create", "configmap", "c", "--from-literal=a=b")
    server.kubectl("-n", "acceptance", "patch", "configmap", "c", "-p", '{"data":{"a":"c"}}')
    assert server.kubectl("-n", "acceptance", "get", "configmap", "c",
                          "-o", "jsonpath={.data.a}") == "c"
    listed = json.loads(server.kubectl("-n", "acceptance", "get", "configmaps", "-o", "json"))
    assert [i["metadata"]["name"] for i in listed["items"]] >= ["c"]
    # a watch from the list's resourceVersion: kube-apiserver's watch cache, fed by our
    # Watch stream, delivers the next change
    rv = json.loads(server.get("/api/v1/namespaces/acceptance/configmaps"))["metadata"][
        "resourceVersion"]  # (kubectl's `-o json` List carries none)
    assert int(rv) > 0
    server.kubectl("-n", "acceptance", "label", "configmap", "c", "seen=yes")
    events = [json.loads(line) for line in server.get(
        f"/api/v1/namespaces/acceptance/configmaps?watch=1&resourceVersion={rv}"
        "&timeoutSeconds=2").splitlines()]
    assert [(e["type"], e["object"]["metadata"]["labels"]) for e in events] == [
        ("MODIFIED", {"seen": "yes"})]
    # what it wrote is in our store, under its own key layout, readable with etcdctl
    if ETCDCTL is not None:
        keys = subprocess.run([ETCDCTL, f"--endpoints={endpoint}", "get", "/registry/configmaps/",
                               "--prefix", "--keys-only"], capture_output=True, text=True,
                              timeout=30, env={"ETCDCTL_API": "3"}, check=True).stdout.split()
        assert "/registry/configmaps/acceptance/c" in keys
    server.kubectl("-n", "acceptance", "delete", "configmap", "c")
    assert "c" not in server.kubectl("-n", "acceptance", "get", "configmaps", "-o", "name")
    # its watch cache follows our Watch: a namespace deletion finishes (the namespace
    # controller is not running, so it stays Terminating — but the change is seen)
    server.kubectl("delete", "namespace", "acceptance", "--wait=false")
    phase = server.kubectl("get", "namespace", "acceptance", "-o", "jsonpath={.status.phase}")
    assert phase == "Terminating"
