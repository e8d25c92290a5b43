"""A whole cluster as real subprocesses, for end-to-end tests with the real kubectl.

Two layouts, as users run them: `all-in-one` is `minikube-py start`; `separate` is the seeds'
systemctl layout — `minikube-py apiserver`, then `scheduler`, `controller-manager` and
`kubelet` against it over HTTP. Storage is the embedded store on a data dir, or a real etcd.
Timings are shortened (heartbeats 0.2 s, node grace 1.5 s, eviction 2 s) so node failure and
eviction happen within a test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.etcd_server import free_port
from tests.integration.test_cli import Lines
from tests.port_race import start_retrying_port_races

KUBECTL = "/usr/bin/kubectl"
CLI = [sys.executable, "-m", "minikube_py.cli.main"]
REPO = Path(__file__).resolve().parents[2]

TIMINGS = [
    "--node-status-update-frequency", "200ms", "--node-lease-renew-interval", "200ms",
    "--image-pull-duration", "0",
    "--container-start-duration", "0", "--max-termination-grace-period", "500ms",
]
CONTROLLER_TIMINGS = [
    "--node-monitor-period", "100ms", "--node-monitor-grace-period", "1500ms",
    "--node-startup-grace-period", "3s", "--pod-eviction-timeout", "2s",
    "--deleting-pods-qps", "100", "--deleting-pods-burst", "100",
]
#: DefaultTolerationSeconds: pods tolerate a dead node 2 s, not 1.31's 300 s
API_TIMINGS = ["--default-not-ready-toleration-seconds", "2",
               "--default-unreachable-toleration-seconds", "2"]


class ClusterProcesses:
    def __init__(self, tmp: Path, *, layout: str = "all-in-one", nodes: int = 3,
                 etcd_endpoint: str | None = None, etcd_prefix: str = "",
                 extra_args: Sequence[str] = ()) -> None:
        """`extra_args`: more flags for `start` (all-in-one only), e.g. an authorization mode."""
        self.tmp, self.layout, self.nodes = tmp, layout, nodes
        self.extra_args = list(extra_args)
        self.data_dir = tmp / "data"
        self.etcd_endpoint, self.etcd_prefix = etcd_endpoint, etcd_prefix
        self._pick_ports()
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Lines] = {}
        self.node_names = [f"node-{i}" for i in range(nodes)]

    def _pick_ports(self) -> None:
        self.api_port, self.scheduler_port = free_port(), free_port()
        self.cm_port, self.kubelet_port = free_port(), free_port()
        self.secure_port = free_port()
        self.url = f"http://127.0.0.1:{self.api_port}"

    # -- lifecycle -------------------------------------------------------------------------
    def _storage(self) -> list[str]:
        if self.etcd_endpoint:
            return ["--etcd-servers", self.etcd_endpoint, "--etcd-key-prefix", self.etcd_prefix]
        return ["--data-dir", str(self.data_dir), "--fsync", "always"]

    def _spawn(self, name: str, argv: list[str]) -> Lines:
        proc = subprocess.Popen([*CLI, *argv, "--log-format", "json"], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.procs[name] = proc
        lines = Lines(proc.stderr)
        self.logs[name] = lines
        Lines(proc.stdout)  # drain the summary
        return lines

    def start(self, timeout: float = 60.0) -> "ClusterProcesses":
        """Start the cluster; a port taken between `free_port()` and bind() means a fresh try."""
        return start_retrying_port_races(lambda: self._start_once(timeout),
                                         cleanup=self._reset_after_port_race)

    def _reset_after_port_race(self) -> None:
        self.stop()
        self.logs.clear()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        shutil.rmtree(self.tmp / "certs", ignore_errors=True)
        self._pick_ports()

    def _start_once(self, timeout: float) -> "ClusterProcesses":
        if self.layout == "all-in-one":
            logs = self._spawn("minikube-py", [
                "start", *self._storage(), "--insecure-port", str(self.api_port),
                "--secure-port", str(self.secure_port), "--cert-dir", str(self.tmp / "certs"),
                "--scheduler-port", str(self.scheduler_port),
                "--controller-manager-port", str(self.cm_port),
                "--kubelet-port", str(self.kubelet_port), "--nodes", str(self.nodes),
                "--kubeconfig-out", str(self.tmp / "kubeconfig"), *TIMINGS, *CONTROLLER_TIMINGS,
                *API_TIMINGS, *self.extra_args])
            logs.until('"ready"', timeout)
        else:
            logs = self._spawn("apiserver", [
                "apiserver", *self._storage(), "--insecure-port", str(self.api_port),
                "--secure-port", str(self.secure_port), "--cert-dir", str(self.tmp / "certs"),
                "--scheduler-health-url", f"http://127.0.0.1:{self.scheduler_port}/healthz",
                "--controller-manager-health-url", f"http://127.0.0.1:{self.cm_port}/healthz",
                *API_TIMINGS])
            logs.until('"ready"', timeout)
            self._spawn("scheduler", ["scheduler", "--master", self.url,
                                      "--port", str(self.scheduler_port)])
            self._spawn("controller-manager", ["controller-manager", "--master", self.url,
                                               "--port", str(self.cm_port), *CONTROLLER_TIMINGS])
            self._spawn("kubelet", ["kubelet", "--master", self.url, "--hostname-override", "node",
                                    "--nodes", str(self.nodes), "--port", str(self.kubelet_port),
                                    *TIMINGS])
            try:
                self.wait(self.healthy, timeout, "components Healthy and nodes Ready")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; component output: {self._exited_output()}") from exc
        return self

    def _exited_output(self) -> str:
        """What the components that already exited printed (a lost port race shows here)."""
        lines: list[str] = []
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                lines += [f"{name}: {line}" for line in self.logs[name].drain()]
        return "\n".join(lines) or "(none exited)"

    def healthy(self) -> bool:
        try:
            cs = self.get("/api/v1/componentstatuses")["items"]
            nodes = self.get("/api/v1/nodes")["items"]
        except OSError:
            return False
        return (all(c["conditions"][0]["status"] == "True" for c in cs)
                and sum(condition(n, "Ready") == "True" for n in nodes) >= self.nodes)

    def stop(self) -> None:
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()

    def kill9(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self.procs.clear()

    def exit_codes(self) -> dict[str, int | None]:
        return {name: proc.poll() for name, proc in self.procs.items()}

    # -- clients ---------------------------------------------------------------------------
    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 60) -> subprocess.CompletedProcess:
        done = subprocess.run([KUBECTL, "-s", self.url, *args], input=input, text=True,
                              capture_output=True, timeout=timeout,
                              env={**os.environ, "HOME": str(self.tmp)})
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}): "
                                 f"{done.stderr}{done.stdout}")
        return done

    def get(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + path, timeout=5) as response:
            return json.loads(response.read())

    def post(self, url: str) -> int:
        request = urllib.request.Request(url, method="POST", data=b"")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def pods(self, namespace: str = "default", selector: str = "") -> list[dict[str, Any]]:
        query = f"?labelSelector={selector}" if selector else ""
        return self.get(f"/api/v1/namespaces/{namespace}/pods{query}")["items"]

    @staticmethod
    def wait(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = predicate()
            except (OSError, KeyError, ValueError) as exc:
                last = exc
            else:
                if last:
                    return last
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def condition(obj: dict[str, Any], kind: str) -> str | None:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return c.get("status")
    return None


def running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and not (
        pod.get("metadata") or {}).get("deletionTimestamp")
