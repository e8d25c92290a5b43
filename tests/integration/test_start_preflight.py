"""`minikube-py start` on a busy machine (issue 24): a line per step while it starts, every
busy listener and a busy data dir reported in one error before anything runs, and
`--ports auto` serving on ports the kernel chose — written into the summary and the kubeconfig,
which the real kubectl then uses."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import yaml

from minikube_py.cli.listeners import listen
from tests.e2e.cluster_process import CLI, KUBECTL, REPO
from tests.integration.test_cli import Lines

READY = re.compile(r"^minikube-py is ready \((\d+\.\d+) s\)$")


def start(tmp: Path, name: str, *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, "start", "--data-dir", str(tmp / name / "data"),
         "--cert-dir", str(tmp / name / "certs"),
         "--kubeconfig-out", str(tmp / name / "kubeconfig"), "--fsync", "never",
         "--log-level", "warning", *flags],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_ports_auto_progress_and_every_conflict_at_once(tmp_path: Path) -> None:
    first = start(tmp_path, "a", "--ports", "auto", "--nodes", "2")
    try:
        out = Lines(first.stdout)
        ready = out.until("minikube-py is ready", 60)
        assert READY.match(ready), ready
        steps = out.seen[:-1]
        # a line per step, each timed; plain lines (stdout is not a terminal: no rich codes)
        assert steps[0].startswith("Starting minikube-py:")
        for step in ("ports bound (free ones: --ports auto)", "store: embedded in",
                     "API server serving http://127.0.0.1:", "controller-manager started",
                     "scheduler started", "kubelet started: 2 nodes",
                     "2 nodes Ready, components Healthy"):
            assert any(step in line and line.endswith(" s)") for line in steps), (step, steps)
        assert not any("\x1b" in line for line in out.seen)
        summary = [out.next(10) for _ in range(7)]
        secure = next(line for line in summary if line.lstrip().startswith("apiserver (secure)"))
        secure_url = secure.split()[2]
        config = yaml.safe_load((tmp_path / "a" / "kubeconfig").read_text())
        assert config["clusters"][0]["cluster"]["server"] == secure_url
        assert not secure_url.endswith(":6443")
        nodes = subprocess.run([KUBECTL, "--kubeconfig", str(tmp_path / "a" / "kubeconfig"),
                                "get", "nodes", "-o", "name"], capture_output=True, text=True,
                               timeout=30)
        assert nodes.stdout.split() == ["node/node-0", "node/node-1"], nodes.stderr

        # a second start on the first's data dir and two busy ports: one error names all three
        a, b = listen("127.0.0.1", 0), listen("127.0.0.1", 0)
        try:
            pa, pb = a.getsockname()[1], b.getsockname()[1]
            second = start(tmp_path, "a", "--insecure-port", str(pa), "--kubelet-port", str(pb))
            _, err = second.communicate(timeout=60)
        finally:
            a.close()
            b.close()
        assert second.returncode == 1, err
        assert "cannot start (nothing was started):" in err
        assert (f"is in use by process {first.pid} (minikube-py start --data-dir "
                f"{tmp_path / 'a' / 'data'}") in err
        assert "use another --data-dir" in err
        assert f"127.0.0.1:{pa} is in use by process {os.getpid()}" in err
        assert "change it with --insecure-port" in err
        assert f"127.0.0.1:{pb} is in use" in err and "change it with --kubelet-port" in err
        assert "Traceback" not in err

        # a second cluster beside the first: --ports auto and its own data dir
        third = start(tmp_path, "b", "--ports", "auto")
        try:
            line = Lines(third.stdout).until("minikube-py is ready", 60)
            assert READY.match(line), line
        finally:
            stop(third)
        assert third.returncode == 0
    finally:
        stop(first)
    assert first.returncode == 0
