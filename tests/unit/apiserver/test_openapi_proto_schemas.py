"""Every field of every served type is in the OpenAPI schemas: the hand tables completed from
the protobuf description (openapi_proto_schemas.py). Checked against lightkube-models, the
1.31 API types generated from upstream's own OpenAPI document (a test dependency): kubectl up
to 1.26 refuses a manifest field its /openapi/v2 schema does not list."""

from __future__ import annotations

import importlib

import pytest

from minikube_py.apiserver.openapi_schemas import SCHEMAS, generic_kind_schemas

pytest.importorskip(
    "lightkube.models", reason="lightkube-models is not installed: pip install -e '.[test]'")

#: gaps of api/kinds/protobuf.json itself (reported to its owner): upstream's Go embeds
#: EphemeralContainerCommon with `json:",inline"`, the data does not mark it inline
KNOWN_DATA_GAPS = {"io.k8s.api.core.v1.EphemeralContainer"}


def _upstream_fields(definition: str) -> set[str] | None:
    parts = definition.split(".")
    if definition.startswith("io.k8s.api."):
        module, name = f"lightkube.models.{parts[3]}_{parts[4]}", parts[5]
    elif definition.startswith("io.k8s.apimachinery.pkg.apis.meta.v1."):
        module, name = "lightkube.models.meta_v1", parts[-1]
    else:
        return None
    try:
        model = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    fields = getattr(model, "__struct_encode_fields__", None)
    return set(fields) if fields is not None else None


def test_no_table_type_lacks_an_upstream_field() -> None:
    checked, missing = 0, {}
    for name, schema in SCHEMAS.items():
        upstream = _upstream_fields(name)
        if upstream is None or "properties" not in schema:
            continue
        checked += 1
        lacking = upstream - set(schema["properties"])
        if lacking:
            missing[name] = sorted(lacking)
    assert checked > 150 and set(missing) <= KNOWN_DATA_GAPS, missing


def test_a_kind_without_a_table_is_described_in_full() -> None:
    schemas = generic_kind_schemas("scheduling.k8s.io", "v1", "PriorityClass")
    pc = schemas["io.k8s.api.scheduling.v1.PriorityClass"]
    assert set(pc["properties"]) >= _upstream_fields("io.k8s.api.scheduling.v1.PriorityClass")
    assert pc["properties"]["value"]["type"] == "integer"
    assert pc["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.k8s.io", "kind": "PriorityClass", "version": "v1"}]
    events = generic_kind_schemas("events.k8s.io", "v1", "Event")
    series = events["io.k8s.api.events.v1.Event"]["properties"]["series"]
    target = series["allOf"][0]["$ref"].rsplit("/", 1)[1]
    assert target in events and "count" in events[target]["properties"]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" not in events  # already shared
