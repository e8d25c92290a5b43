"""The secure port's authentication and authorization matrix, through the real kubectl.

`minikube-py apiserver` with a token file, an ABAC policy (an admin, a read-only user, a user
confined to one namespace) and TLS from a generated CA; each kubectl version on the machine
talks to it with a kubeconfig of CA + token, as a user would.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_kubectl import KUBECTLS
from tests.etcd_server import free_port
from tests.integration.test_cli import Lines

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine")

TOKENS = """admin-token,admin,1,"system:masters"
reader-token,reader,2
tenant-token,tenant,3
"""
POLICY = """{"user":"admin"}
{"user":"reader","readonly":true}
{"user":"tenant","namespace":"team-a"}
"""


@pytest.fixture(scope="module")
def secure_api(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth")
    (tmp / "tokens.csv").write_text(TOKENS)
    (tmp / "policy.jsonl").write_text(POLICY)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", "apiserver", "--data-dir", str(tmp / "data"),
         "--insecure-port", str(free_port()), "--secure-port", str(port),
         "--cert-dir", str(tmp / "certs"), "--token-auth-file", str(tmp / "tokens.csv"),
         "--authorization-mode", "ABAC", "--authorization-policy-file", str(tmp / "policy.jsonl"),
         "--log-format", "json"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    try:
        Lines(proc.stderr).until('"ready"', 30)
        yield tmp, f"https://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(15)


def kubeconfig(tmp: Path, url: str, token: str) -> Path:
    ca = base64.b64encode((tmp / "certs" / "ca.crt").read_bytes()).decode()
    path = tmp / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": url, "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.rsplit("kubectl", 1)[1] or "1.20")
def test_auth_matrix_with_kubectl(secure_api, kubectl):
    tmp, url = secure_api
    home = tmp / f"home-{Path(kubectl).name}"
    home.mkdir(exist_ok=True)

    def run(token: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([kubectl, "--kubeconfig", str(kubeconfig(tmp, url, token)), *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(home)})

    suffix = Path(kubectl).name.replace(".", "-")
    wrong = run("nope", "get", "pods")
    assert wrong.returncode != 0 and "logged in" in wrong.stderr
    admin = run("admin-token", "-n", "default", "create", "configmap", f"cm-{suffix}",
                "--from-literal=a=b")
    assert admin.returncode == 0, admin.stderr
    read = run("reader-token", "-n", "default", "get", "configmaps", f"cm-{suffix}")
    assert read.returncode == 0, read.stderr
    denied = run("reader-token", "-n", "default", "delete", "configmap", f"cm-{suffix}")
    assert denied.returncode != 0
    assert 'User "reader" cannot delete resource "configmaps"' in denied.stderr, denied.stderr
    assert run("reader-token", "-n", "default", "create", "configmap", f"x-{suffix}").returncode != 0
    outside = run("tenant-token", "-n", "default", "get", "configmaps")
    assert outside.returncode != 0 and 'User "tenant" cannot list resource "configmaps"' in \
        outside.stderr and 'namespace "default"' in outside.stderr, outside.stderr
    inside = run("tenant-token", "-n", "team-a", "get", "configmaps")
    assert inside.returncode == 0, inside.stderr  # its own namespace: allowed
