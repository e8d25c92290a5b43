"""OpenAPI documents: what kubectl 1.27-1.33 look for (fieldValidation on PATCH, GVKs,
strategic-merge content) and schemas that `explain` and client-side `apply` can walk."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from minikube_py.apiserver import (
    openapi_types_apps,
    openapi_types_cluster,
    openapi_types_core,
    openapi_types_pod,
)
from minikube_py.apiserver.openapi import (
    ResourceSpec,
    document_hash,
    openapi_v3_document,
    openapi_v3_index,
    operation_tag_and_prefix,
)
from minikube_py.apiserver.openapi_schemas import REF_PREFIX, SCHEMAS

ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CORE = [
    ResourceSpec("namespaces", "Namespace", False, ALL, ("status",)),
    ResourceSpec("pods", "Pod", True, ALL, ("status", "binding", "log", "exec")),
    ResourceSpec("nodes", "Node", False, ALL, ("status",)),
    ResourceSpec("services", "Service", True, ALL, ("status",)),
    ResourceSpec("endpoints", "Endpoints", True, ALL),
    ResourceSpec("events", "Event", True, ALL),
    ResourceSpec("replicationcontrollers", "ReplicationController", True, ALL,
                 ("status", "scale")),
    ResourceSpec("podtemplates", "PodTemplate", True, ALL),
    ResourceSpec("secrets", "Secret", True, ALL),
    ResourceSpec("configmaps", "ConfigMap", True, ALL),
    ResourceSpec("serviceaccounts", "ServiceAccount", True, ALL),
    ResourceSpec("limitranges", "LimitRange", True, ALL),
    ResourceSpec("resourcequotas", "ResourceQuota", True, ALL, ("status",)),
    ResourceSpec("componentstatuses", "ComponentStatus", False, ("get", "list")),
    ResourceSpec("bindings", "Binding", True, ("create",)),
]
APPS = [
    ResourceSpec("deployments", "Deployment", True, ALL, ("status", "scale")),
    ResourceSpec("replicasets", "ReplicaSet", True, ALL, ("status", "scale")),
]
CORE_DOC = openapi_v3_document("", "v1", CORE)
APPS_DOC = openapi_v3_document("apps", "v1", APPS)
METHODS = ("get", "put", "post", "patch", "delete")


def _operations(doc: dict) -> list[tuple[str, str, dict]]:
    return [(path, method, item[method]) for path, item in doc["paths"].items()
            for method in METHODS if method in item]


def _resolve(doc: dict, schema: dict) -> dict:
    """Follow allOf[0] / $ref like kubectl's strategicpatch resolve()."""
    while True:
        if schema.get("allOf"):
            schema = schema["allOf"][0]
        elif "$ref" in schema:
            schema = doc["components"]["schemas"][schema["$ref"].removeprefix(REF_PREFIX)]
        else:
            return schema


def _walk(doc: dict, kind_schema: str, *fields: str) -> dict:
    """`kubectl explain pods.spec.containers`: properties, then list items, then refs."""
    schema = doc["components"]["schemas"][kind_schema]
    for name in fields:
        schema = _resolve(doc, schema["properties"][name])
        if "items" in schema:
            schema = _resolve(doc, schema["items"])
    return schema


def test_index() -> None:
    assert openapi_v3_index({"apis/apps/v1": "B2", "api/v1": "A1"}) == {"paths": {
        "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=A1"},
        "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=B2"},
    }}


def test_document_hash_is_upper_hex_sha512() -> None:
    digest = document_hash(b"{}")
    assert len(digest) == 128 and digest == digest.upper() and digest != document_hash(b"[]")


@pytest.mark.parametrize("doc", [CORE_DOC, APPS_DOC], ids=["core", "apps"])
def test_every_patch_accepts_field_validation_and_strategic_merge(doc: dict) -> None:
    """kubectl's query-param verifier takes the first PATCH whose GVK matches (map order is
    random), so every PATCH must carry fieldValidation; apply's v3 patcher needs SMP."""
    patches = [op for _, method, op in _operations(doc) if method == "patch"]
    assert patches
    for op in patches:
        names = {p["name"]: p for p in op["parameters"]}
        assert names["fieldValidation"]["in"] == "query"
        assert "application/strategic-merge-patch+json" in op["requestBody"]["content"]


