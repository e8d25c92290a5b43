"""kopf's walkthrough operator on a custom resource, run as users run it (issue 16).

tests/e2e/kopf_operator/ is the walkthrough of docs.kopf.dev as files a user could copy: the
`EphemeralVolumeClaim` CRD (kopf.dev/v1), kopf's peering CRDs with the cluster-wide `default`
peering, and `ephemeral.py`. The test applies them with kubectl 1.31 through the kubeconfig
that `minikube-py start` wrote (HTTPS + token), then starts `kopf run --peering=default -A`
as a real subprocess with that kubeconfig in `KUBECONFIG`, and watches the control plane:

- the create handler made the child PVC (adopted: owner reference to the claim), and what it
  returned is in `status.create_fn`; kopf's finalizer is on the claim;
- the update handler resized the PVC once it was Bound; the field handler synced the labels;
- the delete handler ran and kopf removed its finalizer, so the claim is gone, and the
  garbage collector deleted the adopted PVC with it;
- the handlers' `kopf.info`/`kopf.event` Events and kopf's own "Handler ... succeeded." log
  lines are core/v1 Events that `kubectl get events` shows;
- the operator announced itself in `ClusterKopfPeering/default`'s status while it ran, and
  withdrew on SIGINT, exiting 0;
- its log has no traceback, no ERROR or WARNING, and no "Unresolved resources".

The same operator restricted to a namespace (`--namespace=<ns> --peering=team`) uses a
namespaced `KopfPeering` there and leaves the claims of other namespaces alone. Two operators
on one peering: the lower priority pauses while the higher one runs, and resumes after it.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kopf", reason="kopf is not installed: pip install -e '.[test]'")

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    cluster,
    deadline,
    kubeconfig,
    namespace,
    send,
)
from tests.e2e.cluster_process import KUBECTL, ClusterProcesses

OPERATOR_DIR = Path(__file__).with_name("kopf_operator")
EVC = "/apis/kopf.dev/v1/namespaces/{ns}/ephemeralvolumeclaims/my-claim"
PVC = "/api/v1/namespaces/{ns}/persistentvolumeclaims/my-claim"
PEERING = "/apis/kopf.dev/v1/clusterkopfpeerings/default"


def kubectl(kubeconfig: Path, *args: str, timeout: float = CALL_TIMEOUT) -> str:
    """kubectl 1.31 as the walkthrough's user runs it: the cluster from the kubeconfig."""
    done = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], check=False,
                          text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, "HOME": str(kubeconfig.parent)})
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def crds(cluster: ClusterProcesses, kubeconfig: Path) -> None:
    """The walkthrough's CRD, kopf's peering CRDs, the `default` peering, and a volume of the
    `standard` class for the claim to bind to (no dynamic provisioning here, as on kind)."""
    kubectl(kubeconfig, "apply", "-f", str(OPERATOR_DIR / "crd.yaml"),
            "-f", str(OPERATOR_DIR / "peering.yaml"))
    kubectl(kubeconfig, "wait", "--for=condition=Established", "--timeout=20s",
            "crd/ephemeralvolumeclaims.kopf.dev", "crd/clusterkopfpeerings.kopf.dev",
            "crd/kopfpeerings.kopf.dev")
    kubectl(kubeconfig, "apply", "-f", str(OPERATOR_DIR / "peering-default.yaml"),
            "-f", str(OPERATOR_DIR / "pv.yaml"))


