"""ReplicationController, ReplicaSet, Deployment, PodTemplate and Scale validation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.errors import FieldError
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)

TEMPLATE = {"metadata": {"labels": {"app": "web", "tier": "front"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}
MISMATCH = "`selector` does not match template `labels`"


def controller(kind: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": copy.deepcopy(TEMPLATE)}
    if kind != "ReplicationController":
        body["selector"] = {"matchLabels": {"app": "web"}}
    body.update(spec)
    obj = {"metadata": {"name": "web", "namespace": "default", "resourceVersion": "4"},
           "spec": body}
    apply_defaults(kind, obj)
    return obj


def messages(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


@pytest.mark.parametrize("kind", ["ReplicationController", "ReplicaSet", "Deployment"])
def test_defaulted_controllers_are_valid(kind: str) -> None:
    assert validate_create(kind, controller(kind)) == []


def test_rc_selector_must_match_template() -> None:
    rc = controller("ReplicationController", selector={"app": "other"})
    assert messages(validate_create("ReplicationController", rc)) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web","tier":"front"}: ' + MISMATCH]


def test_rc_rules() -> None:
    rc = controller("ReplicationController", replicas=-1)
    rc["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    rc["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 10
    assert messages(validate_create("ReplicationController", rc)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
        '"Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicationController is not Supported",
    ]


def test_rc_without_selector_or_template() -> None:
    rc = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1}}
    assert messages(validate_create("ReplicationController", rc)) == [
        "spec.selector: Required value", "spec.template: Required value"]


def test_template_spec_is_validated_with_prefixed_paths() -> None:
    rc = controller("ReplicationController")
    rc["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    rc["spec"]["template"]["metadata"]["labels"]["bad key"] = "x"
    rc["spec"]["selector"] = {"app": "web"}
    assert [(e.type, e.field) for e in validate_create("ReplicationController", rc)] == [
        ("FieldValueInvalid", "spec.template.labels"),
        ("FieldValueRequired", "spec.template.spec.containers[0].image"),
    ]


@pytest.mark.parametrize("kind", ["ReplicaSet", "Deployment"])
def test_apps_selector_required(kind: str) -> None:
    obj = controller(kind)
    del obj["spec"]["selector"]
    assert messages(validate_create(kind, obj)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web","tier":"front"}: ' + MISMATCH,
    ]


@pytest.mark.parametrize(("selector", "expected"), [
    ({"matchLabels": {"app": "db"}},
     [("spec.template.metadata.labels", MISMATCH)]),
    ({}, [("spec.selector", "empty selector is invalid for deployment")]),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}, []),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]},
     [("spec.template.metadata.labels", MISMATCH)]),
    ({"matchExpressions": [{"key": "tier", "operator": "In"}]},
     [("spec.selector.matchExpressions[0].values",
       "must be specified when `operator` is 'In' or 'NotIn'"),
      ("spec.selector", "invalid label selector")]),
    ({"matchExpressions": [{"key": "tier", "operator": "Like", "values": ["a"]}]},
     [("spec.selector.matchExpressions[0].operator", "not a valid selector operator"),
      ("spec.selector", "invalid label selector")]),
])
def test_apps_selectors(selector: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    for kind in ("ReplicaSet", "Deployment"):
        obj = controller(kind, selector=selector)
        assert [(e.field, e.detail) for e in validate_create(kind, obj)] == expected


@pytest.mark.parametrize(("strategy", "expected"), [
    ({"type": "Recreate"}, []),
    ({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}},
     ['spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is '
      "'Recreate'"]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}},
     ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when "
      "`maxSurge` is 0"]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "1", "maxUnavailable": "150%"}},
     ['spec.strategy.rollingUpdate.maxSurge: Invalid value: "1": a valid percent string must be '
      "a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
      "validation is '[0-9]+%')",
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater '
      "than 100%"]),
    ({"type": "Blue"},
     ['spec.strategy: Unsupported value: {"type":"Blue"}: supported values: "Recreate", '
      '"RollingUpdate"']),
])
def test_deployment_strategy(strategy: dict[str, Any], expected: list[str]) -> None:
    deployment = controller("Deployment", strategy=strategy)
    assert messages(validate_create("Deployment", deployment)) == expected


def test_deployment_progress_deadline() -> None:
    deployment = controller("Deployment", minReadySeconds=600, progressDeadlineSeconds=600)
    assert messages(validate_create("Deployment", deployment)) == [
        "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"]


@pytest.mark.parametrize("kind", ["ReplicaSet", "Deployment"])
def test_apps_selector_is_immutable(kind: str) -> None:
    old = controller(kind)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    assert validate_update(kind, new, old) == []
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    assert messages(validate_update(kind, new, old)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"front"}}: '
        "field is immutable"]


def test_rc_selector_may_change() -> None:
    old = controller("ReplicationController")
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"app": "web", "tier": "front"}
    assert validate_update("ReplicationController", new, old) == []


@pytest.mark.parametrize(("kind", "status", "expected"), [
    ("ReplicationController", {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2}, []),
    ("ReplicaSet", {"replicas": 1, "readyReplicas": 2},
     ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"]),
    ("ReplicaSet", {"replicas": -1, "fullyLabeledReplicas": -1, "readyReplicas": -1,
                    "availableReplicas": -1},
     ["status.replicas: Invalid value: -1: must be greater than or equal to 0",
      "status.fullyLabeledReplicas: Invalid value: -1: must be greater than or equal to 0",
      "status.readyReplicas: Invalid value: -1: must be greater than or equal to 0",
      "status.availableReplicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("Deployment", {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     ["status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"]),
    ("Deployment", {"replicas": 3, "updatedReplicas": 4},
     ["status.updatedReplicas: Invalid value: 4: cannot be greater than status.replicas"]),
])
def test_status_updates(kind: str, status: dict[str, Any], expected: list[str]) -> None:
    old = controller(kind)
    new = copy.deepcopy(old)
    new["status"] = status
    assert messages(validate_status_update(kind, new, old)) == expected


def test_deployment_collision_count_never_decreases() -> None:
    old = controller("Deployment")
    old["status"] = {"collisionCount": 2}
    new = copy.deepcopy(old)
    new["status"] = {"collisionCount": 1}
    assert messages(validate_status_update("Deployment", new, old)) == [
        "status.collisionCount: Invalid value: 1: cannot be decremented"]


def test_pod_template_kind() -> None:
    pt = {"metadata": {"name": "tpl", "namespace": "default"}, "template": copy.deepcopy(TEMPLATE)}
    apply_defaults("PodTemplate", pt)
    assert validate_create("PodTemplate", pt) == []
    pt["template"]["spec"]["containers"] = []
    assert messages(validate_create("PodTemplate", pt)) == [
        "template.spec.containers: Required value"]


@pytest.mark.parametrize(("replicas", "expected"), [
    (0, []), (3, []),
    (-1, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("3", ['spec.replicas: Invalid value: "string": must be an integer']),
])
def test_scale(replicas: Any, expected: list[str]) -> None:
    scale = {"metadata": {"name": "web", "namespace": "default", "resourceVersion": "1"},
             "spec": {"replicas": replicas}}
    assert messages(validate_create("Scale", scale)) == expected
    assert messages(validate_update("Scale", scale, scale)) == expected