@pytest.mark.parametrize("doc", [CORE_DOC, APPS_DOC], ids=["core", "apps"])
def test_document_is_closed_and_serializable(doc: dict) -> None:
    body = orjson.dumps(doc)
    schemas = doc["components"]["schemas"]
    refs = {ref.removeprefix(REF_PREFIX) for ref in _refs(doc)}
    assert refs <= set(schemas), refs - set(schemas)
    assert doc["openapi"].startswith("3.") and len(body) > 1000


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if "$ref" in node else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_pod_paths_and_gvks() -> None:
    pod_gvk = {"group": "", "kind": "Pod", "version": "v1"}
    paths = CORE_DOC["paths"]
    item = paths["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert set(item) == {"get", "put", "patch", "delete", "parameters"}
    assert item["patch"]["x-kubernetes-group-version-kind"] == pod_gvk
    assert item["patch"]["operationId"] == "patchCoreV1NamespacedPod"
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    collection = paths["/api/v1/namespaces/{namespace}/pods"]
    assert {m: collection[m]["x-kubernetes-action"] for m in ("get", "post", "delete")} == \
        {"get": "list", "post": "post", "delete": "deletecollection"}
    assert paths["/api/v1/pods"]["get"]["operationId"] == "listCoreV1PodForAllNamespaces"
    binding = paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
    assert binding["x-kubernetes-group-version-kind"]["kind"] == "Binding"
    status = paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]
    assert status["patch"]["description"] == "partially update status of the specified Pod"
    exec_ = paths["/api/v1/namespaces/{namespace}/pods/{name}/exec"]
    assert exec_["post"]["x-kubernetes-group-version-kind"]["kind"] == "PodExecOptions"


def test_verbs_decide_operations() -> None:
    paths = CORE_DOC["paths"]
    assert set(paths["/api/v1/componentstatuses"]) == {"get", "parameters"}
    assert set(paths["/api/v1/componentstatuses/{name}"]) == {"get", "parameters"}
    assert set(paths["/api/v1/namespaces/{namespace}/bindings"]) == {"post", "parameters"}
    assert "/api/v1/namespaces/{namespace}/bindings/{name}" not in paths
    assert "/api/v1/bindings" not in paths  # no list verb, no all-namespaces path
    nodes = paths["/api/v1/nodes/{name}"]  # cluster-scoped: no namespace segment or param
    assert [p["name"] for p in nodes["parameters"]] == ["name", "pretty"]


