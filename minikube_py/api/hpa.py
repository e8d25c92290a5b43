"""autoscaling/v2 HorizontalPodAutoscaler: defaults, validation and the behavior defaults.

Kubernetes pieces: pkg/apis/autoscaling/v2/defaults.go (SetDefaults_HorizontalPodAutoscaler:
minReplicas 1, a CPU 80 % Utilization metric when none is given, and — when `behavior` is set
— upstream's scaling rules filled in), pkg/apis/autoscaling/validation (ValidateHorizontal-
PodAutoscaler: the target reference, replica bounds, metric sources and targets, behavior
policies) and the controller's defaults for an HPA without `behavior`
(GenerateHPAScaleUpRules/GenerateHPAScaleDownRules). Only resource metrics are served by the
metrics API here, but every source type validates as upstream. Pure: no I/O.
"""

from __future__ import annotations

import copy
from typing import Any

from . import quantity
from .errors import invalid, not_supported, required

Obj = dict[str, Any]
Errs = list

DEFAULT_CPU_UTILIZATION = 80
#: pkg/apis/autoscaling/v2/defaults.go
SCALE_UP_DEFAULT: Obj = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15},
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN_DEFAULT: Obj = {"selectPolicy": "Max", "policies": [
    {"type": "Percent", "value": 100, "periodSeconds": 15}]}
#: the controller's --horizontal-pod-autoscaler-downscale-stabilization (5m)
DOWNSCALE_STABILIZATION = 300
METRIC_TYPES = ("Object", "Pods", "Resource", "ContainerResource", "External")
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
POLICY_TYPES = ("Pods", "Percent")
SELECT_POLICIES = ("Max", "Min", "Disabled")
MAX_PERIOD = 1800
MAX_STABILIZATION = 3600


def _rules(rules: Obj | None, default: Obj) -> Obj:
    """upstream GenerateHPAScale{Up,Down}Rules: unset fields take the default's."""
    out = copy.deepcopy(default)
    for key, value in (rules or {}).items():
        if value is not None:
            out[key] = copy.deepcopy(value)
    return out


def set_defaults(hpa: Obj) -> None:
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if hpa.get("apiVersion") == "autoscaling/v1":  # v1's defaulter sets minReplicas only
        return
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _rules(behavior.get("scaleUp"), SCALE_UP_DEFAULT)
        behavior["scaleDown"] = _rules(behavior.get("scaleDown"), SCALE_DOWN_DEFAULT)


def effective_behavior(spec: Obj, downscale_window: int = DOWNSCALE_STABILIZATION) -> Obj:
    """The behavior the controller uses: the spec's, else upstream's defaults with the
    controller's downscale stabilization window."""
    behavior = spec.get("behavior") or {}
    down = _rules(behavior.get("scaleDown"), SCALE_DOWN_DEFAULT)
    if down.get("stabilizationWindowSeconds") is None:
        down["stabilizationWindowSeconds"] = downscale_window
    return {"scaleUp": _rules(behavior.get("scaleUp"), SCALE_UP_DEFAULT), "scaleDown": down}


# -- validation -------------------------------------------------------------------------------
def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate(hpa: Obj, errs: Errs) -> None:
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        errs.append(required("spec", ""))
        return
    ref = spec.get("scaleTargetRef")
    if not isinstance(ref, dict):
        errs.append(required("spec.scaleTargetRef", ""))
    else:
        for field in ("kind", "name"):
            if not ref.get(field):
                errs.append(required(f"spec.scaleTargetRef.{field}", ""))
            elif "/" in str(ref[field]) or "%" in str(ref[field]) or ref[field] in (".", ".."):
                errs.append(invalid(f"spec.scaleTargetRef.{field}", ref[field],
                                    "may not contain '/' or '%' and may not be '.' or '..'"))
    minimum, maximum = spec.get("minReplicas"), spec.get("maxReplicas")
    if minimum is not None and (not _int(minimum) or minimum < 1):
        errs.append(invalid("spec.minReplicas", minimum, "must be greater than or equal to 1"))
    if not _int(maximum) or maximum < 1:
        errs.append(invalid("spec.maxReplicas", maximum, "must be greater than 0"))
    elif _int(minimum) and maximum < minimum:
        errs.append(invalid("spec.maxReplicas", maximum,
                            "must be greater than or equal to `minReplicas`"))
    for i, metric in enumerate(spec.get("metrics") or []):
        _metric(metric, f"spec.metrics[{i}]", errs)
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key in ("scaleUp", "scaleDown"):
            if isinstance(behavior.get(key), dict):
                _scaling_rules(behavior[key], f"spec.behavior.{key}", errs)


