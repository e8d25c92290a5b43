"""`kubectl cluster-info` and the `kubernetes` service against `minikube-py start` as a
subprocess, with the real kubectl; namespaces/finalize and namespaces/status through kubectl's
--raw verbs."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses

pytestmark = pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ClusterProcesses(tmp_path_factory.mktemp("cluster-info"), nodes=1).start()
    try:
        yield c
    finally:
        c.stop()


def kubectl(c: ClusterProcesses, *args: str, input: str | None = None) -> str:
    """kubectl with the kubeconfig `start` wrote: the secure port, its CA, the admin token."""
    done = subprocess.run([KUBECTL, "--kubeconfig", str(c.tmp / "kubeconfig"), *args],
                          input=input, text=True, capture_output=True, timeout=60,
                          env={**os.environ, "HOME": str(c.tmp)})
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}{done.stdout}"
    return done.stdout


def test_cluster_info_shows_the_control_plane(cluster: ClusterProcesses):
    out = re.sub(r"\x1b\[[0-9;]*m", "", kubectl(cluster, "cluster-info"))  # drop colours
    assert f"Kubernetes control plane is running at https://127.0.0.1:{cluster.secure_port}" \
        in out, out
    # on the insecure URL too
    out = re.sub(r"\x1b\[[0-9;]*m", "", cluster.kubectl("cluster-info").stdout)
    assert f"Kubernetes control plane is running at {cluster.url}" in out, out


def test_kubernetes_service_points_at_the_secure_port(cluster: ClusterProcesses):
    svc = json.loads(kubectl(cluster, "get", "service", "kubernetes", "-o", "json"))
    assert svc["spec"]["clusterIP"] == "10.0.0.1"
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP",
                                     "targetPort": cluster.secure_port}]
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    eps = json.loads(kubectl(cluster, "get", "endpoints", "kubernetes", "-o", "json"))
    (subset,) = eps["subsets"]
    assert subset["ports"] == [{"name": "https", "port": cluster.secure_port, "protocol": "TCP"}]
    (address,) = subset["addresses"]
    assert not address["ip"].startswith("127.")  # the host's interface, as upstream


def test_namespace_status_and_finalize_through_kubectl_raw(cluster: ClusterProcesses,
                                                           tmp_path: Path):
    status = json.loads(kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/status"))
    assert status["kind"] == "Namespace" and status["status"]["phase"] == "Active"
    # a finalizer of our own keeps it Terminating after the namespace controller's is done
    kubectl(cluster, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"},
        "spec": {"finalizers": ["kubernetes", "example.com/hold"]}}))
    kubectl(cluster, "delete", "namespace", "doomed", "--wait=false")
    cluster.wait(lambda: json.loads(kubectl(cluster, "get", "namespace", "doomed", "-o", "json"))
                 ["spec"]["finalizers"] == ["example.com/hold"], 20, "kubernetes finalizer done")
    ns = json.loads(kubectl(cluster, "get", "namespace", "doomed", "-o", "json"))
    assert ns["status"]["phase"] == "Terminating"
    ns["spec"]["finalizers"] = []
    body = tmp_path / "finalize.json"
    body.write_text(json.dumps(ns))
    out = json.loads(kubectl(cluster, "replace", "--raw", "/api/v1/namespaces/doomed/finalize",
                             "-f", str(body)))
    assert out["kind"] == "Namespace"
    cluster.wait(lambda: cluster.kubectl("get", "namespace", "doomed", check=False).returncode
                 != 0, 20, "namespace doomed gone")
