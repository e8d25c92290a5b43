"""`minikube-py start` as users run it: the kubeconfig it writes works with kubectl, `status`
reports the cluster, SIGTERM stops it cleanly, a second start resumes it (same pods, same IPs),
and a bad config is a one-line usage error (exit 2)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_process import CLI, KUBECTL, REPO, ClusterProcesses, running


def cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found")
def test_kubeconfig_status_stop_and_resume(tmp_path: Path):
    cluster = ClusterProcesses(tmp_path, nodes=2).start()
    try:
        # the kubeconfig targets the secure port: TLS with the generated CA, the admin token
        kubeconfig = tmp_path / "kubeconfig"
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == \
            f"https://127.0.0.1:{cluster.secure_port}"
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
        assert config["users"][0]["user"]["token"]
        denied = subprocess.run([KUBECTL, "-s", f"https://127.0.0.1:{cluster.secure_port}",
                                 "--insecure-skip-tls-verify", "--token", "wrong", "get",
                                 "nodes"],
                                capture_output=True, text=True, timeout=30,
                                env={**os.environ, "HOME": str(tmp_path)})
        assert denied.returncode != 0 and "must be logged in" in denied.stderr  # wrong token: 401
        nodes = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), "get", "nodes",
                                "--no-headers"], capture_output=True, text=True, timeout=30,
                               env={**os.environ, "HOME": str(tmp_path)})
        assert nodes.returncode == 0 and nodes.stdout.count(" Ready ") == 2, nodes.stderr

        cluster.kubectl("run", "keeper", "--image=nginx", "--labels=app=keeper")
        pod = cluster.wait(lambda: [p for p in cluster.pods("default", "app=keeper")
                                    if running(p)], 30, "keeper Running")[0]

        status = cli("status", "--server", cluster.url)
        assert status.returncode == 0, status.stdout + status.stderr
        assert "scheduler            Healthy" in status.stdout
        assert "node-0" in status.stdout and "Ready" in status.stdout
        assert "1 Running" in status.stdout

        printed = cli("kubeconfig", "--server", cluster.url)
        assert yaml.safe_load(printed.stdout)["current-context"] == "minikube-py"

        proc = cluster.procs["minikube-py"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        cluster.logs["minikube-py"].until('"stopped"')
        cluster.procs.clear()
        assert cli("status", "--server", cluster.url).returncode == 1  # nothing answers

        again = ClusterProcesses(tmp_path, nodes=2)
        again.api_port, again.url = cluster.api_port, cluster.url
        again.secure_port = cluster.secure_port
        cluster = again.start()
        resumed = cluster.wait(lambda: [p for p in cluster.pods("default", "app=keeper")
                                        if running(p)], 30, "keeper Running again")[0]
        assert resumed["metadata"]["uid"] == pod["metadata"]["uid"]
        assert resumed["status"]["podIP"] == pod["status"]["podIP"]
        assert resumed["status"]["containerStatuses"][0]["restartCount"] == 0
        # the CA and the admin token are reused: the first kubeconfig still works
        assert yaml.safe_load(kubeconfig.read_text()) == config
    finally:
        cluster.stop()


def test_bad_config_is_a_usage_error_naming_file_and_key(tmp_path: Path):
    config = tmp_path / "cluster.yaml"
    config.write_text("node-pools:\n  - name: gpu\n    taints: [{key: x, effect: Sometimes}]\n")
    done = cli("start", "--config", str(config), "--data-dir", str(tmp_path / "d"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"minikube-py start: error: config {config}: node-pools[0].taints[0].effect: "
        "'Sometimes' is not one of NoSchedule, PreferNoSchedule, NoExecute"]
    assert not (tmp_path / "d").exists()  # nothing was started or written
