"""The apps/v1 DaemonSet, StatefulSet and ControllerRevision schemas in /openapi/v3 and v2:
described from the kinds' data (no table was typed for them), every reference resolving, the
fields `kubectl explain` and client-side apply walk present."""

from __future__ import annotations

import orjson

from minikube_py.apiserver.openapi import ResourceSpec, openapi_v3_document
from minikube_py.apiserver.openapi_v2 import V2_REF, swagger_document

ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
APPS = [ResourceSpec("daemonsets", "DaemonSet", True, ALL, ("status",)),
        ResourceSpec("statefulsets", "StatefulSet", True, ALL, ("status", "scale")),
        ResourceSpec("controllerrevisions", "ControllerRevision", True, ALL, ())]


def test_apps_kinds_are_described_and_resolve() -> None:
    v3 = openapi_v3_document("apps", "v1", APPS)
    schemas = v3["components"]["schemas"]
    ds = schemas["io.k8s.api.apps.v1.DaemonSet"]
    assert ds["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "DaemonSet", "version": "v1"}]
    strategy = schemas["io.k8s.api.apps.v1.RollingUpdateDaemonSet"]["properties"]
    assert {"maxSurge", "maxUnavailable"} <= set(strategy)
    sts_spec = schemas["io.k8s.api.apps.v1.StatefulSetSpec"]["properties"]
    assert {"volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy", "ordinals",
            "podManagementPolicy"} <= set(sts_spec)
    assert "data" in schemas["io.k8s.api.apps.v1.ControllerRevision"]["properties"]
    assert "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}/scale" in v3["paths"]
    swagger = swagger_document([v3])
    text = orjson.dumps(swagger).decode()
    refs = {part.split('"', 1)[0] for part in text.split('"$ref":"' + V2_REF)[1:]}
    assert refs and refs <= set(swagger["definitions"])
    assert "io.k8s.api.apps.v1.StatefulSetList" in swagger["definitions"]
