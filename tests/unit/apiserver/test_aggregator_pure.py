"""The pure halves of API aggregation: APIService validation, discovery order, the
availability checks before the network, the front-proxy headers, discovery conversion, the
front-proxy client certificate and the APIService table row."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from minikube_py.api.tables import column_definitions, row_cells
from minikube_py.api.validation.apiservice import validate_apiservice as _validate
from minikube_py.api.validation.apiservice import (
    validate_apiservice_status_update,
)
from minikube_py.apiserver.aggregator.availability import service_verdict
from minikube_py.apiserver.aggregator.discovery import aggregated_version
from minikube_py.apiserver.aggregator.priorities import (
    Entry,
    Priority,
    kube_version_key,
    ordered_groups,
)
from minikube_py.apiserver.aggregator.proxy import front_proxy_headers
from minikube_py.apiserver.authn import UserInfo
from minikube_py.cli.front_proxy_tls import ensure_proxy_client_cert
from minikube_py.registry.apiservices import default_apiservice


def validate_apiservice(obj):
    errs = []
    _validate(obj, errs)
    return errs


def validate_status(obj):
    errs = []
    validate_apiservice_status_update(obj, obj, errs)
    return errs


def _svc(name="v1.example.com", **spec):
    obj = {"metadata": {"name": name},
           "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 100,
                    "versionPriority": 10, **spec}}
    default_apiservice(obj)
    return obj


def test_validation_accepts_upstreams_shapes():
    assert validate_apiservice(_svc()) == []
    assert validate_apiservice(_svc("v1.", group="")) == []
    remote = _svc(service={"namespace": "ns", "name": "s"},
                  caBundle=base64.b64encode(b"PEM").decode())
    assert validate_apiservice(remote) == [] and remote["spec"]["service"]["port"] == 443


@pytest.mark.parametrize("obj, field, detail", [
    (_svc("v2.", group="", version="v2"), "spec.group",
     "only v1 may have an empty group and it better be legacy kube"),
    (_svc(version="V1", name="V1.example.com"), "spec.version", None),
    (_svc(groupPriorityMinimum=20001), "spec.groupPriorityMinimum",
     "must be positive and less than 20000"),
    (_svc(versionPriority=0), "spec.versionPriority", "must be positive and less than 1000"),
    (_svc(insecureSkipTLSVerify=True), "spec.insecureSkipTLSVerify",
     "local APIServices may not have insecureSkipTLSVerify"),
    (_svc(service={"namespace": "n", "name": "s", "port": 70000}), "spec.service.port", None),
    (_svc(service={"namespace": "n", "name": "s"}, insecureSkipTLSVerify=True,
          caBundle="UEVN"), "spec.insecureSkipTLSVerify",
     "may not be true if caBundle is present"),
    (_svc(service={"namespace": "n", "name": ""}), "spec.service.name", None),
])
def test_validation_refuses_as_upstream(obj, field, detail):
    errs = {e.field: e.detail for e in validate_apiservice(obj)}
    assert field in errs, errs
    if detail is not None:
        assert errs[field] == detail


def test_status_conditions_must_be_true_false_or_unknown():
    meta = {"name": "v1.x", "resourceVersion": "1"}
    bad = {"metadata": meta, "status": {"conditions": [{"type": "Available", "status": "Yes"}]}}
    assert [e.field for e in validate_status(bad)] == ["status.conditions[0].status"]
    assert validate_status({"metadata": meta, "status": {"conditions": [{"status": "Unknown"}]}}) == []
    assert [e.field for e in validate_status({"metadata": meta, "status": {"conditions": "x"}})] \
        == ["status.conditions"]


def test_kube_aware_version_order():
    versions = ["foo10", "v1", "v11alpha2", "v10beta3", "v2", "v3beta1", "foo1", "v10",
                "v12alpha1", "v11beta2"]
    assert sorted(versions, key=kube_version_key) == [
        "v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2",
        "foo1", "foo10"]


def test_groups_by_priority_then_name_versions_by_priority_then_kube_order():
    order = ordered_groups([
        Entry("zeta.io", "v1", Priority(1000, 100)),
        Entry("apps", "v1", Priority(17800, 15)),
        Entry("alpha.io", "v1beta1", Priority(1000, 100)),
        Entry("alpha.io", "v1", Priority(1000, 100)),
        Entry("alpha.io", "v2alpha1", Priority(1000, 200)),
        Entry("metrics.k8s.io", "v1beta1", Priority(100, 100)),
    ])
    assert list(order) == ["apps", "alpha.io", "zeta.io", "metrics.k8s.io"]
    assert order["alpha.io"] == ["v2alpha1", "v1", "v1beta1"]


def test_service_checks_before_the_probe():
    api = _svc(service={"namespace": "ns", "name": "s", "port": 443})
    assert service_verdict(_svc(), None, None, False).reason == "Local"
    assert service_verdict(api, None, None, False) == (
        "False", "ServiceNotFound", 'service/s in "ns" is not present')
    service = {"spec": {"ports": [{"name": "https", "port": 443}]}}
    assert service_verdict(api, {"spec": {"ports": [{"port": 8443}]}}, None, True) == (
        "False", "ServicePortError", 'service/s in "ns" is not listening on port 443')
    assert service_verdict(api, service, None, False).reason == "EndpointsNotFound"
    no_port = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "http"}]}]}
    assert service_verdict(api, service, no_port, True) == (
        "False", "MissingEndpoints",
        'endpoints for service/s in "ns" have no addresses with port name "https"')
    ready = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "https"}]}]}
    assert service_verdict(api, service, ready, True) is None
    external = {"spec": {"type": "ExternalName", "externalName": "x.example.com"}}
    assert service_verdict(api, external, None, False) is None  # straight to the probe


def test_front_proxy_headers_replace_what_the_client_claimed():
    headers = front_proxy_headers(
        [("Authorization", "Bearer secret"), ("X-Remote-User", "mallory"),
         ("x-remote-extra-scopes", "all"), ("Accept", "application/json"),
         ("Connection", "keep-alive"), ("X-Forwarded-For", "10.0.0.9")],
        UserInfo("alice", groups=("dev", "system:authenticated")),
        extra={"scopes/a b": ["x"]}, remote="127.0.0.1")
    assert "Authorization" not in headers and "Connection" not in headers
    assert headers.getall("X-Remote-User") == ["alice"]
    assert headers.getall("X-Remote-Group") == ["dev", "system:authenticated"]
    assert headers.getall("X-Remote-Extra-scopes%2Fa%20b") == ["x"]
    assert "x-remote-extra-scopes" not in headers
    assert headers["Accept"] == "application/json"
    assert headers["X-Forwarded-For"] == "10.0.0.9, 127.0.0.1"


def test_a_backends_resource_list_in_aggregated_form():
    listed = {"resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "PodMetrics",
         "verbs": ["get", "list"], "shortNames": ["pm"]},
        {"name": "pods/status", "namespaced": True, "kind": "PodMetrics", "verbs": ["get"]},
        {"name": "nodes", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get"]}]}
    entry = aggregated_version("metrics.k8s.io", "v1beta1", listed, fresh=False)
    assert entry["freshness"] == "Stale" and entry["version"] == "v1beta1"
    pods, nodes = entry["resources"]
    assert (pods["scope"], nodes["scope"], pods["shortNames"]) == ("Namespaced", "Cluster", ["pm"])
    assert pods["subresources"] == [{"subresource": "status", "verbs": ["get"], "responseKind": {
        "group": "metrics.k8s.io", "version": "v1beta1", "kind": "PodMetrics"}}]


def test_apiservice_table_row():
    assert [c["name"] for c in column_definitions("APIService")] == [
        "Name", "Service", "Available", "Age"]
    remote = {"metadata": {"name": "v1.x"}, "spec": {"service": {"namespace": "n", "name": "s"}},
              "status": {"conditions": [{"type": "Available", "status": "False",
                                         "reason": "MissingEndpoints"}]}}
    assert row_cells("APIService", remote, 0)[:3] == ["v1.x", "n/s", "False (MissingEndpoints)"]
    assert row_cells("APIService", {"metadata": {"name": "v1."}, "spec": {}}, 0)[:3] == [
        "v1.", "Local", "Unknown"]


def test_front_proxy_client_certificate_is_issued_once(tmp_path: Path):
    cert, key = ensure_proxy_client_cert(tmp_path / "certs")
    parsed = x509.load_pem_x509_certificate(cert.read_bytes())
    assert parsed.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == \
        "front-proxy-client"
    issued = cert.read_bytes()
    assert ensure_proxy_client_cert(tmp_path / "certs") == (cert, key)
    assert cert.read_bytes() == issued and key.stat().st_mode & 0o077 == 0


async def test_autoregister_leaves_apiservices_it_does_not_own(tmp_path: Path):
    """Real registry over a real store: missing local APIServices are created, drifted ones
    corrected, stale ones deleted — but not a user's, nor one pointed at a service since."""
    from minikube_py.apiserver.aggregator.autoregister import desired, sync
    from minikube_py.registry.apiservices import APISERVICES
    from minikube_py.registry.generic import Registry
    from minikube_py.storage import EmbeddedStore

    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    try:
        registry = Registry(APISERVICES, store)
        want = desired([("", "v1", False), ("apps", "v1", False), ("x.io", "v1", True)])
        await sync(registry, want, {})
        await sync(registry, desired([("", "v1", False), ("x.io", "v2", True)]), {
            o["metadata"]["name"]: o for o in (await registry.list(None)).decoded()})
        names = sorted(o["metadata"]["name"] for o in (await registry.list(None)).decoded())
        assert names == ["v1.", "v2.x.io"]
        mine = _svc("v1.mine.io", group="mine.io")
        await registry.create("", mine)
        apps = desired([("apps", "v1", False)])["v1.apps"]
        apps["spec"]["service"] = {"namespace": "n", "name": "s", "port": 443}
        await registry.create("", apps)
        have = {o["metadata"]["name"]: o for o in (await registry.list(None)).decoded()}
        await sync(registry, desired([("", "v1", False)]), have)
        names = sorted(o["metadata"]["name"] for o in (await registry.list(None)).decoded())
        assert names == ["v1.", "v1.apps", "v1.mine.io"]
    finally:
        await store.close()


def test_start_fills_in_the_proxy_client_flags(tmp_path: Path):
    from minikube_py.cli.front_proxy_tls import with_proxy_client
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start_options import StartOptions

    def parsed(*argv: str) -> StartOptions:
        return StartOptions.from_args(build_parser().parse_args(
            ["start", "--cert-dir", str(tmp_path / "certs"), *argv]))

    filled = with_proxy_client(parsed()).apiserver
    assert filled.proxy_client_cert_file == str(tmp_path / "certs" / "front-proxy-client.crt")
    assert filled.proxy_client_key_file == str(tmp_path / "certs" / "front-proxy-client.key")
    given = with_proxy_client(parsed("--proxy-client-cert-file", "/x.crt",
                                     "--proxy-client-key-file", "/x.key")).apiserver
    assert (given.proxy_client_cert_file, given.proxy_client_key_file) == ("/x.crt", "/x.key")
    assert with_proxy_client(parsed("--secure-port", "0")).apiserver.proxy_client_cert_file \
        is None
