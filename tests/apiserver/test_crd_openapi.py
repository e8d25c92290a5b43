"""Custom resources in /openapi/v2, /openapi/v3 and discovery (issue 16): a CRD's versions
appear with upstream's definition names (`com.example.stable.v1.CronTab`), follow CRD updates
(the v3 index hash moves) and go away with the CRD; discovery lists CRD groups with the
kube-aware preferred version."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest

from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from tests.apiserver.conftest import API, start_api
from tests.apiserver.test_crds import CRDS, established

GV = "apis/stable.example.com/v1"
CRONTAB = "com.example.stable.v1.CronTab"
PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


def crontab_crd() -> dict:
    schema = {
        "type": "object", "description": "CronTab runs a command on a schedule.",
        "properties": {
            "spec": {"type": "object", "description": "What to run.", "required": ["cronSpec"],
                     "properties": {
                         "cronSpec": {"type": "string", "pattern": "^[0-9*/ ]+$",
                                      "description": "When to run."},
                         "image": {"type": "string", "enum": ["a", "b"]},
                         "port": {"x-kubernetes-int-or-string": True},
                         "template": {"type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True,
                                      "properties": {"x": {"type": "string"}}},
                         "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                                      "x-kubernetes-preserve-unknown-fields": True}}},
            "status": {"type": "object", "properties": {"lastRun": {"type": "string"}}},
        }}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"],
                               "categories": ["all"]},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema},
                                   "subresources": {"status": {}}}]}}


async def _eventually(check, timeout: float = 5.0):
    """Poll `check()` (async, returns a truthy value when done) until it succeeds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.02)


async def _raw(api: API, path: str, accept: str) -> tuple[int, bytes, Any]:
    async with api.session.get(api.url + path, headers={"Accept": accept}) as resp:
        return resp.status, await resp.read(), resp.headers.copy()


