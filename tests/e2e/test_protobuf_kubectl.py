"""kubectl 1.32 and 1.33 speak protobuf to us: typed `create` subcommands and what they read.

Since 1.32 kubectl's typed `create` subcommands (deployment, configmap, secret, service, job)
send `Content-Type: application/vnd.kubernetes.protobuf` bodies and ask for
`Accept: application/vnd.kubernetes.protobuf,application/json`. Each case runs the real binary
with `--v=8`, checks from its own log what it sent and what we answered, and reads the object
back as JSON to check its fields. `kubectl get -o yaml` asks for JSON (it decodes
unstructured objects): the log shows the Accept header it sent and that our answer is in it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.apiserver_thread import ServerThread

PB = "application/vnd.kubernetes.protobuf"
BIN = "/usr/lib/google-cloud-sdk/bin/kubectl.{}"
VERSIONS = ["1.32", "1.33"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    thread = ServerThread(tmp_path_factory.mktemp("pb-kubectl") / "data").start()
    yield thread
    thread.stop()


def _call(server: ServerThread, method: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


class Kubectl:
    def __init__(self, version: str, server: ServerThread, home: Path) -> None:
        self.binary, self.server, self.home = BIN.format(version), server, home
        self.namespace = "pb" + version.replace(".", "-")

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        argv = [self.binary, "-s", self.server.url, "-n", self.namespace, "--v=8", *args]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                env={"HOME": str(self.home), "PATH": os.environ.get("PATH", "")})
        assert result.returncode == 0, (args, result.stdout, result.stderr[-3000:])
        return result

    def get(self, path: str) -> dict:
        return _call(self.server, "GET", path)


@pytest.fixture(scope="module", params=VERSIONS)
def kubectl(request: pytest.FixtureRequest, server: ServerThread,
            tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if not Path(BIN.format(request.param)).exists():
        pytest.skip(f"{BIN.format(request.param)} is not installed")
    k = Kubectl(request.param, server, tmp_path_factory.mktemp("home"))
    _call(server, "POST", "/api/v1/namespaces",
          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": k.namespace}})
    return k


def _headers(log: str, name: str) -> list[str]:
    """Every value of a header in a `--v=8` log (1.32 prints `Name: value` lines after the
    klog prefix, 1.33 tab-indented lines inside a structured block)."""
    pattern = re.compile(rf"^(?:I\d{{4}} [\d:.]+\s+\d+ \S+\]\s+|\t|\s+){name}: (.+)$",
                         re.MULTILINE)
    return [value.strip() for value in pattern.findall(log)]


#: 1.32: `...] POST http://...`; 1.33: `..."Request" verb="POST" url="http://..." headers=<`
_REQUEST_LINE = re.compile(r'(?:\] (?:GET|POST|PUT|PATCH|DELETE) |url=")(http[^"\s]+)')


def _exchange(log: str, method: str, path: str) -> str:
    """The part of a `--v=8` log about one request: from its request line to the next."""
    found = list(_REQUEST_LINE.finditer(log))
    for i, m in enumerate(found):
        line = log[log.rfind("\n", 0, m.start()) + 1:m.end()]
        if m.group(1).split("?")[0].endswith(path) and method in line:
            end = found[i + 1].start() if i + 1 < len(found) else len(log)
            return log[m.start():end]
    raise AssertionError(f"no {method} {path} in the log:\n{log[-3000:]}")


def _sent_and_answered_protobuf(log: str, path: str) -> None:
    exchange = _exchange(log, "POST", path)
    assert _headers(exchange, "Accept") == [f"{PB},application/json"]
    types = _headers(exchange, "Content-Type")
    assert types == [PB, PB], types  # the request body and our answer


def _create(kubectl: Kubectl, prefix: str, resource: str, name: str, *args: str) -> dict:
    """`kubectl create <args>`: it prints `<kind>/<name> created`, sent a protobuf body and got
    protobuf back; the object as JSON, read back from the server."""
    result = kubectl("create", *args)
    assert f"/{name} created" in result.stdout, result.stdout
    _sent_and_answered_protobuf(result.stderr, f"/{resource}")
    return kubectl.get(f"{prefix}/namespaces/{kubectl.namespace}/{resource}/{name}")


def test_create_deployment(kubectl: Kubectl) -> None:
    dep = _create(kubectl, "/apis/apps/v1", "deployments", "web", "deployment", "web",
                  "--image=nginx:1.25", "--replicas=2", "--port=80")
    spec = dep["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    assert spec["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1.25",
         "ports": [{"containerPort": 80, "protocol": "TCP"}],
         "resources": {}, "terminationMessagePath": "/dev/termination-log",
         "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}]
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert dep["metadata"]["managedFields"][0]["manager"] == "kubectl-create"


def test_create_configmap(kubectl: Kubectl) -> None:
    cm = _create(kubectl, "/api/v1", "configmaps", "cfg", "configmap", "cfg",
                 "--from-literal=a=1", "--from-literal=b=two words")
    assert cm["data"] == {"a": "1", "b": "two words"} and "binaryData" not in cm


def test_create_secret_generic(kubectl: Kubectl) -> None:
    secret = _create(kubectl, "/api/v1", "secrets", "creds", "secret", "generic", "creds",
                     "--from-literal=user=admin", "--from-literal=empty=")
    assert secret["type"] == "Opaque"
    assert secret["data"] == {"user": base64.b64encode(b"admin").decode(), "empty": ""}


def test_create_service_clusterip(kubectl: Kubectl) -> None:
    svc = _create(kubectl, "/api/v1", "services", "svc", "service", "clusterip", "svc",
                  "--tcp=80:8080")
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP" and spec["selector"] == {"app": "svc"}
    assert spec["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP",
                              "targetPort": 8080}]
    assert spec["clusterIP"] and spec["clusterIPs"] == [spec["clusterIP"]]


def test_create_job(kubectl: Kubectl) -> None:
    groups = [g["name"] for g in _call(kubectl.server, "GET", "/apis")["groups"]]
    if "batch" not in groups:
        pytest.skip("batch/v1 is not served by this API server yet: no Job to create")
    job = _create(kubectl, "/apis/batch/v1", "jobs", "once", "job", "once", "--image=busybox",
                  "--", "echo", "hi")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"]) == ("busybox", ["echo", "hi"])


def test_get_pods_yaml_accept_and_answer(kubectl: Kubectl) -> None:
    _call(kubectl.server, "POST", f"/api/v1/namespaces/{kubectl.namespace}/pods",
          {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "p"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    result = kubectl("get", "pods", "-o", "yaml")
    exchange = _exchange(result.stderr, "GET", f"/namespaces/{kubectl.namespace}/pods")
    accepted = _headers(exchange, "Accept")
    answered = _headers(exchange, "Content-Type")
    assert accepted == ["application/json"], accepted  # unstructured objects: JSON only
    assert answered == ["application/json"], answered
    listed = yaml.safe_load(result.stdout)
    assert listed["kind"] == "List"
    assert [(i["kind"], i["metadata"]["name"]) for i in listed["items"]] == [("Pod", "p")]
