"""kube-scheduler as a separate process (v1.0 style) against the API server over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.apiserver_thread import ServerThread
from tests.etcd_server import free_port

REPO = Path(__file__).resolve().parents[2]


def http(method: str, url: str, body: dict | None = None) -> tuple[int, dict | str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            text = resp.read().decode()
            status = resp.status
    except urllib.error.HTTPError as exc:
        text, status = exc.read().decode(), exc.code
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def test_scheduler_process_binds_pods_and_reports_healthy(tmp_path: Path):
    port = free_port()
    server = ServerThread(tmp_path / "data",
                          scheduler_health_url=f"http://127.0.0.1:{port}/healthz").start()
    proc = subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", "scheduler", "--master", server.url,
         "--port", str(port), "--log-format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        deadline = time.time() + 20
        for line in proc.stderr:
            if '"scheduler synced"' in line:
                break
            assert time.time() < deadline, "scheduler did not sync"
        http("POST", f"{server.url}/api/v1/nodes", {
            "metadata": {"name": "node-1"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
        http("POST", f"{server.url}/api/v1/namespaces/default/pods", {
            "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        for _ in range(100):
            _, pod = http("GET", f"{server.url}/api/v1/namespaces/default/pods/web")
            if pod["spec"].get("nodeName"):
                break
            time.sleep(0.1)
        assert pod["spec"]["nodeName"] == "node-1"
        status, cs = http("GET", f"{server.url}/api/v1/componentstatuses/scheduler")
        assert status == 200 and cs["conditions"][0]["status"] == "True"
        status, attempt = http("GET", f"http://127.0.0.1:{port}/debug/scheduler/last?pod=default/web")
        assert status == 200 and attempt["node"] == "node-1" and attempt["result"] == "scheduled"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()


def _start_scheduler(server: ServerThread, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "minikube_py.cli.main", "scheduler", "--master", server.url,
         "--port", str(port), "--log-format", "json", "--leader-elect",
         "--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1.5",
         "--leader-elect-retry-period", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)


def _wait_line(proc: subprocess.Popen, needle: str, seconds: float) -> bool:
    """Whether `needle` appears on the process's stderr within `seconds`."""
    deadline = time.time() + seconds
    os.set_blocking(proc.stderr.fileno(), False)
    buffer = ""
    while time.time() < deadline:
        chunk = proc.stderr.read(65536) or ""
        buffer += chunk
        if needle in buffer:
            return True
        time.sleep(0.05)
    return False


def test_leader_election_between_two_scheduler_processes(tmp_path: Path):
    server = ServerThread(tmp_path / "data").start()
    first = _start_scheduler(server, free_port())
    second = None
    try:
        assert _wait_line(first, '"became leader"', 20)
        second = _start_scheduler(server, free_port())
        assert not _wait_line(second, '"became leader"', 2)  # the lease is held and renewed
        # the default lock (--leader-elect-resource-lock=leases): a Lease whose spec is the record
        status, lock = http("GET", f"{server.url}/apis/coordination.k8s.io/v1/namespaces/"
                            "kube-system/leases/kube-scheduler")
        assert status == 200 and lock["spec"]["leaseDurationSeconds"] == 2
        first.kill()  # the leader dies without releasing the lock
        first.wait()
        # once the 2 s lease has expired (generous: a loaded CI machine starts slowly)
        assert _wait_line(second, '"became leader"', 30)
        http("POST", f"{server.url}/api/v1/nodes", {
            "metadata": {"name": "node-1"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}})
        http("POST", f"{server.url}/api/v1/namespaces/default/pods", {
            "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        for _ in range(100):
            _, pod = http("GET", f"{server.url}/api/v1/namespaces/default/pods/web")
            if pod["spec"].get("nodeName"):
                break
            time.sleep(0.1)
        assert pod["spec"]["nodeName"] == "node-1"  # the new leader schedules
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        server.stop()
