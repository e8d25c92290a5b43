"""networking.k8s.io, node.k8s.io and flowcontrol.apiserver.k8s.io with real kubectl and the
official Python client: the documentation's Ingress, IngressClass, NetworkPolicy and
RuntimeClass examples apply; `kubectl get` prints upstream's columns; `describe` and
`explain` work; the default IngressClass is filled in; a pod using a RuntimeClass gets its
overhead; the bootstrap FlowSchemas and priority levels are listed. The oldest and newest
kubectl on the machine run the round trip (explain reads /openapi/v3 in both)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import kubectl
from tests.e2e.test_openapi_v2_kubectl import NEW, OLD

KUBECTLS = NEW
pytestmark = pytest.mark.skipif(not KUBECTLS, reason="needs kubectl 1.27+ binaries")
#: kubectl 1.20 when installed (it validates manifests against /openapi/v2 and explains from
#: it), the oldest and the newest 1.27+
ENDS = ([OLD] if OLD else []) + sorted({KUBECTLS[0], KUBECTLS[-1]}) if KUBECTLS else []

# kubernetes.io/docs/concepts/services-networking/ingress/ (minimal-ingress, nginx-example)
INGRESS_CLASS = """\
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  labels:
    app.kubernetes.io/component: controller
  name: nginx-example
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
"""
INGRESS = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: minimal-ingress
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
spec:
  rules:
  - http:
      paths:
      - path: /testpath
        pathType: Prefix
        backend:
          service:
            name: test
            port:
              number: 80
"""
# kubernetes.io/docs/concepts/services-networking/network-policies/ (test-network-policy)
NETWORK_POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: test-network-policy
  namespace: default
spec:
  podSelector:
    matchLabels:
      role: db
  policyTypes:
  - Ingress
  - Egress
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except:
        - 172.17.1.0/24
    - namespaceSelector:
        matchLabels:
          project: myproject
    - podSelector:
        matchLabels:
          role: frontend
    ports:
    - protocol: TCP
      port: 6379
  egress:
  - to:
    - ipBlock:
        cidr: 10.0.0.0/24
    ports:
    - protocol: TCP
      port: 5978
"""
# kubernetes.io/docs/concepts/containers/runtime-class/ (plus the pod-overhead page's class)
RUNTIME_CLASS = """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: kata-fc
handler: kata-fc
overhead:
  podFixed:
    memory: "120Mi"
    cpu: "250m"
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: test-pod
spec:
  runtimeClassName: kata-fc
  containers:
  - name: busybox-ctr
    image: busybox:1.28
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    s = ServerThread(tmp_path_factory.mktemp("netnode") / "data",
                     admission_control=("NamespaceLifecycle", "DefaultIngressClass",
                                        "RuntimeClass")).start()
    try:
        yield s
    finally:
        s.stop()


def columns(out: str) -> list[str]:
    return out.splitlines()[0].split()


@pytest.mark.parametrize("binary", ENDS, ids=lambda p: p.rsplit("kubectl.", 1)[-1])
def test_documented_examples(binary: str, server: ServerThread, tmp_path: Path) -> None:
    def run(*args: str, stdin: str | None = None) -> str:
        return kubectl(server.url, tmp_path, *args, stdin=stdin, binary=binary).stdout

    for manifest in (INGRESS_CLASS, INGRESS, NETWORK_POLICY, RUNTIME_CLASS):
        run("apply", "-f", "-", stdin=manifest)
    run("apply", "-f", "-", stdin=POD)
    ing = yaml.safe_load(run("get", "ing", "minimal-ingress", "-o", "yaml"))
    assert ing["spec"]["ingressClassName"] == "nginx-example"  # DefaultIngressClass
    out = run("get", "ingress")
    assert columns(out) == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert out.splitlines()[1].split()[:4] == ["minimal-ingress", "nginx-example", "*", "80"]
    assert columns(run("get", "ingressclass")) == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    out = run("get", "netpol")
    assert columns(out) == ["NAME", "POD-SELECTOR", "AGE"]
    assert out.splitlines()[1].split()[:2] == ["test-network-policy", "role=db"]
    assert columns(run("get", "runtimeclass")) == ["NAME", "HANDLER", "AGE"]
    pod = yaml.safe_load(run("get", "pod", "test-pod", "-o", "yaml"))
    assert pod["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    described = run("describe", "ingress", "minimal-ingress")
    assert "/testpath" in described and "test:80" in described, described
    described = run("describe", "networkpolicy", "test-network-policy")
    assert "172.17.0.0/16" in described and "role=db" in described, described
    explained = run("explain", "ingress.spec.rules")
    assert "networking.k8s.io" in explained and "host" in explained, explained
    assert "rules is a list of host rules used to configure the Ingress" in " ".join(
        explained.split()), explained
    assert "handler specifies the underlying runtime" in " ".join(
        run("explain", "runtimeclass").split())
    explained = " ".join(run("explain", "flowschema.spec").split())
    assert "matchingPrecedence" in explained and "must be ranged in [1,10000]" in explained
    out = run("get", "flowschemas")
    assert columns(out) == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE",
                            "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    assert out.splitlines()[1].split()[:4] == ["exempt", "exempt", "1", "<none>"]
    out = run("get", "prioritylevelconfigurations")
    assert columns(out) == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE",
                            "QUEUELENGTHLIMIT", "AGE"]
    for manifest in (POD, INGRESS, NETWORK_POLICY, RUNTIME_CLASS, INGRESS_CLASS):
        run("delete", "-f", "-", "--wait=false", stdin=manifest)


def test_invalid_ingress_is_rejected_with_upstreams_message(server: ServerThread,
                                                            tmp_path: Path) -> None:
    bad = INGRESS.replace("pathType: Prefix", "pathType: Regex").replace(
        "minimal-ingress", "bad-ingress")
    result = kubectl(server.url, tmp_path, "apply", "-f", "-", stdin=bad, ok=False,
                     binary=KUBECTLS[-1])
    assert result.returncode != 0
    assert 'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex"' in result.stderr


def test_python_client_lists(server: ServerThread) -> None:
    kubernetes = pytest.importorskip("kubernetes", reason="pip install -e '.[test]'")
    config = kubernetes.client.Configuration()
    config.host = server.url
    with kubernetes.client.ApiClient(config) as client:
        networking = kubernetes.client.NetworkingV1Api(client)
        networking.create_ingress_class(yaml.safe_load(INGRESS_CLASS.replace(
            "nginx-example", "py-class")))
        assert "py-class" in [c.metadata.name for c in networking.list_ingress_class().items]
        assert networking.list_ingress_for_all_namespaces().items is not None
        assert networking.list_network_policy_for_all_namespaces().items is not None
        node = kubernetes.client.NodeV1Api(client)
        node.create_runtime_class(yaml.safe_load(RUNTIME_CLASS.replace("kata-fc", "py-rc")))
        [rc] = [c for c in node.list_runtime_class().items if c.metadata.name == "py-rc"]
        assert rc.overhead.pod_fixed == {"cpu": "250m", "memory": "120Mi"}
        apf = kubernetes.client.FlowcontrolApiserverV1Api(client)
        schemas = {s.metadata.name: s for s in apf.list_flow_schema().items}
        assert schemas["catch-all"].spec.matching_precedence == 10000
        levels = {p.metadata.name: p for p in apf.list_priority_level_configuration().items}
        assert levels["exempt"].spec.type == "Exempt"
        assert levels["global-default"].spec.limited.nominal_concurrency_shares == 20