@contextlib.contextmanager
def kopf_run(kubeconfig: Path, log: Path, *args: str) -> Iterator[subprocess.Popen]:
    """`kopf run --verbose <args> ephemeral.py` as a subprocess, its output in `log`."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kopf", "run", "--verbose", *args,
             str(OPERATOR_DIR / "ephemeral.py")],
            stdout=out, stderr=subprocess.STDOUT, cwd=log.parent,
            env={**os.environ, "KUBECONFIG": str(kubeconfig), "PYTHONUNBUFFERED": "1"})
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture
def operator(crds: None, kubeconfig: Path, tmp_path: Path) -> Iterator[subprocess.Popen]:
    """`kopf run --verbose --peering=default -A ephemeral.py` (cluster-wide)."""
    with kopf_run(kubeconfig, tmp_path / "operator.log", "--peering=default", "-A") as proc:
        yield proc


def assert_clean(log: str) -> None:
    bad = ("Traceback", "[ERROR", "[WARNING", "Unresolved resources", "inconsistencies")
    assert [line for line in log.splitlines() if any(b in line for b in bad)] == []


def peers(cluster: ClusterProcesses) -> dict[str, Any]:
    return cluster.get(PEERING).get("status") or {}


def events(kubeconfig: Path, namespace: str) -> list[dict[str, Any]]:
    return json.loads(kubectl(kubeconfig, "get", "events", "-n", namespace, "-o", "json"))["items"]


def test_walkthrough_operator(cluster: ClusterProcesses, kubeconfig: Path, namespace: str,
                              operator: subprocess.Popen, tmp_path: Path):
    evc, pvc = EVC.format(ns=namespace), PVC.format(ns=namespace)
    wait = cluster.wait
    me = wait(lambda: list(peers(cluster)), CALL_TIMEOUT, "the operator in the peering status")
    assert len(me) == 1 and peers(cluster)[me[0]]["priority"] == 0

    kubectl(kubeconfig, "apply", "-n", namespace, "-f", str(OPERATOR_DIR / "evc.yaml"))
    status = wait(lambda: cluster.get(evc).get("status", {}).get("create_fn"), CALL_TIMEOUT,
                  "the create handler's result in status")
    assert status == {"pvc-name": "my-claim"}
    claim = cluster.get(evc)
    assert claim["metadata"]["finalizers"] == ["kopf.zalando.org/KopfFinalizerMarker"]
    child = cluster.get(pvc)
    assert child["metadata"]["ownerReferences"] == [{
        "apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim", "name": "my-claim",
        "uid": claim["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert child["spec"]["resources"]["requests"]["storage"] == "1G"
    assert kubectl(kubeconfig, "get", "evc", "-n", namespace, "my-claim",
                   "-o", "jsonpath={.status.create_fn.pvc-name}") == "my-claim"

    # a claim can only be resized once Bound (upstream's PVC update validation)
    wait(lambda: cluster.get(pvc)["status"].get("phase") == "Bound", CALL_TIMEOUT, "PVC Bound")
    kubectl(kubeconfig, "patch", "evc", "my-claim", "-n", namespace, "--type", "merge",
            "-p", '{"spec": {"size": "2G"}}')
    wait(lambda: cluster.get(pvc)["spec"]["resources"]["requests"]["storage"] == "2G",
         CALL_TIMEOUT, "the update handler's resize")
    kubectl(kubeconfig, "label", "evc", "my-claim", "-n", namespace, "application=some-app",
            "owner=me")
    wait(lambda: cluster.get(pvc)["metadata"].get("labels") == {
        "application": "some-app", "owner": "me"}, CALL_TIMEOUT, "the relabel field handler")

    # `kubectl delete` waits until the object is gone: until kopf removed its finalizer
    out = kubectl(kubeconfig, "delete", "evc", "my-claim", "-n", namespace, "--timeout=20s")
    assert out == 'ephemeralvolumeclaim.kopf.dev "my-claim" deleted\n'
    assert kubectl(kubeconfig, "get", "evc", "-n", namespace, "-o", "name") == ""
    # the walkthrough's "cascaded deletion": the adopted PVC goes with its claim (the garbage
    # collector watches the custom resource)
    wait(lambda: kubectl(kubeconfig, "get", "pvc", "-n", namespace, "-o", "name") == "",
         CALL_TIMEOUT, "the child PVC collected")

    by_reason = {e["reason"]: e for e in wait(
        lambda: [e for e in events(kubeconfig, namespace)
                 if e["involvedObject"]["kind"] == "EphemeralVolumeClaim"
                 and e["reason"] == "Deleting"] and events(kubeconfig, namespace),
        CALL_TIMEOUT, "the delete handler's Event")}
    assert by_reason["PvcCreated"]["message"] == "PVC my-claim of size 1G"
    assert by_reason["PvcResized"]["message"] == "1G -> 2G"
    assert by_reason["Deleting"]["involvedObject"]["apiVersion"] == "kopf.dev/v1"
    assert by_reason["Deleting"]["involvedObject"]["uid"] == claim["metadata"]["uid"]
    assert by_reason["PvcCreated"]["source"]["component"] == "kopf"
    logged = {e["message"] for e in events(kubeconfig, namespace) if e["reason"] == "Logging"}
    assert {"Handler 'create_fn' succeeded.", "Handler 'delete_fn' succeeded."} <= logged
    table = kubectl(kubeconfig, "get", "events", "-n", namespace)
    assert "ephemeralvolumeclaim/my-claim" in table and "PvcResized" in table

    operator.send_signal(signal.SIGINT)
    assert operator.wait(CALL_TIMEOUT) == 0
    assert peers(cluster) == {}  # it withdrew from the peering on exit
    log = (tmp_path / "operator.log").read_text()
    assert "Handler 'update_fn/spec.size' succeeded." in log
    assert "Handler 'relabel/metadata.labels' succeeded." in log
    assert_clean(log)


@pytest.mark.usefixtures("crds")
def test_namespaced_operator_with_its_own_peering(cluster: ClusterProcesses, kubeconfig: Path,
                                                  namespace: str, tmp_path: Path):
    """`kopf run --namespace=<ns> --peering=team`: a namespaced `KopfPeering` in that
    namespace, a namespaced watch, and claims elsewhere left alone."""
    peering = f"/apis/kopf.dev/v1/namespaces/{namespace}/kopfpeerings/team"
    send(cluster, "POST", f"/apis/kopf.dev/v1/namespaces/{namespace}/kopfpeerings",
         {"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": "team"}})
    other = f"o-{namespace}"
    send(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": other}})
    with kopf_run(kubeconfig, tmp_path / "operator.log", f"--namespace={namespace}",
                  "--peering=team") as operator:
        cluster.wait(lambda: cluster.get(peering).get("status"), CALL_TIMEOUT,
                     "the operator in the namespaced peering")
        for ns in (other, namespace):
            kubectl(kubeconfig, "apply", "-n", ns, "-f", str(OPERATOR_DIR / "evc.yaml"))
        mine = EVC.format(ns=namespace)
        cluster.wait(lambda: cluster.get(mine).get("status", {}).get("create_fn"),
                     CALL_TIMEOUT, "the create handler's result in status")
        theirs = cluster.get(EVC.format(ns=other))
        assert "status" not in theirs and "finalizers" not in theirs["metadata"]
        send(cluster, "DELETE", EVC.format(ns=other))  # (no finalizer: gone at once)
        kubectl(kubeconfig, "delete", "evc", "my-claim", "-n", namespace, "--timeout=20s")
        operator.send_signal(signal.SIGINT)
        assert operator.wait(CALL_TIMEOUT) == 0
    assert cluster.get(peering).get("status") in (None, {})
    log = (tmp_path / "operator.log").read_text()
    assert "Handler 'delete_fn' succeeded." in log
    assert_clean(log)


@pytest.mark.usefixtures("crds")
def test_a_higher_priority_operator_takes_over(cluster: ClusterProcesses, kubeconfig: Path,
                                               namespace: str, tmp_path: Path):
    """kopf's peering docs: of two operators on one peering, the one with the lower
    priority pauses while the higher one runs, and resumes when it leaves. Both see each
    other only through the `ClusterKopfPeering` object's status (patches and watch)."""
    low_log, high_log = tmp_path / "low.log", tmp_path / "high.log"
    with kopf_run(kubeconfig, low_log, "--peering=default", "-A", "--priority=10") as low:
        cluster.wait(lambda: len(peers(cluster)) == 1, CALL_TIMEOUT, "the first peer")
        with kopf_run(kubeconfig, high_log, "--peering=default", "-A",
                      "--priority=100") as high:
            cluster.wait(lambda: "Pausing operations in favour of" in low_log.read_text(),
                         CALL_TIMEOUT, "the low-priority operator paused")
            assert sorted(p["priority"] for p in peers(cluster).values()) == [10, 100]
            kubectl(kubeconfig, "apply", "-n", namespace, "-f", str(OPERATOR_DIR / "evc.yaml"))
            cluster.wait(lambda: cluster.get(EVC.format(ns=namespace)).get("status"),
                         CALL_TIMEOUT, "the create handler's result")
            high.send_signal(signal.SIGINT)
            assert high.wait(CALL_TIMEOUT) == 0
        cluster.wait(lambda: low_log.read_text().count("Resuming operations after the pause")
                     == 2, CALL_TIMEOUT, "the low-priority operator resumed")
        assert [p["priority"] for p in peers(cluster).values()] == [10]
        kubectl(kubeconfig, "delete", "evc", "my-claim", "-n", namespace, "--timeout=20s")
        low.send_signal(signal.SIGINT)
        assert low.wait(CALL_TIMEOUT) == 0
    mine = f"[{namespace}/my-claim] Handler"  # (a cluster-wide operator sees other tests' claims)
    assert f"{mine} 'create_fn' succeeded." in high_log.read_text()
    low_text = low_log.read_text()
    assert f"{mine} 'create_fn'" not in low_text  # it was paused when the claim came
    assert f"{mine} 'delete_fn' succeeded." in low_text  # and handled the rest after
    for text in (low_text, high_log.read_text()):
        assert_clean(text)
