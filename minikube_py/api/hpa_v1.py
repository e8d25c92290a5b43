"""autoscaling/v1 HorizontalPodAutoscalers as views of the stored autoscaling/v2 objects.

Kubernetes piece: pkg/apis/autoscaling/v1/conversion.go. v1 knows one metric,
`targetCPUUtilizationPercentage` (and `status.currentCPUUtilizationPercentage`); everything
else v2 has rides in annotations so a v1 round trip loses nothing, under upstream's names:
`autoscaling.alpha.kubernetes.io/metrics` (the other metrics), `.../current-metrics`,
`.../conditions` and `.../behavior`. An HPA written through v1 without a CPU target gets
upstream's default, 80 %. Pure functions that never mutate their input; `kubectl autoscale`
writes through v1.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from . import hpa

Obj = dict[str, Any]
V1, V2 = "autoscaling/v1", "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
_ANNOTATIONS = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)


def _is_cpu_utilization(metric: Any) -> bool:
    return isinstance(metric, dict) and metric.get("type") == "Resource" \
        and (metric.get("resource") or {}).get("name") == "cpu" \
        and ((metric.get("resource") or {}).get("target") or {}).get("type") == "Utilization"


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def _load(text: Any) -> Any:
    try:
        return orjson.loads(text) if isinstance(text, str) else None
    except orjson.JSONDecodeError:
        return None


def from_v2(obj: Obj) -> Obj:
    """The v1 view of a stored v2 HPA."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1
    md = out.setdefault("metadata", {})
    annotations = dict(md.get("annotations") or {})
    spec = out.get("spec") or {}
    metrics = spec.pop("metrics", None) or []
    others = [m for m in metrics if not _is_cpu_utilization(m)]
    for metric in metrics:
        if _is_cpu_utilization(metric):
            spec["targetCPUUtilizationPercentage"] = metric["resource"]["target"].get(
                "averageUtilization")
            break
    if others:
        annotations[METRICS] = _dump(others)
    behavior = spec.pop("behavior", None)
    if behavior is not None:
        annotations[BEHAVIOR] = _dump(behavior)
    status = out.get("status")
    if isinstance(status, dict):
        current = status.pop("currentMetrics", None) or []
        rest = []
        for metric in current:
            resource = (metric or {}).get("resource") or {}
            if metric.get("type") == "Resource" and resource.get("name") == "cpu" \
                    and (resource.get("current") or {}).get("averageUtilization") is not None:
                status["currentCPUUtilizationPercentage"] = resource["current"]["averageUtilization"]
            else:
                rest.append(metric)
        if rest:
            annotations[CURRENT_METRICS] = _dump(rest)
        conditions = status.pop("conditions", None)
        if conditions:
            annotations[CONDITIONS] = _dump(conditions)
        if "currentReplicas" not in status:
            status["currentReplicas"] = 0
        if "desiredReplicas" not in status:
            status["desiredReplicas"] = 0
    if annotations:
        md["annotations"] = annotations
    return out


def to_v2(obj: Obj) -> Obj:
    """The stored v2 form of a v1 HPA."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V2
    md = out.setdefault("metadata", {}) if isinstance(out.get("metadata"), dict) else {}
    annotations = dict(md.get("annotations") or {})
    extra = {key: _load(annotations.pop(key, None)) for key in _ANNOTATIONS}
    if "annotations" in md:
        if annotations:
            md["annotations"] = annotations
        else:
            del md["annotations"]
    spec = out.get("spec")
    if isinstance(spec, dict):
        target = spec.pop("targetCPUUtilizationPercentage", None)
        metrics: list = []
        if target is not None or not isinstance(extra[METRICS], list):
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization",
                "averageUtilization": hpa.DEFAULT_CPU_UTILIZATION if target is None else target}}})
        if isinstance(extra[METRICS], list):
            metrics.extend(extra[METRICS])
        spec["metrics"] = metrics
        if isinstance(extra[BEHAVIOR], dict):
            spec["behavior"] = extra[BEHAVIOR]
    status = out.get("status")
    if isinstance(status, dict):
        current = status.pop("currentCPUUtilizationPercentage", None)
        metrics = []
        if current is not None:
            metrics.append({"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": current}}})
        if isinstance(extra[CURRENT_METRICS], list):
            metrics.extend(extra[CURRENT_METRICS])
        if metrics:
            status["currentMetrics"] = metrics
        if isinstance(extra[CONDITIONS], list):
            status["conditions"] = extra[CONDITIONS]
    return out
