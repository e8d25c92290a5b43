"""Admission webhooks seen through real kubectl (issue 16): `kubectl apply` installs a
ValidatingWebhookConfiguration and a MutatingWebhookConfiguration, then kubectl shows the
webhook's denial message and warnings exactly as upstream's API server words them, and the
label a mutating webhook adds."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl
from tests.webhook_server import WebhookServer

KUBECTL = "/usr/bin/kubectl"
ADMISSION = ("NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook")

CONFIGS = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: no-latest
webhooks:
- name: no-latest.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    url: {url}/validate
    caBundle: {ca}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: labeler
webhooks:
- name: labeler.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    url: {url}/mutate
    caBundle: {ca}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
"""


def _validate(body: dict) -> dict:
    request = body["request"]
    images = [c["image"] for c in request["object"]["spec"]["containers"]]
    response = {"uid": request["uid"], "allowed": True, "warnings": ["checked by no-latest"]}
    if any(image.endswith(":latest") for image in images):
        response.update(allowed=False, status={"code": 403, "reason": "Forbidden",
                                               "message": "the :latest tag is not allowed"})
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": response}


def _mutate(body: dict) -> dict:
    patch = [{"op": "add", "path": "/metadata/labels/admitted-by", "value": "labeler"}]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": body["request"]["uid"], "allowed": True, "patchType": "JSONPatch",
                         "patch": base64.b64encode(orjson.dumps(patch)).decode()}}


@pytest.fixture
def cluster(tmp_path: Path):
    server = ServerThread(tmp_path / "data", admission_control=ADMISSION).start()
    hook = WebhookServer(tmp_path / "certs", name="hook").start()
    hook.json("/validate", _validate)
    hook.json("/mutate", _mutate)
    try:
        yield server, hook
    finally:
        hook.stop()
        server.stop()


def _kubectl(server: ServerThread, home: Path, *args: str, stdin: str | None = None,
             ok: bool = True) -> subprocess.CompletedProcess:
    return kubectl(server.url, home, *args, stdin=stdin, ok=ok)


def _until_cached(server: ServerThread) -> None:
    sources = [p.source for p in server.server.admission.plugins if hasattr(p, "source")]
    deadline = time.monotonic() + 10
    while any(not s.hooks for s in sources):
        assert time.monotonic() < deadline, "webhook configurations not cached"
        time.sleep(0.02)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_shows_the_webhooks_denial_and_warnings(cluster, tmp_path: Path) -> None:
    server, hook = cluster
    out = _kubectl(server, tmp_path, "apply", "-f", "-",
                   stdin=CONFIGS.format(url=hook.url, ca=hook.ca_bundle)).stdout
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/no-latest created" in out
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/labeler created" in out
    _until_cached(server)

    denied = _kubectl(server, tmp_path, "run", "web", "--image=nginx:latest", ok=False)
    assert denied.returncode == 1
    assert "Warning: checked by no-latest" in denied.stderr
    assert ('Error from server (Forbidden): admission webhook "no-latest.example.com" denied '
            "the request: the :latest tag is not allowed") in denied.stderr

    allowed = _kubectl(server, tmp_path, "run", "web", "--image=nginx:1.27")
    assert "pod/web created" in allowed.stdout
    assert "Warning: checked by no-latest" in allowed.stderr
    labels = _kubectl(server, tmp_path, "get", "pod", "web",
                      "-o", "jsonpath={.metadata.labels.admitted-by}").stdout
    assert labels == "labeler"
    listed = _kubectl(server, tmp_path, "get", "validatingwebhookconfigurations").stdout
    assert listed.split("\n")[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert listed.split("\n")[1].split()[:2] == ["no-latest", "1"]


MUTATING_BY_SERVICE = """apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: injector
webhooks:
- name: injector.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1]
  clientConfig:
    service: {{namespace: default, name: hook, path: /mutate, port: {port}}}
    caBundle: {ca}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
"""


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_controllers_pods_are_mutated_in_a_running_cluster(tmp_path: Path) -> None:
    """`minikube-py start` as a process: a webhook reached through a Service mutates the pods
    the ReplicaSet controller creates (controllers write through the same admission)."""
    from tests.e2e.cluster_process import ClusterProcesses

    cluster = ClusterProcesses(tmp_path / "cluster", nodes=1).start()
    hook = WebhookServer(tmp_path / "certs", name="hook").start()
    hook.json("/mutate", _mutate)
    try:
        port = hook.publish(cluster.url)
        cluster.kubectl("apply", "-f", "-",
                        input=MUTATING_BY_SERVICE.format(port=port, ca=hook.ca_bundle))

        def probe() -> bool:  # a server-side dry run shows when the webhook is in effect
            out = cluster.kubectl("run", "probe", "--image=nginx", "--dry-run=server",
                                  "-o", "jsonpath={.metadata.labels.admitted-by}").stdout
            return out == "labeler"
        cluster.wait(probe, what="the webhook to be in effect")
        assert any(body["request"]["dryRun"] for _, body, _ in hook.requests)

        cluster.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
        pods = cluster.wait(lambda: [p for p in cluster.pods(selector="app=web")
                                     if p["metadata"]["labels"].get("admitted-by")]
                            if len(cluster.pods(selector="app=web")) == 2 else None,
                            what="two mutated pods")
        assert len(pods) == 2
        # the ReplicaSet controller's creates: generateName, so no name in the request yet
        generated = [body["request"] for _, body, _ in hook.requests
                     if "name" not in body["request"]]
        assert len(generated) >= 2
        assert all(r["object"]["metadata"]["generateName"].startswith("web-")
                   for r in generated)
    finally:
        hook.stop()
        cluster.stop()
