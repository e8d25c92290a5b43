"""Removed versions served by `--runtime-config legacy/v1.20=true`, through real kubectl:
`kubectl apply` of a policy/v1beta1 PDB with an empty selector, then `kubectl get` of it in
both versions (the v1 view shows upstream's match-none marker), and a batch/v1beta1 CronJob
listed by its fully qualified resource name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl

KUBECTL = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.27")
pytestmark = pytest.mark.skipif(not KUBECTL.exists(), reason=f"{KUBECTL} is not installed")

PDB = """\
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: none}
spec:
  minAvailable: 1
  selector: {}
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    thread = ServerThread(tmp_path / "data", runtime_config="legacy/v1.20=true").start()
    try:
        yield thread
    finally:
        thread.stop()


def test_kubectl_writes_and_reads_policy_v1beta1(server: ServerThread, tmp_path: Path) -> None:
    run = lambda *args, **kw: kubectl(server.url, tmp_path, *args, binary=str(KUBECTL), **kw)
    applied = run("apply", "-f", "-", stdin=PDB)
    assert "poddisruptionbudget.policy/none created" in applied.stdout
    assert "deprecated in v1.21+" in applied.stderr
    beta = json.loads(run("get", "poddisruptionbudgets.v1beta1.policy", "none", "-o", "json").stdout)
    assert (beta["apiVersion"], beta["spec"]["selector"]) == ("policy/v1beta1", {})
    v1 = json.loads(run("get", "poddisruptionbudgets.v1.policy", "none", "-o", "json").stdout)
    assert v1["spec"]["selector"]["matchExpressions"][0]["operator"] == "Exists"
    table = run("get", "cronjobs.v1beta1.batch", "-A")
    assert table.returncode == 0 and "No resources found" in table.stderr
