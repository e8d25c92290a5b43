"""Multi-version CRDs with clients nobody here wrote (issue 16): a CRD with v1 (deprecated,
storage) and v2 converted by a real HTTPS webhook reached through a Service. kubectl 1.31:
`kubectl get widgets` picks the preferred v2, `widgets.v1.example.com` asks for v1, and the
deprecation warning is printed. The official client lists and watches v2 while writing v1."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl
from tests.webhook_server import WebhookServer

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.31"


def _rename(review: dict) -> dict:
    request = review["request"]
    out = []
    for obj in request["objects"]:
        obj = copy.deepcopy(obj)
        spec = obj.setdefault("spec", {})
        if request["desiredAPIVersion"].endswith("/v2") and "size" in spec:
            spec["replicas"] = spec.pop("size")
        elif request["desiredAPIVersion"].endswith("/v1") and "replicas" in spec:
            spec["size"] = spec.pop("replicas")
        obj["apiVersion"] = request["desiredAPIVersion"]
        out.append(obj)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": request["uid"], "result": {"status": "Success"},
                         "convertedObjects": out}}


def _crd(hook: WebhookServer, port: int) -> dict:
    def version(name: str, field: str, **extra) -> dict:
        return {"name": name, "served": True, "storage": name == "v1", **extra,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {field: {"type": "integer"}}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "singular": "widget"},
                     "versions": [version("v1", "size", deprecated=True),
                                  version("v2", "replicas")],
                     "conversion": {"strategy": "Webhook", "webhook": {
                         "conversionReviewVersions": ["v1"],
                         "clientConfig": {"service": {"namespace": "default", "name": "converter",
                                                      "path": "/convert", "port": port},
                                          "caBundle": hook.ca_bundle}}}}}


@pytest.fixture
def cluster(tmp_path: Path):
    server = ServerThread(tmp_path / "data").start()
    hook = WebhookServer(tmp_path / "certs", name="converter").start()
    hook.json("/convert", _rename)
    try:
        yield server, hook, hook.publish(server.url)
    finally:
        hook.stop()
        server.stop()


def _kubectl(server: ServerThread, home: Path, *args: str, stdin: str | None = None,
             ok: bool = True) -> subprocess.CompletedProcess:
    return kubectl(server.url, home, *args, stdin=stdin, ok=ok)


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_reads_and_writes_each_version(cluster, tmp_path: Path) -> None:
    server, hook, port = cluster
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=json.dumps(_crd(hook, port)))
    _kubectl(server, tmp_path, "wait", "--for=condition=Established", "--timeout=10s",
             "crd/widgets.example.com")
    # written in v2 (converted to the v1 storage version by the webhook)
    _kubectl(server, tmp_path, "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w1"},
        "spec": {"replicas": 3}}))
    # written in the deprecated v1: kubectl shows the warning
    result = _kubectl(server, tmp_path, "create", "-f", "-", stdin=json.dumps({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
        "spec": {"size": 5}}))
    assert "Warning: example.com/v1 Widget is deprecated" in result.stderr

    # the preferred version is v2
    out = json.loads(_kubectl(server, tmp_path, "get", "widgets", "-o", "json").stdout)
    assert out["items"][0]["apiVersion"] == "example.com/v2"
    assert {i["metadata"]["name"]: i["spec"] for i in out["items"]} == {
        "w1": {"replicas": 3}, "w2": {"replicas": 5}}
    out = _kubectl(server, tmp_path, "get", "widgets.v2.example.com", "w2", "-o",
                   "jsonpath={.apiVersion} {.spec.replicas}").stdout
    assert out == "example.com/v2 5"
    result = _kubectl(server, tmp_path, "get", "widgets.v1.example.com", "w1", "-o",
                      "jsonpath={.apiVersion} {.spec.size}")
    assert result.stdout == "example.com/v1 3"
    assert "Warning: example.com/v1 Widget is deprecated" in result.stderr
    table = _kubectl(server, tmp_path, "get", "widgets.v2.example.com").stdout
    assert table.split()[:2] == ["NAME", "AGE"] and "w1" in table and "w2" in table

    # a patch through v2 lands in storage as v1's field
    _kubectl(server, tmp_path, "patch", "widgets.v2.example.com", "w1", "--type=merge", "-p",
             '{"spec":{"replicas":4}}')
    out = _kubectl(server, tmp_path, "get", "widgets.v1.example.com", "w1", "-o",
                   "jsonpath={.spec.size}").stdout
    assert out == "4"
    assert any(body and body["request"]["desiredAPIVersion"] == "example.com/v1"
               for _, body, _ in hook.requests)


def test_official_client_watches_one_version_while_writing_another(cluster) -> None:
    """The official client's CustomObjectsApi: objects written in v1 are listed and watched in
    v2 (converted by the webhook), and a webhook failure is an ApiException 500."""
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    from kubernetes.client.rest import ApiException

    server, hook, port = cluster
    configuration = kubernetes.client.Configuration()
    configuration.host = server.url
    with kubernetes.client.ApiClient(configuration) as api:
        ext = kubernetes.client.ApiextensionsV1Api(api)
        ext.create_custom_resource_definition(_crd(hook, port))
        objects = kubernetes.client.CustomObjectsApi(api)
        v1 = ("example.com", "v1", "default", "widgets")
        v2 = ("example.com", "v2", "default", "widgets")
        for _ in range(200):
            try:
                objects.list_namespaced_custom_object(*v2)
                break
            except ApiException:
                time.sleep(0.02)
        objects.create_namespaced_custom_object(*v1, {
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 2}})
        listed = objects.list_namespaced_custom_object(*v2)
        assert [(o["apiVersion"], o["spec"]) for o in listed["items"]] == [
            ("example.com/v2", {"replicas": 2})]
        rv = listed["metadata"]["resourceVersion"]
        objects.patch_namespaced_custom_object(*v1, "w1", {"spec": {"size": 3}})
        watch = kubernetes.watch.Watch()
        events = []
        for event in watch.stream(objects.list_namespaced_custom_object, *v2,
                                  resource_version=rv, timeout_seconds=5):
            events.append(event)
            watch.stop()
        assert events[0]["type"] == "MODIFIED"
        assert events[0]["object"]["apiVersion"] == "example.com/v2"
        assert events[0]["object"]["spec"] == {"replicas": 3}

        hook.json("/convert", lambda review: {"apiVersion": "apiextensions.k8s.io/v1",
                                              "kind": "ConversionReview", "response": {
                                                  "uid": review["request"]["uid"],
                                                  "result": {"status": "Failure",
                                                             "message": "down for maintenance"}}})
        with pytest.raises(ApiException) as err:
            objects.get_namespaced_custom_object(*v2, "w1")
        assert err.value.status == 500
        assert "conversion webhook for example.com/v1, Kind=Widget failed: down for maintenance" \
            in err.value.body
