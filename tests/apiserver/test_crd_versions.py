"""Multi-version CRDs over HTTP (issue 16): objects stored once in the storage version and
served in every version, conversion None (apiVersion only) and Webhook (a real HTTPS
converter renaming `spec.size` (v1) <-> `spec.replicas` (v2)), webhook failures as upstream
reports them, status.storedVersions rules, deprecated versions' Warning header, and the CRD
validation rules for versions and conversion."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.apiserver.conftest import API, start_api
from tests.webhook_server import WebhookServer

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD = f"{CRDS}/widgets.example.com"
V1 = "/apis/example.com/v1/namespaces/default/widgets"
V2 = "/apis/example.com/v2/namespaces/default/widgets"
KEY = "/registry/example.com/widgets/default/"


def _schema(field: str) -> dict:
    return {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {field: {"type": "integer"},
                                                  "color": {"type": "string"}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}


def versions_crd(conversion: dict | None = None, *, storage: str = "v1",
                 names: tuple[str, ...] = ("v1", "v2"), **v1_extra: Any) -> dict:
    fields = {"v1": "size", "v2": "replicas", "v3": "replicas"}
    versions = [{"name": n, "served": True, "storage": n == storage, "schema": _schema(fields[n]),
                 "subresources": {"status": {}}} for n in names]
    versions[0].update(v1_extra)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": versions,
                     "conversion": conversion or {"strategy": "None"}}}


def widget(name: str, version: str, **spec: Any) -> dict:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget",
            "metadata": {"name": name, "labels": {"app": name}}, "spec": spec}


async def served(api: API, version: str = "v2") -> None:
    """Wait until the CRD's `version` is served (the controller reacts to the CRD's event)."""
    for _ in range(200):
        status, _ = await api.get(f"/apis/example.com/{version}/namespaces/default/widgets")
        if status == 200:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"example.com/{version} widgets never served")


async def stored(api: API, name: str) -> dict:
    kv = await api.server.store.get(KEY + name)
    return orjson.loads(kv.value)


async def raw_get(api: API, path: str) -> tuple[int, Any, list[str]]:
    async with api.session.get(api.url + path) as resp:
        return resp.status, orjson.loads(await resp.read()), resp.headers.getall("Warning", [])


# -- conversion webhook fixtures ------------------------------------------------------------
def rename(review: dict) -> dict:
    """The test converter: v1 spec.size <-> v2 spec.replicas; everything else kept."""
    request = review["request"]
    desired = request["desiredAPIVersion"]
    out = []
    for obj in request["objects"]:
        obj = copy.deepcopy(obj)
        spec = obj.setdefault("spec", {})
        if desired == "example.com/v2" and "size" in spec:
            spec["replicas"] = spec.pop("size")
        elif desired == "example.com/v1" and "replicas" in spec:
            spec["size"] = spec.pop("replicas")
        obj["apiVersion"] = desired
        out.append(obj)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": request["uid"], "result": {"status": "Success"},
                         "convertedObjects": out}}


@pytest.fixture(scope="module")
def hook(tmp_path_factory) -> Any:
    server = WebhookServer(tmp_path_factory.mktemp("conversion-certs"), name="converter").start()
    server.json("/convert", rename)
    yield server
    server.stop()


def webhook_conversion(hook: WebhookServer, path: str = "/convert") -> dict:
    return {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": hook.url + path, "caBundle": hook.ca_bundle}}}


def reviews(hook: WebhookServer, path: str = "/convert") -> list[dict]:
    return [body["request"] for p, body, _ in hook.requests if p == path and body]


async def with_api(tmp_path: Path, crd: dict, test: Callable[[API], Any],
                   **options: Any) -> None:
    api, runner, store, session = await start_api(tmp_path, **options)
    try:
        status, body = await api.post(CRDS, crd)
        assert status == 201, body
        await served(api, crd["spec"]["versions"][-1]["name"])
        await test(api)
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


# -- conversion None --------------------------------------------------------------------------
async def test_none_strategy_stores_in_the_storage_version_and_serves_every_version(
        tmp_path: Path) -> None:
    crd = versions_crd()
    for version in crd["spec"]["versions"]:  # the same fields in both: None converts nothing
        version["schema"] = {"openAPIV3Schema": {"type": "object",
                                                 "x-kubernetes-preserve-unknown-fields": True}}

    async def test(api: API) -> None:
        status, created = await api.post(V2, widget("w1", "v2", size=1))
        assert status == 201, created
        assert created["apiVersion"] == "example.com/v2"
        assert (await stored(api, "w1"))["apiVersion"] == "example.com/v1"
        status, got = await api.get(f"{V1}/w1")
        assert status == 200 and got["apiVersion"] == "example.com/v1"
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        status, got = await api.get(f"{V2}/w1")
        assert got["apiVersion"] == "example.com/v2" and got["spec"] == {"size": 1}

        # a write in v2 of an object stored in v1 stays stored in v1
        got["spec"]["size"] = 2
        status, updated = await api.put(f"{V2}/w1", got)
        assert status == 200 and updated["apiVersion"] == "example.com/v2", updated
        assert updated["metadata"]["generation"] == 2
        assert (await stored(api, "w1"))["apiVersion"] == "example.com/v1"
        # a no-op update through the other version writes nothing
        status, same = await api.put(f"{V2}/w1", updated)
        assert same["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]

        await api.post(V1, widget("w2", "v1", size=5))
        status, page = await api.get(V2)
        assert page["apiVersion"] == "example.com/v2" and page["kind"] == "WidgetList"
        assert {i["apiVersion"] for i in page["items"]} == {"example.com/v2"}
        status, page = await api.get(V1 + "?labelSelector=app%3Dw2")
        assert [i["apiVersion"] for i in page["items"]] == ["example.com/v1"]

        # watches in v2 see v1 writes in v2 (ADDED from the list, then MODIFIED, DELETED)
        watch = asyncio.create_task(api.watch_lines(V2 + "?watch=true", 4))
        await asyncio.sleep(0.2)
        await api.patch(f"{V1}/w2", {"spec": {"size": 6}})
        await api.delete(f"{V1}/w2")
        events = await watch
        assert [e["type"] for e in events] == ["ADDED", "ADDED", "MODIFIED", "DELETED"]
        assert {e["object"]["apiVersion"] for e in events} == {"example.com/v2"}
        assert events[2]["object"]["spec"] == {"size": 6}
        # a selecting watch resumed from a resourceVersion, and protobuf-free JSON status
        rv = updated["metadata"]["resourceVersion"]
        events = await api.watch_lines(f"{V1}?watch=true&resourceVersion={rv}"
                                       "&fieldSelector=metadata.name%3Dw2", 1)
        assert events[0]["object"]["apiVersion"] == "example.com/v1"

        # discovery lists both versions in kube-aware order: v2 is preferred (kubectl's pick)
        status, group = await api.get("/apis/example.com")
        assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
        assert group["preferredVersion"]["version"] == "v2"

    await with_api(tmp_path, crd, test)


# -- conversion Webhook ---------------------------------------------------------------------
async def test_webhook_converts_reads_and_writes_in_other_versions(tmp_path: Path,
                                                                   hook: WebhookServer) -> None:
    async def test(api: API) -> None:
        hook.requests.clear()
        status, created = await api.post(V2, widget("w1", "v2", replicas=3, color="red"))
        assert status == 201, created
        assert created["apiVersion"] == "example.com/v2"
        assert created["spec"] == {"replicas": 3, "color": "red"}
        on_disk = await stored(api, "w1")
        assert on_disk["apiVersion"] == "example.com/v1" and on_disk["spec"]["size"] == 3
        # to storage for the write, back for the response; `?timeout=30s` as upstream
        sent = reviews(hook)
        assert [r["desiredAPIVersion"] for r in sent] == ["example.com/v1", "example.com/v2"]
        assert sent[0]["objects"][0]["spec"] == {"replicas": 3, "color": "red"}

        status, got = await api.get(f"{V1}/w1")
        assert got["spec"] == {"size": 3, "color": "red"}  # no call: stored in v1
        assert len(reviews(hook)) == 2
        status, got = await api.get(f"{V2}/w1")
        assert got["apiVersion"] == "example.com/v2" and got["spec"]["replicas"] == 3
        assert got["metadata"]["uid"] == created["metadata"]["uid"]

        # a patch in v2 is applied to the v2 form, stored as v1, answered converted back
        hook.requests.clear()
        status, patched = await api.patch(f"{V2}/w1", {"spec": {"replicas": 4}})
        assert status == 200 and patched["spec"] == {"replicas": 4, "color": "red"}, patched
        assert (await stored(api, "w1"))["spec"] == {"size": 4, "color": "red"}
        assert [r["desiredAPIVersion"] for r in reviews(hook)] == [
            "example.com/v2", "example.com/v1", "example.com/v2"]  # old, to store, answer
        # status through v2
        patched["status"] = {"ready": 4}
        status, with_status = await api.put(f"{V2}/w1/status", patched)
        assert status == 200 and with_status["status"] == {"ready": 4}, with_status

        # a list converts all its objects in ONE review
        await api.post(V1, widget("w2", "v1", size=1))
        await api.post(V1, widget("w3", "v1", size=2))
        hook.requests.clear()
        status, page = await api.get(V2)
        assert status == 200
        assert {i["metadata"]["name"]: i["spec"]["replicas"] for i in page["items"]} == \
               {"w1": 4, "w2": 1, "w3": 2}
        assert [len(r["objects"]) for r in reviews(hook)] == [3]

        # watches in v2 receive v1 writes converted: once for all of them
        rv = page["metadata"]["resourceVersion"]
        watches = [asyncio.create_task(api.watch_lines(V2 + f"?watch=true&resourceVersion={rv}"
                                                       + query, count))
                   for query, count in (("", 2), ("", 2), ("&labelSelector=app%3Dw2", 1))]
        await asyncio.sleep(0.3)
        hook.requests.clear()
        await api.patch(f"{V1}/w2", {"spec": {"size": 9}})
        events = await watches[2]
        assert [e["type"] for e in events] == ["MODIFIED"]
        await api.delete(f"{V1}/w3")
        for watch in watches[:2]:
            events = await watch
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == \
                   [("MODIFIED", "w2"), ("DELETED", "w3")]
            assert events[0]["object"]["apiVersion"] == "example.com/v2"
            assert events[0]["object"]["spec"] == {"replicas": 9}
        assert [len(r["objects"]) for r in reviews(hook)] == [1, 1]  # per event, not watcher

    await with_api(tmp_path, versions_crd(webhook_conversion(hook)), test)


async def test_webhook_metadata_is_restored_except_labels_and_annotations(
        tmp_path: Path, hook: WebhookServer) -> None:
    def relabel(review: dict) -> dict:
        answer = rename(review)
        for obj in answer["response"]["convertedObjects"]:
            obj["metadata"]["labels"] = {"converted": "yes"}
            obj["metadata"]["finalizers"] = ["webhook.example.com/sneaky"]
            obj["metadata"]["generation"] = 99
        return answer

    hook.json("/relabel", relabel)

    async def test(api: API) -> None:
        await api.post(V1, widget("w1", "v1", size=1))
        status, got = await api.get(f"{V2}/w1")
        assert status == 200, got
        assert got["metadata"]["labels"] == {"converted": "yes"}
        assert "finalizers" not in got["metadata"] and got["metadata"]["generation"] == 1

    await with_api(tmp_path, versions_crd(webhook_conversion(hook, "/relabel")), test)


async def test_webhook_failures_are_500s_with_upstreams_text(tmp_path: Path,
                                                             hook: WebhookServer) -> None:
    mode: dict[str, str] = {"how": "fail"}

    def broken(review: dict) -> dict:
        answer = rename(review)
        how = mode["how"]
        if how == "fail":
            answer["response"]["result"] = {"status": "Failure", "message": "cannot convert"}
        elif how == "uid":
            answer["response"]["uid"] = "not-the-request"
        elif how == "count":
            answer["response"]["convertedObjects"] = []
        elif how == "rename":
            for obj in answer["response"]["convertedObjects"]:
                obj["metadata"]["name"] = "other"
        return answer

    hook.json("/broken", broken)

    async def test(api: API) -> None:
        await api.post(V1, widget("w1", "v1", size=1))
        prefix = "conversion webhook for example.com/v1, Kind=Widget"
        expected = {
            "fail": f"{prefix} failed: cannot convert",
            "uid": f'{prefix} failed: expected response.uid="',
            "count": f"{prefix} returned 0 objects, expected 1",
            "rename": f"{prefix} returned invalid object: must have the same name: w1 != other",
        }
        for how, message in expected.items():
            mode["how"] = how
            status, body = await api.get(f"{V2}/w1")
            assert status == 500, body
            assert body["message"].startswith(message), body
            assert "reason" not in body and body["code"] == 500  # ErrorToAPIStatus: no reason
        status, body = await api.get(V2)  # a list fails as a whole
        assert status == 500 and body["message"].startswith(prefix), body
        # a failed write in another version stores nothing
        mode["how"] = "fail"
        status, body = await api.post(V2, widget("w9", "v2", replicas=1))
        assert status == 500 and body["message"] == \
            "conversion webhook for example.com/v2, Kind=Widget failed: cannot convert"
        status, _ = await api.get(f"{V1}/w9")
        assert status == 404
        # the storage version needs no webhook
        status, _ = await api.get(f"{V1}/w1")
        assert status == 200
        # a watch whose conversion fails ends with an ERROR event
        watch = asyncio.create_task(api.watch_lines(f"{V2}?watch=true&resourceVersion=1", 1))
        events = await watch
        assert events[0]["type"] == "ERROR"
        assert events[0]["object"]["message"].startswith(f"{prefix} failed: cannot convert")

    await with_api(tmp_path, versions_crd(webhook_conversion(hook, "/broken")), test)


async def test_bookmarks_never_pass_an_event_waiting_for_its_conversion(
        tmp_path: Path, hook: WebhookServer) -> None:
    async def events_until_modified(api: API, path: str) -> list[dict]:
        events = []
        async with api.session.get(api.url + path,
                                   timeout=aiohttp.ClientTimeout(total=5)) as resp:
            async for line in resp.content:
                if line.strip():
                    events.append(orjson.loads(line))
                    if events[-1]["type"] == "MODIFIED":
                        return events
        return events

    async def test(api: API) -> None:
        status, created = await api.post(V1, widget("w1", "v1", size=1))
        rv = created["metadata"]["resourceVersion"]
        hook.delay = 1.0  # the conversion of the next event takes a second
        try:
            watch = asyncio.create_task(events_until_modified(
                api, f"{V2}?watch=true&allowWatchBookmarks=true&resourceVersion={rv}"))
            await asyncio.sleep(0.2)
            status, patched = await api.patch(f"{V1}/w1", {"spec": {"size": 2}})
            events = await watch
        finally:
            hook.delay = 0.0
        bookmarks = [int(e["object"]["metadata"]["resourceVersion"]) for e in events[:-1]]
        assert bookmarks and {e["type"] for e in events[:-1]} == {"BOOKMARK"}, events
        modified = int(events[-1]["object"]["metadata"]["resourceVersion"])
        assert modified == int(patched["metadata"]["resourceVersion"])
        assert max(bookmarks) < modified, (bookmarks, modified)

    await with_api(tmp_path, versions_crd(webhook_conversion(hook)), test,
                   bookmark_interval=0.1)


async def test_webhook_unreachable_is_a_500(tmp_path: Path, hook: WebhookServer) -> None:
    async def test(api: API) -> None:
        await api.post(V1, widget("w1", "v1", size=1))
        status, body = await api.get(f"{V2}/w1")
        assert status == 500
        assert body["message"] == (
            "conversion webhook for example.com/v1, Kind=Widget failed: the server responded "
            "with the status code 404 but did not return a valid response"), body

    await with_api(tmp_path, versions_crd(webhook_conversion(hook, "/nowhere")), test)


async def test_deleting_a_crd_whose_webhook_is_down_still_deletes_its_objects(
        tmp_path: Path, hook: WebhookServer) -> None:
    """The finalizer (and quota's lookup) use the storage version's registry: no webhook."""
    async def test(api: API) -> None:
        for name in ("w1", "w2"):
            status, _ = await api.post(V1, widget(name, "v1", size=1))
            assert status == 201
        status, _ = await api.get(V2)
        assert status == 500  # the webhook is down
        status, _ = await api.delete(CRD)
        assert status == 200
        for _ in range(200):
            status, _ = await api.get(CRD)
            if status == 404:
                break
            await asyncio.sleep(0.02)
        assert status == 404
        assert (await api.server.store.range(KEY)).kvs == []

    await with_api(tmp_path, versions_crd(webhook_conversion(hook, "/nowhere")), test)


async def test_webhook_through_a_service_reference(tmp_path: Path, hook: WebhookServer) -> None:
    conversion = {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1beta1", "v1"],
        "clientConfig": {"service": {"namespace": "default", "name": "converter",
                                     "path": "/convert", "port": hook.port},
                         "caBundle": hook.ca_bundle}}}

    async def test(api: API) -> None:
        status, svc = await api.post("/api/v1/namespaces/default/services", {
            "metadata": {"name": "converter"},
            "spec": {"type": "ExternalName", "externalName": "localhost",
                     "ports": [{"name": "https", "port": hook.port}]}})
        assert status == 201, svc
        hook.requests.clear()
        status, created = await api.post(V2, widget("w1", "v2", replicas=7))
        assert status == 201, created
        assert (await stored(api, "w1"))["spec"] == {"size": 7}
        _, body, _headers = hook.requests[0]
        assert body["apiVersion"] == "apiextensions.k8s.io/v1beta1"  # the first one we speak

    await with_api(tmp_path, versions_crd(conversion), test)


# -- storedVersions -----------------------------------------------------------------------
async def test_stored_versions_follow_the_storage_version(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, versions_crd(names=("v1",)))
        assert status == 201 and crd["status"]["storedVersions"] == ["v1"], crd
        await served(api, "v1")
        await api.post(V1, widget("old", "v1", size=1))

        # v2 becomes the storage version: both are stored versions now
        status, crd = await api.get(CRD)
        crd["spec"] = versions_crd(storage="v2")["spec"]
        status, crd = await api.put(CRD, crd)
        assert status == 200 and crd["status"]["storedVersions"] == ["v1", "v2"], crd
        await served(api, "v2")
        status, old = await api.get(f"{V2}/old")  # written in v1, read in v2 (None: as is)
        assert status == 200 and old["apiVersion"] == "example.com/v2", old

        # v1 cannot leave spec.versions while it is a stored version
        only_v2 = versions_crd(storage="v2", names=("v2",))["spec"]
        status, body = await api.put(CRD, {**crd, "spec": only_v2})
        assert status == 422, body
        assert body["message"] == (
            'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: '
            'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions')

        # a storage migration trims the list through /status; then v1 may go
        crd["status"]["storedVersions"] = ["v2"]
        status, crd = await api.put(f"{CRD}/status", crd)
        assert status == 200 and crd["status"]["storedVersions"] == ["v2"], crd
        status, crd = await api.put(CRD, {**crd, "spec": only_v2})
        assert status == 200, crd
        assert crd["status"]["storedVersions"] == ["v2"]
        assert [v["name"] for v in crd["spec"]["versions"]] == ["v2"]
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


# -- deprecation ------------------------------------------------------------------------------
async def test_deprecated_versions_warn_on_every_request(tmp_path: Path) -> None:
    crd = versions_crd(deprecated=True)
    crd["spec"]["versions"].append({**crd["spec"]["versions"][1], "name": "v3",
                                    "deprecated": True, "deprecationWarning": "use v2 instead"})
    default = '299 - "example.com/v1 Widget is deprecated"'

    async def test(api: API) -> None:
        await served(api, "v3")
        async with api.session.post(api.url + V1, json=widget("w1", "v1", size=1)) as resp:
            assert resp.status == 201 and resp.headers.getall("Warning") == [default]
        for path in (f"{V1}/w1", V1, f"{V1}/missing"):
            status, _, warnings = await raw_get(api, path)
            assert warnings == [default], (path, status, warnings)
        async with api.session.patch(api.url + f"{V1}/w1/status", json={"status": {"ok": 1}},
                                     headers={"Content-Type": "application/merge-patch+json"}
                                     ) as resp:
            assert resp.status == 200 and resp.headers.getall("Warning") == [default]
        status, _, warnings = await raw_get(api, "/apis/example.com/v3/namespaces/default/widgets")
        assert warnings == ['299 - "use v2 instead"']
        status, _, warnings = await raw_get(api, V2)
        assert status == 200 and warnings == []
        async with api.session.get(api.url + V1 + "?watch=true&timeoutSeconds=1",
                                   timeout=aiohttp.ClientTimeout(total=5)) as resp:
            assert resp.headers.getall("Warning") == [default]
            await resp.read()
        # unknown fields warnings come after the deprecation
        async with api.session.post(api.url + V1, json={**widget("w2", "v1"), "bogus": 1},
                                    headers={"Content-Type": "application/json"}) as resp:
            assert resp.headers.getall("Warning")[0] == default

    await with_api(tmp_path, crd, test)


# -- CRD validation ---------------------------------------------------------------------------
@pytest.mark.parametrize(("conversion", "extra", "message"), [
    ({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x.example.com"}}}, {},
     "spec.conversion.conversionReviewVersions: Required value"),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}, {},
     ("spec.conversion.webhookClientConfig: Required value: required when strategy is set to "
     "Webhook")),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v9"],
                                         "clientConfig": {"url": "https://x.example.com"}}}, {},
     ('spec.conversion.conversionReviewVersions: Invalid value: []string{"v9"}: must include at '
     "least one of v1, v1beta1")),
    ({"strategy": "None", "webhook": {"clientConfig": {"url": "https://x.example.com"}}}, {},
     ("spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set "
     "to Webhook")),
    ({"strategy": "Other"}, {},
     'spec.conversion.strategy: Unsupported value: "Other": supported values: "None", "Webhook"'),
    (None, {"versions": [{"name": "v1", "served": True, "storage": True}]},
     "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"),
    (None, {"preserveUnknownFields": True},
     ("spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
     "x-kubernetes-preserve-unknown-fields to true in openAPIV3Schema instead")),
])
async def test_crd_version_and_conversion_validation(api: API, conversion: dict | None,
                                                     extra: dict, message: str) -> None:
    crd = versions_crd(conversion)
    crd["spec"].update(extra)
    status, body = await api.post(CRDS, crd)
    assert status == 422, body
    assert message in body["message"], body["message"]


async def test_differing_schemas_with_strategy_none_are_allowed(api: API) -> None:
    status, body = await api.post(CRDS, versions_crd())
    assert status == 201, body
    assert body["spec"]["conversion"] == {"strategy": "None"}


async def test_an_unserved_storage_version_still_stores_every_object(tmp_path: Path) -> None:
    crd = versions_crd()
    crd["spec"]["versions"][0]["served"] = False  # v1 stores, only v2 is served
    crd["spec"]["versions"][0]["schema"] = crd["spec"]["versions"][1]["schema"]

    async def test(api: API) -> None:
        status, _ = await api.get(V1)
        assert status == 404
        status, created = await api.post(V2, widget("w1", "v2", replicas=2))
        assert status == 201 and created["apiVersion"] == "example.com/v2", created
        assert (await stored(api, "w1"))["apiVersion"] == "example.com/v1"
        status, got = await api.get(f"{V2}/w1")
        assert got["apiVersion"] == "example.com/v2" and got["spec"] == {"replicas": 2}

    await with_api(tmp_path, crd, test)


async def test_none_with_differing_schemas_prunes_to_each_version(tmp_path: Path) -> None:
    """Upstream's schemaCoercingConverter: a converted object is pruned to the schema of the
    version it is converted to; with strategy None and v1 {size} / v2 {replicas}, a field the
    other version does not declare is lost (why such CRDs want a webhook)."""
    async def test(api: API) -> None:
        status, created = await api.post(V2, widget("w1", "v2", replicas=2, color="red"))
        assert status == 201 and created["spec"] == {"color": "red"}, created  # back from v1
        assert (await stored(api, "w1"))["spec"] == {"color": "red"}
        await api.post(V1, widget("w2", "v1", size=3, color="blue"))
        status, got = await api.get(f"{V2}/w2")
        assert got["apiVersion"] == "example.com/v2" and got["spec"] == {"color": "blue"}
        status, page = await api.get(V2)
        assert [i["spec"] for i in page["items"]] == [{"color": "red"}, {"color": "blue"}]
        rv = page["metadata"]["resourceVersion"]
        watch = asyncio.create_task(api.watch_lines(f"{V2}?watch=true&resourceVersion={rv}", 1))
        await asyncio.sleep(0.2)
        await api.patch(f"{V1}/w2", {"spec": {"size": 4, "color": "green"}})
        events = await watch
        assert events[0]["object"]["apiVersion"] == "example.com/v2"
        assert events[0]["object"]["spec"] == {"color": "green"}

    await with_api(tmp_path, versions_crd(), test)