def test_scale_subresource_uses_autoscaling_scale() -> None:
    scale = APPS_DOC["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert "io.k8s.api.autoscaling.v1.Scale" in APPS_DOC["components"]["schemas"]
    deployment = APPS_DOC["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert deployment["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "apps", "kind": "Deployment", "version": "v1"}


@pytest.mark.parametrize(("doc", "name", "gvk"), [
    (CORE_DOC, "io.k8s.api.core.v1.Pod", ("", "v1", "Pod")),
    (CORE_DOC, "io.k8s.api.core.v1.PodList", ("", "v1", "PodList")),
    (CORE_DOC, "io.k8s.api.core.v1.ComponentStatus", ("", "v1", "ComponentStatus")),
    (APPS_DOC, "io.k8s.api.apps.v1.Deployment", ("apps", "v1", "Deployment")),
    (APPS_DOC, "io.k8s.api.apps.v1.ReplicaSetList", ("apps", "v1", "ReplicaSetList")),
])
def test_kind_schemas_carry_gvk_list(doc: dict, name: str, gvk: tuple) -> None:
    schema = doc["components"]["schemas"][name]
    group, version, kind = gvk
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": group, "kind": kind, "version": version}]
    assert schema["description"] and schema["type"] == "object"


def test_only_reachable_schemas_are_included() -> None:
    assert "io.k8s.api.apps.v1.Deployment" not in CORE_DOC["components"]["schemas"]
    assert "io.k8s.api.core.v1.Node" not in APPS_DOC["components"]["schemas"]
    assert "io.k8s.api.core.v1.PodTemplateSpec" in APPS_DOC["components"]["schemas"]


@pytest.mark.parametrize(("doc", "kind", "fields", "expected"), [
    (CORE_DOC, "io.k8s.api.core.v1.Pod", (), {"apiVersion", "kind", "metadata", "spec",
                                              "status"}),
    (CORE_DOC, "io.k8s.api.core.v1.Pod", ("spec",), {"containers", "volumes", "nodeName"}),
    (CORE_DOC, "io.k8s.api.core.v1.Pod", ("spec", "containers"), {"name", "image", "ports",
                                                                  "env", "resources"}),
    (CORE_DOC, "io.k8s.api.core.v1.Pod", ("spec", "containers", "ports"), {"containerPort"}),
    (CORE_DOC, "io.k8s.api.core.v1.Pod", ("metadata",), {"name", "labels", "annotations"}),
    (CORE_DOC, "io.k8s.api.core.v1.Service", ("spec", "ports"), {"port", "targetPort"}),
    (CORE_DOC, "io.k8s.api.core.v1.Node", ("status", "nodeInfo"), {"kubeletVersion"}),
    (APPS_DOC, "io.k8s.api.apps.v1.Deployment", ("spec", "template", "spec", "containers"),
     {"name", "image"}),
    (APPS_DOC, "io.k8s.api.apps.v1.Deployment", ("spec", "selector"), {"matchLabels"}),
])
def test_explain_paths_resolve(doc: dict, kind: str, fields: tuple, expected: set) -> None:
    schema = _walk(doc, kind, *fields)
    assert expected <= set(schema["properties"])
    assert all(p.get("description") for p in schema["properties"].values())


@pytest.mark.parametrize(("schema", "field", "key", "strategy"), [
    ("io.k8s.api.core.v1.PodSpec", "containers", "name", "merge"),
    ("io.k8s.api.core.v1.PodSpec", "volumes", "name", "merge,retainKeys"),
    ("io.k8s.api.core.v1.Container", "env", "name", "merge"),
    ("io.k8s.api.core.v1.Container", "ports", "containerPort", "merge"),
    ("io.k8s.api.core.v1.ServiceSpec", "ports", "port", "merge"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", "uid", "merge"),
])
def test_patch_merge_keys(schema: str, field: str, key: str, strategy: str) -> None:
    prop = SCHEMAS[schema]["properties"][field]
    assert (prop["x-kubernetes-patch-merge-key"], prop["x-kubernetes-patch-strategy"]) == \
        (key, strategy)


def test_required_fields_only_where_upstream_marks_them() -> None:
    assert SCHEMAS["io.k8s.api.core.v1.PodSpec"]["required"] == ["containers"]
    assert SCHEMAS["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    assert "required" not in SCHEMAS["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    assert "required" not in SCHEMAS["io.k8s.api.core.v1.Pod"]


TABLES = [openapi_types_apps, openapi_types_cluster, openapi_types_core, openapi_types_pod]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.__name__.rsplit(".", 1)[1])
def test_type_tables_are_well_formed(table: Any) -> None:
    """Catches a missing comma between description strings and a field typo in `required`."""
    for short, entry in table.TYPES.items():
        description, fields, *rest = entry
        assert isinstance(description, str) and isinstance(fields, dict), short
        for name, spec in fields.items():
            assert isinstance(spec, tuple) and 2 <= len(spec) <= 4, (short, name)
            assert all(isinstance(part, (str, type(None))) for part in spec), (short, name)
        required = rest[0] if rest else ()
        known = set(fields) | ({"metadata"} if short in table.KINDS else set())
        assert set(required) <= known, (short, required)
    assert table.KINDS <= set(table.TYPES)


def test_unknown_kind_gets_a_generic_schema() -> None:
    doc = openapi_v3_document("example.com", "v1", [
        ResourceSpec("widgets", "Widget", True, ["get", "patch"])])
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "example.com", "kind": "Widget", "version": "v1"}
    widget = doc["components"]["schemas"]["io.k8s.api.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"][0]["kind"] == "Widget"
    # upstream's GetOperationIDAndTags: every label of the group, `.k8s.io` dropped
    assert patch["operationId"] == "patchExampleComV1NamespacedWidget"
    assert patch["tags"] == ["exampleCom_v1"]


def test_operation_ids_and_tags_follow_upstream() -> None:
    assert operation_tag_and_prefix("", "v1") == ("core_v1", "CoreV1")
    assert operation_tag_and_prefix("rbac.authorization.k8s.io", "v1") == (
        "rbacAuthorization_v1", "RbacAuthorizationV1")
    assert operation_tag_and_prefix("stable.example.com", "v1beta1") == (
        "stableExampleCom_v1beta1", "StableExampleComV1beta1")
    assert operation_tag_and_prefix("my-group.io", "v2") == ("myGroupIo_v2", "MyGroupIoV2")


def test_documents_are_cached() -> None:
    again = openapi_v3_document("", "v1", list(CORE))
    assert again is CORE_DOC
    as_lists = ResourceSpec("pods", "Pod", True, ["get"], ["status"])
    assert as_lists == ResourceSpec("pods", "Pod", True, ("get",), ("status",))
    assert hash(as_lists)
