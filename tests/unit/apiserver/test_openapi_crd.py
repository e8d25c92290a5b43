"""openapi_crd.py: what upstream's apiextensions openapi builder publishes for a CRD version."""

from __future__ import annotations

from minikube_py.apiserver.openapi_crd import crd_openapi, definition_name, kind_schema

GVK = {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SERVED = {"v1": (VERBS, ("status", "scale"))}


def _crd(schema: dict | None, **version: object) -> dict:
    v: dict = {"name": "v1", "served": True, "storage": True, **version}
    if schema is not None:
        v["schema"] = {"openAPIV3Schema": schema}
    return {"metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Cluster",
                     "names": {"plural": "crontabs", "kind": "CronTab",
                               "listKind": "CronTabList"},
                     "versions": [v, {"name": "v2", "served": False, "storage": False}]}}


def test_definition_names_reverse_the_group() -> None:
    assert definition_name("stable.example.com", "v1", "CronTab") == "com.example.stable.v1.CronTab"
    assert definition_name("example", "v1beta1", "W") == "example.v1beta1.W"


def test_only_served_versions_with_their_paths_and_subresources() -> None:
    (piece,) = crd_openapi(_crd({"type": "object"}), SERVED)
    assert piece.version == "v1" and piece.spec.namespaced is False
    assert piece.spec.subresources == ("status", "scale")
    assert piece.spec.definition == "com.example.stable.v1.CronTab"
    assert piece.spec.list_definition == "com.example.stable.v1.CronTabList"
    assert set(piece.v3_schemas) == set(piece.v2_definitions) == {
        "com.example.stable.v1.CronTab", "com.example.stable.v1.CronTabList"}
    listed = piece.v2_definitions["com.example.stable.v1.CronTabList"]
    assert listed["properties"]["items"]["items"] == {
        "$ref": "#/definitions/com.example.stable.v1.CronTab"}
    assert listed["properties"]["metadata"]["$ref"] == \
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
    assert listed["description"] == "CronTabList is a list of CronTab"


def test_no_schema_is_a_bare_object() -> None:
    assert kind_schema(None, GVK, v2=False) == {"type": "object",
                                                "x-kubernetes-group-version-kind": [GVK]}


def test_structural_keys_only_and_type_meta_filled_in() -> None:
    schema = {"type": "object", "example": {"x": 1}, "externalDocs": {"url": "u"},
              "properties": {"a": {"type": "string", "example": "e", "format": "date-time",
                                   "x-kubernetes-validations": [{"rule": "self != ''"}]}}}
    v3 = kind_schema(schema, GVK, v2=False)
    assert "example" not in v3 and "externalDocs" not in v3
    assert v3["properties"]["a"] == {"type": "string", "format": "date-time",
                                     "x-kubernetes-validations": [{"rule": "self != ''"}]}
    assert list(v3["properties"]) == ["a", "apiVersion", "kind", "metadata"]
    assert v3["properties"]["kind"]["type"] == "string"
    assert schema["properties"]["a"]["example"] == "e"  # the CRD itself is not changed


def test_v2_strips_value_validations_nullable_and_preserved_subtrees() -> None:
    schema = {"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "minProperties": 1, "properties": {
            "n": {"type": "integer", "maximum": 3, "nullable": True, "default": 1},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                     "properties": {"k": {"type": "string"}}},
            "list": {"type": "array", "x-kubernetes-preserve-unknown-fields": True,
                     "items": {"type": "string"}},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [
                {"type": "integer"}, {"type": "string"}]},
            "m": {"type": "object", "additionalProperties": {"type": "string",
                                                             "enum": ["a"]}}}}}}
    v2 = kind_schema(schema, GVK, v2=True)
    spec = v2["properties"]["spec"]
    assert "required" not in v2 and "minProperties" not in spec
    assert spec["properties"]["n"] == {"type": "integer", "default": 1}
    assert spec["properties"]["free"] == {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}
    assert spec["properties"]["list"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    assert spec["properties"]["m"]["additionalProperties"] == {"type": "string"}
    v3 = kind_schema(schema, GVK, v2=False)
    assert v3["required"] == ["spec"]
    assert v3["properties"]["spec"]["properties"]["port"]["anyOf"] == [
        {"type": "integer"}, {"type": "string"}]  # already unfolded: not doubled


def test_v2_root_preserving_unknown_fields_is_bare() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"spec": {"type": "object"}}}
    assert kind_schema(schema, GVK, v2=True) == {"type": "object",
                                                 "x-kubernetes-group-version-kind": [GVK]}
    assert "spec" in kind_schema(schema, GVK, v2=False)["properties"]


def test_int_or_string_unfolds_into_anyof_or_allof() -> None:
    schema = {"type": "object", "properties": {
        "a": {"x-kubernetes-int-or-string": True},
        "b": {"x-kubernetes-int-or-string": True, "anyOf": [{"maximum": 3}, {"pattern": "x"}]}}}
    props = kind_schema(schema, GVK, v2=False)["properties"]
    assert props["a"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert props["b"]["allOf"] == [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]
    assert props["b"]["anyOf"] == [{"maximum": 3}, {"pattern": "x"}]


def test_embedded_resources_get_type_and_object_meta() -> None:
    schema = {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object"}}},
        "loose": {"type": "object", "x-kubernetes-embedded-resource": True,
                  "x-kubernetes-preserve-unknown-fields": True}}}
    for v2 in (False, True):
        template = kind_schema(schema, GVK, v2=v2)["properties"]["template"]
        assert {"apiVersion", "kind", "metadata", "spec"} <= set(template["properties"])
        assert template["required"] == ["kind", "apiVersion"]
    loose_v2 = kind_schema(schema, GVK, v2=True)["properties"]["loose"]
    assert "properties" not in loose_v2  # v2 and preserving: kubectl would reject fields
    loose_v3 = kind_schema(schema, GVK, v2=False)["properties"]["loose"]
    assert "metadata" in loose_v3["properties"]
