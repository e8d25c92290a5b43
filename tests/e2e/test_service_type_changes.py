"""Service type changes to and from ExternalName, with every kubectl on the machine and the
official python client, against a real API server.

Upstream 1.31 (pkg/registry/core/service: strategy dropTypeDependentFields, storage alloc.go):
a `kubectl patch` to ExternalName drops the clusterIP(s), ipFamilies, ipFamilyPolicy, node ports
and externalTrafficPolicy the client sent back unchanged and releases the IP and the ports; a
change back to ClusterIP allocates a new clusterIP. Before, the first change was 422 on
`clusterIPs` and the way back left the service without an IP.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
if os.path.exists("/usr/bin/kubectl"):
    KUBECTLS.insert(0, "/usr/bin/kubectl")

SERVICE_YAML = """apiVersion: v1
kind: Service
metadata: {{name: {name}}}
spec:
  type: NodePort
  clusterIP: {ip}
  selector: {{app: web}}
  ports: [{{name: http, port: 80, nodePort: {node_port}}}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    thread = ServerThread(tmp_path_factory.mktemp("apiserver") / "data").start()
    yield thread
    thread.stop()


def _label(path: str) -> str:
    return "1.20" if path == "/usr/bin/kubectl" else path.rsplit("kubectl.", 1)[1]


@pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine "
                    "(/usr/bin/kubectl or /usr/lib/google-cloud-sdk/bin/kubectl.1.*)")
@pytest.mark.parametrize("binary", KUBECTLS, ids=[_label(p) for p in KUBECTLS])
def test_kubectl_patch_to_external_name_and_back(binary: str, server: ServerThread,
                                                 tmp_path: Path) -> None:
    index = KUBECTLS.index(binary)
    ns = "svc-" + _label(binary).replace(".", "-")
    ip, node_port = f"10.0.0.{200 + index}", 31000 + index

    def kubectl(*args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [binary, "-s", server.url, "--cache-dir", str(tmp_path / "cache"), *args],
            input=stdin, capture_output=True, text=True, timeout=60,
            env={"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")})
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result.stdout

    def spec(name: str) -> dict:
        return json.loads(kubectl("-n", ns, "get", "svc", name, "-o", "json"))["spec"]

    kubectl("create", "namespace", ns)
    kubectl("-n", ns, "create", "-f", "-",
            stdin=SERVICE_YAML.format(name="web", ip=ip, node_port=node_port))
    kubectl("-n", ns, "patch", "svc", "web", "-p",
            '{"spec":{"type":"ExternalName","externalName":"x.example"}}')
    got = spec("web")
    assert got["type"] == "ExternalName" and got["externalName"] == "x.example"
    for dropped in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy",
                    "externalTrafficPolicy"):
        assert dropped not in got, (dropped, got)
    assert "nodePort" not in got["ports"][0]
    # the IP and the node port went back to their pools: another service can take them
    kubectl("-n", ns, "create", "-f", "-",
            stdin=SERVICE_YAML.format(name="again", ip=ip, node_port=node_port))
    kubectl("-n", ns, "delete", "svc", "again")

    kubectl("-n", ns, "patch", "svc", "web", "-p",
            '{"spec":{"type":"ClusterIP","externalName":null}}')
    got = spec("web")
    assert got["type"] == "ClusterIP" and "externalName" not in got
    assert got["clusterIP"].startswith("10.0.0.") and got["clusterIPs"] == [got["clusterIP"]]
    assert got["ipFamilies"] == ["IPv4"] and got["ipFamilyPolicy"] == "SingleStack"
    # the way back took a random IP of the range: give it back, or it may be the fixed IP a
    # later kubectl's run asks for (a flaky "provided IP is already allocated")
    kubectl("-n", ns, "delete", "svc", "web")


kubernetes = pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402


def test_python_client_replace_to_external_name_and_back(server: ServerThread) -> None:
    config = client.Configuration()
    config.host = server.url
    with client.ApiClient(config) as api:
        core = client.CoreV1Api(api)
        ns = f"t-{uuid.uuid4().hex[:8]}"
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
        created = core.create_namespaced_service(ns, client.V1Service(
            metadata=client.V1ObjectMeta(name="db"),
            spec=client.V1ServiceSpec(selector={"app": "db"},
                                      ports=[client.V1ServicePort(port=5432)])))
        ip = created.spec.cluster_ip
        # as upstream's e2e does it: read, change the type, clear clusterIP, write back
        svc = core.read_namespaced_service("db", ns)
        svc.spec.type, svc.spec.external_name, svc.spec.cluster_ip = (
            "ExternalName", "db.example.com", None)
        svc = core.replace_namespaced_service("db", ns, svc)
        assert svc.spec.cluster_ip is None and svc.spec.cluster_ips is None
        assert svc.spec.ip_families is None and svc.spec.ip_family_policy is None
        # the released IP can be asked for by name
        core.create_namespaced_service(ns, client.V1Service(
            metadata=client.V1ObjectMeta(name="taker"),
            spec=client.V1ServiceSpec(cluster_ip=ip, ports=[client.V1ServicePort(port=1)])))

        svc.spec.type, svc.spec.external_name = "ClusterIP", None
        svc = core.replace_namespaced_service("db", ns, svc)
        assert svc.spec.cluster_ip and svc.spec.cluster_ip != ip
        assert svc.spec.cluster_ips == [svc.spec.cluster_ip]

        # a change the client made itself is still judged by validation (upstream keeps it)
        svc.spec.type, svc.spec.external_name = "ExternalName", "db.example.com"
        svc.spec.cluster_ips = ["10.0.0.77"]
        svc.spec.cluster_ip = "10.0.0.77"
        with pytest.raises(ApiException) as info:
            core.replace_namespaced_service("db", ns, svc)
        assert info.value.status == 422
        assert "spec.clusterIPs: Forbidden: may not be set for ExternalName services" in (
            json.loads(info.value.body)["message"])
