"""The pure pieces of serving a custom resource: the CRD JSONPath subset, the printer's
cells (upstream tableconvertor), the scale paths (upstream scaleFromCustomResource) and the
apply Struct read from list/map types."""

from __future__ import annotations

import pytest

from minikube_py.api import errors
from minikube_py.api.patch_strategies import MERGE
from minikube_py.apiextensions.jsonpath import JSONPathError, parse
from minikube_py.apiextensions.listtypes import apply_struct
from minikube_py.apiextensions.printer import CustomResourceTable, cell_for_json_value
from minikube_py.registry.crd_scale import (
    ScalePaths,
    get_scale,
    scale_errors,
    with_replicas,
)

OBJ = {"metadata": {"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"},
       "spec": {"replicas": 3, "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}],
                "m": {"x.y": 1}},
       "status": {"conditions": [{"type": "Ready", "status": "True"},
                                 {"type": "Synced", "status": "False"}]}}


@pytest.mark.parametrize(("path", "found"), [
    (".spec.replicas", [3]),
    ("{.spec.replicas}", [3]),
    (".spec.ports[0].name", ["a"]),
    (".spec.ports[-1].port", [2]),
    (".spec.ports[*].name", ["a", "b"]),
    (".spec.m['x.y']", [1]),
    ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
    ('.status.conditions[?(@.type!="Ready")].type', ["Synced"]),
    (".spec.missing.deeper", []),
    (".spec.ports[5]", []),
])
def test_jsonpath_subset(path: str, found: list) -> None:
    assert parse(path).find(OBJ) == found


@pytest.mark.parametrize("path", ["spec.x", ".spec[", ".spec..x", ""])
def test_jsonpath_refuses_what_it_cannot_read(path: str) -> None:
    with pytest.raises(JSONPathError):
        parse(path)


def test_printer_cells_follow_the_column_types() -> None:
    table = CustomResourceTable([
        {"name": "R", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "P", "type": "string", "jsonPath": ".spec.ports[0]"},
        {"name": "N", "type": "number", "jsonPath": ".spec.replicas"},
        {"name": "B", "type": "boolean", "jsonPath": ".spec.replicas"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])
    now = 1767225600 + 300  # 5 minutes after creation
    assert table.row_cells(OBJ, now) == ["w", 3, "map[name:a port:1]", 3.0, None, "5m"]
    assert [c["name"] for c in table.column_definitions()] == ["Name", "R", "P", "N", "B", "Age"]
    assert CustomResourceTable(None).column_definitions()[1]["type"] == "date"
    assert cell_for_json_value("date", "yesterday", now) == "<invalid>"
    assert cell_for_json_value("integer", "3", now) is None


def test_scale_paths() -> None:
    paths = ScalePaths(".spec.replicas", ".status.replicas", ".status.selector")
    assert get_scale(OBJ, paths)["spec"] == {"replicas": 3}
    assert get_scale(OBJ, paths)["status"] == {"replicas": 0, "selector": ""}
    moved = with_replicas(OBJ, ScalePaths(".spec.deep.count", ".status.n"), 4)
    assert moved["spec"]["deep"] == {"count": 4} and OBJ["spec"].get("deep") is None
    with pytest.raises(errors.StatusError) as err:
        get_scale({"spec": {"replicas": "3"}}, paths)
    assert err.value.code == 500
    assert ".spec.replicas accessor error: 3 is of the type string, expected int64" in str(
        err.value.message)
    errs = scale_errors({"status": {"replicas": -1, "selector": 5}}, paths, status=True)
    assert [e.field for e in errs] == [".status.replicas", ".status.selector"]


def test_apply_struct_reads_list_and_map_types() -> None:
    struct = apply_struct({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name", "proto"],
                  "items": {"type": "object", "properties": {
                      "name": {"type": "string"},
                      "proto": {"type": "string", "default": "TCP"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set"},
        "args": {"type": "array"},
        "sel": {"type": "object", "x-kubernetes-map-type": "atomic"},
        "byName": {"type": "object", "additionalProperties": {
            "type": "array", "x-kubernetes-list-type": "set"}}}}}})
    spec = struct["spec"].fields
    assert spec["ports"].strategy == MERGE and spec["ports"].keys == ("name", "proto")
    assert dict(spec["ports"].key_defaults) == {"proto": "TCP"}
    assert spec["tags"].is_merge_list and not spec["tags"].keys
    assert not spec["args"].is_merge_list
    assert spec["sel"].atomic
    assert spec["byName"].fields.get("anything").is_merge_list
    assert "metadata" in struct  # ObjectMeta's keyed lists, as every kind has them
