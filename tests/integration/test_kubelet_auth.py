"""The kubelet API secured (issue 14): a real kubelet pool serving HTTPS with a certificate from
the cluster CA, requests from a real aiohttp client over real sockets, and a real API server
that reaches the kubelet with its kubelet-client certificate for exec, logs, proxy and
nodes/proxy. Without credentials 401 `Unauthorized`, a non-admin 403 `Forbidden (user=...)`,
the admin (token or client certificate) and the API server through."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
import structlog

from minikube_py.apiserver.certs import issue_client_cert
from minikube_py.cli import kubelet_tls
from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import PODS
from minikube_py.kubelet import KubeletConfig, KubeletPool
from minikube_py.kubelet.server import Serving
from tests.apiserver.conftest import API, start_api
from tests.integration.test_streaming import channels

FAST = KubeletConfig(node_status_update_frequency=0.2, image_pull_seconds=0.01,
                     container_start_seconds=0.01)
ADMIN, ALICE = "admin-token-0123456789", "alice-token-0123456789"
PODS_PATH = "/api/v1/namespaces/default/pods"


@dataclass
class Certs:
    dir: Path
    ca: Path
    serving: tuple[Path, Path]
    apiserver_client: tuple[Path, Path]
    tokens: Path


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    cert_dir = tmp_path / "certs"
    cert_dir.mkdir(mode=0o700)
    cert, key, ca = kubelet_tls.ensure_kubelet_serving_cert(cert_dir, ["127.0.0.1"])
    tokens = cert_dir / "tokens.csv"
    tokens.write_text(f'{ADMIN},admin,admin,"system:masters"\n{ALICE},alice,alice,"dev"\n')
    tokens.chmod(0o600)
    return Certs(cert_dir, ca, (cert, key), kubelet_tls.ensure_kubelet_client_cert(cert_dir),
                 tokens)


def secured(certs: Certs, *, anonymous: bool = False, mode: str = "Webhook") -> Serving:
    auth = kubelet_tls.auth_settings(token_auth_file=str(certs.tokens), client_certificates=True,
                                     anonymous=anonymous, authorization_mode=mode)
    return kubelet_tls.serving(*certs.serving, [certs.ca], auth)


def client_context(ca: Path, cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None:
        context.load_cert_chain(str(cert[0]), str(cert[1]))
    return context


@dataclass
class Cluster:
    api: API
    client: Client
    pool: KubeletPool
    certs: Certs

    @property
    def kubelet(self) -> str:
        return f"https://127.0.0.1:{self.pool.port}"

    async def call(self, method: str, path: str, *, token: str | None = None,
                   cert: tuple[Path, Path] | None = None) -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connector = aiohttp.TCPConnector(ssl=client_context(self.certs.ca, cert))
        async with aiohttp.ClientSession(connector=connector) as session:
            async with session.request(method, self.kubelet + path, headers=headers) as resp:
                return resp.status, await resp.text()


async def running_pod(client: Client, name: str) -> None:
    await client.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": name, "namespace": "default"},
                               "spec": {"nodeName": "n-0", "containers": [
                                   {"name": "web", "image": "nginx",
                                    "ports": [{"containerPort": 80}]}]}})
    for _ in range(500):
        if ((await client.get(PODS, name, "default")).get("status") or {}).get("phase") \
                == "Running":
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"pod {name} never ran")


@pytest.fixture
async def cluster_factory(tmp_path: Path, certs: Certs):
    """Start an API server (its kubelet-client options given) and a pool (its Serving)."""
    cleanups: list = []

    async def make(serving: Serving | None, **apiserver: object) -> Cluster:
        api, runner, store, session = await start_api(tmp_path / f"api{len(cleanups)}",
                                                      **apiserver)
        client = Client(HTTPTransport(api.url))
        pool = KubeletPool(client, port=0, log_interval=0.05, serving=serving)
        pool.add_nodes("n", 1, FAST)

        async def cleanup() -> None:
            await pool.stop()
            await client.close()
            await session.close()
            await runner.cleanup()
            await store.close()
        cleanups.append(cleanup)
        await pool.start()
        await pool.wait_ready(5)
        await pool.wait_synced(5)
        return Cluster(api, client, pool, certs)

    yield make
    for cleanup in reversed(cleanups):
        await cleanup()


def kubelet_client_options(certs: Certs) -> dict[str, str]:
    cert, key = certs.apiserver_client
    return {"kubelet_client_certificate": str(cert), "kubelet_client_key": str(key),
            "kubelet_certificate_authority": str(certs.ca)}


@pytest.fixture
async def cluster(cluster_factory, certs: Certs) -> AsyncIterator[Cluster]:
    yield await cluster_factory(secured(certs), **kubelet_client_options(certs))


# -- the kubelet port itself ------------------------------------------------------------------
async def test_no_credentials_is_401_unauthorized(cluster: Cluster) -> None:
    assert await cluster.call("GET", "/pods") == (401, "Unauthorized")
    assert await cluster.call("POST", "/nodes/n-0/stop") == (401, "Unauthorized")
    assert await cluster.call("GET", "/pods", token="not-a-token") == (401, "Unauthorized")
    assert cluster.pool.kubelet("n-0").running


async def test_non_admin_token_is_403_in_upstreams_words(cluster: Cluster) -> None:
    assert await cluster.call("POST", "/nodes/n-0/stop", token=ALICE) == (
        403, "Forbidden (user=alice, verb=create, resource=nodes, subresource=proxy)")
    assert await cluster.call("GET", "/pods", token=ALICE) == (
        403, "Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)")
    assert cluster.pool.kubelet("n-0").running


async def test_admin_token_and_apiserver_client_certificate_are_allowed(cluster: Cluster) -> None:
    status, body = await cluster.call("GET", "/pods", token=ADMIN)
    assert status == 200 and '"PodList"' in body
    status, _ = await cluster.call("POST", "/nodes/n-0/stop", cert=cluster.certs.apiserver_client)
    assert status == 200 and not cluster.pool.kubelet("n-0").running


async def test_a_non_admin_certificate_is_403_and_a_foreign_ca_fails_the_handshake(
        cluster: Cluster, tmp_path: Path) -> None:
    alice = issue_client_cert(cluster.certs.dir, "alice", ["dev"])
    assert await cluster.call("GET", "/healthz", cert=alice) == (
        403, "Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)")
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    forged = issue_client_cert(other, "admin", ["system:masters"])  # its own CA
    with pytest.raises(aiohttp.ClientError):
        await cluster.call("GET", "/pods", cert=forged)


async def test_plain_http_does_not_reach_the_tls_port(cluster: Cluster) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientError):
            async with session.post(f"http://127.0.0.1:{cluster.pool.port}/nodes/n-0/stop") as r:
                await r.read()
    assert cluster.pool.kubelet("n-0").running


# -- through the API server -------------------------------------------------------------------
async def test_exec_logs_proxy_and_node_proxy_go_through_with_the_client_cert(
        cluster: Cluster) -> None:
    await running_pod(cluster.client, "web")
    session, url = cluster.api.session, cluster.api.url
    query = [("command", "echo"), ("command", "hi"), ("stdout", "true")]
    async with session.ws_connect(f"{url}{PODS_PATH}/web/exec", params=query,
                                  protocols=["v5.channel.k8s.io"]) as ws:
        out, _, status = await channels(ws)
    assert (out, status["status"]) == (b"hi\n", "Success")
    async with session.get(f"{url}{PODS_PATH}/web/log") as resp:
        assert resp.status == 200 and (await resp.text())
    async with session.get(f"{url}{PODS_PATH}/web/proxy/hello") as resp:
        assert resp.status == 200 and "GET /hello" in await resp.text()
    async with session.post(f"{url}/api/v1/nodes/n-0/proxy/nodes/n-0/stop") as resp:
        assert resp.status == 200, await resp.text()
    assert not cluster.pool.kubelet("n-0").running


async def test_an_apiserver_without_the_client_cert_is_refused_by_the_kubelet(
        cluster_factory, certs: Certs) -> None:
    cluster = await cluster_factory(secured(certs),
                                    kubelet_certificate_authority=str(certs.ca))
    async with cluster.api.session.post(
            f"{cluster.api.url}/api/v1/nodes/n-0/proxy/nodes/n-0/stop") as resp:
        assert (resp.status, await resp.text()) == (401, "Unauthorized")
    assert cluster.pool.kubelet("n-0").running


async def test_an_apiserver_without_kubelet_tls_cannot_reach_a_secured_kubelet(
        cluster_factory, certs: Certs) -> None:
    cluster = await cluster_factory(secured(certs))  # dials http://
    async with cluster.api.session.post(
            f"{cluster.api.url}/api/v1/nodes/n-0/proxy/nodes/n-0/stop") as resp:
        assert resp.status == 503
    assert cluster.pool.kubelet("n-0").running


# -- the open modes ---------------------------------------------------------------------------
async def test_anonymous_with_webhook_is_forbidden_as_system_anonymous(
        cluster_factory, certs: Certs) -> None:
    cluster = await cluster_factory(secured(certs, anonymous=True))
    assert await cluster.call("GET", "/pods") == (
        403, "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=proxy)")


async def test_anonymous_always_allow_is_the_explicit_open_mode(cluster_factory,
                                                                certs: Certs) -> None:
    cluster = await cluster_factory(secured(certs, anonymous=True, mode="AlwaysAllow"))
    status, _ = await cluster.call("POST", "/nodes/n-0/stop")
    assert status == 200 and not cluster.pool.kubelet("n-0").running


async def test_without_serving_the_pool_is_plain_http_and_says_it_is_open(
        cluster_factory) -> None:
    with structlog.testing.capture_logs() as logs:
        cluster = await cluster_factory(None)
    started = next(e for e in logs if e["event"] == "kubelet pool started")
    assert started["scheme"] == "http" and started["authentication"].startswith("none")
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{cluster.pool.port}/pods") as resp:
            assert resp.status == 200
