"""CustomResourceDefinitions over HTTP (issue 16, first slice): a CRD is validated, gets
NamesAccepted/Established, its custom resources are served by the generic registry (CRUD,
label selectors, status subresource, watch, discovery), and deleting the CRD deletes them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.apiserver.conftest import start_api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


def widget_crd(scope: str = "Namespaced", **names) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": scope,
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wg"],
                               **names},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}},
                                   "subresources": {"status": {}}}]}}


def widget(name: str, **labels: str) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "labels": labels}, "spec": {"size": 1}}


async def established(api, name: str = "widgets.example.com") -> dict:
    for _ in range(100):
        _, crd = await api.get(f"{CRDS}/{name}")
        conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions", [])}
        if conds.get("Established") == "True":
            return crd
        await asyncio.sleep(0.02)
    raise AssertionError(f"not established: {crd}")


async def _close(runner, store, session) -> None:
    await session.close()
    await runner.cleanup()
    await store.close()


async def test_crd_lifecycle_serves_custom_resources_then_stops(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, _ = await api.get(WIDGETS)
        assert status == 404
        status, crd = await api.post(CRDS, widget_crd())
        assert status == 201, crd["message"]
        crd = await established(api)
        conds = {c["type"]: c for c in crd["status"]["conditions"]}
        assert conds["NamesAccepted"]["status"] == "True"
        assert crd["status"]["acceptedNames"]["kind"] == "Widget"
        assert crd["status"]["acceptedNames"]["listKind"] == "WidgetList"
        assert crd["status"]["storedVersions"] == ["v1"]

        # discovery: legacy and aggregated
        status, groups = await api.get("/apis")
        assert "example.com" in [g["name"] for g in groups["groups"]]
        status, resources = await api.get("/apis/example.com/v1")
        assert status == 200
        entry = {r["name"]: r for r in resources["resources"]}
        assert entry["widgets"]["kind"] == "Widget" and entry["widgets"]["namespaced"] is True
        assert entry["widgets"]["shortNames"] == ["wg"] and "widgets/status" in entry
        status, agg = await api.get("/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
        assert "example.com" in [g["metadata"]["name"] for g in agg["items"]]

        # CRUD, unknown fields kept, label selectors
        status, w1 = await api.post(WIDGETS, {**widget("w1", tier="a"), "extra": {"kept": True}})
        assert status == 201, w1
        assert w1["extra"] == {"kept": True} and w1["metadata"]["generation"] == 1
        status, _ = await api.post(WIDGETS, widget("w2", tier="b"))
        assert status == 201
        status, page = await api.get(f"{WIDGETS}?labelSelector=tier%3Da")
        assert [w["metadata"]["name"] for w in page["items"]] == ["w1"]
        assert page["kind"] == "WidgetList" and page["apiVersion"] == "example.com/v1"
        status, all_ns = await api.get("/apis/example.com/v1/widgets")
        assert status == 200 and len(all_ns["items"]) == 2

        # patches: merge and JSON work, strategic merge is 415 as upstream
        status, w1 = await api.patch(f"{WIDGETS}/w1", {"spec": {"size": 3}})
        assert status == 200 and w1["spec"]["size"] == 3 and w1["metadata"]["generation"] == 2
        status, w1 = await api.patch(f"{WIDGETS}/w1", [{"op": "add", "path": "/spec/color",
                                                        "value": "red"}],
                                     content_type="application/json-patch+json")
        assert status == 200 and w1["spec"]["color"] == "red"
        status, body = await api.patch(f"{WIDGETS}/w1", {"spec": {}},
                                       content_type="application/strategic-merge-patch+json")
        assert status == 415, body
        assert "application/strategic-merge-patch+json" not in body["message"]

        # status subresource: status writes ignore spec, main writes ignore status
        status, w1 = await api.put(f"{WIDGETS}/w1/status",
                                   {**w1, "spec": {"size": 99}, "status": {"ready": True}})
        assert status == 200, w1
        assert w1["status"] == {"ready": True} and w1["spec"]["size"] == 3
        status, w1 = await api.put(f"{WIDGETS}/w1", {**w1, "status": {"ready": False}})
        assert status == 200 and w1["status"] == {"ready": True}

        # watch sees a change
        events = asyncio.ensure_future(api.watch_lines(
            f"{WIDGETS}?watch=true&resourceVersion={w1['metadata']['resourceVersion']}", 1))
        await asyncio.sleep(0.1)
        await api.patch(f"{WIDGETS}/w2", {"metadata": {"labels": {"seen": "yes"}}})
        (event,) = await events
        assert event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == "w2"

        # deleting the CRD deletes its objects and stops serving
        status, _ = await api.delete(f"{CRDS}/widgets.example.com")
        assert status == 200
        for _ in range(100):
            status, _ = await api.get(f"{CRDS}/widgets.example.com")
            if status == 404:
                break
            await asyncio.sleep(0.02)
        assert status == 404
        status, _ = await api.get(f"{WIDGETS}/w1")
        assert status == 404
        status, groups = await api.get("/apis")
        assert "example.com" not in [g["name"] for g in groups["groups"]]
        assert not [kv async for kv in _keys(store, "/registry/example.com/")]
    finally:
        await _close(runner, store, session)


async def _keys(store, prefix: str):
    for kv in (await store.range(prefix)).kvs:
        yield kv


async def test_cluster_scoped_crd_and_restart_keeps_serving(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, _ = await api.post(CRDS, widget_crd("Cluster"))
        assert status == 201
        await established(api)
        status, w = await api.post("/apis/example.com/v1/widgets", widget("c1"))
        assert status == 201 and "namespace" not in w["metadata"]
        status, _ = await api.get("/apis/example.com/v1/namespaces/default/widgets/c1")
        assert status == 404
    finally:
        await _close(runner, store, session)
    # a new server over the same data serves the CRD from its start
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, w = await api.get("/apis/example.com/v1/widgets/c1")
        assert status == 200 and w["kind"] == "Widget"
    finally:
        await _close(runner, store, session)


async def test_invalid_crds_are_refused_with_field_causes(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        bad = widget_crd("Global")
        bad["metadata"]["name"] = "gadgets.example.com"
        bad["spec"]["versions"][0]["storage"] = False
        status, body = await api.post(CRDS, bad)
        assert status == 422, body
        fields = {c["field"] for c in body["details"]["causes"]}
        assert {"metadata.name", "spec.scope", "spec.versions"} <= fields
        assert body["details"]["group"] == "apiextensions.k8s.io"
        nodot = widget_crd()
        nodot["spec"]["group"] = "example"
        nodot["metadata"]["name"] = "widgets.example"
        status, body = await api.post(CRDS, nodot)
        assert status == 422
        assert "should be a domain with at least one dot" in body["message"]
    finally:
        await _close(runner, store, session)
