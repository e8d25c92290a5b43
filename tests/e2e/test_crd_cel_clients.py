"""CRD x-kubernetes-validations with real clients (issue 16): kubectl 1.31 shows upstream's
rule messages for a custom resource and for a CRD whose rule does not compile; the official
client gets the 422 Status with its causes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.test_crds_clients import CR_YAML, CRD_YAML, KUBECTL, _kubectl, server  # noqa: F401

RULES = """            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas <= 10"
              message: replicas must be at most 10
            - rule: self.image.startsWith('my-')
              fieldPath: .image
              reason: FieldValueForbidden
"""
RULES_CRD = CRD_YAML.replace("            type: object\n            properties:\n              cronSpec",
                             "            type: object\n" + RULES
                             + "            properties:\n              cronSpec", 1)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_sees_rule_messages(server: ServerThread, tmp_path: Path) -> None:  # noqa: F811
    assert RULES_CRD != CRD_YAML
    broken = RULES_CRD.replace("self.replicas <= 10", "self.replicas <=")
    result = _kubectl(server, tmp_path, "apply", "-f", "-", stdin=broken, ok=False)
    assert result.returncode != 0
    assert ("spec.versions[0].schema.openAPIV3Schema.properties[spec]."
            "x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule"
            '{Rule:"!has(self.replicas) || self.replicas <="') in result.stderr, result.stderr
    assert "compilation failed: ERROR: <input>:1:" in result.stderr
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=RULES_CRD)
    _kubectl(server, tmp_path, "wait", "--for=condition=Established", "--timeout=10s",
             "crd/crontabs.stable.example.com")
    result = _kubectl(server, tmp_path, "apply", "-f", "-", ok=False,
                      stdin=CR_YAML + "  replicas: 11\n")
    assert result.returncode != 0
    assert ('The CronTab "my-new-cron-object" is invalid: spec: Invalid value: "object": '
            'replicas must be at most 10') in result.stderr, result.stderr
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=CR_YAML + "  replicas: 10\n")
    result = _kubectl(server, tmp_path, "patch", "ct", "my-new-cron-object", "--type=merge",
                      "-p", json.dumps({"spec": {"image": "other"}}), ok=False)
    assert result.returncode != 0
    assert ("spec.image: Forbidden: failed rule: self.image.startsWith('my-')"
            in result.stderr), result.stderr


def test_official_client_gets_the_causes(server: ServerThread) -> None:  # noqa: F811
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    import yaml
    from kubernetes.client.rest import ApiException

    configuration = kubernetes.client.Configuration()
    configuration.host = server.url
    with kubernetes.client.ApiClient(configuration) as api:
        ext = kubernetes.client.ApiextensionsV1Api(api)
        ext.create_custom_resource_definition(yaml.safe_load(RULES_CRD))
        for _ in range(100):
            crd = ext.read_custom_resource_definition("crontabs.stable.example.com")
            if any(c.type == "Established" and c.status == "True"
                   for c in (crd.status.conditions or ())):
                break
            time.sleep(0.02)
        objects = kubernetes.client.CustomObjectsApi(api)
        args = ("stable.example.com", "v1", "default", "crontabs")
        body = yaml.safe_load(CR_YAML)
        body["spec"].update(replicas=50, image="nope")
        with pytest.raises(ApiException) as err:
            objects.create_namespaced_custom_object(*args, body)
        assert err.value.status == 422
        status = json.loads(err.value.body)
        assert status["reason"] == "Invalid"
        assert status["details"]["causes"] == [
            {"reason": "FieldValueInvalid", "field": "spec",
             "message": 'Invalid value: "object": replicas must be at most 10'},
            {"reason": "FieldValueForbidden", "field": "spec.image",
             "message": "Forbidden: failed rule: self.image.startsWith('my-')"}]
