"""`minikube-py start --ingress`: the simulated ingress controller in a cluster built the way
`start` builds it (secure port on, so the controller acts under RBAC as its service account).
A Deployment's pods behind a Service, an Ingress without a class (the DefaultIngressClass
plugin gives it the controller's `minikube-py` class), then: the Ingress's status names the
controller's address, and HTTP to the controller's port with the right Host header is answered
by a backend pod's simulated server; other hosts get the default backend's 404. Pure routing
rules are checked table-driven first."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from minikube_py.cli.main import build_parser
from minikube_py.cli.start import running_cluster
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import ConfigError
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import DEPLOYMENTS, INGRESSES, SERVICES
from minikube_py.controllers.ingress_routing import host_rank, path_score, route
from tests.etcd_server import free_port
from tests.polling import eventually


# -- pure ------------------------------------------------------------------------------------
@pytest.mark.parametrize("rule_host, host, rank", [
    ("foo.example.com", "foo.example.com", 0), ("*.example.com", "foo.example.com", 1),
    ("*.example.com", "example.com", None), ("*.example.com", "a.b.example.com", None),
    ("", "anything", 2), ("bar.example.com", "foo.example.com", None)])
def test_host_matching(rule_host: str, host: str, rank: int | None) -> None:
    assert host_rank(rule_host, host) == rank


@pytest.mark.parametrize("path_type, rule_path, path, score", [
    ("Prefix", "/foo", "/foo/bar", (4, 0)), ("Prefix", "/foo", "/foobar", None),
    ("Prefix", "/foo/", "/foo", (4, 0)), ("Prefix", "/", "/x", (1, 0)),
    ("Exact", "/foo", "/foo", (4, 1)), ("Exact", "/foo", "/foo/", None),
    ("ImplementationSpecific", "/api", "/api/v1", (4, 0))])
def test_path_matching(path_type: str, rule_path: str, path: str, score: tuple | None) -> None:
    assert path_score(path_type, rule_path, path) == score


def _ingress(name: str, created: str, rules: list, default: str | None = None) -> dict:
    spec: dict = {"rules": rules}
    if default:
        spec["defaultBackend"] = {"service": {"name": default, "port": {"number": 80}}}
    return {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
            "spec": spec}


def _rule(host: str, *paths: tuple[str, str, str]) -> dict:
    return {"host": host, "http": {"paths": [
        {"path": p, "pathType": t, "backend": {"service": {"name": s, "port": {"number": 80}}}}
        for p, t, s in paths]}}


def test_route_precedence() -> None:
    ingresses = [
        _ingress("a", "2024-01-01T00:00:00Z", [
            _rule("foo.example.com", ("/", "Prefix", "root"), ("/api", "Prefix", "api"),
                  ("/api", "Exact", "api-exact")),
            _rule("*.example.com", ("/", "Prefix", "wild"))], default="fallback"),
        _ingress("b", "2024-02-01T00:00:00Z", [_rule("", ("/", "Prefix", "any-host"))]),
    ]
    assert route(ingresses, "foo.example.com:8081", "/api").service == "api-exact"
    assert route(ingresses, "foo.example.com", "/api/v1").service == "api"
    assert route(ingresses, "foo.example.com", "/other").service == "root"
    assert route(ingresses, "bar.example.com", "/").service == "wild"
    assert route(ingresses, "elsewhere.org", "/").service == "any-host"
    assert route(ingresses[:1], "elsewhere.org", "/").service == "fallback"
    assert route([], "x", "/") is None


# -- a running cluster -------------------------------------------------------------------------
def start_options(tmp: Path) -> StartOptions:
    args = ["start", "--data-dir", str(tmp / "data"), "--cert-dir", str(tmp / "certs"),
            "--fsync", "never", "--nodes", "1", "--insecure-port", "0",
            "--secure-port", str(free_port()), "--scheduler-port", "0",
            "--controller-manager-port", "0", "--kubelet-port", str(free_port()),
            "--kubeconfig-out", "",
            "--image-pull-duration", "0", "--container-start-duration", "0",
            "--ingress", "--ingress-port", "0"]
    return StartOptions.from_args(build_parser().parse_args(args))


DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                 {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]}}
INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
           "spec": {"rules": [{"host": "web.example.com", "http": {"paths": [
               {"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}




async def test_ingress_routes_to_the_backend_pods(tmp_path: Path) -> None:
    for attempt in range(5):  # the secure port is only reserved by this process: retry a race
        try:
            async with running_cluster(start_options(tmp_path / str(attempt))) as cluster:
                await _exercise(cluster)
                return
        except ConfigError as exc:
            if "address" not in str(exc) or attempt == 4:
                raise


async def _exercise(cluster) -> None:  # type: ignore[no-untyped-def]
    client = Client(InProcessTransport(cluster.runner.app))
    try:
        url = cluster.component("ingress").url
        await client.create(DEPLOYMENTS, DEPLOYMENT, "default")
        await client.create(SERVICES, SERVICE, "default")
        created = await client.create(INGRESSES, INGRESS, "default")
        assert created["spec"]["ingressClassName"] == "minikube-py"

        async def addressed() -> bool:
            ingress = await client.get(INGRESSES, "web", "default")
            return (ingress.get("status") or {}).get("loadBalancer") == {
                "ingress": [{"ip": "127.0.0.1"}]}
        assert await eventually(addressed, 20)

        async with aiohttp.ClientSession() as session:
            async def answered() -> str | None:
                async with session.get(f"{url}/hello?x=1",
                                       headers={"Host": "web.example.com"}) as resp:
                    text = await resp.text()
                    return text if resp.status == 200 else None
            text = await eventually(answered, 20)
            assert text is not None and text.startswith("pod web-"), text
            assert text.rstrip().endswith("GET /hello?x=1"), text
            async with session.get(f"{url}/", headers={"Host": "other.example.com"}) as resp:
                assert resp.status == 404
                assert await resp.text() == "default backend - 404\n"
    finally:
        await client.close()
