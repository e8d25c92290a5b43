"""discovery.k8s.io/v1 EndpointSlices on a real `minikube-py start` cluster (Node,RBAC: the
endpointslice controller acts as system:serviceaccount:kube-system:endpointslice-controller),
with every kubectl 1.27+ on the machine and the official Python client's DiscoveryV1Api.

A Deployment of 3 behind a Service: once the kubelet has made the pods Ready, the Service's
slice lists their 3 addresses; `kubectl get endpointslices` prints upstream's columns (NAME
ADDRESSTYPE PORTS ENDPOINTS AGE), `kubectl describe endpointslice` the endpoints with their
conditions, targets and nodes, and `kubectl explain` the kind.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import time
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
from tests.e2e.test_batch_kubectl import KUBECTLS, kubectl

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl 1.27+ on this machine "
                                "(/usr/lib/google-cloud-sdk/bin/kubectl.1.*)")

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - {name: http, containerPort: 80}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 8080, targetPort: http}
"""


def ready_slices(cluster: ClusterProcesses, namespace: str, count: int) -> list[dict]:
    path = (f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
            "?labelSelector=kubernetes.io/service-name=web")

    def ready() -> list[dict] | None:
        items = cluster.get(path)["items"]
        addresses = [a for s in items for e in s.get("endpoints") or ()
                     if e["conditions"].get("ready") for a in e["addresses"]]
        return items if len(addresses) == count else None

    return cluster.wait(ready, 30, f"{count} ready endpoints in the web service's slices")


def test_kubectl_get_and_describe_endpointslices(cluster: ClusterProcesses, kubeconfig: Path,
                                                 namespace: str, tmp_path: Path) -> None:
    ns = ("-n", namespace)
    newest = KUBECTLS[-1]
    kubectl(newest, kubeconfig, tmp_path, *ns, "apply", "-f", "-", stdin=WEB)
    [slice_] = ready_slices(cluster, namespace, 3)
    name = slice_["metadata"]["name"]
    assert name.startswith("web-") and len(name) == len("web-") + 5
    addresses = sorted(e["addresses"][0] for e in slice_["endpoints"])
    for binary in KUBECTLS:
        table = kubectl(binary, kubeconfig, tmp_path, *ns, "get", "endpointslices"
                        ).stdout.splitlines()
        assert table[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], binary
        row = table[1].split()
        assert row[:3] == [name, "IPv4", "80"], (binary, table)
        assert sorted(row[3].split(",")) == addresses, (binary, table)
    described = kubectl(newest, kubeconfig, tmp_path, *ns, "describe", "endpointslice",
                        name).stdout
    assert "AddressType:  IPv4" in described
    assert "kubernetes.io/service-name=web" in described
    assert "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io" in described
    for address in addresses:
        assert address in described
    assert "Conditions:" in described and "Ready:    true" in described
    assert "TargetRef:  Pod/web-" in described
    explain = kubectl(newest, kubeconfig, tmp_path, "explain", "endpointslice.endpoints").stdout
    assert "conditions" in explain and "addresses" in explain
    # scale down: the slice follows
    kubectl(newest, kubeconfig, tmp_path, *ns, "scale", "deployment/web", "--replicas=1")
    [after] = ready_slices(cluster, namespace, 1)
    assert after["metadata"]["name"] == name  # updated in place, not replaced
    # the Service goes: the garbage collector deletes its slices (owner reference)
    kubectl(newest, kubeconfig, tmp_path, *ns, "delete", "service", "web")
    path = (f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
            "?labelSelector=kubernetes.io/service-name=web")
    cluster.wait(lambda: not cluster.get(path)["items"], 30, "the slices garbage-collected")


def test_python_client_discovery_v1(cluster: ClusterProcesses, kubeconfig: Path,
                                    namespace: str, tmp_path: Path) -> None:
    kubectl(KUBECTLS[-1], kubeconfig, tmp_path, "-n", namespace, "apply", "-f", "-", stdin=WEB)
    ready_slices(cluster, namespace, 3)
    with config.new_client_from_config(config_file=str(kubeconfig)) as api_client:
        discovery = client.DiscoveryV1Api(api_client)
        listed = discovery.list_namespaced_endpoint_slice(
            namespace, label_selector="kubernetes.io/service-name=web",
            _request_timeout=CALL_TIMEOUT)
        [slice_] = listed.items
        assert slice_.address_type == "IPv4"
        assert [(p.name, p.port, p.protocol) for p in slice_.ports] == [("http", 80, "TCP")]
        assert len(slice_.endpoints) == 3
        endpoint = slice_.endpoints[0]
        assert endpoint.conditions.ready and endpoint.conditions.serving
        assert endpoint.conditions.terminating is False
        assert endpoint.target_ref.kind == "Pod" and endpoint.node_name
        assert slice_.metadata.owner_references[0].kind == "Service"
        # a hand-written slice with a bad address gets upstream's 422
        bad = client.V1EndpointSlice(
            metadata=client.V1ObjectMeta(name="manual"), address_type="IPv4",
            endpoints=[client.V1Endpoint(addresses=["not-an-ip"])])
        with pytest.raises(client.ApiException) as failed:
            discovery.create_namespaced_endpoint_slice(namespace, bad,
                                                       _request_timeout=CALL_TIMEOUT)
        assert failed.value.status == 422
        assert "must be a valid IPv4 address" in failed.value.body
        started = time.monotonic()
        every = discovery.list_endpoint_slice_for_all_namespaces(_request_timeout=CALL_TIMEOUT)
        assert time.monotonic() - started < CALL_TIMEOUT
        assert any(s.metadata.namespace == namespace for s in every.items)


MANUAL = """\
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: manual
  labels:
    kubernetes.io/service-name: external
addressType: IPv4
ports:
- name: http
  port: {port}
endpoints:
- addresses: ["192.0.2.1"]
  conditions: {{ready: true}}
"""


@pytest.mark.parametrize("mode", [(), ("--server-side",)], ids=["client-side", "server-side"])
def test_kubectl_apply_a_hand_written_slice(cluster: ClusterProcesses, kubeconfig: Path,
                                            namespace: str, tmp_path: Path,
                                            mode: tuple[str, ...]) -> None:
    ns = ("-n", namespace)
    newest = KUBECTLS[-1]
    out = kubectl(newest, kubeconfig, tmp_path, *ns, "apply", *mode, "-f", "-",
                  stdin=MANUAL.format(port=80)).stdout
    assert "endpointslice.discovery.k8s.io/manual" in out
    kubectl(newest, kubeconfig, tmp_path, *ns, "apply", *mode, "-f", "-",
            stdin=MANUAL.format(port=8080))
    got = kubectl(newest, kubeconfig, tmp_path, *ns, "get", "endpointslice", "manual", "-o",
                  "jsonpath={.ports[0].port} {.ports[0].protocol} {.metadata.generation}").stdout
    assert got == "8080 TCP 2"