def _metric(metric: Any, path: str, errs: Errs) -> None:
    if not isinstance(metric, dict):
        errs.append(invalid(path, metric, "must be an object"))
        return
    kind = metric.get("type")
    if not kind:
        errs.append(required(f"{path}.type", "must specify a metric source type"))
        return
    if kind not in METRIC_TYPES:
        errs.append(not_supported(f"{path}.type", kind, list(METRIC_TYPES)))
        return
    field = kind[0].lower() + kind[1:]
    source = metric.get(field)
    if not isinstance(source, dict):
        errs.append(required(f"{path}.{field}", "must populate information for the given metric source"))
        return
    if kind in ("Resource", "ContainerResource"):
        if not source.get("name"):
            errs.append(required(f"{path}.{field}.name", "must specify a resource name"))
        if kind == "ContainerResource" and not source.get("container"):
            errs.append(required(f"{path}.{field}.container", "must specify a container"))
    _target(source.get("target"), f"{path}.{field}.target", kind, errs)


def _target(target: Any, path: str, kind: str, errs: Errs) -> None:
    if not isinstance(target, dict):
        errs.append(required(path, ""))
        return
    ttype = target.get("type")
    if ttype not in TARGET_TYPES:
        errs.append(required(f"{path}.type", "must specify a metric target type") if not ttype
                    else not_supported(f"{path}.type", ttype, list(TARGET_TYPES)))
        return
    utilization = target.get("averageUtilization")
    if ttype == "Utilization":
        if utilization is None:
            errs.append(required(f"{path}.averageUtilization",
                                 "must set either a target raw value or a target utilization"))
        elif not _int(utilization) or utilization < 1:
            errs.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
        if kind not in ("Resource", "ContainerResource"):
            errs.append(invalid(f"{path}.type", ttype, "may only be Utilization for resource metrics"))
    for field in ("value", "averageValue"):
        if field in target and target[field] is not None:
            try:
                amount = quantity.parse_quantity(str(target[field]))
            except ValueError:
                errs.append(invalid(f"{path}.{field}", target[field], quantity.FORMAT_ERROR))
                continue
            if amount <= 0:
                errs.append(invalid(f"{path}.{field}", target[field], "must be positive"))
    if ttype == "AverageValue" and target.get("averageValue") is None:
        errs.append(required(f"{path}.averageValue", "must set either a target raw value or a "
                             "target utilization"))
    if ttype == "Value" and target.get("value") is None:
        errs.append(required(f"{path}.value", "must set either a target raw value or a "
                             "target utilization"))


def _scaling_rules(rules: Obj, path: str, errs: Errs) -> None:
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and (not _int(window) or not 0 <= window <= MAX_STABILIZATION):
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                            f"must be less than or equal to {MAX_STABILIZATION}"
                            if _int(window) and window > 0 else "must be greater than or equal to 0"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", select, list(SELECT_POLICIES)))
    policies = rules.get("policies")
    if select != "Disabled" and policies is not None and len(policies) == 0:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies or []):
        ppath = f"{path}.policies[{i}]"
        if not isinstance(policy, dict):
            errs.append(invalid(ppath, policy, "must be an object"))
            continue
        if policy.get("type") not in POLICY_TYPES:
            errs.append(not_supported(f"{ppath}.type", policy.get("type"), list(POLICY_TYPES)))
        value = policy.get("value")
        if not _int(value) or value <= 0:
            errs.append(invalid(f"{ppath}.value", value, "must be greater than zero"))
        period = policy.get("periodSeconds")
        if not _int(period) or period <= 0:
            errs.append(invalid(f"{ppath}.periodSeconds", period, "must be greater than zero"))
        elif period > MAX_PERIOD:
            errs.append(invalid(f"{ppath}.periodSeconds", period,
                                f"must be less than or equal to {MAX_PERIOD}"))