async def test_crd_schemas_published_in_v3_and_v2_and_removed(api: API) -> None:
    _, index = await api.get("/openapi/v3")
    assert GV not in index["paths"]
    _, _, before = await _raw(api, "/openapi/v2", "application/json")
    status, crd = await api.post(CRDS, crontab_crd())
    assert status == 201, crd
    crd = await established(api, "crontabs.stable.example.com")

    async def published():
        _, index = await api.get("/openapi/v3")
        return index["paths"].get(GV)
    entry = await _eventually(published)
    assert entry and entry["serverRelativeURL"].startswith(f"/openapi/v3/{GV}?hash=")
    status, doc = await api.get(entry["serverRelativeURL"])
    assert status == 200
    schemas = doc["components"]["schemas"]
    kind = schemas[CRONTAB]
    assert kind["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "version": "v1", "kind": "CronTab"}]
    assert kind["description"] == "CronTab runs a command on a schedule."
    assert set(kind["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert kind["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    spec = kind["properties"]["spec"]
    assert spec["required"] == ["cronSpec"] and spec["properties"]["image"]["enum"] == ["a", "b"]
    assert spec["properties"]["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    embedded = spec["properties"]["embedded"]
    assert {"apiVersion", "kind", "metadata"} <= set(embedded["properties"])
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    listed = schemas[CRONTAB + "List"]
    assert listed["required"] == ["items"]
    assert listed["properties"]["items"]["items"] == {"$ref": f"#/components/schemas/{CRONTAB}"}
    item = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]
    assert item["patch"]["operationId"] == "patchStableExampleComV1NamespacedCronTab"
    assert item["patch"]["x-kubernetes-group-version-kind"]["kind"] == "CronTab"
    assert "fieldValidation" in [p["name"] for p in item["patch"]["parameters"]]
    assert "application/strategic-merge-patch+json" not in item["patch"]["requestBody"]["content"]
    assert "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status" in doc[
        "paths"]
    assert "/apis/stable.example.com/v1/crontabs" in doc["paths"]  # all namespaces

    # v2: the same definitions in v2 spelling, value validations stripped
    status, body, headers = await _raw(api, "/openapi/v2", "application/json")
    assert status == 200 and headers["ETag"] != before["ETag"]
    v2 = orjson.loads(body)
    v2_kind = v2["definitions"][CRONTAB]
    v2_spec = v2_kind["properties"]["spec"]
    assert "required" not in v2_spec and "enum" not in v2_spec["properties"]["image"]
    assert "pattern" not in v2_spec["properties"]["cronSpec"]
    assert "anyOf" not in v2_spec["properties"]["port"]
    assert "properties" not in v2_spec["properties"]["template"]  # preserve-unknown-fields
    assert v2_kind["properties"]["metadata"]["$ref"] == \
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs" in v2["paths"]
    status, proto, headers = await _raw(api, "/openapi/v2", PROTOBUF)
    assert status == 200 and CRONTAB.encode() in proto

    # an update republishes: new field, new hash
    updated = copy.deepcopy(crd)
    props = updated["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["replicas"] = {"type": "integer"}
    status, body = await api.put(f"{CRDS}/crontabs.stable.example.com", updated)
    assert status == 200, body

    async def republished():
        _, index = await api.get("/openapi/v3")
        url = index["paths"].get(GV, {}).get("serverRelativeURL")
        return url if url and url != entry["serverRelativeURL"] else None
    url = await _eventually(republished)
    assert url, "hash did not change"
    _, doc = await api.get(url)
    assert "replicas" in doc["components"]["schemas"][CRONTAB]["properties"]["spec"]["properties"]
    # the old URL (an index read before the update) redirects to the new one, as handler3
    async with api.session.get(api.url + entry["serverRelativeURL"],
                               allow_redirects=False) as resp:
        assert resp.status == 301 and resp.headers["Location"] == url
    async with api.session.get(api.url + url) as resp:
        etag = resp.headers["ETag"]
        assert etag == f'"{url.rsplit("=", 1)[1]}"'
        assert resp.headers["Cache-Control"] == "public, immutable"
    async with api.session.get(api.url + url, headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304

    # deleting the CRD removes everything
    status, _ = await api.delete(f"{CRDS}/crontabs.stable.example.com")
    assert status == 200

    async def gone():
        _, index = await api.get("/openapi/v3")
        return GV not in index["paths"]
    assert await _eventually(gone)
    status, _ = await api.get(f"/openapi/v3/{GV}")
    assert status == 404
    _, body, _ = await _raw(api, "/openapi/v2", "application/json")
    v2 = orjson.loads(body)
    assert CRONTAB not in v2["definitions"]
    assert not any("stable.example.com" in p for p in v2["paths"])


async def test_preserve_unknown_root_is_a_bare_object_in_v2(api: API) -> None:
    crd = crontab_crd()
    crd["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    status, body = await api.post(CRDS, crd)
    assert status == 201, body
    await established(api, "crontabs.stable.example.com")

    async def v2_def():
        _, body, _ = await _raw(api, "/openapi/v2", "application/json")
        return orjson.loads(body)["definitions"].get(CRONTAB)
    definition = await _eventually(v2_def)
    assert definition == {"type": "object", "x-kubernetes-group-version-kind": [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}]}
    _, doc = await api.get(f"/openapi/v3/{GV}")
    v3 = doc["components"]["schemas"][CRONTAB]
    assert v3["x-kubernetes-preserve-unknown-fields"] is True and "metadata" in v3["properties"]


async def test_v2_is_not_rebuilt_on_the_event_loop_per_request(api: API) -> None:
    """Many concurrent readers after a CRD change share one rebuild (one generation)."""
    status, _ = await api.post(CRDS, crontab_crd())
    assert status == 201
    await established(api, "crontabs.stable.example.com")
    results = await asyncio.gather(*(_raw(api, "/openapi/v2", "application/json")
                                     for _ in range(8)))
    etags = {headers["ETag"] for _, _, headers in results}
    assert len(etags) == 1


def _multi_version_crd() -> dict:
    crd = crontab_crd()
    schema = crd["spec"]["versions"][0]["schema"]
    crd["spec"]["versions"] = [
        {"name": name, "served": True, "storage": name == "v1", "schema": schema,
         "subresources": {"status": {}}}
        for name in ("v1alpha1", "v1beta1", "v2beta1", "v1")]
    return crd


async def test_discovery_lists_crd_group_with_kube_aware_preferred_version(api: API) -> None:
    status, body = await api.post(CRDS, _multi_version_crd())
    assert status == 201, body
    await established(api, "crontabs.stable.example.com")
    _, groups = await api.get("/apis")
    group = {g["name"]: g for g in groups["groups"]}["stable.example.com"]
    assert [v["version"] for v in group["versions"]] == ["v1", "v2beta1", "v1beta1", "v1alpha1"]
    assert group["preferredVersion"] == {"groupVersion": "stable.example.com/v1", "version": "v1"}
    _, single = await api.get("/apis/stable.example.com")
    assert single["preferredVersion"]["version"] == "v1"
    for version in ("v2", "v2beta1"):
        _, agg = await api.get("/apis", headers={"Accept": AGGREGATED.format(v=version)})
        item = {i["metadata"]["name"]: i for i in agg["items"]}["stable.example.com"]
        assert [v["version"] for v in item["versions"]] == [
            "v1", "v2beta1", "v1beta1", "v1alpha1"]
        resource = item["versions"][0]["resources"][0]
        assert resource["resource"] == "crontabs" and resource["singularResource"] == "crontab"
        assert resource["scope"] == "Namespaced" and resource["shortNames"] == ["ct"]
        assert resource["categories"] == ["all"]
        assert resource["responseKind"] == {"group": "stable.example.com", "version": "v1",
                                            "kind": "CronTab"}
        assert sorted(resource["verbs"]) == sorted(
            ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"])
        assert resource["subresources"] == [{
            "subresource": "status", "verbs": ["get", "patch", "update"],
            "responseKind": {"group": "stable.example.com", "version": "v1",
                             "kind": "CronTab"}}]
    # every served version has its own OpenAPI document
    _, index = await api.get("/openapi/v3")
    for version in ("v1", "v2beta1", "v1beta1", "v1alpha1"):
        assert f"apis/stable.example.com/{version}" in index["paths"]
    _, doc = await api.get("/openapi/v3/apis/stable.example.com/v1beta1")
    assert "com.example.stable.v1beta1.CronTab" in doc["components"]["schemas"]


async def test_openapi_v3_document_of_unknown_group_is_404(api: API) -> None:
    status, _ = await api.get("/openapi/v3/apis/nope.example.com/v1")
    assert status == 404


async def test_runtime_config_does_not_hide_crd_groups(tmp_path) -> None:
    """Upstream's --runtime-config knows only built-in groups: a CRD group is served whatever
    it says (not being in the startup table), and naming one is the unknown-group error."""
    api, runner, store, session = await start_api(tmp_path, runtime_config="apps/v1=false")
    try:
        status, body = await api.post(CRDS, crontab_crd())
        assert status == 201, body
        await established(api, "crontabs.stable.example.com")
        status, _ = await api.get("/apis/stable.example.com/v1/namespaces/default/crontabs")
        assert status == 200
        _, groups = await api.get("/apis")
        names = [g["name"] for g in groups["groups"]]
        assert "stable.example.com" in names and "apps" not in names
        _, index = await api.get("/openapi/v3")
        assert GV in index["paths"] and "apis/apps/v1" not in index["paths"]
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
    with pytest.raises(ValueError, match="unknown api groups stable.example.com"):
        APIServer(store, APIServerOptions(runtime_config="stable.example.com/v1=false"))
