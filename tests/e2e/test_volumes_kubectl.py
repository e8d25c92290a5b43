"""PersistentVolumes with the real kubectl against `minikube-py start`: `kubectl apply -f` a
PV, a claim and a pod that mounts it; `kubectl get pv,pvc` shows both Bound; the pod runs.
The pod names its node (spec.nodeName), so this exercises the claim binder and the kubelet's
mount wait, not the scheduler's volume predicates (tested with the scheduler). The claim says
`storageClassName: ""` (no class), as a claim for a hand-made volume must on a cluster with a
default StorageClass (`start` ships one; test_storage_kubectl.py provisions through it).
Older and newer kubectl (1.27, 1.33) apply and list their own volumes against the same cluster."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found "
                                 "(the machine image provides it)"), pytest.mark.slow]

SDK = "/usr/lib/google-cloud-sdk/bin"
MANIFEST = """apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}-pv, labels: {{app: {name}}}}}
spec:
  capacity: {{storage: 2Gi}}
  accessModes: [ReadWriteOnce]
  hostPath: {{path: /mnt/{name}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}-data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {{requests: {{storage: 1Gi}}}}
  selector: {{matchLabels: {{app: {name}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  nodeName: node-0
  containers:
  - name: web
    image: nginx
    volumeMounts: [{{name: data, mountPath: /data}}]
  volumes:
  - name: data
    persistentVolumeClaim: {{claimName: {name}-data}}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ClusterProcesses(tmp_path_factory.mktemp("volumes"), nodes=1)
    c.start()
    yield c
    c.stop()


def kubectl_at(c: ClusterProcesses, binary: str, *args: str,
               input: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([binary, "-s", c.url, *args], input=input, text=True,
                          capture_output=True, timeout=60,
                          env={**os.environ, "HOME": str(c.tmp)})
    assert done.returncode == 0, f"{binary} {' '.join(args)}: {done.stderr}{done.stdout}"
    return done


def rows(output: str) -> dict[str, list[str]]:
    """`kubectl get` output keyed by the first column (NAME), header included."""
    table: dict[str, list[str]] = {}
    for line in output.splitlines():
        # ACCESS MODES / RECLAIM POLICY headers contain one space; cells never do
        cells = line.replace("ACCESS MODES", "ACCESS_MODES").replace(
            "RECLAIM POLICY", "RECLAIM_POLICY").split()
        if cells:
            table[cells[0]] = cells
    return table


def test_apply_claim_binds_and_pod_runs(cluster: ClusterProcesses) -> None:
    out = cluster.kubectl("apply", "-f", "-", input=MANIFEST.format(name="db")).stdout
    assert "persistentvolume/db-pv created" in out
    assert "persistentvolumeclaim/db-data created" in out and "pod/db created" in out

    def bound() -> bool:
        claim = cluster.get("/api/v1/namespaces/default/persistentvolumeclaims/db-data")
        return claim["status"].get("phase") == "Bound"

    cluster.wait(bound, 30, "claim db-data Bound")
    table = rows(cluster.kubectl("get", "pv,pvc").stdout)
    header = table["NAME"]
    assert header[:4] == ["NAME", "CAPACITY", "ACCESS_MODES", "RECLAIM_POLICY"] or \
        header[:5] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS_MODES"]
    pv = table["persistentvolume/db-pv"]
    assert pv[1:6] == ["2Gi", "RWO", "Retain", "Bound", "default/db-data"]
    pvc = table["persistentvolumeclaim/db-data"]
    assert pvc[1:5] == ["Bound", "db-pv", "2Gi", "RWO"]
    pod = cluster.wait(lambda: [p for p in cluster.pods() if p["metadata"]["name"] == "db"
                                and running(p)], 30, "pod db Running")[0]
    assert pod["spec"]["nodeName"] == cluster.node_names[0]
    # re-applying the same manifest changes nothing (client-side apply over our OpenAPI)
    again = cluster.kubectl("apply", "-f", "-", input=MANIFEST.format(name="db")).stdout
    assert "persistentvolume/db-pv unchanged" in again
    assert "persistentvolumeclaim/db-data unchanged" in again
    # short names
    assert "db-pv" in cluster.kubectl("get", "pv", "-o", "name").stdout
    assert "db-data" in cluster.kubectl("get", "pvc", "-o", "name").stdout


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_other_kubectl_versions_apply_and_list(cluster: ClusterProcesses, version: str) -> None:
    binary = f"{SDK}/kubectl.{version}"
    if not os.path.exists(binary):
        pytest.skip(f"{binary} not installed")
    name = "v" + version.replace(".", "")
    kubectl_at(cluster, binary, "apply", "-f", "-", input=MANIFEST.format(name=name))
    cluster.wait(lambda: cluster.get(f"/api/v1/namespaces/default/persistentvolumeclaims/"
                                     f"{name}-data")["status"].get("phase") == "Bound",
                 30, f"claim {name}-data Bound")
    table = rows(kubectl_at(cluster, binary, "get", "pvc", f"{name}-data").stdout)
    assert table[f"{name}-data"][1:3] == ["Bound", f"{name}-pv"]
    table = rows(kubectl_at(cluster, binary, "get", "pv", f"{name}-pv").stdout)
    assert table[f"{name}-pv"][4:6] == ["Bound", f"default/{name}-data"]
