"""API aggregation end to end: a real HTTPS backend serving a small metrics.k8s.io/v1beta1.

The backend (tests/webhook_server.py) verifies client certificates against the CA that issued
the API server's front-proxy client certificate, and records what it received. The API
server, kubectl (/usr/bin/kubectl) and the official python client are all real; nothing of
ours is mocked.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from minikube_py.apiserver.certs import issue_client_cert
from minikube_py.httpstream import upgrade
from tests.apiserver_thread import ServerThread
from tests.webhook_server import WebhookServer

KUBECTL = "/usr/bin/kubectl"
GROUP, VERSION = "metrics.k8s.io", "v1beta1"
NAME = f"{VERSION}.{GROUP}"
RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}",
             "resources": [
                 {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics",
                  "verbs": ["get", "list"]},
                 {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics",
                  "verbs": ["get", "list", "watch"]}]}
NODES = {"kind": "NodeMetricsList", "apiVersion": f"{GROUP}/{VERSION}", "metadata": {},
         "items": [{"metadata": {"name": "node-1"}, "timestamp": "2026-01-01T00:00:00Z",
                    "window": "10s", "usage": {"cpu": "100m", "memory": "1Gi"}}]}


class Backend(WebhookServer):
    """A metrics-server stand-in: discovery, a list, a slow watch, an echo."""

    def __init__(self, cert_dir: Path, client_ca: Path, name: str = "metrics-server") -> None:
        super().__init__(cert_dir, name=name, namespace="kube-system", client_ca=client_ca)
        self.seen: list[dict[str, Any]] = []
        self.raw(f"/apis/{GROUP}/{VERSION}", self._json(RESOURCES))
        self.raw(f"/apis/{GROUP}/{VERSION}/nodes", self._json(NODES))
        self.raw(f"/apis/{GROUP}/{VERSION}/namespaces/*", self._watch)
        self.raw(f"/apis/{GROUP}/{VERSION}/echo", self._echo)
        self.raw(f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/p/exec", self._upgraded_echo)

    def _note(self, request: web.Request, body: bytes = b"") -> None:
        cert = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(pair[0] for pair in (cert or {}).get("subject", ()))
        self.seen.append({"path": request.path, "query": request.rel_url.raw_query_string,
                          "method": request.method, "body": body,
                          "users": request.headers.getall("X-Remote-User", []),
                          "groups": request.headers.getall("X-Remote-Group", []),
                          "authorization": request.headers.get("Authorization"),
                          "cn": subject.get("commonName")})

    def _json(self, document: dict):
        async def handler(request: web.Request) -> web.Response:
            self._note(request)
            return web.json_response(document)
        return handler

    async def _watch(self, request: web.Request) -> web.StreamResponse:
        self._note(request)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for i in range(2):
            event = {"type": "ADDED", "object": {"kind": "PodMetrics", "metadata": {
                "name": f"pod-{i}", "namespace": "default"}}}
            await response.write(json.dumps(event).encode() + b"\n")
            await asyncio.sleep(2.0)
        await response.write_eof()
        return response

    async def _upgraded_echo(self, request: web.Request) -> web.StreamResponse:
        """An exec-like endpoint: a WebSocket or a SPDY upgrade that echoes what it gets."""
        self._note(request)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            ws = web.WebSocketResponse(protocols=("v5.channel.k8s.io",))
            await ws.prepare(request)
            async for message in ws:
                await ws.send_bytes(message.data)
            return ws
        chosen = request.headers.get(upgrade.PROTOCOL_HEADER, "")
        conn = await upgrade.accept(request, {upgrade.PROTOCOL_HEADER: chosen})
        while chunk := await conn.reader.read(1024):
            await conn.write(chunk)
        conn.close()
        return conn.response

    async def _echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        self._note(request, body)
        return web.Response(status=201, body=body, headers={"X-Backend": "yes"},
                            content_type="application/octet-stream")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("aggregator")
    cert, key = issue_client_cert(tmp / "pki", "front-proxy-client", [], name="front-proxy-client")
    api = ServerThread(tmp / "data", proxy_client_cert_file=str(cert),
                       proxy_client_key_file=str(key), apiservice_resync_seconds=0.3).start()
    backend = Backend(tmp / "backend", tmp / "pki" / "ca.crt").start()
    port = backend.publish(api.url)
    try:
        yield api, backend, port, tmp
    finally:
        backend.stop()
        api.stop()


def _call(api: ServerThread, method: str, path: str, body: Any = None,
          headers: dict[str, str] | None = None) -> tuple[int, bytes, Any]:
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) \
        else body
    request = urllib.request.Request(api.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def _last(backend: Backend, suffix: str) -> dict[str, Any]:
    """What the backend last saw on a path ending with `suffix` (the availability probe's
    discovery GETs arrive in between)."""
    return [s for s in backend.seen if s["path"].endswith(suffix)][-1]


def _apiservice(name: str, group: str, version: str, service: dict | None, **spec: Any) -> dict:
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 100,
                     "versionPriority": 100, **spec}}
    if service is not None:
        body["spec"]["service"] = service
    return body


def _wait_condition(api: ServerThread, name: str, status: str, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    cond: dict = {}
    while time.monotonic() < deadline:
        code, body, _ = _call(api, "GET", f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
        conds = json.loads(body).get("status", {}).get("conditions", []) if code == 200 else []
        cond = next((c for c in conds if c["type"] == "Available"), {})
        if cond.get("status") == status:
            return cond
        time.sleep(0.1)
    raise AssertionError(f"{name} never became Available={status}: {cond}")


def _kubectl(api: ServerThread, home: Path, *args: str, ok: bool = True
             ) -> subprocess.CompletedProcess:
    result = subprocess.run([KUBECTL, "-s", api.url, "--cache-dir", str(home / "cache"), *args],
                            check=False, capture_output=True, text=True, timeout=60,
                            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    if ok:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def registered(env):
    """v1beta1.metrics.k8s.io, created with the official python client, Available=True."""
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    api, backend, port, _ = env
    config = kubernetes.client.Configuration()
    config.host = api.url
    with kubernetes.client.ApiClient(config) as client:
        registration = kubernetes.client.ApiregistrationV1Api(client)
        created = registration.create_api_service(_apiservice(
            NAME, GROUP, VERSION, {"namespace": "kube-system", "name": "metrics-server",
                                   "port": port}, caBundle=backend.ca_bundle))
        assert created.metadata.name == NAME and created.spec.service.port == port
        names = [s.metadata.name for s in registration.list_api_service().items]
        assert NAME in names and "v1.apps" in names and "v1." in names
    return _wait_condition(api, NAME, "True")


# -- the kind ------------------------------------------------------------------------------------
def test_validation_as_upstream(env):
    api = env[0]
    code, body, _ = _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
        "wrong.example.com", "example.com", "v1", None, groupPriorityMinimum=0,
        versionPriority=1001, caBundle="UEVN"))
    status = json.loads(body)
    assert code == 422 and status["reason"] == "Invalid", status
    causes = {(c["field"], c["message"]) for c in status["details"]["causes"]}
    assert ("metadata.name", ('Invalid value: "wrong.example.com": must be '
            '`spec.version+"."+spec.group`: "v1.example.com"')) in causes
    assert ("spec.groupPriorityMinimum", ("Invalid value: 0: must be positive and less than "
            "20000")) in causes
    assert ("spec.versionPriority", ("Invalid value: 1001: must be positive and less than "
            "1000")) in causes
    assert ("spec.caBundle", ('Invalid value: "3 bytes": local APIServices may not have a '
            'caBundle')) in causes
    code, body, _ = _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
        "v1.example.com", "example.com", "v1", {"namespace": "", "name": "x"}))
    causes = {c["field"] for c in json.loads(body)["details"]["causes"]}
    assert code == 422 and "spec.service.namespace" in causes, body


@pytest.mark.parametrize("spec, status", [
    ("nope", None), ({"service": "str"}, None), ({"service": {"namespace": 1, "port": "443"}}, None),
    ({"groupPriorityMinimum": "1"}, None), ({"caBundle": 12}, None),
    ({}, {"conditions": "x"}), ({}, {"conditions": [1]}), ({}, "str"),
])
def test_wrong_types_are_422_not_500(env, spec, status):
    api = env[0]
    if status is None:
        body = _apiservice("v1.types.example.com", "types.example.com", "v1", None)
        body["spec"] = spec if isinstance(spec, str) else {**body["spec"], **spec}
        code, answer, _ = _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", body)
    else:
        _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
            "v1.types.example.com", "types.example.com", "v1", None))
        code, answer, _ = _call(
            api, "PATCH", "/apis/apiregistration.k8s.io/v1/apiservices/v1.types.example.com/status",
            {"status": status}, headers={"Content-Type": "application/merge-patch+json"})
    assert code == 422 and json.loads(answer)["reason"] == "Invalid", answer


def test_local_apiservices_like_a_real_cluster(env):
    api, _, _, home = env
    _wait_condition(api, "v1.apps", "True")
    out = _kubectl(api, home, "get", "apiservices").stdout
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:]}
    assert lines["v1."][:2] == ["Local", "True"], out
    assert lines["v1.apps"][:2] == ["Local", "True"], out
    assert lines["v1.apiregistration.k8s.io"][:2] == ["Local", "True"], out
    _code, body, _ = _call(api, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")
    obj = json.loads(body)
    assert obj["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800,
                           "versionPriority": 15}
    assert obj["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    cond = obj["status"]["conditions"][0]
    assert (cond["reason"], cond["message"]) == ("Local", "Local APIServices are always available")


def test_a_crd_group_gets_a_local_apiservice_while_it_is_served(env):
    api = env[0]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.agg.example.com"},
           "spec": {"group": "agg.example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True}}}]}}
    code, body, _ = _call(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                          crd)
    assert code == 201, body
    cond = _wait_condition(api, "v1.agg.example.com", "True")
    assert cond["reason"] == "Local"
    code, body, _ = _call(api, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/"
                                      "v1.agg.example.com")
    obj = json.loads(body)
    assert (obj["spec"]["groupPriorityMinimum"], obj["spec"]["versionPriority"]) == (1000, 100)
    assert obj["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"] == "true"
    # deleted while the CRD is served, it comes back (upstream's autoregister)
    assert _call(api, "DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/"
                                "v1.agg.example.com")[0] == 200
    deadline = time.monotonic() + 10
    while _call(api, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/"
                            "v1.agg.example.com")[0] != 200:
        assert time.monotonic() < deadline, "the CRD's APIService was not put back"
        time.sleep(0.1)
    _call(api, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                         "widgets.agg.example.com")
    deadline = time.monotonic() + 10
    while _call(api, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/"
                            "v1.agg.example.com")[0] != 404:
        assert time.monotonic() < deadline, "the CRD's APIService outlived it"
        time.sleep(0.1)


# -- the proxy -----------------------------------------------------------------------------------
def test_available_and_listed_by_kubectl(env, registered):
    api, _, _, home = env
    assert (registered["reason"], registered["message"]) == ("Passed", "all checks passed")
    out = _kubectl(api, home, "get", "apiservices", NAME).stdout.splitlines()
    assert out[1].split()[:3] == [NAME, "kube-system/metrics-server", "True"], out


def test_kubectl_get_raw_reaches_the_backend_as_the_front_proxy(env, registered):
    api, backend, _, home = env
    backend.seen.clear()
    out = _kubectl(api, home, "get", "--raw", f"/apis/{GROUP}/{VERSION}/nodes").stdout
    assert json.loads(out) == NODES
    seen = _last(backend, "/nodes")
    # the insecure port's user is upstream's unsecured superuser
    assert seen["users"] == ["system:unsecured"]
    assert seen["groups"] == ["system:masters", "system:authenticated"]
    assert seen["cn"] == "front-proxy-client"  # the proxy client certificate
    assert seen["authorization"] is None


def test_kubectl_top_reads_the_aggregated_metrics_api(env, registered):
    """What metrics-server is for: kubectl top divides the backend's usage by the node's
    allocatable (100m of 2 cores, 1Gi of 4Gi)."""
    api, _, _, home = env
    code, body, _ = _call(api, "POST", "/api/v1/nodes", {
        "metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi"},
                   "allocatable": {"cpu": "2", "memory": "4Gi"}}})
    assert code == 201, body
    out = _kubectl(api, home, "top", "node").stdout.splitlines()
    assert out[1].split() == ["node-1", "100m", "5%", "1024Mi", "25%"], out


def test_method_body_query_and_headers_pass_through(env, registered):
    api, backend, _, _ = env
    backend.seen.clear()
    code, body, headers = _call(api, "POST", f"/apis/{GROUP}/{VERSION}/echo?x=1&y=a%20b",
                                b"\x00raw body", headers={"X-Remote-User": "mallory",
                                                          "X-Remote-Group": "system:masters"})
    assert (code, body, headers["X-Backend"]) == (201, b"\x00raw body", "yes")
    seen = _last(backend, "/echo")
    assert (seen["method"], seen["query"], seen["body"]) == ("POST", "x=1&y=a%20b", b"\x00raw body")
    assert seen["users"] == ["system:unsecured"], "a client's X-Remote-User must be dropped"
    assert "mallory" not in seen["users"] and seen["groups"].count("system:masters") == 1


def test_watch_streams_through_the_proxy(env, registered):
    api = env[0]
    request = urllib.request.Request(
        f"{api.url}/apis/{GROUP}/{VERSION}/namespaces/default/pods?watch=true")
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=15) as response:
        first = json.loads(response.readline())
        first_at = time.monotonic() - started
        second = json.loads(response.readline())
    assert (first["object"]["metadata"]["name"], second["object"]["metadata"]["name"]) == (
        "pod-0", "pod-1")
    assert first_at < 1.5, f"the first event waited for the stream to end ({first_at:.2f} s)"


def test_upgrades_are_relayed(env, registered):
    """WebSocket (kubectl 1.30+'s exec) and SPDY/3.1 (older kubectl) through the proxy."""
    import aiohttp

    api, backend, _, _ = env
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/pods/p/exec"

    async def websocket() -> tuple[str | None, bytes]:
        async with aiohttp.ClientSession() as session, session.ws_connect(
                api.url + path, protocols=["v5.channel.k8s.io"]) as ws:
            await ws.send_bytes(b"\x00hello")
            message = await ws.receive(timeout=10)
            return ws.protocol, message.data

    assert asyncio.run(websocket()) == ("v5.channel.k8s.io", b"\x00hello")
    assert _last(backend, "/exec")["users"] == ["system:unsecured"]

    async def spdy() -> tuple[int, str, bytes]:
        answer = await upgrade.dial(api.url + path, "POST",
                                    [(upgrade.PROTOCOL_HEADER, "v4.channel.k8s.io")], None)
        assert answer.upgraded is not None, (answer.status, answer.body)
        await answer.upgraded.write(b"raw bytes")
        echoed = await asyncio.wait_for(answer.upgraded.reader.readexactly(9), 10)
        answer.upgraded.close()
        return answer.status, answer.header(upgrade.PROTOCOL_HEADER), echoed

    assert asyncio.run(spdy()) == (101, "v4.channel.k8s.io", b"raw bytes")


def test_discovery_lists_the_aggregated_group(env, registered):
    api, _, _, home = env
    groups = json.loads(_call(api, "GET", "/apis")[1])["groups"]
    names = [g["name"] for g in groups]
    assert names[:2] == ["apiregistration.k8s.io", "apps"], names
    entry = next(g for g in groups if g["name"] == GROUP)
    assert entry["preferredVersion"] == {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    # groupPriorityMinimum 100 sorts it after every built-in group (CRDs are at 1000)
    assert names.index(GROUP) > names.index("scheduling.k8s.io")
    paths = json.loads(_call(api, "GET", "/")[1])["paths"]
    assert f"/apis/{GROUP}" in paths and f"/apis/{GROUP}/{VERSION}" in paths
    group = json.loads(_call(api, "GET", f"/apis/{GROUP}")[1])
    assert group["kind"] == "APIGroup" and group["versions"][0]["version"] == VERSION
    aggregated = json.loads(_call(api, "GET", "/apis", headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})[1])
    item = next(i for i in aggregated["items"] if i["metadata"]["name"] == GROUP)
    resources = {r["resource"]: r for r in item["versions"][0]["resources"]}
    assert resources["pods"]["scope"] == "Namespaced"
    assert resources["nodes"]["responseKind"] == {"group": GROUP, "version": VERSION,
                                                  "kind": "NodeMetrics"}
    out = _kubectl(api, home, "api-resources", f"--api-group={GROUP}").stdout
    assert "nodemetrics" in out.lower() or "NodeMetrics" in out, out


# -- availability --------------------------------------------------------------------------------
def test_missing_service_and_endpoints_reasons(env):
    api = env[0]
    _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
        "v1.missing.example.com", "missing.example.com", "v1",
        {"namespace": "default", "name": "nowhere"}))
    cond = _wait_condition(api, "v1.missing.example.com", "False")
    assert (cond["reason"], cond["message"]) == (
        "ServiceNotFound", 'service/nowhere in "default" is not present')
    code, body, headers = _call(api, "GET", "/apis/missing.example.com/v1/things")
    assert (code, body) == (503, b"service unavailable\n")
    aggregated = json.loads(_call(api, "GET", "/apis", headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})[1])
    item = next(i for i in aggregated["items"] if i["metadata"]["name"] == "missing.example.com")
    assert item["versions"] == [{"version": "v1", "resources": [], "freshness": "Stale"}]
    assert headers["Content-Type"].startswith("text/plain")
    _call(api, "POST", "/api/v1/namespaces/default/services", {
        "metadata": {"name": "empty"}, "spec": {"ports": [{"name": "https", "port": 443}]}})
    _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
        "v1.empty.example.com", "empty.example.com", "v1",
        {"namespace": "default", "name": "empty"}))
    cond = _wait_condition(api, "v1.empty.example.com", "False")
    assert cond["reason"] in ("EndpointsNotFound", "MissingEndpoints"), cond
    _call(api, "PUT", "/api/v1/namespaces/default/endpoints/empty", {
        "metadata": {"name": "empty"}, "subsets": []})
    deadline = time.monotonic() + 10
    while cond["reason"] != "MissingEndpoints":
        assert time.monotonic() < deadline, cond
        cond = _wait_condition(api, "v1.empty.example.com", "False")
    assert cond["message"] == ('endpoints for service/empty in "default" have no addresses '
                               'with port name "https"')


