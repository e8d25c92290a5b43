"""Every failure is a Status with the upstream reason and code; filters hold under abuse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from tests.apiserver.conftest import API, pod, start_api

PODS = "/api/v1/namespaces/default/pods"


def status_of(body) -> tuple[str, int]:
    assert body["kind"] == "Status" and body["status"] == "Failure", body
    return body["reason"], body["code"]


@pytest.mark.parametrize("method,path,kw,code,reason", [
    ("GET", f"{PODS}/nope", {}, 404, "NotFound"),
    ("GET", "/api/v1/frobs", {}, 404, "NotFound"),
    ("GET", "/apis/nope.io/v1/things", {}, 404, "NotFound"),
    ("POST", PODS, {"raw": b"{not json"}, 400, "BadRequest"),
    ("POST", PODS, {"raw": b"[1,2]"}, 400, "BadRequest"),
    ("POST", PODS, {"body": {**pod("x"), "kind": "Service"}}, 400, "BadRequest"),
    ("POST", PODS, {"body": {**pod("x"), "apiVersion": "v2"}}, 400, "BadRequest"),
    ("POST", PODS, {"body": pod("x"), "content_type": "text/html"}, 415, "UnsupportedMediaType"),
    ("PUT", f"{PODS}/other", {"body": pod("x")}, 400, "BadRequest"),
    ("GET", f"{PODS}?labelSelector=a%20in%20(b", {}, 400, "BadRequest"),
    ("GET", f"{PODS}?fieldSelector=spec.frob%3D1", {}, 400, "BadRequest"),
    ("GET", f"{PODS}?limit=abc", {}, 400, "BadRequest"),
    ("GET", f"{PODS}?continue=garbage", {}, 400, "BadRequest"),
    ("GET", f"{PODS}", {"headers": {"Accept": "text/html"}}, 406, "NotAcceptable"),
    ("POST", "/api/v1/componentstatuses", {"body": {}}, 405, "MethodNotAllowed"),
    ("PATCH", f"{PODS}/x", {"body": {}, "content_type": "application/xml"}, 415,
     "UnsupportedMediaType"),
    ("POST", PODS, {"body": {**pod("x"), "spec": {"containers": [{"name": "c", "image": "i",
                                                                  "bogus": 1}]}},
                    "headers": {}}, 201, None),
])
async def test_bad_requests_get_a_status(api: API, method, path, kw, code, reason):
    got, body = await api.call(method, path + ("" if code != 201 else ""), **kw)
    assert got == code
    if reason:
        assert status_of(body) == (reason, code)


async def test_strict_field_validation_names_the_unknown_field(api: API):
    body = {**pod("x"), "spec": {"containers": [{"name": "c", "image": "i", "bogus": 1}]}}
    code, status = await api.post(f"{PODS}?fieldValidation=Strict", body)
    assert code == 400 and 'unknown field "spec.containers[0].bogus"' in status["message"]
    async with api.session.post(api.url + f"{PODS}?fieldValidation=Warn",
                                data=__import__("orjson").dumps({**body, "metadata": {"name": "w"}}),
                                headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
        assert 'unknown field \\"spec.containers[0].bogus\\"' in resp.headers["Warning"] or \
            "spec.containers[0].bogus" in resp.headers["Warning"]
    # as upstream decodes into typed structs: the unknown field is dropped, never stored, so
    # neither managedFields nor later writes carry it (Ignore drops it silently)
    code, stored = await api.get(f"{PODS}/w")
    assert code == 200 and "bogus" not in stored["spec"]["containers"][0]
    assert "bogus" not in str(stored["metadata"].get("managedFields"))
    async with api.session.post(api.url + f"{PODS}?fieldValidation=Ignore",
                                data=__import__("orjson").dumps({**body, "metadata": {"name": "i"}}),
                                headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201 and "Warning" not in resp.headers
        assert "bogus" not in (await resp.json())["spec"]["containers"][0]


async def test_body_over_3_mib_is_413(api: API):
    code, status = await api.post(PODS, raw=b'{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}')
    assert code == 413 and status_of(status) == ("RequestEntityTooLarge", 413)


async def test_failed_writes_change_nothing(api: API):
    before = await api.server.store.current_revision()
    await api.post(PODS, {**pod("bad"), "spec": {"containers": [{"name": "c"}]}})
    await api.post(PODS, raw=b"{")
    await api.post("/api/v1/namespaces/nope/pods", pod("p"))
    assert await api.server.store.current_revision() == before


async def test_panic_is_a_logged_500_and_the_server_keeps_serving(api: API, monkeypatch):
    registry = api.server.registry_for("", "v1", "configmaps")

    async def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(registry, "get_kv", explode)
    with capture_logs() as logs:
        code, body = await api.get("/api/v1/namespaces/default/configmaps/x")
    assert code == 500 and status_of(body) == ("InternalError", 500)
    assert any(e["event"] == "panic serving request" and "RuntimeError" in e["traceback"]
               for e in logs)
    monkeypatch.undo()
    code, _ = await api.get("/api/v1/namespaces/default/configmaps/x")
    assert code == 404


async def test_max_in_flight_answers_429_with_retry_after(tmp_path: Path, monkeypatch):
    api, runner, store, session = await start_api(tmp_path, max_requests_inflight=2)
    try:
        registry = api.server.registry_for("", "v1", "configmaps")
        real = registry.list
        gate = asyncio.Event()

        async def slow_list(*args, **kwargs):
            await gate.wait()
            return await real(*args, **kwargs)

        monkeypatch.setattr(registry, "list", slow_list)
        tasks = [asyncio.create_task(api.get("/api/v1/namespaces/default/configmaps"))
                 for _ in range(5)]
        await asyncio.sleep(0.3)
        async with session.get(api.url + "/api/v1/namespaces/default/configmaps") as resp:
            assert resp.status == 429 and resp.headers["Retry-After"] == "1"
        # watches are long-running and exempt from the limit
        async with session.get(api.url + f"{PODS}?watch=true&timeoutSeconds=1") as resp:
            assert resp.status == 200
        gate.set()
        codes = sorted(code for code, _ in await asyncio.gather(*tasks))
        assert codes.count(200) == 2 and codes.count(429) == 3
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_discovery_and_meta_endpoints(api: API):
    code, versions = await api.get("/api")
    assert code == 200 and versions["versions"] == ["v1"]
    _, groups = await api.get("/apis")
    # upstream's order: by the APIServices' groupPriorityMinimum (aggregator/priorities.py),
    # ties by APIService name
    assert [g["name"] for g in groups["groups"]] == [
        "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
        "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
        "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
        "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
        "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io"]
    _, core = await api.get("/api/v1")
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods"]["shortNames"] == ["po"] and "pods/binding" in by_name
    assert by_name["replicationcontrollers/scale"]["group"] == "autoscaling"
    code, aggregated = await api.get("/apis", headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"})
    assert aggregated["kind"] == "APIGroupDiscoveryList"
    assert [i["metadata"]["name"] for i in aggregated["items"]][:2] == [
        "apiregistration.k8s.io", "apps"]
    for path in ("/healthz", "/livez", "/readyz"):
        assert await api.get(path) == (200, "ok")
    code, metrics = await api.get("/metrics")
    assert 'apiserver_request_total{code="200",group="",resource="pods"' in metrics or \
        "apiserver_request_total" in metrics
    code, index = await api.get("/openapi/v3")
    url = index["paths"]["api/v1"]["serverRelativeURL"]
    code, doc = await api.get(url)
    assert code == 200 and "io.k8s.api.core.v1.Pod" in doc["components"]["schemas"]


async def test_a_body_or_patch_result_without_the_urls_name_is_400(api: API):
    """Upstream's checkName: an update whose object names nothing (or has no metadata
    object) is rejected before storage, as is a patch that removes the name."""
    cms = "/api/v1/namespaces/default/configmaps"
    code, _ = await api.post(cms, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "named"}, "data": {"a": "b"}})
    assert code == 201
    before = await api.server.store.current_revision()
    code, status = await api.call("PUT", f"{cms}/named", {"apiVersion": "v1", "kind": "ConfigMap",
                                                          "metadata": {}, "data": {"a": "c"}})
    assert code == 400 and status["message"] == \
        "the name of the object () does not match the name on the URL (named)"
    code, status = await api.call("PUT", f"{cms}/named", {"apiVersion": "v1", "kind": "ConfigMap",
                                                          "metadata": 5})
    assert code == 400 and "cannot unmarshal number" in status["message"]
    async with api.session.patch(api.url + f"{cms}/named",
                                 data=b'[{"op":"remove","path":"/metadata/name"}]',
                                 headers={"Content-Type": "application/json-patch+json"}) as resp:
        assert resp.status == 400
        assert "does not match the name on the URL (named)" in (await resp.json())["message"]
    assert await api.server.store.current_revision() == before


async def test_in_process_requests_are_counted_but_never_refused(tmp_path: Path, monkeypatch):
    """The components inside `start` (the in-process transport) share the server's loop and
    are bounded by their own workers: past the limit they still get through, while they count
    against it, so an outside client is refused meanwhile."""
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import CONFIGMAPS

    api, runner, store, session = await start_api(tmp_path, max_mutating_requests_inflight=2)
    client = Client(InProcessTransport(runner.app))
    try:
        registry = api.server.registry_for("", "v1", "configmaps")
        real = registry.create
        gate = asyncio.Event()

        async def slow_create(*args, **kwargs):
            await gate.wait()
            return await real(*args, **kwargs)

        monkeypatch.setattr(registry, "create", slow_create)
        inside = [asyncio.create_task(client.create(CONFIGMAPS, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"in-{i}"}}, "default"))
            for i in range(5)]
        await asyncio.sleep(0.3)
        code, body = await api.post("/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "outside"}})
        assert code == 429, body
        gate.set()
        created = await asyncio.gather(*inside)
        assert sorted(c["metadata"]["name"] for c in created) == [f"in-{i}" for i in range(5)]
        # exactly one refusal: the outside client's (the in-process client would have retried
        # its refusals transparently, so only the counter tells)
        _, metrics = await api.get("/metrics")
        assert 'apiserver_dropped_requests_total{request_kind="mutating"} 1.0' in metrics
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()
