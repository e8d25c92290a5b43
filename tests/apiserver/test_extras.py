"""The v1.0 APIServer struct's extras against a real API server: the `kubernetes` service and
its endpoints (bootstrap.py), --cors-allowed-origins (cors.py), --profiling (profiling.py) and
--runtime-config (runtime_config.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minikube_py.apiserver.bootstrap import (
    first_service_ip,
    kubernetes_service,
    resolve_public_address,
    service_update,
)
from minikube_py.apiserver.cors import parse_origins
from minikube_py.apiserver.options import APIServerOptions, public_endpoint
from minikube_py.apiserver.server import APIServer
from minikube_py.storage import EmbeddedStore
from tests.apiserver.conftest import API, start_api
from tests.apiserver.test_secure import serve

SVC = "/api/v1/namespaces/default/services/kubernetes"
EPS = "/api/v1/namespaces/default/endpoints/kubernetes"


async def until(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        result = await predicate()
        if result or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.05)


@pytest.fixture
async def extras(tmp_path: Path):
    api, runner, store, session = await start_api(
        tmp_path, public_address="192.0.2.10", public_port=6443,
        endpoint_reconciler_interval=0.1, service_cluster_ip_range="10.96.0.0/16",
        cors_allowed_origins=r"^https?://good\.example(:\d+)?$,//localhost:")
    try:
        yield api
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


# -- the kubernetes service ------------------------------------------------------------------
def test_desired_objects_and_addresses():
    assert first_service_ip("10.0.0.0/24") == "10.0.0.1"
    assert first_service_ip("10.96.0.0/12") == "10.96.0.1"
    svc = kubernetes_service("10.0.0.1", 6443)
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443,
                                     "targetPort": 6443}]
    assert service_update(svc, 6443) is None
    assert service_update(svc, 8080)["spec"]["ports"][0]["targetPort"] == 8080
    assert public_endpoint(None, "0.0.0.0", 6443, "127.0.0.1", 8080) == ("0.0.0.0", 6443)
    assert public_endpoint("198.51.100.7", "0.0.0.0", 6443, "127.0.0.1", 8080) == (
        "198.51.100.7", 6443)
    assert public_endpoint(None, "0.0.0.0", 0, "127.0.0.1", 8080) == ("127.0.0.1", 8080)
    assert resolve_public_address("198.51.100.7") == "198.51.100.7"
    assert resolve_public_address("0.0.0.0") != "0.0.0.0"


async def test_kubernetes_service_and_endpoints_exist_and_come_back(extras: API):
    code, svc = await extras.get(SVC)
    assert code == 200
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443,
                                     "targetPort": 6443}]
    assert "selector" not in svc["spec"]
    code, eps = await extras.get(EPS)
    assert code == 200
    assert eps["subsets"] == [{"addresses": [{"ip": "192.0.2.10"}],
                               "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]

    # the first IP is reserved: a service asking for it is refused
    code, body = await extras.post("/api/v1/namespaces/default/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "thief"},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}})
    assert code == 422 and "already allocated" in body["message"]

    # deleted, both come back, with the same IP; wrong endpoints are rewritten
    assert (await extras.delete(SVC))[0] == 200
    assert (await extras.delete(EPS))[0] == 200

    async def back():
        s, e = await extras.get(SVC), await extras.get(EPS)
        return s[0] == 200 and e[0] == 200 and s[1]["spec"]["clusterIP"] == "10.96.0.1"
    assert await until(back)
    code, eps = await extras.get(EPS)
    eps["subsets"] = [{"addresses": [{"ip": "192.0.2.99"}], "ports": [{"port": 1}]}]
    assert (await extras.put(EPS, eps))[0] == 200

    async def reconciled():
        return (await extras.get(EPS))[1]["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]
    assert await until(reconciled)


async def test_loopback_address_gets_a_service_but_no_endpoints(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, public_address="127.0.0.1",
                                                  public_port=8080)
    try:
        assert (await api.get(SVC))[1]["spec"]["ports"][0]["targetPort"] == 8080
        assert (await api.get(EPS))[0] == 404
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


# -- CORS ------------------------------------------------------------------------------------
async def test_cors_preflight_honours_the_allow_list(extras: API):
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "Authorization, Content-Type"}
    async with extras.session.options(extras.url + "/api/v1/namespaces/default/pods",
                                      headers={"Origin": "https://good.example", **preflight}) as r:
        assert r.status == 204
        assert r.headers["Access-Control-Allow-Origin"] == "https://good.example"
        assert "POST" in r.headers["Access-Control-Allow-Methods"]
        assert "Authorization" in r.headers["Access-Control-Allow-Headers"]
        assert r.headers["Access-Control-Expose-Headers"] == "Date"
        assert r.headers["Access-Control-Allow-Credentials"] == "true"
    # unanchored patterns search, as Go's MatchString
    async with extras.session.options(extras.url + "/api", headers={
            "Origin": "http://localhost:3000", **preflight}) as r:
        assert r.status == 204
    for origin in ("https://evil.example", "https://good.example.evil.com"):
        async with extras.session.options(extras.url + "/api/v1/namespaces/default/pods",
                                          headers={"Origin": origin, **preflight}) as r:
            assert r.status != 204
            assert "Access-Control-Allow-Origin" not in r.headers


async def test_cors_headers_on_actual_requests_and_streams(extras: API):
    async with extras.session.get(extras.url + "/api/v1/namespaces/default/pods",
                                  headers={"Origin": "http://good.example:8001"}) as r:
        assert r.status == 200
        assert r.headers["Access-Control-Allow-Origin"] == "http://good.example:8001"
    async with extras.session.get(extras.url + "/api/v1/namespaces/default/pods",
                                  headers={"Origin": "http://bad.example"}) as r:
        assert "Access-Control-Allow-Origin" not in r.headers
    async with extras.session.get(
            extras.url + "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1",
            headers={"Origin": "https://good.example"}) as r:
        assert r.headers["Access-Control-Allow-Origin"] == "https://good.example"
    async with extras.session.get(extras.url + "/api") as r:  # no Origin: nothing added
        assert "Access-Control-Allow-Origin" not in r.headers


async def test_cors_preflight_needs_no_credentials_on_the_secure_port(tmp_path: Path):
    secure, close = await serve(tmp_path, cors_allowed_origins="^https://ui\\.example$")
    try:
        code, _ = await secure.call("OPTIONS", "/api/v1/namespaces/default/pods",
                                    headers={"Origin": "https://ui.example"})
        assert code == 204
        code, _ = await secure.call("GET", "/api/v1/namespaces/default/pods",
                                    headers={"Origin": "https://ui.example"})
        assert code == 401  # the actual request still authenticates
    finally:
        await close()


def test_bad_origin_regex_is_a_startup_error():
    with pytest.raises(ValueError, match="Invalid CORS allowed origin"):
        parse_origins("^https://(unclosed$")


# -- profiling -------------------------------------------------------------------------------
async def test_profiling_returns_a_cpu_profile_and_a_task_dump(extras: API):
    code, index = await extras.get("/debug/pprof/")
    assert code == 200 and "profile?seconds" in index and "goroutine?debug=2" in index

    async def busy() -> None:  # something for the sampler to see on the loop thread
        deadline = time.monotonic() + 0.4
        while time.monotonic() < deadline:
            sum(i * i for i in range(20_000))
            await asyncio.sleep(0)

    burner = asyncio.create_task(busy())
    code, profile = await extras.get("/debug/pprof/profile?seconds=0.5&limit=400")
    await burner
    assert code == 200
    lines = profile.splitlines()
    assert lines[0].startswith("# minikube-py CPU profile of the event-loop thread: 0.5 s")
    assert "function calls" in profile and "Ordered by: internal time" in profile
    assert any("test_extras.py" in line and "(busy)" in line for line in lines), profile
    code, by_cumulative = await extras.get("/debug/pprof/profile?seconds=0.1&sort=cumulative")
    assert code == 200 and "Ordered by: cumulative time" in by_cumulative

    code, dump = await extras.get("/debug/pprof/goroutine?debug=2")
    assert code == 200
    assert "asyncio tasks" in dump.splitlines()[0]
    assert "task apiserver-bootstrap [" in dump and "bootstrap.py" in dump
    code, grouped = await extras.get("/debug/pprof/goroutine?debug=1")
    assert code == 200 and " @" in grouped
    code, tasks = await extras.get("/debug/tasks")
    assert code == 200 and "task apiserver-bootstrap [" in tasks
    assert (await extras.get("/debug/pprof/profile?seconds=abc"))[0] == 400
    assert (await extras.get("/debug/pprof/profile?seconds=100000"))[0] == 400
    assert (await extras.get("/debug/pprof/profile?seconds=1&sort=name"))[0] == 400


async def test_profiling_disabled_is_404(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, profiling=False)
    try:
        for path in ("/debug/pprof/", "/debug/pprof/profile?seconds=1",
                     "/debug/pprof/goroutine?debug=2", "/debug/tasks"):
            code, body = await api.get(path)
            assert code == 404 and body["reason"] == "NotFound", path
        assert "/debug/pprof" not in (await api.get("/"))[1]["paths"]
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_profiling_needs_authentication_on_the_secure_port(tmp_path: Path):
    secure, close = await serve(tmp_path)
    try:
        assert (await secure.call("GET", "/debug/pprof/goroutine?debug=2"))[0] == 401
        code, dump = await secure.call("GET", "/debug/pprof/goroutine?debug=2", "admin-token")
        assert code == 200 and "asyncio tasks" in dump
    finally:
        await close()


# -- runtime-config --------------------------------------------------------------------------
async def test_runtime_config_hides_apps_v1(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path, runtime_config="apps/v1=false")
    try:
        code, groups = await api.get("/apis")
        assert code == 200 and "apps" not in [g["name"] for g in groups["groups"]]
        for path in ("/apis/apps", "/apis/apps/v1", "/apis/apps/v1/deployments",
                     "/apis/apps/v1/namespaces/default/deployments",
                     "/apis/apps/v1/namespaces/default/replicasets/x"):
            code, body = await api.get(path)
            assert code == 404 and body["reason"] == "NotFound", path
        code, _ = await api.post("/apis/apps/v1/namespaces/default/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
        assert code == 404
        assert "/apis/apps/v1" not in (await api.get("/"))[1]["paths"]
        async with api.session.get(api.url + "/apis", headers={
                "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        }) as r:
            assert "apps" not in [i["metadata"]["name"] for i in (await r.json())["items"]]
        assert (await api.get("/api/v1/namespaces/default/pods"))[0] == 200
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_runtime_config_core_off_keeps_the_bootstrap_working(tmp_path: Path):
    api, runner, store, session = await start_api(
        tmp_path, runtime_config="api/all=false,apps/v1=true", public_address="192.0.2.10")
    try:
        assert (await api.get("/api"))[0] == 404
        assert (await api.get("/api/v1"))[0] == 404
        assert (await api.get("/api/v1/namespaces/default/services"))[0] == 404
        assert (await api.get("/apis/apps/v1/namespaces/default/deployments"))[0] == 200
        services = api.server.registries["", "v1", "services"]
        assert (await services.get("default", "kubernetes"))["spec"]["clusterIP"] == "10.0.0.1"
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_bad_runtime_config_fails_at_construction(tmp_path: Path):
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    try:
        with pytest.raises(ValueError, match="--runtime-config: unknown api groups widgets"):
            APIServer(store, APIServerOptions(runtime_config="widgets/v1=false"))
    finally:
        await store.close()


def test_bad_runtime_config_is_exit_code_2(tmp_path: Path):
    from tests.etcd_server import free_port

    done = subprocess.run(
        [sys.executable, "-m", "minikube_py.cli.main", "apiserver", "--data-dir",
         str(tmp_path / "data"), "--insecure-port", str(free_port()), "--secure-port", "0",
         "--runtime-config", "apps/v1=false,widgets/v1=false"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--runtime-config: unknown api groups widgets" in done.stderr
