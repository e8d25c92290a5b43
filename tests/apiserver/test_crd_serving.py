"""Serving custom resources as upstream does (issue 16): status and scale subresources,
metadata.generation, printer columns in server-side Tables, selectable fields, categories,
fieldValidation, server-side apply by the schema's list types, and ObjectMeta rules — over a
real socket, against the generic registry a CRD is turned into."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.apiserver.conftest import API, start_api
from tests.apiserver.test_crds import CRDS, established

WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
APPLY = "application/apply-patch+yaml"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "color": {"type": "string"},
            "size": {"type": "integer", "minimum": 0},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {
                          "name": {"type": "string"}, "port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set",
                     "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "limits": {"type": "object", "x-kubernetes-map-type": "atomic",
                       "additionalProperties": {"type": "string"}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                         "x-kubernetes-preserve-unknown-fields": True},
        }},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "phase": {"type": "string", "enum": ["Ready", "Pending"]},
            "selector": {"type": "string"},
        }},
    },
}


def crd(**version: Any) -> dict:
    """widgets.example.com with status, scale, printer columns and a selectable field."""
    v1 = {"name": "v1", "served": True, "storage": True,
          "schema": {"openAPIV3Schema": SCHEMA},
          "subresources": {"status": {}, "scale": {
              "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
              "labelSelectorPath": ".status.selector"}},
          "additionalPrinterColumns": [
              {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
              {"name": "Color", "type": "string", "jsonPath": ".spec.color",
               "description": "the color"},
              {"name": "Phase", "type": "string", "jsonPath": ".status.phase", "priority": 1},
              {"name": "Ports", "type": "string", "jsonPath": ".spec.ports[*].name"},
              {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
          "selectableFields": [{"jsonPath": ".spec.color"}], **version}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wg"],
                               "categories": ["all", "toys"]},
                     "versions": [v1]}}


def widget(name: str, **spec: Any) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[API]:
    client, runner, store, session = await start_api(tmp_path)
    try:
        status, body = await client.post(CRDS, crd())
        assert status == 201, body
        await established(client)
        yield client
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_status_is_owned_by_the_status_subresource_and_generation_counts_spec(
        api: API) -> None:
    status, w = await api.post(WIDGETS, {**widget("w", color="red", replicas=1),
                                         "status": {"phase": "Ready"}})
    assert status == 201, w
    assert "status" not in w and w["metadata"]["generation"] == 1  # create cannot set status

    # the main resource ignores status; a spec change bumps the generation
    w["status"] = {"phase": "Ready"}
    w["spec"]["color"] = "blue"
    status, w = await api.put(f"{WIDGETS}/w", w)
    assert status == 200, w
    assert "status" not in w and w["metadata"]["generation"] == 2
    # metadata only: no bump
    status, w = await api.patch(f"{WIDGETS}/w", {"metadata": {"labels": {"a": "b"}}})
    assert w["metadata"]["generation"] == 2 and w["metadata"]["labels"] == {"a": "b"}

    # /status ignores everything but status, and does not bump the generation
    w["status"] = {"phase": "Pending", "replicas": 1, "bogus": True}
    w["spec"]["color"] = "green"
    w["metadata"]["labels"] = {"a": "changed"}
    status, w = await api.put(f"{WIDGETS}/w/status", w)
    assert status == 200, w
    assert w["status"] == {"phase": "Pending", "replicas": 1}  # pruned by the schema
    assert w["spec"]["color"] == "blue" and w["metadata"]["labels"] == {"a": "b"}
    assert w["metadata"]["generation"] == 2

    # a status write without status clears it (upstream's status strategy copies it whole)
    status, cleared = await api.put(f"{WIDGETS}/w/status", {
        k: v for k, v in w.items() if k != "status"})
    assert status == 200 and "status" not in cleared, cleared

    # the schema validates status writes
    status, body = await api.patch(f"{WIDGETS}/w/status", {"status": {"phase": "Gone"}})
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "status.phase"
    assert 'Unsupported value: "Gone"' in body["message"]


async def test_scale_subresource_reads_and_writes_the_crd_paths(api: API) -> None:
    status, resources = await api.get("/apis/example.com/v1")
    entry = {r["name"]: r for r in resources["resources"]}
    assert entry["widgets/scale"]["kind"] == "Scale"
    assert entry["widgets/scale"]["group"] == "autoscaling"
    assert entry["widgets"]["categories"] == ["all", "toys"]

    await api.post(WIDGETS, widget("w", replicas=2))
    await api.patch(f"{WIDGETS}/w/status", {"status": {"replicas": 2, "selector": "app=w"}})
    status, scale = await api.get(f"{WIDGETS}/w/scale")
    assert status == 200, scale
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}

    status, scale = await api.patch(f"{WIDGETS}/w/scale", {"spec": {"replicas": 5}})
    assert status == 200, scale
    assert scale["spec"]["replicas"] == 5
    _, w = await api.get(f"{WIDGETS}/w")
    assert w["spec"]["replicas"] == 5 and w["metadata"]["generation"] == 2

    scale["spec"]["replicas"] = -1
    status, body = await api.put(f"{WIDGETS}/w/scale", scale)
    assert status == 422 and body["details"]["kind"] == "Scale", body
    assert "spec.replicas: Invalid value: -1" in body["message"]

    # no spec.replicas: GET is an internal error, a write that does not set it is 400
    await api.post(WIDGETS, widget("empty"))
    status, body = await api.get(f"{WIDGETS}/empty/scale")
    assert status == 500, body
    assert 'the spec replicas field ".spec.replicas" does not exist' in body["message"]
    status, body = await api.patch(f"{WIDGETS}/empty/scale", {"metadata": {"labels": {}}})
    assert status == 400, body
    assert body["message"] == 'the spec replicas field ".spec.replicas" cannot be empty'
    status, scale = await api.patch(f"{WIDGETS}/empty/scale", {"spec": {"replicas": 1}})
    assert status == 200 and scale["spec"]["replicas"] == 1

    # a value of the wrong type at the path is refused on the main resource too
    status, body = await api.patch(f"{WIDGETS}/empty/status", {"status": {"replicas": -3}})
    assert status == 422 and "should be a non-negative integer" in body["message"], body


async def test_tables_show_the_printer_columns(api: API) -> None:
    await api.post(WIDGETS, widget("w", replicas=3, color="red",
                                   ports=[{"name": "http"}, {"name": "https"}]))
    await api.patch(f"{WIDGETS}/w/status", {"status": {"phase": "Ready"}})
    status, table = await api.get(WIDGETS, headers={"Accept": TABLE})
    assert status == 200, table
    assert table["kind"] == "Table"
    columns = table["columnDefinitions"]
    assert [c["name"] for c in columns] == ["Name", "Replicas", "Color", "Phase", "Ports", "Age"]
    assert columns[0]["format"] == "name"
    assert columns[1]["type"] == "integer" and columns[2]["description"] == "the color"
    assert columns[3]["priority"] == 1
    assert columns[4]["description"] == ("Custom resource definition column (in JSONPath "
                                         "format): .spec.ports[*].name")
    cells = table["rows"][0]["cells"]
    assert cells[:5] == ["w", 3, "red", "Ready", "http"]
    assert cells[5].endswith("s")  # an age
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"

    # kubectl get -w: every watch event is a one-row Table with the same columns
    async with api.session.get(f"{api.url}{WIDGETS}?watch=true&fieldSelector=metadata.name%3Dw",
                               headers={"Accept": TABLE}) as resp:
        event = orjson.loads(await resp.content.readline())
    assert [c["name"] for c in event["object"]["columnDefinitions"]][:3] == [
        "Name", "Replicas", "Color"]
    assert event["object"]["rows"][0]["cells"][:3] == ["w", 3, "red"]

    # a single object, and a missing value is null
    await api.post(WIDGETS, widget("bare"))
    status, table = await api.get(f"{WIDGETS}/bare", headers={"Accept": TABLE})
    assert table["rows"][0]["cells"][:5] == ["bare", None, None, None, None]


async def test_a_version_without_columns_prints_name_and_age(tmp_path: Path) -> None:
    client, runner, store, session = await start_api(tmp_path)
    try:
        plain = crd(additionalPrinterColumns=[])
        del plain["spec"]["versions"][0]["additionalPrinterColumns"]
        await client.post(CRDS, plain)
        await established(client)
        await client.post(WIDGETS, widget("w"))
        _, table = await client.get(WIDGETS, headers={"Accept": TABLE})
        assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
            ("Name", "string"), ("Age", "date")]
        assert table["rows"][0]["cells"][0] == "w"
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_selectable_fields_filter_lists_and_watches(api: API) -> None:
    for name, color in (("a", "red"), ("b", "blue"), ("c", "red")):
        await api.post(WIDGETS, widget(name, color=color))
    status, page = await api.get(f"{WIDGETS}?fieldSelector=spec.color%3Dred")
    assert status == 200, page
    assert [i["metadata"]["name"] for i in page["items"]] == ["a", "c"]
    _, page = await api.get(f"{WIDGETS}?fieldSelector=spec.color!%3Dred,metadata.name!%3Dx")
    assert [i["metadata"]["name"] for i in page["items"]] == ["b"]
    status, body = await api.get(f"{WIDGETS}?fieldSelector=spec.size%3D1")
    assert status == 400, body
    assert body["message"] == "field label not supported: spec.size"

    events = await api.watch_lines(f"{WIDGETS}?watch=true&fieldSelector=spec.color%3Dblue", 1)
    assert [e["object"]["metadata"]["name"] for e in events] == ["b"]


async def test_field_validation_reports_what_pruning_drops(api: API) -> None:
    body = widget("w", color="red", bogus=1)
    body["extra"] = True
    status, out = await api.post(f"{WIDGETS}?fieldValidation=Strict", body)
    assert status == 400, out
    assert out["message"] == ('strict decoding error: unknown field "extra", '
                              'unknown field "spec.bogus"')

    async with api.session.post(f"{api.url}{WIDGETS}?fieldValidation=Warn",
                                data=orjson.dumps(body),
                                headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
        warnings = resp.headers.getall("Warning")
        created = await resp.json()
    assert warnings == ['299 - "unknown field \\"extra\\""',
                        '299 - "unknown field \\"spec.bogus\\""']
    assert "extra" not in created and "bogus" not in created["spec"]

    status, out = await api.post(f"{WIDGETS}?fieldValidation=Strict", {
        **widget("m"), "metadata": {"name": "m", "colour": "red"}})
    assert status == 400 and out["message"] == ('strict decoding error: unknown field '
                                                '"metadata.colour"'), out
    status, out = await api.post(WIDGETS, {**widget("m"), "metadata": {"name": "m", "x": 1}})
    assert status == 201 and "x" not in out["metadata"], out

    status, out = await api.patch(f"{WIDGETS}/w?fieldValidation=Strict",
                                  {"spec": {"nope": 1}})
    assert status == 400 and out["message"] == ('strict decoding error: unknown field '
                                                '"spec.nope"'), out
    status, out = await api.post(f"{WIDGETS}?fieldValidation=Ignore", {**body, "metadata": {
        "name": "w2"}})
    assert status == 201 and "extra" not in out


async def test_server_side_apply_merges_by_the_schema_list_types(api: API) -> None:
    def applied(ports: list, tags: list, args: list | None = None, **extra: Any) -> bytes:
        spec: dict[str, Any] = {"ports": ports, "tags": tags, **extra}
        if args is not None:
            spec["args"] = args
        return orjson.dumps(widget("w", **spec))

    status, w = await api.patch(f"{WIDGETS}/w?fieldManager=a", None, content_type=APPLY,
                                raw=applied([{"name": "http", "port": 80}], ["x"], ["one"],
                                            limits={"cpu": "1"}))
    assert status == 201, w
    status, w = await api.patch(f"{WIDGETS}/w?fieldManager=b", None, content_type=APPLY,
                                raw=applied([{"name": "https", "port": 443}], ["y"]))
    assert status == 200, w
    assert w["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    assert w["spec"]["tags"] == ["x", "y"]
    assert w["spec"]["args"] == ["one"]
    owners = {e["manager"]: e["fieldsV1"] for e in w["metadata"]["managedFields"]}
    assert 'k:{"name":"https"}' in owners["b"]["f:spec"]["f:ports"]
    assert 'v:"y"' in owners["b"]["f:spec"]["f:tags"]

    # an atomic list and an atomic map are owned whole: b's values conflict with a's
    status, body = await api.patch(f"{WIDGETS}/w?fieldManager=b", None, content_type=APPLY,
                                   raw=applied([], [], ["two"], limits={"mem": "2"}))
    assert status == 409, body
    assert '.spec.args' in body["message"] and '.spec.limits' in body["message"]
    status, w = await api.patch(f"{WIDGETS}/w?fieldManager=b&force=true", None,
                                content_type=APPLY,
                                raw=applied([{"name": "https", "port": 443}], ["y"], ["two"],
                                            limits={"mem": "2"}))
    assert status == 200, w
    assert w["spec"]["args"] == ["two"] and w["spec"]["limits"] == {"mem": "2"}
    assert w["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]

    # a drops its port: only its own item goes
    status, w = await api.patch(f"{WIDGETS}/w?fieldManager=a", None, content_type=APPLY,
                                raw=applied([], ["x"]))
    assert status == 200, w
    assert w["spec"]["ports"] == [{"name": "https", "port": 443}]


async def test_object_meta_rules_of_custom_resources(api: API) -> None:
    status, w = await api.post(WIDGETS, widget("dotted.name-1"))
    assert status == 201, w  # a DNS subdomain
    status, body = await api.post(WIDGETS, widget("Bad_Name"))
    assert status == 422, body
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert "a lowercase RFC 1123 subdomain" in body["message"]
    status, w = await api.post(WIDGETS, {**widget(""), "metadata": {"generateName": "gen-"}})
    assert status == 201 and w["metadata"]["name"].startswith("gen-"), w
    status, body = await api.post(WIDGETS, {**widget(""), "metadata": {"generateName": "Gen_"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.generateName", body


async def test_embedded_resources_are_validated_as_objects(api: API) -> None:
    status, w = await api.post(WIDGETS, widget("ok", template={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "x"}}, "spec": {}}))
    assert status == 201, w
    assert w["spec"]["template"]["metadata"] == {"labels": {"app": "x"}}
    status, w = await api.post(WIDGETS, widget("pruned", template={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}}))
    assert status == 201 and w["spec"]["template"]["metadata"] == {"name": "p"}, w
    status, body = await api.post(WIDGETS, widget("bad", template={
        "kind": "Not_A_Kind", "metadata": {"labels": {"bad key!": "x"}}}))
    assert status == 422, body
    fields = sorted(c["field"] for c in body["details"]["causes"])
    assert fields == ["spec.template.apiVersion", "spec.template.kind",
                      "spec.template.metadata.labels"], body
    assert "spec.template.apiVersion: Required value: must not be empty" in body["message"]


async def test_crds_with_bad_serving_declarations_are_refused(api: API) -> None:
    bad = crd(additionalPrinterColumns=[{"name": "X", "type": "text", "jsonPath": "spec.x"},
                                        {"name": "Y", "type": "string", "format": "weird",
                                         "jsonPath": ".spec.y"}],
              selectableFields=[{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.color"}])
    bad["metadata"]["name"] = "gadgets.example.com"
    bad["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    bad["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".status.replicas", "statusReplicasPath": ".spec.x",
        "labelSelectorPath": "status.selector"}
    status, body = await api.post(CRDS, bad)
    assert status == 422, body
    found = {(c["field"], c["message"].split(": ")[-1]) for c in body["details"]["causes"]}
    v = "spec.versions[0]"
    assert found >= {
        (f"{v}.additionalPrinterColumns[0].type", "must be one of boolean,date,integer,number,string"),
        (f"{v}.additionalPrinterColumns[0].jsonPath", "must be a simple json path starting with ."),
        (f"{v}.additionalPrinterColumns[1].format",
         "must be one of byte,date,date-time,double,float,int32,int64,password"),
        (f"{v}.subresources.scale.specReplicasPath", "should be a json path under .spec"),
        (f"{v}.subresources.scale.statusReplicasPath", "should be a json path under .status"),
        (f"{v}.subresources.scale.labelSelectorPath", "must be a simple json path starting with ."),
    }, found
    assert f"{v}.selectableFields[1].jsonPath" in {c["field"] for c in body["details"]["causes"]}


async def test_a_cluster_scoped_custom_resource_has_no_namespace_field(api: API) -> None:
    gizmos = crd()
    gizmos["metadata"]["name"] = "gizmos.example.com"
    gizmos["spec"].update(scope="Cluster", names={"plural": "gizmos", "kind": "Gizmo"})
    status, body = await api.post(CRDS, gizmos)
    assert status == 201, body
    await established(api, "gizmos.example.com")
    path = "/apis/example.com/v1/gizmos"
    status, g = await api.post(path, {**widget("g", color="red"), "kind": "Gizmo"})
    assert status == 201, g
    status, page = await api.get(f"{path}?fieldSelector=metadata.name%3Dg,spec.color%3Dred")
    assert status == 200 and [i["metadata"]["name"] for i in page["items"]] == ["g"], page
    status, body = await api.get(f"{path}?fieldSelector=metadata.namespace%3Ddefault")
    assert status == 400 and body["message"] == (
        "field label not supported: metadata.namespace"), body
