"""ValidatingAdmissionPolicy with real clients (issue 16): the official client's
AdmissionregistrationV1Api creates a policy and its binding, and kubectl 1.31 walks through the
upstream documentation's example (apply, the denied `kubectl create deploy`, `kubectl get`)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.31"
CHAIN = ("NamespaceLifecycle", "ValidatingAdmissionPolicy")

#: kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/ (the binding
#: without its namespaceSelector, so that `default` is covered)
POLICY_YAML = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
"""


@pytest.fixture
def server(tmp_path: Path):
    s = ServerThread(tmp_path / "data", admission_control=CHAIN).start()
    yield s
    s.stop()


def _deployment(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_official_client_admissionregistration_v1_api(server: ServerThread) -> None:
    pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    configuration = client.Configuration()
    configuration.host = server.url
    with client.ApiClient(configuration) as api:
        admission = client.AdmissionregistrationV1Api(api)
        rule = client.V1NamedRuleWithOperations(
            api_groups=["apps"], api_versions=["v1"], operations=["CREATE", "UPDATE"],
            resources=["deployments"])
        created = admission.create_validating_admission_policy(client.V1ValidatingAdmissionPolicy(
            metadata=client.V1ObjectMeta(name="demo-policy.example.com"),
            spec=client.V1ValidatingAdmissionPolicySpec(
                match_constraints=client.V1MatchResources(resource_rules=[rule]),
                validations=[client.V1Validation(expression="object.spec.replicas <= 5")])))
        assert created.spec.failure_policy == "Fail"
        assert created.spec.match_constraints.match_policy == "Equivalent"
        admission.create_validating_admission_policy_binding(
            client.V1ValidatingAdmissionPolicyBinding(
                metadata=client.V1ObjectMeta(name="demo-binding-test.example.com"),
                spec=client.V1ValidatingAdmissionPolicyBindingSpec(
                    policy_name="demo-policy.example.com", validation_actions=["Deny"])))
        names = [b.metadata.name for b in
                 admission.list_validating_admission_policy_binding().items]
        assert names == ["demo-binding-test.example.com"]
        apps = client.AppsV1Api(api)
        error = None
        for _ in range(250):  # the plugin learns of the binding through its informer
            try:
                apps.create_namespaced_deployment("default", _deployment("probe", 6),
                                                  dry_run="All")
            except ApiException as exc:
                error = exc
                break
            time.sleep(0.02)
        assert error is not None and error.status == 422
        assert "failed expression: object.spec.replicas <= 5" in error.body
        apps.create_namespaced_deployment("default", _deployment("small", 2))
        status = admission.read_validating_admission_policy_status("demo-policy.example.com")
        assert status.metadata.generation == 1
        admission.delete_validating_admission_policy_binding("demo-binding-test.example.com")
        admission.delete_validating_admission_policy("demo-policy.example.com")
        assert admission.list_validating_admission_policy().items == []


def _kubectl(server: ServerThread, home: Path, *args: str, stdin: str | None = None,
             ok: bool = True) -> subprocess.CompletedProcess:
    return kubectl(server.url, home, *args, stdin=stdin, ok=ok)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_documentation_walkthrough(server: ServerThread, tmp_path: Path) -> None:
    out = _kubectl(server, tmp_path, "apply", "-f", "-", stdin=POLICY_YAML).stdout
    assert ("validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com "
            "created") in out
    assert ("validatingadmissionpolicybinding.admissionregistration.k8s.io/"
            "demo-binding-test.example.com created") in out
    result = None
    for _ in range(50):
        result = _kubectl(server, tmp_path, "create", "deploy", "nginx", "--image=nginx",
                          "--replicas=6", ok=False)
        if result.returncode != 0:
            break
        _kubectl(server, tmp_path, "delete", "deploy", "nginx")
        time.sleep(0.05)
    assert result is not None and result.returncode != 0
    assert result.stderr.strip() == (
        'error: failed to create deployment: deployments.apps "nginx" is forbidden: '
        "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
        "'demo-binding-test.example.com' denied request: failed expression: "
        "object.spec.replicas <= 5")
    out = _kubectl(server, tmp_path, "get", "validatingadmissionpolicies").stdout
    assert out.split()[:7] == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE",
                               "demo-policy.example.com", "1", "<unset>"]
    out = _kubectl(server, tmp_path, "get", "validatingadmissionpolicybindings").stdout
    assert out.split()[:7] == ["NAME", "POLICYNAME", "PARAMREF", "AGE",
                               "demo-binding-test.example.com", "demo-policy.example.com",
                               "<unset>"]
    # re-applying the manifest (its rules lack the defaulted `scope`, so kubectl sends the
    # atomic list again) changes nothing: defaults do not bump the generation
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=POLICY_YAML)
    out = _kubectl(server, tmp_path, "get", "validatingadmissionpolicy",
                   "demo-policy.example.com", "-o", "jsonpath={.metadata.generation}").stdout
    assert out == "1"


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_prints_the_warn_action(server: ServerThread, tmp_path: Path) -> None:
    manifest = POLICY_YAML.replace("validationActions: [Deny]", "validationActions: [Warn]")
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=manifest)
    warning = ("Warning: Validation failed for ValidatingAdmissionPolicy "
               "'demo-policy.example.com' with binding 'demo-binding-test.example.com': "
               "failed expression: object.spec.replicas <= 5")
    for _ in range(50):
        result = _kubectl(server, tmp_path, "create", "deploy", "nginx", "--image=nginx",
                          "--replicas=6", "--dry-run=server")
        if warning in result.stderr:
            break
        time.sleep(0.05)
    assert warning in result.stderr
    assert "deployment.apps/nginx created (server dry run)" in result.stdout