def test_backend_stopped_is_unavailable_and_503(env):
    api, _, _, _ = env
    tmp = env[3]
    backend = Backend(tmp / "doomed", tmp / "pki" / "ca.crt", name="doomed").start()
    port = backend.publish(api.url)
    body = _apiservice("v1.doomed.example.com", "doomed.example.com", "v1",
                       {"namespace": "kube-system", "name": "doomed", "port": port},
                       caBundle=backend.ca_bundle)
    backend.raw("/apis/doomed.example.com/v1", backend._json({"kind": "APIResourceList",
                                                             "groupVersion": "doomed.example.com/v1",
                                                             "resources": []}))
    assert _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", body)[0] == 201
    _wait_condition(api, "v1.doomed.example.com", "True")
    backend.stop()
    cond = _wait_condition(api, "v1.doomed.example.com", "False")
    assert cond["reason"] == "FailedDiscoveryCheck"
    assert cond["message"].startswith(f"failing or missing response from https://localhost:{port}"
                                      "/apis/doomed.example.com/v1"), cond
    code, text, _ = _call(api, "GET", "/apis/doomed.example.com/v1/things")
    assert (code, text) == (503, b"service unavailable\n")
    metrics = _call(api, "GET", "/metrics")[1].decode()
    assert 'aggregator_unavailable_apiservice{name="v1.doomed.example.com"} 1.0' in metrics
    assert ('aggregator_unavailable_apiservice_transitions_total{name="v1.doomed.example.com",'
            'reason="FailedDiscoveryCheck"} 1.0') in metrics
    result = _kubectl(api, env[3], "get", "--raw", "/apis/doomed.example.com/v1/things",
                      ok=False)
    assert result.returncode != 0 and "ServiceUnavailable" in result.stderr, result.stderr


