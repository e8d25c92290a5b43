"""kube-scheduler as a separate process (v1.0 style) against the API server over HTTP."""

from __future__ import annotations

import json
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
