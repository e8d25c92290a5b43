"""A component that loses its leader lock stops fatally, as upstream's OnStoppedLeading:
kube-scheduler logs "Leaderelection lost", kube-controller-manager "leaderelection lost", and
both exit 1; a stop signal still exits 0. Real processes; the lock is stolen over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread

REPO = Path(__file__).resolve().parents[2]


def _start(server: ServerThread, command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", command, "--master", server.url,
         "--port", "0", "--log-format", "json", "--leader-elect",
         "--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1",
         "--leader-elect-retry-period", "0.2",
         *(["--controllers", "endpoint"] if command == "controller-manager" else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)


class Output:
    """The process's stderr, read without blocking."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.text = ""
        assert proc.stderr is not None
        os.set_blocking(proc.stderr.fileno(), False)

    def wait_for(self, needle: str, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.text += os.read(self.proc.stderr.fileno(), 65536).decode()  # type: ignore[union-attr]
            except BlockingIOError:
                pass
            if needle in self.text:
                return True
            time.sleep(0.05)
        return False


def _steal(server: ServerThread, lock: str) -> None:
    """Another candidate takes the lock (the default: a Lease in kube-system): a fresh record
    with a long lease (CAS on the resourceVersion, as a real candidate writes it)."""
    url = f"{server.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{lock}"
    for _attempt in range(10):  # the holder may renew between our read and our write: 409
        with urllib.request.urlopen(url, timeout=5) as resp:
            lease = json.loads(resp.read())
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lease["spec"] = {"holderIdentity": "thief", "leaseDurationSeconds": 3600,
                         "acquireTime": now, "renewTime": now, "leaseTransitions": 1}
        request = urllib.request.Request(url, data=json.dumps(lease).encode(), method="PUT",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5) as resp:
                assert resp.status == 200
                return
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise
    raise AssertionError(f"could not take the {lock} lease: every write met a renewal")


@pytest.mark.parametrize("command,lock,message", [
    ("scheduler", "kube-scheduler", "Leaderelection lost"),
    ("controller-manager", "kube-controller-manager", "leaderelection lost"),
])
def test_losing_the_lock_exits_1_with_upstreams_message(tmp_path: Path, command: str,
                                                         lock: str, message: str):
    server = ServerThread(tmp_path / "data").start()
    proc = _start(server, command)
    try:
        out = Output(proc)
        assert out.wait_for('"became leader"', 30), out.text
        _steal(server, lock)
        assert proc.wait(15) == 1
        out.wait_for(message, 2)
        lines = [json.loads(line) for line in out.text.splitlines() if line.startswith("{")]
        assert any(line.get("event") == message and line.get("level") == "error"
                   for line in lines), out.text
        assert f"error: {message}" in out.text  # the command's one-line failure
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()


def test_a_stop_signal_while_leading_still_exits_0(tmp_path: Path):
    server = ServerThread(tmp_path / "data").start()
    proc = _start(server, "scheduler")
    try:
        out = Output(proc)
        assert out.wait_for('"became leader"', 30), out.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()