def test_deleting_the_apiservice_removes_the_group(env, registered):
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    api = env[0]
    config = kubernetes.client.Configuration()
    config.host = api.url
    with kubernetes.client.ApiClient(config) as client:
        kubernetes.client.ApiregistrationV1Api(client).delete_api_service(NAME)
    deadline = time.monotonic() + 10
    while GROUP in [g["name"] for g in json.loads(_call(api, "GET", "/apis")[1])["groups"]]:
        assert time.monotonic() < deadline, "the group outlived its APIService"
        time.sleep(0.1)
    assert _call(api, "GET", f"/apis/{GROUP}/{VERSION}/nodes")[0] == 404


def test_a_service_appearing_is_noticed_without_waiting_for_the_resync(tmp_path):
    """Upstream's controller also reacts to Service and Endpoints events: an APIService whose
    service shows up is probed at once, not at the next 30 s resync."""
    cert, key = issue_client_cert(tmp_path / "pki", "front-proxy-client", [],
                                  name="front-proxy-client")
    api = ServerThread(tmp_path / "data", proxy_client_cert_file=str(cert),
                       proxy_client_key_file=str(key), apiservice_resync_seconds=300).start()
    backend = Backend(tmp_path / "backend", tmp_path / "pki" / "ca.crt").start()
    try:
        _call(api, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", _apiservice(
            NAME, GROUP, VERSION, {"namespace": "kube-system", "name": "metrics-server",
                                   "port": backend.port}, caBundle=backend.ca_bundle))
        assert _wait_condition(api, NAME, "False")["reason"] == "ServiceNotFound"
        backend.publish(api.url)
        assert _wait_condition(api, NAME, "True", timeout=5)["reason"] == "Passed"
    finally:
        backend.stop()
        api.stop()


