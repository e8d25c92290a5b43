"""The secure port end to end: TLS with a generated cert, token/basic/client-cert authn,
AlwaysDeny and ABAC authz, the anonymous health paths, the insecure port left open, and the
official kubernetes python client over TLS with a bearer token."""

from __future__ import annotations

import asyncio
import base64
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from minikube_py.apiserver.certs import (
    ensure_serving_cert,
    issue_client_cert,
    server_ssl_context,
)
from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.client.inprocess import InProcessTransport
from minikube_py.storage import EmbeddedStore
from tests.apiserver.conftest import pod

POLICY = "\n".join([
    '{"user":"admin"}',
    '{"user":"reader","readonly":true,"resource":"pods"}',
    '{"user":"scoped","resource":"pods","namespace":"team-a"}',
    '{"group":"ops","readonly":true}',
])


class Secure:
    def __init__(self, https: str, http: str, ca: Path, session: aiohttp.ClientSession,
                 app: web.Application) -> None:
        self.https, self.http, self.ca, self.session, self.app = https, http, ca, session, app

    async def call(self, method: str, path: str, token: str | None = None, body: Any = None,
                   secure: bool = True, headers: dict | None = None) -> tuple[int, Any]:
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        url = (self.https if secure else self.http) + path
        async with self.session.request(method, url, json=body, headers=hdrs) as resp:
            if resp.content_type == "application/json":
                return resp.status, await resp.json()
            return resp.status, await resp.text()


TOKENS = ('admin-token,admin,1\nreader-token,reader,2\nscoped-token,scoped,3\n'
          'ops-token,olga,4,"ops,dev"\n')


async def serve(tmp_path: Path, tokens: str = TOKENS, **options: Any) -> tuple[Secure, Any]:
    (tmp_path / "tokens.csv").write_text(tokens)
    (tmp_path / "basic.csv").write_text("pw,basic-admin,5\n")
    (tmp_path / "policy.jsonl").write_text(POLICY + '\n{"user":"basic-admin"}\n')
    cert, key, ca = ensure_serving_cert(tmp_path / "certs", ["10.0.0.1"])
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    opts = {"scheduler_health_url": "http://127.0.0.1:1/healthz",
            "controller_manager_health_url": "http://127.0.0.1:1/healthz",
            "token_auth_file": str(tmp_path / "tokens.csv"),
            "basic_auth_file": str(tmp_path / "basic.csv"),
            "client_ca_file": str(ca),
            "authorization_mode": "ABAC",
            "authorization_policy_file": str(tmp_path / "policy.jsonl"), **options}
    server = APIServer(store, APIServerOptions(**opts))
    runner = server.make_runner()
    await runner.setup()
    tls = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(cert, key, ca))
    await tls.start()
    plain = web.TCPSite(runner, "127.0.0.1", 0)
    await plain.start()
    (_, https_port), (_, http_port) = runner.addresses[0][:2], runner.addresses[1][:2]
    client_ctx = ssl.create_default_context(cafile=str(ca))
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=client_ctx))
    api = Secure(f"https://127.0.0.1:{https_port}", f"http://127.0.0.1:{http_port}", ca, session,
                 runner.app)

    async def close() -> None:
        await session.close()
        await runner.cleanup()
        await store.close()
    return api, close


@pytest.fixture
async def secure(tmp_path: Path):
    api, close = await serve(tmp_path)
    try:
        yield api
    finally:
        await close()


async def test_authentication(secure: Secure) -> None:
    status, body = await secure.call("GET", "/api/v1/namespaces/default/pods")
    assert status == 401
    assert (body["kind"], body["reason"], body["message"], body["code"]) == (
        "Status", "Unauthorized", "Unauthorized", 401)
    assert (await secure.call("GET", "/api/v1/namespaces/default/pods", "wrong"))[0] == 401
    assert (await secure.call("GET", "/api", None))[0] == 401
    assert (await secure.call("GET", "/api/v1/namespaces/default/pods", "admin-token"))[0] == 200
    for path in ("/healthz", "/livez", "/readyz", "/version"):
        assert (await secure.call("GET", path))[0] == 200, path
    basic = base64.b64encode(b"basic-admin:pw").decode()
    assert (await secure.call("GET", "/api/v1/nodes",
                              headers={"Authorization": f"Basic {basic}"}))[0] == 200
    bad = base64.b64encode(b"basic-admin:nope").decode()
    assert (await secure.call("GET", "/api/v1/nodes",
                              headers={"Authorization": f"Basic {bad}"}))[0] == 401


async def test_insecure_port_needs_no_auth(secure: Secure) -> None:
    status, _ = await secure.call("POST", "/api/v1/namespaces/default/pods", body=pod("open"),
                                  secure=False)
    assert status == 201
    assert (await secure.call("GET", "/api/v1/namespaces/default/pods", secure=False))[0] == 200


