"""apps/v1 DaemonSet, StatefulSet and ControllerRevision: upstream's defaults, validation
messages and Table rows (printDaemonSet, printStatefulSet, printControllerRevision)."""

from __future__ import annotations

import copy

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.tables import row_cells
from minikube_py.api.validation import validate_create, validate_update

TEMPLATE = {"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}


def ds(**spec) -> dict:
    obj = {"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": {"name": "d", "namespace": "ns"},
           "spec": {"selector": {"matchLabels": {"app": "a"}},
                    "template": copy.deepcopy(TEMPLATE), **spec}}
    apply_defaults("DaemonSet", obj)
    return obj


def sts(**spec) -> dict:
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "1"},
           "spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "a"}},
                    "template": copy.deepcopy(TEMPLATE), **spec}}
    apply_defaults("StatefulSet", obj)
    return obj


def messages(kind: str, obj: dict) -> list[str]:
    return [e.message() for e in validate_create(kind, obj)]


def test_defaults() -> None:
    spec = ds()["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert ds(updateStrategy={"type": "OnDelete"})["spec"]["updateStrategy"] == {
        "type": "OnDelete"}
    spec = sts()["spec"]
    assert (spec["replicas"], spec["podManagementPolicy"], spec["revisionHistoryLimit"]) == (
        1, "OrderedReady", 10)
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain",
                                                            "whenScaled": "Retain"}


@pytest.mark.parametrize(("spec", "expected"), [
    ({"updateStrategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     ("spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when "
     "maxSurge is 0")),
    ({"updateStrategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": "120%", "maxSurge": 0}}},
     ('spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "120%": must not be '
     "greater than 100%")),
    ({"updateStrategy": {"type": "Sometimes"}},
     ('spec.updateStrategy: Unsupported value: {"type":"Sometimes"}: supported values: '
      '"RollingUpdate", "OnDelete"')),
    ({"selector": {}}, ("spec.selector: Invalid value: {}: empty selector is invalid for "
     "daemonset")),
])
def test_daemon_set_validation(spec: dict, expected: str) -> None:
    assert expected in messages("DaemonSet", ds(**spec))


def test_daemon_set_selector_is_immutable() -> None:
    old = ds()
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "a", "x": "y"}}
    new["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    assert any("spec.selector" in e.message() and "field is immutable" in e.message()
               for e in validate_update("DaemonSet", new, old))


@pytest.mark.parametrize(("spec", "expected"), [
    ({"podManagementPolicy": "Random"},
     ('spec.podManagementPolicy: Invalid value: "Random": must be \'OrderedReady\' or '
     "'Parallel'")),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
     "spec.updateStrategy.rollingUpdate: Invalid value"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"}},
     'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep"'),
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
])
def test_stateful_set_validation(spec: dict, expected: str) -> None:
    assert any(expected in m for m in messages("StatefulSet", sts(**spec)))


def test_stateful_set_mounts_its_claim_templates_and_limits_updates() -> None:
    obj = sts(volumeClaimTemplates=[{"metadata": {"name": "www"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    obj["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "www", "mountPath": "/data"}]
    assert messages("StatefulSet", obj) == []
    new = copy.deepcopy(obj)
    new["spec"]["replicas"] = 4
    assert validate_update("StatefulSet", new, obj) == []
    new["spec"]["serviceName"] = "other"
    assert [e.message() for e in validate_update("StatefulSet", new, obj)] == [
        ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
        "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]


def test_controller_revision_data_is_required_and_immutable() -> None:
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "r", "namespace": "ns", "resourceVersion": "1"},
                "revision": 1}
    assert messages("ControllerRevision", revision) == ["data: Required value: data is mandatory"]
    revision["data"] = {"a": 1}
    changed = {**revision, "data": {"a": 2}, "revision": 2}
    assert [e.message() for e in validate_update("ControllerRevision", changed, revision)] == [
        'data: Invalid value: {"a":2}: field is immutable']


def test_table_rows() -> None:
    obj = ds()
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    obj["status"] = {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                     "updatedNumberScheduled": 1, "numberAvailable": 2}
    cells = row_cells("DaemonSet", obj, 0.0)
    assert cells[:7] == ["d", 3, 3, 2, 1, 2, "disk=ssd"]
    assert cells[-3:] == ["c", "x", "app=a"]
    obj = sts(replicas=3)
    obj["status"] = {"readyReplicas": 1}
    assert row_cells("StatefulSet", obj, 0.0)[:2] == ["web", "1/3"]
    revision = {"metadata": {"name": "web-1", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}]},
        "revision": 4}
    assert row_cells("ControllerRevision", revision, 0.0)[:3] == [
        "web-1", "statefulset.apps/web", 4]
    assert row_cells("ControllerRevision", {"metadata": {"name": "x"}}, 0.0)[1] == "<none>"


def test_protobuf_round_trip() -> None:
    """The kinds' protobuf (from api/kinds/protobuf.json) carries every field we write,
    int-or-string values and a revision's raw `data` included."""
    from minikube_py.api.protobuf import decode_object
    from minikube_py.api.protobuf_encode import encode_object

    obj = ds(updateStrategy={"type": "RollingUpdate",
                             "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}})
    obj["status"] = {"desiredNumberScheduled": 3, "numberReady": 2, "observedGeneration": 1}
    assert decode_object(encode_object(obj)) == obj
    obj = sts(volumeClaimTemplates=[{"metadata": {"name": "www"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    apply_defaults("StatefulSet", obj)
    assert decode_object(encode_object(obj)) == obj
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "web-1", "namespace": "ns"}, "revision": 2,
                "data": {"spec": {"template": {"$patch": "replace"}}}}
    assert decode_object(encode_object(revision)) == revision
