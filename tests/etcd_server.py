"""Real etcd servers for tests: one member, or an N-member cluster, on free loopback ports.

Kubernetes v1.0 piece: hack/lib/etcd.sh (`kube::etcd::start`), which the integration tests
used to run a throwaway etcd. Here it is a plain module (not a conftest) so both the
etcd-specific integration tests and the conformance suite can import it, and so the crash and
failover tests can kill (SIGKILL) and restart a member with the same data dir and ports.

Every process is started in its own session and stopped (or killed) by its pid; `stop_all()`
and the atexit hook make sure no etcd outlives the test run even when a test fails midway.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from minikube_py.storage.errors import MAX_VALUE_BYTES
from tests.port_race import start_retrying_port_races

#: How long a member (or a whole cluster) may take to answer its first request.
READY_TIMEOUT = 10.0
#: etcd's limit is on the whole request (key, value, Txn wrapping), so with its default of
#: exactly MAX_VALUE_BYTES a value of MAX_VALUE_BYTES would be refused while the embedded store
#: takes it. A little headroom makes both backends agree on the boundary.
DEFAULT_MAX_REQUEST_BYTES = MAX_VALUE_BYTES + 64 * 1024

_LIVE: set["EtcdServer"] = set()


def etcd_binary() -> str | None:
    """Path of the etcd server binary, or None when it is not installed."""
    found = shutil.which("etcd")
    if found:
        return found
    return "/usr/bin/etcd" if os.access("/usr/bin/etcd", os.X_OK) else None


def free_port() -> int:
    """A loopback port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EtcdServer:
    """One etcd member. Construct, then `start()` (done by `start_single`/`start_cluster`)."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        name: str = "single",
        client_port: int | None = None,
        peer_port: int | None = None,
        initial_cluster: str | None = None,
        cluster_token: str = "minikube-py-test",
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        binary = etcd_binary()
        if binary is None:
            raise RuntimeError("etcd binary not found: install Debian's etcd-server")
        self.binary = binary
        self.name = name
        self.data_dir = Path(data_dir)
        self.client_port = client_port or free_port()
        self.peer_port = peer_port or free_port()
        self.initial_cluster = initial_cluster or f"{name}={self.peer_url}"
        self.cluster_token = cluster_token
        self.max_request_bytes = max_request_bytes
        self.log_path = self.data_dir / f"{name}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    @property
    def client_url(self) -> str:
        return f"http://{self.endpoint}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _command(self) -> list[str]:
        return [
            self.binary,
            f"--name={self.name}",
            f"--data-dir={self.data_dir / (self.name + '.etcd')}",
            f"--listen-client-urls={self.client_url}",
            f"--advertise-client-urls={self.client_url}",
            f"--listen-peer-urls={self.peer_url}",
            f"--initial-advertise-peer-urls={self.peer_url}",
            f"--initial-cluster={self.initial_cluster}",
            "--initial-cluster-state=new",
            f"--initial-cluster-token={self.cluster_token}",
            "--logger=zap",
            "--log-outputs=stderr",
            # Keep tests fast: elections on loopback need no 1 s timeout.
            "--heartbeat-interval=50",
            "--election-timeout=500",
            f"--max-request-bytes={self.max_request_bytes}",
        ]

    def start(self, *, wait: bool = True) -> None:
        """Launch the process (stderr appended to `log_path`); with `wait`, until healthy."""
        if self.running:
            raise RuntimeError(f"etcd {self.name} is already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        _LIVE.add(self)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Poll /health (a real read through raft) until it answers healthy."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"etcd {self.name} exited early:\n{self.log_tail()}")
            if self.healthy():
                return
            time.sleep(0.05)
        raise RuntimeError(
            f"etcd {self.name} not healthy after {timeout:.0f} s:\n{self.log_tail()}"
        )

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.client_url}/health", timeout=1.0) as resp:
                return resp.status == 200 and b'"true"' in resp.read()
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM and wait; SIGKILL if it does not exit in time."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._proc = None
        _LIVE.discard(self)

    def kill(self) -> None:
        """SIGKILL: a crash, no graceful shutdown."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        self._proc = None
        _LIVE.discard(self)

    def restart(self, *, wait: bool = True) -> None:
        """Start again with the same data dir and ports (initial-cluster flags are ignored)."""
        self.stop()
        self.start(wait=wait)

    def __repr__(self) -> str:
        return f"EtcdServer({self.name}, {self.endpoint}, running={self.running})"


def start_single(data_dir: Path | str) -> EtcdServer:
    """One healthy single-member etcd (fresh ports when another process took ours first)."""

    def attempt() -> EtcdServer:
        server = EtcdServer(data_dir)
        try:
            server.start()
        except BaseException:
            server.kill()
            raise
        return server

    return start_retrying_port_races(
        attempt, cleanup=lambda: shutil.rmtree(Path(data_dir) / "single.etcd", ignore_errors=True))


def start_cluster(n: int, base_dir: Path | str) -> list[EtcdServer]:
    """An n-member cluster: all members launched at once, then waited for (quorum needs them
    all up together, so waiting for each in turn would never finish)."""
    base = Path(base_dir)

    def cleanup() -> None:
        for member_dir in base.glob("m*.etcd"):
            shutil.rmtree(member_dir, ignore_errors=True)

    return start_retrying_port_races(lambda: _start_cluster_once(n, base), cleanup=cleanup)


def _start_cluster_once(n: int, base: Path) -> list[EtcdServer]:
    names = [f"m{i}" for i in range(1, n + 1)]
    peer_ports = [free_port() for _ in names]
    initial = ",".join(f"{nm}=http://127.0.0.1:{p}" for nm, p in zip(names, peer_ports))
    token = f"minikube-py-test-{os.getpid()}-{time.monotonic_ns()}"
    members = [
        EtcdServer(base, name=nm, peer_port=p, initial_cluster=initial, cluster_token=token)
        for nm, p in zip(names, peer_ports)
    ]
    try:
        for member in members:
            member.start(wait=False)
        deadline = time.monotonic() + READY_TIMEOUT
        for member in members:
            member.wait_ready(max(0.1, deadline - time.monotonic()))
    except BaseException:
        stop_all(members)
        raise
    return members


def stop_all(servers: list[EtcdServer] | set[EtcdServer] | None = None) -> None:
    """Stop the given servers (default: every one this process started and did not stop)."""
    for server in list(_LIVE if servers is None else servers):
        server.kill()


atexit.register(stop_all)
