"""Structural schemas over HTTP (issue 16, second slice): a custom resource is pruned,
defaulted and validated against its CRD version's openAPIV3Schema on create, update and patch,
with upstream's 422 Status."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver.conftest import start_api
from tests.apiserver.test_crds import CRDS, WIDGETS, _close, established, widget_crd

SCHEMA = {"type": "object", "properties": {"spec": {
    "type": "object", "required": ["size"],
    "properties": {"size": {"type": "integer", "minimum": 1},
                   "color": {"type": "string", "enum": ["red", "blue"], "default": "red"}}},
    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}


def schema_crd() -> dict:
    crd = widget_crd()
    crd["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": SCHEMA}
    return crd


def body(name: str, spec: dict, **extra) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec, **extra}


async def test_schema_validates_defaults_and_prunes(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, schema_crd())
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("bad", {"size": "big"}))
        assert status == 422, out
        assert out["reason"] == "Invalid"
        assert out["message"] == (
            'Widget.example.com "bad" is invalid: spec.size: Invalid value: "string": '
            'spec.size in body must be of type integer: "string"')
        assert out["details"]["causes"][0]["reason"] == "FieldValueTypeInvalid"
        status, out = await api.post(WIDGETS, body("bad", {"size": 1, "color": "green"}))
        assert status == 422
        assert out["details"]["causes"] == [{
            "reason": "FieldValueNotSupported", "field": "spec.color",
            "message": 'Unsupported value: "green": supported values: "red", "blue"'}]
        status, out = await api.post(WIDGETS, body("bad", {}))
        assert status == 422 and out["message"].endswith("spec.size: Required value"), out
        status, out = await api.post(WIDGETS, body("w", {"size": 2, "junk": 1}, extra={"a": 1}))
        assert status == 201, out
        assert out["spec"] == {"size": 2, "color": "red"} and "extra" not in out
        _, got = await api.get(f"{WIDGETS}/w")
        assert got["spec"] == {"size": 2, "color": "red"}
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"size": 0}})
        assert status == 422, out
        assert out["message"].endswith(
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal "
            "to 1")
        got["spec"]["size"] = "x"
        status, out = await api.put(f"{WIDGETS}/w", got)
        assert status == 422, out
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"size": 3, "more": True}})
        assert status == 200, out
        assert out["spec"] == {"size": 3, "color": "red"}
    finally:
        await _close(runner, store, session)
