"""The HPA's arithmetic: replicas from resource metrics, then behavior (stabilization and
rate policies) and the min/max bounds. Pure functions, unit-tested without a cluster.

Kubernetes pieces: pkg/controller/podautoscaler/replica_calculator.go (GetResourceReplicas,
GetRawResourceReplicas: usage ratio against the target in milli-units, the 0.1 tolerance, pods
without metrics assumed at 100 % of request (or the target, if higher) when scaling down and
0 % when scaling up, unready pods counted at 0 % only on scale-up) and horizontal.go (stabilizeRecommendationWithBehaviors,
convertDesiredReplicasWithBehaviorRate, getReplicasChangePerPeriod, the ScalingLimited
reasons).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TOLERANCE = 0.1


@dataclass(frozen=True)
class PodSample:
    """One pod of the target, in milli-units as upstream's metrics client counts
    (Quantity.MilliValue): its request (0 = none) and its usage (None = no metric)."""

    name: str
    request: int
    usage: int | None
    ready: bool = True


@dataclass(frozen=True)
class Proposal:
    replicas: int
    utilization: int | None  # percent of request (Utilization targets)
    average: int             # average usage per pod, milli-units


class MetricError(Exception):
    """Why a metric cannot be computed (upstream's FailedGetResourceMetric messages)."""


def _ratio(pods: list[PodSample], target_utilization: int | None,
           target_average: int | None) -> tuple[float, int | None, int]:
    """GetResourceUtilizationRatio / the raw ratio: (usage ratio, utilization %, average)."""
    total = sum(p.usage or 0 for p in pods)
    if target_utilization is not None:
        requests = sum(p.request for p in pods)
        if requests == 0:
            raise MetricError("no metrics returned matched known pods")
        utilization = total * 100 // requests
        return utilization / target_utilization, utilization, total // len(pods)
    assert target_average is not None
    return total / (target_average * len(pods)), None, total // len(pods)


def resource_replicas(current: int, pods: list[PodSample], *, target_utilization: int | None,
                      target_average: int | None, resource: str = "cpu",
                      tolerance: float = TOLERANCE) -> Proposal:
    """Replicas for one Resource metric (Utilization when `target_utilization` is set, else
    AverageValue, `target_average` in milli-units)."""
    if not pods:
        raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned "
                          "from resource metrics API")
    if target_utilization is not None:
        for p in pods:
            if p.request <= 0:
                raise MetricError(f"missing request for {resource} in pod {p.name}")
    measured = [p for p in pods if p.usage is not None and p.ready]
    missing = [p for p in pods if p.usage is None]
    unready = [p for p in pods if p.usage is not None and not p.ready]
    if not measured:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, utilization, average = _ratio(measured, target_utilization, target_average)
    rebalance_unready = bool(unready) and ratio > 1.0
    if not missing and not rebalance_unready:
        if abs(1.0 - ratio) <= tolerance:
            return Proposal(current, utilization, average)
        return Proposal(math.ceil(ratio * len(measured)), utilization, average)
    # the pods without a reading: assume what is least likely to make us scale wrongly
    assumed = list(measured)
    if ratio < 1.0:  # scaling down: missing pods use all of their request (or the target)
        for p in missing:
            full = p.request * max(100, target_utilization) // 100 \
                if target_utilization is not None else (target_average or 0)
            assumed.append(PodSample(p.name, p.request, full))
    elif ratio > 1.0:  # scaling up: missing pods use nothing
        assumed.extend(PodSample(p.name, p.request, 0) for p in missing)
    if rebalance_unready:  # and so do unready ones, on the way up
        assumed.extend(PodSample(p.name, p.request, 0) for p in unready)
    assumed = [p for p in assumed if p.usage is not None]
    new_ratio, _, _ = _ratio(assumed, target_utilization, target_average)
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1.0 < new_ratio) \
            or (new_ratio < 1.0 < ratio):
        return Proposal(current, utilization, average)
    replicas = math.ceil(new_ratio * len(assumed))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        replicas = current
    return Proposal(replicas, utilization, average)


# -- behavior -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Limited:
    replicas: int
    reason: str   # ScalingLimited reason ("" = DesiredWithinRange)
    message: str


def stabilize(now: float, current: int, desired: int, history: list[tuple[float, int]],
              up_window: int, down_window: int) -> tuple[int, str]:
    """stabilizeRecommendationWithBehaviors: the highest recommendation of the scale-down
    window caps a shrink, the lowest of the scale-up window caps a growth. `history` is
    (time, recommendation), this one not yet added. Returns (replicas, reason)."""
    up, down = desired, desired
    for when, replicas in history:
        if when > now - up_window:
            up = min(up, replicas)
        if when > now - down_window:
            down = max(down, replicas)
    out = current
    out = max(out, up)
    out = min(out, down)
    reason = ""
    if out != desired:
        reason = "ScaleUpStabilized" if desired > current else "ScaleDownStabilized"
    return out, reason


def _change_in_period(events: list[tuple[float, int]], now: float, period: int) -> int:
    """getReplicasChangePerPeriod: the replicas added (or removed) within the period."""
    return sum(change for when, change in events if when > now - period)


def _limit(rules: dict, current: int, now: float, events: list[tuple[float, int]],
           up: bool) -> int | None:
    """calculateScaleUpLimitWithScalingRules / ...ScaleDownLimit...: the furthest the
    policies let replicas move now (None: scaling this way is Disabled)."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return None
    results = []
    for policy in rules.get("policies") or []:
        changed = _change_in_period(events, now, int(policy["periodSeconds"]))
        start = current - changed  # replicas at the start of the period
        if policy["type"] == "Pods":
            limit = start + policy["value"] if up else start - policy["value"]
        elif up:
            limit = math.ceil(start * (1 + policy["value"] / 100))
        else:
            limit = math.ceil(start * (1 - policy["value"] / 100))
        results.append(limit)
    if not results:
        return current
    if up:
        return max(results) if select == "Max" else min(results)
    return min(results) if select == "Max" else max(results)


def apply_rate(behavior: dict, current: int, desired: int, minimum: int, maximum: int,
               now: float, up_events: list[tuple[float, int]],
               down_events: list[tuple[float, int]]) -> Limited:
    """convertDesiredReplicasWithBehaviorRate plus the bounds, with upstream's reasons."""
    if desired > current:
        limit = _limit(behavior["scaleUp"], current, now, up_events, True)
        if limit is None:
            limit = current
        limit = max(limit, current)
        if limit < maximum:
            if desired > limit:
                return Limited(limit, "ScaleUpLimit",
                               "the desired replica count is increasing faster than the maximum scale rate")
            return Limited(desired, "", "")
        if desired > maximum:
            return Limited(maximum, "TooManyReplicas",
                           "the desired replica count is more than the maximum replica count")
        return Limited(desired, "", "")
    if desired < current:
        limit = _limit(behavior["scaleDown"], current, now, down_events, False)
        if limit is None:
            limit = current
        limit = min(limit, current)
        if limit > minimum:
            if desired < limit:
                return Limited(limit, "ScaleDownLimit",
                               "the desired replica count is decreasing faster than the maximum scale rate")
            return Limited(desired, "", "")
        if desired < minimum:
            return Limited(minimum, "TooFewReplicas",
                           "the desired replica count is less than the minimum replica count")
        return Limited(desired, "", "")
    if desired > maximum:
        return Limited(maximum, "TooManyReplicas",
                       "the desired replica count is more than the maximum replica count")
    if desired < minimum:
        return Limited(minimum, "TooFewReplicas",
                       "the desired replica count is less than the minimum replica count")
    return Limited(desired, "", "")
