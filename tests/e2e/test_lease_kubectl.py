"""Leases with every kubectl on the machine (1.20 when installed and 1.27..1.33) against a real
two-node `minikube-py start`: `kubectl get lease -A` lists one Lease per node in
kube-node-lease (holder = the node), renewed while the cluster runs; a lock Lease is applied,
read, explained, refused with upstream's message when invalid, and deleted."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster_process import ClusterProcesses
from tests.e2e.kubectl_run import kubectl
from tests.e2e.test_openapi_v2_kubectl import BINARIES

pytestmark = pytest.mark.skipif(not BINARIES, reason="needs kubectl binaries")

LOCK = """\
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: {name}
spec:
  holderIdentity: {holder}
  leaseDurationSeconds: {duration}
  leaseTransitions: 0
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    procs = ClusterProcesses(tmp_path_factory.mktemp("lease"), nodes=2).start()
    try:
        yield procs
    finally:
        procs.stop()


def test_get_lease_lists_one_renewed_lease_per_node(cluster: ClusterProcesses,
                                                    tmp_path: Path) -> None:
    deadline = time.monotonic() + 10
    while True:
        out = kubectl(cluster.url, tmp_path, "get", "lease", "-A").stdout.splitlines()
        rows = [line.split() for line in out[1:]]
        if len(rows) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert out[0].split() == ["NAMESPACE", "NAME", "HOLDER", "AGE"]
    assert sorted(r[:3] for r in rows) == [["kube-node-lease", n, n] for n in cluster.node_names]
    first = json.loads(kubectl(cluster.url, tmp_path, "get", "lease", "-n", "kube-node-lease",
                               cluster.node_names[0], "-o", "json").stdout)
    assert first["spec"]["leaseDurationSeconds"] == 40
    assert first["metadata"]["ownerReferences"][0]["kind"] == "Node"
    time.sleep(0.6)  # the cluster renews every 200 ms (cluster_process TIMINGS)
    again = json.loads(kubectl(cluster.url, tmp_path, "get", "lease", "-n", "kube-node-lease",
                               cluster.node_names[0], "-o", "json").stdout)
    assert again["spec"]["renewTime"] > first["spec"]["renewTime"]


@pytest.mark.parametrize("binary", BINARIES, ids=lambda p: p.rsplit("/", 1)[1])
def test_lock_lease_crud_and_explain(cluster: ClusterProcesses, tmp_path: Path,
                                     binary: str) -> None:
    name = "lock-" + binary.rsplit(".", 1)[-1].replace("/", "-").lower()

    def run(*args: str, stdin: str | None = None, ok: bool = True):
        return kubectl(cluster.url, tmp_path, *args, stdin=stdin, ok=ok, binary=binary)

    run("apply", "-f", "-", stdin=LOCK.format(name=name, holder="me", duration=15))
    row = run("get", "lease", name, "--no-headers").stdout.split()
    assert row[:2] == [name, "me"]
    holder = run("get", "lease", name, "-o", "jsonpath={.spec.holderIdentity}").stdout
    assert holder == "me"
    explained = run("explain", "lease.spec").stdout
    assert "holderIdentity" in explained and "leaseDurationSeconds" in explained
    bad = run("apply", "-f", "-", stdin=LOCK.format(name=name + "-bad", holder="x", duration=0),
              ok=False)
    assert bad.returncode != 0
    assert "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0" in bad.stderr
    assert "deleted" in run("delete", "lease", name).stdout
