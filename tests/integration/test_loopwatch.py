"""The event-loop watchdog in real servers: a request that blocks the API server's loop is
named (verb, path, user) in one warning, its stall is on /metrics, and every component
process (`kubelet`, `scheduler`, `controller-manager`) runs under its own monitor.

Real pieces only: the API server on loopback sockets (TLS with a bearer token for the user),
the components as `python -m minikube_py.cli.main` subprocesses against a real API server.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from minikube_py.apiserver.handlers import ResourceHandlers
from minikube_py.loopwatch import LoopMonitor
from tests.apiserver.test_secure import serve as serve_secure
from tests.apiserver_thread import ServerThread
from tests.e2e.cluster_process import CLI, REPO
from tests.integration.test_cli import Lines

LAG = "minikube_py_event_loop_lag_seconds"


def metric_lines(text: str, name: str, component: str) -> list[str]:
    return [line for line in text.splitlines()
            if line.startswith(name) and f'component="{component}"' in line]


async def test_a_request_that_blocks_the_loop_is_named(tmp_path: Path, monkeypatch) -> None:
    api, close = await serve_secure(tmp_path)
    original = ResourceHandlers.get

    async def slow_get(self, *args, **kwargs):
        time.sleep(0.3)  # a handler that holds the event loop
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(ResourceHandlers, "get", slow_get)
    monitor = LoopMonitor(component="apiserver-under-test")  # the default registry: /metrics
    monitor.start()
    try:
        with capture_logs() as logs:
            status, _ = await api.call(
                "GET", "/api/v1/namespaces/default/pods/web?resourceVersion=0", "admin-token")
            assert status == 404
            assert (await api.call("GET", "/api/v1/namespaces/default/pods", "admin-token"))[0] \
                == 200  # a quick request: no stall
        [line] = [e for e in logs if e["log_level"] == "warning"]
        assert line["event"] == "event loop blocked"
        assert line["request"] == "GET /api/v1/namespaces/default/pods/web user=admin"
        assert "slow_get" in line["stack"] and "time.sleep(0.3)" in line["stack"]
        assert monitor.stalls == 1
        status, text = await api.call("GET", "/metrics", secure=False)
        assert status == 200
        assert metric_lines(text, f"{LAG}_bucket", "apiserver-under-test")
        [stalls] = metric_lines(text, "minikube_py_event_loop_stalls_total", "apiserver-under-test")
        assert float(stalls.split()[-1]) >= 1
    finally:
        await monitor.stop()
        await close()


@pytest.fixture
def apiserver(tmp_path: Path):
    server = ServerThread(tmp_path / "api").start()
    yield server
    server.stop()


def run_component(args: list[str]) -> tuple[subprocess.Popen, Lines]:
    proc = subprocess.Popen([*CLI, *args, "--log-format", "json"], cwd=REPO, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, Lines(proc.stderr)


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(30)


def test_the_kubelet_process_serves_its_loop_lag_on_metrics(apiserver: ServerThread) -> None:
    proc, lines = run_component(["kubelet", "--master", apiserver.url, "--port", "0",
                                 "--hostname-override", "watched-node"])
    try:
        started = json.loads(lines.until('"kubelet starting"', timeout=60))
        time.sleep(0.2)  # some ticks
        with urllib.request.urlopen(f"http://127.0.0.1:{started['port']}/metrics", timeout=10) as r:
            text = r.read().decode()
        [count] = metric_lines(text, f"{LAG}_count", "kubelet")
        assert float(count.split()[-1]) >= 3
        assert metric_lines(text, "minikube_py_event_loop_max_lag_seconds", "kubelet")
    finally:
        assert stop(proc) == 0


@pytest.mark.parametrize("component", ["scheduler", "controller-manager"])
def test_component_processes_run_under_a_monitor(apiserver: ServerThread, component: str) -> None:
    """With a 1 ms threshold the component's first stall is logged under its name: at debug
    with phase=startup if it came before the component said it is starting (its startup),
    as a warning after that. Which comes first depends on where the lazy imports land on
    this machine, so both orders are checked against what each must look like."""
    proc, lines = run_component([component, "--master", apiserver.url, "--port", "0",
                                 "--log-level", "debug", "--loop-stall-threshold", "1ms"])
    try:
        stall = json.loads(lines.until('"event loop blocked"', timeout=60))
        started = any(f'"{component} starting"' in line for line in lines.seen[:-1])
        assert stall["component"] == component
        if started:
            assert stall["level"] == "warning" and "phase" not in stall, stall
        else:
            assert (stall["level"], stall["phase"]) == ("debug", "startup"), stall
            lines.until(f'"{component} starting"', timeout=60)
    finally:
        assert stop(proc) == 0
