"""Custom resources with every kubectl on the machine (1.27-1.33): a CRD with printer columns,
status and scale subresources and `categories: [all]` is applied, then `get` shows the
columns, `scale` writes the scale subresource, `get all` lists the objects, `edit` (with a
sed script as the editor) and server-side `apply` change them, and the official client reads
the Scale, and `explain` reads the CRD's schema from the published OpenAPI."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread

BIN = "/usr/lib/google-cloud-sdk/bin"
VERSIONS = [v for v in ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33")
            if os.path.exists(f"{BIN}/kubectl.{v}")]

CRD_YAML = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wg]
    categories: [all]
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
              replicas: {type: integer}
              color: {type: string}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Phase, type: string, jsonPath: .status.phase, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
"""

CR_YAML = """apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  replicas: 1
  color: red
"""


@pytest.fixture
def server(tmp_path: Path):
    s = ServerThread(tmp_path / "data").start()
    yield s
    s.stop()


def _kubectl(version: str, server: ServerThread, home: Path, *args: str,
             stdin: str | None = None, ok: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [f"{BIN}/kubectl.{version}", "-s", server.url, "--cache-dir", str(home / "cache"), *args],
        check=False, input=stdin, capture_output=True, text=True, timeout=60,
        env={"HOME": str(home), "PATH": os.environ.get("PATH", ""), **(env or {})})
    if ok:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def _setup(version: str, server: ServerThread, home: Path) -> None:
    _kubectl(version, server, home, "apply", "-f", "-", stdin=CRD_YAML)
    _kubectl(version, server, home, "wait", "--for=condition=Established", "--timeout=10s",
             "crd/widgets.example.com")
    deadline = time.monotonic() + 10
    while True:  # discovery may be cached from before the CRD: retry until kubectl sees it
        result = _kubectl(version, server, home, "apply", "-f", "-", stdin=CR_YAML, ok=False)
        if result.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert result.returncode == 0, result.stderr
    assert "widget.example.com/w created" in result.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_kubectl_gets_scales_edits_and_applies_custom_resources(
        version: str, server: ServerThread, tmp_path: Path) -> None:
    _setup(version, server, tmp_path)

    lines = _kubectl(version, server, tmp_path, "get", "widgets").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REPLICAS", "COLOR", "AGE"]
    assert lines[1].split()[:3] == ["w", "1", "red"]
    wide = _kubectl(version, server, tmp_path, "get", "wg", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "REPLICAS", "COLOR", "PHASE", "AGE"]

    out = _kubectl(version, server, tmp_path, "scale", "--replicas=3", "widget/w").stdout
    assert "widget.example.com/w scaled" in out
    assert _kubectl(version, server, tmp_path, "get", "widget", "w", "-o",
                    "jsonpath={.spec.replicas}").stdout == "3"

    everything = _kubectl(version, server, tmp_path, "get", "all").stdout
    assert "widget.example.com/w" in everything
    assert "service/kubernetes" in everything

    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/color: red/color: green/' \"$1\"\n")
    editor.chmod(0o755)
    out = _kubectl(version, server, tmp_path, "edit", "widget/w",
                   env={"KUBE_EDITOR": str(editor)}).stdout
    assert "widget.example.com/w edited" in out
    assert _kubectl(version, server, tmp_path, "get", "widget", "w", "-o",
                    "jsonpath={.spec.color}").stdout == "green"

    # server-side apply by two managers: a `set` list merges
    for manager, tag in (("one", "small"), ("two", "shiny")):
        doc = ("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
               f"spec:\n  tags: [{tag}]\n")
        _kubectl(version, server, tmp_path, "apply", "--server-side", f"--field-manager={manager}",
                 "-f", "-", stdin=doc)
    assert _kubectl(version, server, tmp_path, "get", "widget", "w", "-o",
                    "jsonpath={.spec.tags}").stdout == '["small","shiny"]'

    # strict field validation (kubectl's default since 1.27 is Strict)
    bad = CR_YAML.replace("color: red", "color: red\n  bogus: 1")
    result = _kubectl(version, server, tmp_path, "apply", "-f", "-", stdin=bad, ok=False)
    assert result.returncode != 0
    assert 'unknown field "spec.bogus"' in result.stderr


def test_kubectl_explains_a_custom_resource(server: ServerThread, tmp_path: Path) -> None:
    version = VERSIONS[-1] if VERSIONS else "1.31"
    _setup(version, server, tmp_path)
    out = _kubectl(version, server, tmp_path, "explain", "widgets.spec").stdout
    assert "replicas" in out and "color" in out


def test_the_official_client_reads_and_patches_the_scale(server: ServerThread,
                                                         tmp_path: Path) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    _setup(VERSIONS[-1] if VERSIONS else "1.31", server, tmp_path)
    config = kubernetes.client.Configuration()
    config.host = server.url
    with kubernetes.client.ApiClient(config) as client:
        api = kubernetes.client.CustomObjectsApi(client)
        scale = api.get_namespaced_custom_object_scale("example.com", "v1", "default",
                                                       "widgets", "w")
        assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
        scale = api.patch_namespaced_custom_object_scale(
            "example.com", "v1", "default", "widgets", "w", {"spec": {"replicas": 4}})
        assert scale["spec"]["replicas"] == 4
        status = api.patch_namespaced_custom_object_status(
            "example.com", "v1", "default", "widgets", "w",
            {"status": {"replicas": 4, "phase": "Ready"}, "spec": {"color": "ignored"}})
        assert status["status"] == {"replicas": 4, "phase": "Ready"}
        assert status["spec"]["color"] == "red"
        got = api.list_namespaced_custom_object("example.com", "v1", "default", "widgets",
                                                field_selector="metadata.name=w")
        assert [i["metadata"]["name"] for i in got["items"]] == ["w"]
