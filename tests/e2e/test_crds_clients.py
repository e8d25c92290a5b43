"""CustomResourceDefinitions with real clients (issue 16, first slice): kubectl 1.31 applies a
CRD and a custom resource and lists them; the official client's ApiextensionsV1Api and
CustomObjectsApi create, list, patch, write status and delete."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.31"

CRD_YAML = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer}
          status:
            type: object
            properties:
              lastRun: {type: string}
    subresources:
      status: {}
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
"""

CR_YAML = """apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
"""


@pytest.fixture
def server(tmp_path: Path):
    s = ServerThread(tmp_path / "data").start()
    yield s
    s.stop()


def _kubectl(server: ServerThread, home: Path, *args: str, stdin: str | None = None,
             ok: bool = True) -> subprocess.CompletedProcess:
    return kubectl(server.url, home, *args, stdin=stdin, ok=ok)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_applies_a_crd_and_its_objects(server: ServerThread, tmp_path: Path) -> None:
    out = _kubectl(server, tmp_path, "apply", "-f", "-", stdin=CRD_YAML).stdout
    assert "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created" in out
    _kubectl(server, tmp_path, "wait", "--for=condition=Established", "--timeout=10s",
             "crd/crontabs.stable.example.com")
    out = _kubectl(server, tmp_path, "apply", "-f", "-", stdin=CR_YAML).stdout
    assert "crontab.stable.example.com/my-new-cron-object created" in out
    out = _kubectl(server, tmp_path, "get", "crontabs").stdout
    assert out.split()[:4] == ["NAME", "AGE", "my-new-cron-object", out.split()[3]]
    out = _kubectl(server, tmp_path, "get", "ct", "my-new-cron-object", "-o",
                   "jsonpath={.spec.image}").stdout
    assert out == "my-awesome-cron-image"
    # a second apply with a change is a patch (kubectl falls back from strategic merge)
    out = _kubectl(server, tmp_path, "apply", "-f", "-",
                   stdin=CR_YAML.replace("my-awesome-cron-image", "v2")).stdout
    assert "configured" in out
    out = _kubectl(server, tmp_path, "apply", "--server-side", "--force-conflicts", "-f", "-",
                   stdin=CR_YAML.replace("my-awesome-cron-image", "v3")).stdout
    assert "serverside-applied" in out
    assert _kubectl(server, tmp_path, "get", "ct", "my-new-cron-object", "-o",
                    "jsonpath={.spec.image}").stdout == "v3"
    _kubectl(server, tmp_path, "delete", "crd", "crontabs.stable.example.com")
    result = _kubectl(server, tmp_path, "get", "crontabs.stable.example.com", ok=False)
    assert result.returncode != 0


def test_official_client_custom_objects_api(server: ServerThread) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    import yaml
    from kubernetes.client.rest import ApiException

    configuration = kubernetes.client.Configuration()
    configuration.host = server.url
    with kubernetes.client.ApiClient(configuration) as api:
        ext = kubernetes.client.ApiextensionsV1Api(api)
        crd = ext.create_custom_resource_definition(yaml.safe_load(CRD_YAML))
        assert crd.metadata.name == "crontabs.stable.example.com"
        for _ in range(100):
            crd = ext.read_custom_resource_definition("crontabs.stable.example.com")
            if any(c.type == "Established" and c.status == "True"
                   for c in (crd.status.conditions or ())):
                break
            time.sleep(0.02)
        assert crd.status.accepted_names.kind == "CronTab"
        objects = kubernetes.client.CustomObjectsApi(api)
        args = ("stable.example.com", "v1", "default", "crontabs")
        created = objects.create_namespaced_custom_object(*args, yaml.safe_load(CR_YAML))
        assert created["metadata"]["uid"]
        listed = objects.list_namespaced_custom_object(*args)
        assert [o["metadata"]["name"] for o in listed["items"]] == ["my-new-cron-object"]
        patched = objects.patch_namespaced_custom_object(
            *args, "my-new-cron-object", {"spec": {"replicas": 2}})
        assert patched["spec"]["replicas"] == 2
        status = objects.patch_namespaced_custom_object_status(
            *args, "my-new-cron-object", {"status": {"lastRun": "now"}, "spec": {"replicas": 9}})
        assert status["status"] == {"lastRun": "now"} and status["spec"]["replicas"] == 2
        objects.delete_namespaced_custom_object(*args, "my-new-cron-object")
        with pytest.raises(ApiException) as err:
            objects.get_namespaced_custom_object(*args, "my-new-cron-object")
        assert err.value.status == 404
        ext.delete_custom_resource_definition("crontabs.stable.example.com")


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_apply_meets_the_structural_schema(server: ServerThread, tmp_path: Path) -> None:
    """Issue 16's second slice: kubectl 1.31 apply is validated against the CRD's schema (the
    upstream 422 reaches the user as is) and, with fieldValidation=Ignore, unknown fields are pruned."""
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=CRD_YAML)
    _kubectl(server, tmp_path, "wait", "--for=condition=Established", "--timeout=10s",
             "crd/crontabs.stable.example.com")
    result = _kubectl(server, tmp_path, "apply", "-f", "-", ok=False,
                      stdin=CR_YAML + '  replicas: "two"\n')
    assert result.returncode != 0
    assert ('spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
            'integer: "string"') in result.stderr, result.stderr
    # --validate=false: fieldValidation=Ignore, the unknown field is pruned silently
    _kubectl(server, tmp_path, "apply", "--validate=false", "-f", "-",
             stdin=CR_YAML + "  replicas: 2\n  junk: 1\n")
    out = _kubectl(server, tmp_path, "get", "ct", "my-new-cron-object", "-o",
                   "jsonpath={.spec}").stdout
    assert '"replicas":2' in out and "junk" not in out
