"""The insecure port's Host check (DNS rebinding): the pure rule, then real requests on a
real socket — a foreign name gets a 403 Status, loopback names and addresses are served, the
real kubectl keeps working, and the secure port and the in-process transport are unaffected."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from minikube_py.api.errors import StatusError
from minikube_py.apiserver.certs import ensure_serving_cert, server_ssl_context
from minikube_py.apiserver.hostcheck import allowed, split_host
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import NAMESPACES
from tests.apiserver.conftest import API, start_api

KUBECTL = "/usr/bin/kubectl"


@pytest.mark.parametrize(("header", "host"), [
    ("localhost:8080", "localhost"), ("LocalHost.", "localhost"), ("[::1]:6443", "::1"),
    ("::1", "::1"), ("127.0.0.1", "127.0.0.1"), ("evil.example:80", "evil.example"),
    ("", ""),
])
def test_split_host(header: str, host: str) -> None:
    assert split_host(header) == host


@pytest.mark.parametrize(("header", "ok"), [
    ("localhost", True), ("localhost:8080", True), ("LOCALHOST.:1", True),
    ("api.localhost:8080", True), ("127.0.0.1:8080", True), ("127.1.2.3", True),
    ("[::1]:8080", True), ("10.0.0.7:8080", True), ("[fe80::1%25eth0]:80", True),
    ("myhost:8080", True), ("MyHost.", True),             # this machine's name
    ("evil.example:8080", False), ("localhost.evil.example", False),
    ("evillocalhost", False), ("myhost.evil.example", False), ("", False),
])
def test_allowed(header: str, ok: bool) -> None:
    assert allowed(header, "myhost") is ok


async def _raw_get(url: str, host: str, path: str = "/api/v1/namespaces") -> tuple[int, dict]:
    """A GET with exactly this Host header (aiohttp's client would set its own)."""
    _, _, rest = url.partition("://")
    address, port = rest.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(address, int(port))
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    if b"Transfer-Encoding: chunked" in head:
        chunks, rest_body = [], body
        while rest_body:
            size_line, _, rest_body = rest_body.partition(b"\r\n")
            size = int(size_line, 16)
            if not size:
                break
            chunks.append(rest_body[:size])
            rest_body = rest_body[size + 2:]
        body = b"".join(chunks)
    return int(head.split()[1]), json.loads(body)


async def test_a_foreign_host_is_refused_with_a_status(api: API) -> None:
    port = api.url.rsplit(":", 1)[1]
    code, status = await _raw_get(api.url, f"evil.example:{port}")
    assert code == 403
    assert status["kind"] == "Status" and status["reason"] == "Forbidden"
    assert status["code"] == 403
    assert status["message"] == (
        f'Host "evil.example:{port}" is not allowed on the insecure port (127.0.0.1:{port}): '
        f"use a loopback address, localhost or this host's name "
        f"({socket.gethostname().lower()}), or the secure port")
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", "app.localhost:1",
                 f"{socket.gethostname()}:{port}"):
        code, body = await _raw_get(api.url, host)
        assert code == 200 and body["kind"] == "NamespaceList", host


async def test_health_and_discovery_are_checked_too(api: API) -> None:
    for path in ("/version", "/api", "/openapi/v2"):
        code, status = await _raw_get(api.url, "rebind.attacker.test", path)
        assert code == 403 and status["reason"] == "Forbidden", path


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[API, web.AppRunner]]:
    api, runner, store, session = await start_api(tmp_path)
    try:
        yield api, runner
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_the_in_process_transport_is_exempt(served: tuple[API, web.AppRunner]) -> None:
    _, runner = served
    # its requests carry `Host: in-process`, which the check refuses from anyone else
    inside = Client(InProcessTransport(runner.app))
    outside = Client(InProcessTransport(runner.app, peername="192.0.2.1"))
    try:
        assert (await inside.list(NAMESPACES))["kind"] == "NamespaceList"
        with pytest.raises(StatusError) as refused:
            await outside.list(NAMESPACES)
        assert refused.value.code == 403
    finally:
        await inside.close()
        await outside.close()


async def test_the_secure_port_is_not_checked(served: tuple[API, web.AppRunner],
                                              tmp_path: Path) -> None:
    _, runner = served
    cert, key, ca = ensure_serving_cert(tmp_path / "certs", [])
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(cert, key))
    await site.start()
    port = runner.addresses[-1][1]  # the TLS site, added last
    context = ssl.create_default_context(cafile=str(ca))
    async with aiohttp.ClientSession() as session:
        async with session.get(f"https://127.0.0.1:{port}/version", ssl=context,
                               headers={"Host": "evil.example"}) as resp:
            assert resp.status == 200  # anonymous /version is served; the Host is not checked


@pytest.mark.skipif(shutil.which(KUBECTL) is None, reason=f"{KUBECTL} is not installed")
async def test_kubectl_keeps_working(api: API) -> None:
    def run() -> subprocess.CompletedProcess:
        return subprocess.run([KUBECTL, "-s", api.url, "get", "namespaces", "-o", "name"],
                              capture_output=True, text=True, timeout=60)

    done = await asyncio.to_thread(run)
    assert done.returncode == 0, done.stderr
    assert "namespace/default" in done.stdout.split()