async def test_abac_readonly_and_namespace_scope(secure: Secure) -> None:
    pods = "/api/v1/namespaces/default/pods"
    assert (await secure.call("POST", pods, "admin-token", pod("p1")))[0] == 201
    assert (await secure.call("GET", pods, "reader-token"))[0] == 200
    assert (await secure.call("GET", pods + "/p1", "reader-token"))[0] == 200
    assert (await secure.call("GET", pods + "?watch=1&timeoutSeconds=1", "reader-token"))[0] == 200
    status, body = await secure.call("POST", pods, "reader-token", pod("p2"))
    assert status == 403
    assert body["reason"] == "Forbidden"
    assert body["message"] == ('pods is forbidden: User "reader" cannot create resource "pods" in '
                               'API group "" in the namespace "default": No policy matched.')
    assert body["details"] == {"kind": "pods"}  # name is omitempty, as upstream
    status, body = await secure.call("DELETE", pods + "/p1", "reader-token")
    assert status == 403 and body["details"] == {"name": "p1", "kind": "pods"}
    assert body["message"].startswith('pods "p1" is forbidden: User "reader" cannot delete')
    assert (await secure.call("GET", "/api/v1/namespaces/default/services", "reader-token"))[0] == 403
    # namespace-scoped user
    team = "/api/v1/namespaces/team-a/pods"
    assert (await secure.call("POST", "/api/v1/namespaces", "admin-token",
                              {"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": "team-a"}}))[0] == 201
    assert (await secure.call("POST", team, "scoped-token", pod("mine")))[0] == 201
    assert (await secure.call("GET", team, "scoped-token"))[0] == 200
    status, body = await secure.call("GET", pods, "scoped-token")
    assert status == 403
    assert 'User "scoped" cannot list resource "pods" in API group "" in the namespace "default"' \
        in body["message"]
    # group policy: olga is in "ops" (readonly everything)
    assert (await secure.call("GET", "/apis/apps/v1/deployments", "ops-token"))[0] == 200
    assert (await secure.call("POST", pods, "ops-token", pod("p3")))[0] == 403


async def test_client_certificate(secure: Secure, tmp_path: Path) -> None:
    cert, key = issue_client_cert(tmp_path / "certs", "admin", ["system:masters"])
    ctx = ssl.create_default_context(cafile=str(secure.ca))
    ctx.load_cert_chain(str(cert), str(key))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
        async with session.get(secure.https + "/api/v1/namespaces/default/pods") as resp:
            assert resp.status == 200
    cert, key = issue_client_cert(tmp_path / "certs", "stranger", [])
    ctx = ssl.create_default_context(cafile=str(secure.ca))
    ctx.load_cert_chain(str(cert), str(key))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
        async with session.get(secure.https + "/api/v1/namespaces/default/pods") as resp:
            assert resp.status == 403  # authenticated as "stranger", no policy


async def test_always_deny(tmp_path: Path) -> None:
    api, close = await serve(tmp_path, authorization_mode="AlwaysDeny",
                             authorization_policy_file=None)
    try:
        status, body = await api.call("GET", "/api/v1/namespaces/default/pods", "admin-token")
        assert status == 403
        assert body["message"].endswith(": Everything is forbidden.")
        assert (await api.call("GET", "/api/v1/namespaces/default/pods", secure=False))[0] == 200
        # the in-process transport is the insecure port's peer: never authenticated
        response = await InProcessTransport(api.app).request("GET", "/api/v1/namespaces/default/pods")
        assert response.status == 200
    finally:
        await close()


async def test_union_of_modes(tmp_path: Path) -> None:
    api, close = await serve(tmp_path, authorization_mode="AlwaysDeny,ABAC")
    try:
        pods = "/api/v1/namespaces/default/pods"
        assert (await api.call("GET", pods, "reader-token"))[0] == 200
        status, body = await api.call("POST", pods, "reader-token", pod("x"))
        assert status == 403
        assert body["message"].endswith(": Everything is forbidden.\nNo policy matched.")
    finally:
        await close()


async def test_bad_token_file_fails_startup(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("t1,alice,1\nt2\n")
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    try:
        with pytest.raises(ValueError, match=r"bad.csv line 2: expected at least 3 columns"):
            APIServer(store, APIServerOptions(token_auth_file=str(tmp_path / "bad.csv")))
    finally:
        await store.close()


async def test_kubernetes_python_client(secure: Secure) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")

    def run(token: str) -> Any:
        config = kubernetes.client.Configuration()
        config.host = secure.https
        config.ssl_ca_cert = str(secure.ca)
        config.api_key = {"authorization": f"Bearer {token}"}
        with kubernetes.client.ApiClient(config) as client:
            core = kubernetes.client.CoreV1Api(client)
            names = [p.metadata.name for p in core.list_namespaced_pod("default").items]
            try:
                core.create_namespaced_pod("default", pod("from-python"))
            except kubernetes.client.ApiException as exc:
                return names, exc.status, exc.reason
            return names, 201, "Created"

    assert (await secure.call("POST", "/api/v1/namespaces/default/pods", "admin-token",
                              pod("seed")))[0] == 201
    names, status, _ = await asyncio.to_thread(run, "reader-token")
    assert names == ["seed"] and status == 403
    names, status, _ = await asyncio.to_thread(run, "admin-token")
    assert status == 201
    with pytest.raises(kubernetes.client.ApiException) as exc:
        await asyncio.to_thread(run, "wrong-token")
    assert exc.value.status == 401
