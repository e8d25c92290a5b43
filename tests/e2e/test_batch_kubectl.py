"""batch/v1 Jobs and CronJobs on a real `minikube-py start` cluster (Node,RBAC: the job
controller acts as system:serviceaccount:kube-system:job-controller), through the kubeconfig,
with every kubectl 1.27+ on the machine and the official Python client's BatchV1Api.

The docs' Job ("Running an example Job": perl computing π to 2000 digits) completes and
`kubectl wait --for=condition=complete` returns; `create job`, `create cronjob` and
`create job --from=cronjob/...` work with each kubectl. CronJob timing is covered in-process
(tests/integration/test_cronjob_controller.py), where the clock can be advanced.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import glob
import os
import subprocess
import time
import urllib.error
from pathlib import Path

import pytest

pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client, config

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    cluster,
    deadline,
    kubeconfig,
    namespace,
    send,
)
from tests.e2e.cluster_process import ClusterProcesses

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl 1.27+ on this machine "
                                "(/usr/lib/google-cloud-sdk/bin/kubectl.1.*)")

PI_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
  backoffLimit: 4
"""


def kubectl(binary: str, kubeconfig: Path, home: Path, *args: str, stdin: str | None = None,
            timeout: float = 40) -> subprocess.CompletedProcess:
    home.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([binary, "--kubeconfig", str(kubeconfig), *args], input=stdin,
                            capture_output=True, text=True, timeout=timeout, check=False,
                            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def test_docs_pi_job_completes(cluster: ClusterProcesses, kubeconfig: Path, namespace: str,
                               tmp_path: Path) -> None:
    k = KUBECTLS[-1]
    ns = ("-n", namespace)
    assert "job.batch/pi created" in kubectl(k, kubeconfig, tmp_path, *ns, "apply", "-f", "-",
                                             stdin=PI_JOB).stdout
    out = kubectl(k, kubeconfig, tmp_path, *ns, "wait", "--for=condition=complete", "job/pi",
                  "--timeout=30s").stdout
    assert "job.batch/pi condition met" in out
    table = kubectl(k, kubeconfig, tmp_path, *ns, "get", "jobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table[1].split()[:3] == ["pi", "Complete", "1/1"]
    logs = kubectl(k, kubeconfig, tmp_path, *ns, "logs", "job/pi").stdout
    assert logs.startswith("3.14159265358979323846264338327950288419716939937510")
    assert len(logs.strip()) == 2001  # 2000 digits and the point
    described = kubectl(k, kubeconfig, tmp_path, *ns, "describe", "job", "pi").stdout
    assert "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed" in described
    assert "Completed" in described and "SuccessfulCreate" in described


@pytest.mark.parametrize("binary", KUBECTLS, ids=lambda p: p.rsplit(".", 2)[-2] + "." +
                         p.rsplit(".", 1)[-1])
def test_kubectl_create_job_and_cronjob(binary: str, cluster: ClusterProcesses,
                                        kubeconfig: Path, namespace: str,
                                        tmp_path: Path) -> None:
    ns = ("-n", namespace)
    kubectl(binary, kubeconfig, tmp_path, *ns, "create", "job", "hi", "--image=busybox", "--",
            "echo", "hi")
    kubectl(binary, kubeconfig, tmp_path, *ns, "wait", "--for=condition=complete", "job/hi",
            "--timeout=30s")
    assert kubectl(binary, kubeconfig, tmp_path, *ns, "logs", "job/hi").stdout == "hi\n"
    kubectl(binary, kubeconfig, tmp_path, *ns, "create", "cronjob", "hello", "--image=busybox",
            "--schedule=*/1 * * * *", "--", "echo", "hello")
    table = kubectl(binary, kubeconfig, tmp_path, *ns, "get", "cj").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE",
                                "LAST", "SCHEDULE", "AGE"]
    assert table[1].split()[:6] == ["hello", "*/1", "*", "*", "*", "*"]
    kubectl(binary, kubeconfig, tmp_path, *ns, "create", "job", "--from=cronjob/hello", "manual")
    kubectl(binary, kubeconfig, tmp_path, *ns, "wait", "--for=condition=complete",
            "job/manual", "--timeout=30s")
    manual = send(cluster, "GET", f"/apis/batch/v1/namespaces/{namespace}/jobs/manual")
    assert manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert manual["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    explain = kubectl(binary, kubeconfig, tmp_path, "explain", "job.spec.completionMode").stdout
    assert "completionMode" in explain
    kubectl(binary, kubeconfig, tmp_path, *ns, "delete", "job", "hi")


def test_python_client_batch_v1(cluster: ClusterProcesses, kubeconfig: Path,
                                namespace: str) -> None:
    with config.new_client_from_config(config_file=str(kubeconfig)) as api_client:
        batch = client.BatchV1Api(api_client)
        body = client.V1Job(
            metadata=client.V1ObjectMeta(name="py"),
            spec=client.V1JobSpec(completions=2, parallelism=2, template=client.V1PodTemplateSpec(
                spec=client.V1PodSpec(restart_policy="Never", containers=[client.V1Container(
                    name="c", image="busybox", command=["sh", "-c", "echo done"])]))))
        created = batch.create_namespaced_job(namespace, body, _request_timeout=CALL_TIMEOUT)
        assert created.spec.backoff_limit == 6 and created.spec.completion_mode == "NonIndexed"
        assert created.spec.selector.match_labels == {
            "batch.kubernetes.io/controller-uid": created.metadata.uid}
        deadline = time.monotonic() + 30
        while True:
            status = batch.read_namespaced_job_status("py", namespace,
                                                      _request_timeout=CALL_TIMEOUT).status
            if status.succeeded == 2 and status.conditions:
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert [c.type for c in status.conditions] == ["Complete"]
        assert status.completion_time is not None and status.start_time is not None
        listed = batch.list_namespaced_job(namespace, _request_timeout=CALL_TIMEOUT)
        assert [j.metadata.name for j in listed.items] == ["py"]
        batch.delete_namespaced_job("py", namespace, propagation_policy="Background",
                                    _request_timeout=CALL_TIMEOUT)
        core = client.CoreV1Api(api_client)
        while core.list_namespaced_pod(namespace, _request_timeout=CALL_TIMEOUT).items:
            assert time.monotonic() < deadline + 20, "the Job's pods were not collected"
            time.sleep(0.2)


def test_ttl_after_finished_removes_job_and_pods(cluster: ClusterProcesses, kubeconfig: Path,
                                                 namespace: str, tmp_path: Path) -> None:
    """ttl-after-finished (as its service account) deletes the finished Job in the foreground;
    the garbage collector removes its pod first."""
    job = PI_JOB.replace("name: pi", "name: short").replace("backoffLimit: 4",
                                                            "backoffLimit: 4\n  "
                                                            "ttlSecondsAfterFinished: 1")
    kubectl(KUBECTLS[-1], kubeconfig, tmp_path, "-n", namespace, "apply", "-f", "-", stdin=job)
    deadline = time.monotonic() + 30
    path = f"/apis/batch/v1/namespaces/{namespace}/jobs/short"
    while True:
        try:
            send(cluster, "GET", path)
        except urllib.error.HTTPError as exc:
            assert exc.code == 404, exc
            break
        assert time.monotonic() < deadline, "the finished Job was not deleted"
        time.sleep(0.2)
    pods = send(cluster, "GET", f"/api/v1/namespaces/{namespace}/pods")
    assert pods["items"] == []
