"""HorizontalPodAutoscaler defaults, validation, the v1 conversion and the table
(api/hpa.py, api/hpa_v1.py, api/tables.py)."""

from __future__ import annotations

import copy

import pytest

from minikube_py.api import hpa, hpa_v1
from minikube_py.api.defaults import apply_defaults
from minikube_py.api.tables import column_definitions, row_cells
from minikube_py.api.validation import HPA_V1, validate_create


def v2(**spec) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "web"}, "maxReplicas": 5, **spec}}


def messages(obj: dict, kind: str = "HorizontalPodAutoscaler") -> list[str]:
    return [f"{e.field}: {e.detail}" for e in validate_create(kind, obj)]


def test_defaults_are_min_one_and_cpu_80_percent():
    obj = v2()
    apply_defaults("HorizontalPodAutoscaler", obj)
    assert obj["spec"]["minReplicas"] == 1
    assert obj["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in obj["spec"]


def test_a_given_behavior_is_filled_in_with_upstreams_rules():
    obj = v2(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    apply_defaults("HorizontalPodAutoscaler", obj)
    behavior = obj["spec"]["behavior"]
    assert behavior["scaleDown"] == {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                                     "policies": [{"type": "Percent", "value": 100,
                                                   "periodSeconds": 15}]}
    assert behavior["scaleUp"]["policies"][0] == {"type": "Pods", "value": 4, "periodSeconds": 15}


def test_the_controllers_behavior_uses_the_downscale_flag_when_unset():
    assert hpa.effective_behavior({}, 42)["scaleDown"]["stabilizationWindowSeconds"] == 42
    assert hpa.effective_behavior({"behavior": {"scaleDown": {
        "stabilizationWindowSeconds": 7}}}, 42)["scaleDown"]["stabilizationWindowSeconds"] == 7


def test_a_valid_hpa_passes():
    obj = v2()
    apply_defaults("HorizontalPodAutoscaler", obj)
    assert messages(obj) == []


@pytest.mark.parametrize(("spec", "expected"), [
    ({"minReplicas": 0}, "spec.minReplicas: must be greater than or equal to 1"),
    ({"minReplicas": 6}, "spec.maxReplicas: must be greater than or equal to `minReplicas`"),
    ({"maxReplicas": 0}, "spec.maxReplicas: must be greater than 0"),
    ({"scaleTargetRef": {"kind": "Deployment"}}, "spec.scaleTargetRef.name: "),
    ({"metrics": [{"type": "Bogus"}]}, ('spec.metrics[0].type: supported values: "Object", '
     '"Pods", "Resource", "ContainerResource", "External"')),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization"}}}]},
     ("spec.metrics[0].resource.target.averageUtilization: must set either a target raw value "
     "or a target utilization")),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "AverageValue", "averageValue": "-1"}}}]},
     "spec.metrics[0].resource.target.averageValue: must be positive"),
    ({"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0,
                                             "periodSeconds": 15}]}}},
     "spec.behavior.scaleUp.policies[0].value: must be greater than zero"),
    ({"behavior": {"scaleDown": {"stabilizationWindowSeconds": 3601}}},
     "spec.behavior.scaleDown.stabilizationWindowSeconds: must be less than or equal to 3600"),
])
def test_invalid_specs_get_upstreams_messages(spec, expected):
    obj = v2(**spec)
    apply_defaults("HorizontalPodAutoscaler", obj)
    assert any(m.startswith(expected) for m in messages(obj)), messages(obj)


def test_v1_round_trips_through_v2_without_losing_v2_fields():
    stored = v2(minReplicas=1, metrics=[
        {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 50}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {
            "type": "AverageValue", "averageValue": "100Mi"}}}],
        behavior={"scaleDown": {"stabilizationWindowSeconds": 10}})
    stored["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 70, "averageValue": "140m"}}}],
        "conditions": [{"type": "AbleToScale", "status": "True"}]}
    original = copy.deepcopy(stored)
    view = hpa_v1.from_v2(stored)
    assert stored == original  # never mutates
    assert view["apiVersion"] == "autoscaling/v1"
    assert view["spec"]["targetCPUUtilizationPercentage"] == 50
    assert "metrics" not in view["spec"] and "behavior" not in view["spec"]
    assert view["status"]["currentCPUUtilizationPercentage"] == 70
    assert hpa_v1.CONDITIONS in view["metadata"]["annotations"]
    back = hpa_v1.to_v2(view)
    assert back["spec"] == original["spec"]
    assert back["status"]["conditions"] == original["status"]["conditions"]
    assert back["metadata"].get("annotations") is None


def test_a_v1_hpa_without_a_target_gets_cpu_80_percent():
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "x", "namespace": "d"}, "spec": {"scaleTargetRef": {"kind": "Deployment",
                                                                 "name": "x"}, "maxReplicas": 3}}
    apply_defaults("HorizontalPodAutoscaler", v1)
    assert v1["spec"] == {"scaleTargetRef": {"kind": "Deployment", "name": "x"},
                          "maxReplicas": 3, "minReplicas": 1}
    assert hpa_v1.to_v2(v1)["spec"]["metrics"][0]["resource"]["target"][
        "averageUtilization"] == 80
    assert messages(v1, HPA_V1) == []
    v1["spec"]["minReplicas"] = 4
    assert messages(v1, HPA_V1) == [
        "spec.maxReplicas: must be greater than or equal to `minReplicas`"]


def test_the_table_prints_reference_targets_and_bounds():
    obj = v2(minReplicas=1, metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}])
    obj["metadata"]["creationTimestamp"] = "2027-01-15T08:00:00Z"
    names = [c["name"] for c in column_definitions("HorizontalPodAutoscaler")]
    assert names == ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    assert row_cells("HorizontalPodAutoscaler", obj, 0)[:6] == [
        "web", "Deployment/web", "cpu: <unknown>/50%", 1, 5, 0]
    obj["status"] = {"currentReplicas": 2, "currentMetrics": [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 45}}}]}
    assert row_cells("HorizontalPodAutoscaler", obj, 0)[2] == "cpu: 45%/50%"