# -- the secure port -----------------------------------------------------------------------------
async def test_an_authenticated_user_reaches_the_backend_by_front_proxy_headers(tmp_path):
    """On the TLS port the backend learns the authenticated user and each of its groups;
    the bearer token stays here. Authorization happens here first: a user ABAC does not
    allow gets 403 from us and the backend never hears of it."""
    from tests.apiserver.test_secure import serve

    cert, key = issue_client_cert(tmp_path / "pki", "front-proxy-client", [],
                                  name="front-proxy-client")
    secure, close = await serve(tmp_path, proxy_client_cert_file=str(cert),
                                proxy_client_key_file=str(key), apiservice_resync_seconds=0.3)
    backend = Backend(tmp_path / "backend", tmp_path / "pki" / "ca.crt")
    try:
        await asyncio.to_thread(backend.start)
        port = await asyncio.to_thread(backend.publish, secure.http)
        status, _ = await secure.call("POST", "/apis/apiregistration.k8s.io/v1/apiservices",
                                      "admin-token", _apiservice(
                                          NAME, GROUP, VERSION,
                                          {"namespace": "kube-system", "name": "metrics-server",
                                           "port": port}, caBundle=backend.ca_bundle))
        assert status == 201
        for _ in range(100):
            status, body = await secure.call("GET", f"/apis/{GROUP}/{VERSION}/nodes", "ops-token")
            if status == 200:
                break
            await asyncio.sleep(0.1)
        assert (status, body) == (200, NODES)
        seen = _last(backend, "/nodes")
        assert seen["users"] == ["olga"]
        assert seen["groups"] == ["ops", "dev", "system:authenticated"]
        assert seen["authorization"] is None and seen["cn"] == "front-proxy-client"
        def nodes_requests() -> int:
            return sum(1 for s in backend.seen if s["path"].endswith("/nodes"))

        before = nodes_requests()
        status, body = await secure.call("GET", f"/apis/{GROUP}/{VERSION}/nodes", "scoped-token")
        assert status == 403 and body["reason"] == "Forbidden", body
        assert nodes_requests() == before
    finally:
        await asyncio.to_thread(backend.stop)
        await close()
