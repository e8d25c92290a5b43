"""File modes under `umask 000`, and `start` refusing key material others could rewrite.

The umask belongs to the whole process, so the creation runs in a fresh interpreter with
`os.umask(0)`: the store (data dir, WAL, a snapshot, the lock), the cert dir (CA, serving and
client certs), the admin token file and the kubeconfig — each directory 0700, each secret
0600, certificates 0644. The refusal is the real command line: `minikube-py start` exits 2
with one line naming the file and the chmod that fixes it.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "minikube_py.cli.main"]

CREATE_UNDER_UMASK_0 = """
import asyncio, os, sys
from pathlib import Path
os.umask(0)
from minikube_py.apiserver.certs import ensure_serving_cert, issue_client_cert
from minikube_py.cli import kubeconfig
from minikube_py.cli.secure_serving import ensure_admin_token
from minikube_py.storage import EmbeddedStore

home = Path(sys.argv[1])

async def store():
    s = await EmbeddedStore.open(home / "state" / "data", fsync=False, snapshot_count=2)
    for i in range(5):
        await s.create(f"/registry/secrets/default/s{i}", b"{}")
    await s.close()

asyncio.run(store())
ensure_serving_cert(home / "pki" / "certs", [])
issue_client_cert(home / "pki" / "certs", "admin", ["system:masters"])
ensure_admin_token(home / "pki" / "certs")
kubeconfig.write(home / "kube" / "config", "https://127.0.0.1:6443", token="t")
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_everything_created_under_umask_0_is_owner_only(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CREATE_UNDER_UMASK_0, str(tmp_path)],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    data, certs = tmp_path / "state" / "data", tmp_path / "pki" / "certs"
    dirs = [tmp_path / "state", data, data / "wal", data / "snap", tmp_path / "pki", certs,
            tmp_path / "kube"]
    assert {str(d): _mode(d) for d in dirs} == {str(d): 0o700 for d in dirs}
    snapshots = list((data / "snap").iterdir())
    assert snapshots, "no snapshot was written"
    secret_files = [*(data / "wal").iterdir(), *snapshots, data / "LOCK", certs / "ca.key",
                    certs / "apiserver.key", certs / "client-admin.key", certs / "tokens.csv",
                    tmp_path / "kube" / "config"]
    assert {str(f): _mode(f) for f in secret_files} == {str(f): 0o600 for f in secret_files}
    public = [certs / "ca.crt", certs / "apiserver.crt", certs / "client-admin.crt"]
    assert {str(f): _mode(f) for f in public} == {str(f): 0o644 for f in public}


def _start(tmp_path: Path, port: int, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, "start", "--data-dir", str(tmp_path / "data"), "--cert-dir",
         str(tmp_path / "certs"), "--insecure-port", "0", "--secure-port", str(port),
         "--nodes", "0", "--kubeconfig-out", "", *extra],
        capture_output=True, text=True, timeout=60, cwd=REPO)


def test_start_refuses_world_writable_key_material(tmp_path: Path) -> None:
    from minikube_py.apiserver.certs import ensure_serving_cert
    from minikube_py.cli.secure_serving import ensure_admin_token

    certs = tmp_path / "certs"
    ensure_serving_cert(certs, [])
    ensure_admin_token(certs)
    # the port is held by this test: should a check be missing, start fails to bind (exit 1)
    # instead of serving
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        for name, fix in [("ca.key", "chmod 600"), ("tokens.csv", "chmod 600"),
                          ("ca.crt", "chmod 644")]:
            path = certs / name
            before = _mode(path)
            os.chmod(path, 0o666)
            done = _start(tmp_path, port)
            os.chmod(path, before)
            assert done.returncode == 2, done.stderr
            assert "refusing to use the" in done.stderr and f" {path}: group or others can " \
                   f"write it (mode 0666)" in done.stderr, done.stderr
            assert f"Fix: {fix} {path}" in done.stderr
            assert "Traceback" not in done.stderr
        given = tmp_path / "tokens-given.csv"
        given.write_text('x,alice,alice,""\n')
        os.chmod(given, 0o646)
        done = _start(tmp_path, port, "--token-auth-file", str(given))
        assert done.returncode == 2, done.stderr
        assert f"refusing to use --token-auth-file {given}: group or others can write it " \
               f"(mode 0646)" in done.stderr
