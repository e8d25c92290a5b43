"""The HorizontalPodAutoscaler controller (kube-controller-manager's `horizontalpodautoscaling`).

Kubernetes piece: pkg/controller/podautoscaler/horizontal.go (reconcileAutoscaler,
computeReplicasForMetrics, normalizeDesiredReplicasWithBehaviors, updateStatus) with
metrics/client.go's REST metrics client. Every `--horizontal-pod-autoscaler-sync-period`
(15 s) each HPA is reconciled, acting as `system:serviceaccount:kube-system:horizontal-pod-
autoscaler` and so doing only what its bootstrap role allows:

1. GET the target's `scale` subresource (any kind that has one: Deployments, ReplicaSets,
   StatefulSets, custom resources with `subresources.scale`), the plural found through
   discovery; its `status.selector` names the pods;
2. list those pods and their PodMetrics (metrics.k8s.io, the built-in metrics-server) and
   compute replicas per metric (hpa_replicas.py: Utilization of the request or AverageValue,
   tolerance 0.1), the highest proposal wins;
3. apply behavior: the stabilization windows over the recent recommendations (scale-down
   defaults to `--horizontal-pod-autoscaler-downscale-stabilization`, 5 m) and the rate
   policies over the recent scale events, then min/maxReplicas;
4. PUT the scale if it changed (event `SuccessfulRescale`, `New size: 4; reason: cpu resource
   utilization (percentage of request) above target`) and PUT `/status` with the current
   metrics and the conditions AbleToScale, ScalingActive and ScalingLimited, upstream's
   reasons and messages.

Recommendations and scale events are kept in memory, as upstream does (a restarted controller
starts with an empty history). Object, Pods and External metrics need a custom or external
metrics API, which is not served here: such an HPA gets ScalingActive=False.
"""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction
from typing import Any

from ..api import hpa as hpa_api
from ..api import meta, quantity
from ..client.errors import StatusError
from ..client.record import EventRecorder
from ..client.resources import HORIZONTALPODAUTOSCALERS, POD_METRICS, PODS, Resource
from . import hpa_replicas as calc
from .base import Controller, ControllerContext, enqueue_key, split_key
from .conditions import is_pod_ready

Obj = dict[str, Any]
#: how long recommendations and scale events are remembered at most (upstream prunes by the
#: longest window/period in use; 1 h bounds both)
HISTORY = 3600.0


def set_condition(conditions: list[Obj], kind: str, status: str, reason: str, message: str,
                  now: str) -> None:
    """setCondition: replace the condition of `kind`, keeping lastTransitionTime when the
    status did not change."""
    for condition in conditions:
        if condition.get("type") == kind:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = now
            condition.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": kind, "status": status, "lastTransitionTime": now,
                       "reason": reason, "message": message})


def _milli_value(value: Any) -> int:
    """Quantity.MilliValue (rounded up), what upstream's metrics client counts in."""
    return quantity.milli_value(str(value))


def _milli(value: int) -> str:
    """resource.NewMilliQuantity(v, DecimalSI) as a string (`450m`, `104857600`)."""
    return quantity.format_quantity(Fraction(value, 1000), quantity.DECIMAL_SI)


def metric_name(metric: Obj) -> str:
    """How upstream's messages name a metric: `cpu resource utilization (percentage of
    request)`, `memory resource`, `cpu container resource utilization ...`."""
    kind = metric.get("type")
    source = metric.get("resource") or metric.get("containerResource") or {}
    target = source.get("target") or {}
    prefix = "container resource" if kind == "ContainerResource" else "resource"
    name = source.get("name", "")
    if target.get("type") == "Utilization":
        return f"{name} {prefix} utilization (percentage of request)"
    return f"{name} {prefix}"


class HorizontalController(Controller):
    name = "horizontalpodautoscaling"
    service_account = "horizontal-pod-autoscaler"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        options = ctx.options
        self.sync_period = options.horizontal_pod_autoscaler_sync_period
        self.downscale_window = int(options.horizontal_pod_autoscaler_downscale_stabilization)
        self.tolerance = options.horizontal_pod_autoscaler_tolerance
        self.hpas = ctx.informers.informer(HORIZONTALPODAUTOSCALERS)
        self.hpas.add_event_handler(on_add=self._enqueue,
                                    on_update=lambda old, new: self._enqueue(new),
                                    on_delete=self._forget)
        self.recorder = EventRecorder(self.client, "horizontal-pod-autoscaler")
        #: key -> [(time, recommended replicas)] and [(time, replicas added/removed)]
        self.recommendations: dict[str, list[tuple[float, int]]] = {}
        self.up_events: dict[str, list[tuple[float, int]]] = {}
        self.down_events: dict[str, list[tuple[float, int]]] = {}
        #: apiVersion -> kind -> plural (discovery, re-read on a miss)
        self._plurals: dict[str, dict[str, str]] = {}

    def _enqueue(self, obj: Obj) -> None:
        enqueue_key(self.queue, obj)

    def _forget(self, obj: Obj) -> None:
        md = obj.get("metadata") or {}
        key = f"{md.get('namespace')}/{md.get('name')}"
        for table in (self.recommendations, self.up_events, self.down_events):
            table.pop(key, None)

    async def background(self) -> None:
        """The resync: every HPA is reconciled once per sync period."""
        while True:
            await asyncio.sleep(self.sync_period)
            for obj in self.hpas.indexer.list():
                self._enqueue(obj)

    # -- the target -------------------------------------------------------------------------
    async def _scale_resource(self, namespace: str, ref: Obj) -> Resource:
        api_version, kind = ref.get("apiVersion") or "v1", ref.get("kind", "")
        for fresh in (False, True):
            if fresh or api_version not in self._plurals:
                path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
                document = await self.client.get_path(path)
                self._plurals[api_version] = {
                    r["kind"]: r["name"] for r in document.get("resources") or []
                    if "/" not in r.get("name", "")}
            plural = self._plurals[api_version].get(kind)
            if plural is not None:
                group, _, version = api_version.rpartition("/")
                return Resource(group, version, plural, True, kind)
        raise LookupError(f'no matches for kind "{kind}" in group '
                          f'"{api_version.rpartition("/")[0]}"')

    # -- metrics ----------------------------------------------------------------------------
    async def _samples(self, namespace: str, selector: str, metric: Obj) -> list[calc.PodSample]:
        kind = metric.get("type")
        source = metric.get("resource") if kind == "Resource" else metric.get("containerResource")
        resource, container = (source or {}).get("name", ""), (source or {}).get("container")
        pods = (await self.client.list(PODS, namespace, label_selector=selector))["items"]
        try:
            metrics = (await self.client.list(POD_METRICS, namespace,
                                              label_selector=selector))["items"]
        except StatusError as exc:
            raise calc.MetricError(f"unable to get metrics for resource {resource}: unable to "
                                   f"fetch metrics from resource metrics API: {exc}") from None
        usage: dict[str, int] = {}
        for item in metrics:
            total = 0
            for c in item.get("containers") or []:
                if container is None or c.get("name") == container:
                    total += _milli_value((c.get("usage") or {}).get(resource, "0"))
            usage[item["metadata"]["name"]] = total
        samples = []
        for pod in pods:
            md, status = pod["metadata"], pod.get("status") or {}
            if md.get("deletionTimestamp") or status.get("phase") in ("Failed", "Succeeded"):
                continue
            request, missing_request = 0, False
            for c in (pod.get("spec") or {}).get("containers") or []:
                if container is not None and c.get("name") != container:
                    continue
                value = ((c.get("resources") or {}).get("requests") or {}).get(resource)
                if value is None:
                    missing_request = True
                else:
                    request += _milli_value(value)
            samples.append(calc.PodSample(
                md["name"], 0 if missing_request else request, usage.get(md["name"]),
                ready=resource != "cpu" or is_pod_ready(pod)))
        return samples

    async def _propose(self, namespace: str, selector: str, metric: Obj,
                       current: int) -> tuple[calc.Proposal, Obj]:
        kind = metric.get("type")
        if kind not in ("Resource", "ContainerResource"):
            api = "external.metrics.k8s.io" if kind == "External" else "custom.metrics.k8s.io"
            raise calc.MetricError(f"unable to get metric: no {api} API is served here")
        field = "resource" if kind == "Resource" else "containerResource"
        source = metric.get(field) or {}
        target = source.get("target") or {}
        samples = await self._samples(namespace, selector, metric)
        utilization = target.get("averageUtilization") \
            if target.get("type") == "Utilization" else None
        average = None if utilization is not None \
            else _milli_value(target.get("averageValue", "0"))
        proposal = calc.resource_replicas(current, samples, target_utilization=utilization,
                                          target_average=average, resource=source.get("name", ""),
                                          tolerance=self.tolerance)
        now_value: Obj = {"averageValue": _milli(proposal.average)}
        if proposal.utilization is not None:
            now_value["averageUtilization"] = proposal.utilization
        status = {"name": source.get("name"), "current": now_value}
        if kind == "ContainerResource":
            status["container"] = source.get("container")
        return proposal, {"type": kind, field: status}

    # -- the reconcile ----------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        hpa = self.hpas.indexer.get(key)
        if hpa is None:
            return
        namespace, _ = split_key(key)
        spec = hpa.get("spec") or {}
        old_status = hpa.get("status") or {}
        status: Obj = {k: v for k, v in old_status.items() if k in ("lastScaleTime",)}
        conditions: list[Obj] = [dict(c) for c in old_status.get("conditions") or []]
        stamp = meta.now_rfc3339()
        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{ref.get('name')}"
        try:
            resource = await self._scale_resource(namespace, ref)
            scale = await self.client.get(resource, ref.get("name", ""), namespace,
                                          subresource="scale")
        except (StatusError, LookupError) as exc:
            message = f"the HPA controller was unable to get the target's current scale: {exc}"
            set_condition(conditions, "AbleToScale", "False", "FailedGetScale", message, stamp)
            self.recorder.event(hpa, "Warning", "FailedGetScale", str(exc))
            await self._write_status(hpa, {**status, "currentReplicas": old_status.get(
                "currentReplicas", 0), "desiredReplicas": old_status.get("desiredReplicas", 0),
                "conditions": conditions, "currentMetrics": old_status.get("currentMetrics")})
            return
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        selector = (scale.get("status") or {}).get("selector") or ""
        minimum, maximum = int(spec.get("minReplicas") or 1), int(spec.get("maxReplicas") or 1)
        metrics_status: list[Obj] = []
        reason = ""
        rescale_reason = ""
        now = time.time()
        if current == 0 and minimum != 0:
            desired = 0
            set_condition(conditions, "ScalingActive", "False", "ScalingDisabled",
                          "scaling is disabled since the replica count of the target is zero",
                          stamp)
        elif current > maximum:
            desired, rescale_reason = maximum, "Current number of replicas above Spec.MaxReplicas"
        elif current < minimum:
            desired, rescale_reason = minimum, "Current number of replicas below Spec.MinReplicas"
        else:
            if not selector:
                message = "the HPA target's scale is missing a selector"
                set_condition(conditions, "ScalingActive", "False", "InvalidSelector", message,
                              stamp)
                self.recorder.event(hpa, "Warning", "SelectorRequired", message)
                await self._write_status(hpa, {**status, "currentReplicas": current,
                                               "desiredReplicas": old_status.get("desiredReplicas", 0),
                                               "conditions": conditions})
                return
            proposed, chosen = 0, ""
            errors: list[str] = []
            for metric in spec.get("metrics") or []:
                try:
                    proposal, metric_status = await self._propose(namespace, selector, metric,
                                                                  current)
                except calc.MetricError as exc:
                    errors.append(str(exc))
                    metrics_status.append({"type": metric.get("type", "")})
                    continue
                metrics_status.append(metric_status)
                if proposal.replicas > proposed:
                    proposed, chosen = proposal.replicas, metric_name(metric)
            if errors and not chosen:
                message = f"the HPA was unable to compute the replica count: {errors[0]}"
                set_condition(conditions, "ScalingActive", "False", "FailedGetResourceMetric",
                              message, stamp)
                self.recorder.event(hpa, "Warning", "FailedGetResourceMetric", errors[0])
                self.recorder.event(hpa, "Warning", "FailedComputeMetricsReplicas",
                                    f"invalid metrics ({len(errors)} invalid out of "
                                    f"{len(spec.get('metrics') or [])}), first error is: "
                                    f"failed to get {metric_name((spec.get('metrics') or [{}])[0])}: "
                                    f"{errors[0]}")
                await self._write_status(hpa, {**status, "currentReplicas": current,
                                               "desiredReplicas": old_status.get("desiredReplicas", current),
                                               "currentMetrics": [m for m in metrics_status if len(m) > 1] or None,
                                               "conditions": conditions})
                return
            set_condition(conditions, "ScalingActive", "True", "ValidMetricFound",
                          f"the HPA was able to successfully calculate a replica count from "
                          f"{chosen}", stamp)
            desired, reason = self._normalize(key, hpa, current, proposed, minimum, maximum,
                                              conditions, stamp, now)
            rescale_reason = (f"{chosen} above target" if desired > current
                              else "All metrics below target")
        if desired != current:
            scale["spec"]["replicas"] = desired
            try:
                await self.client.update(resource, scale, subresource="scale")
            except StatusError as exc:
                set_condition(conditions, "AbleToScale", "False", "FailedUpdateScale",
                              f"the HPA controller was unable to update the target scale: {exc}",
                              stamp)
                self.recorder.event(hpa, "Warning", "FailedRescale",
                                    f"New size: {desired}; reason: {rescale_reason}; "
                                    f"error: {exc}")
                await self._write_status(hpa, {**status, "currentReplicas": current,
                                               "desiredReplicas": desired,
                                               "currentMetrics": metrics_status or None,
                                               "conditions": conditions})
                raise
            set_condition(conditions, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}",
                          stamp)
            self.recorder.event(hpa, "Normal", "SuccessfulRescale",
                                f"New size: {desired}; reason: {rescale_reason}")
            events = self.up_events if desired > current else self.down_events
            events.setdefault(key, []).append((now, abs(desired - current)))
            status["lastScaleTime"] = stamp
            self.log.info("rescaled", hpa=key, target=reference, replicas=desired,
                          previous=current, reason=rescale_reason)
        elif not reason:
            set_condition(conditions, "AbleToScale", "True", "ReadyForNewScale",
                          "recommended size matches current size", stamp)
        await self._write_status(hpa, {**status, "currentReplicas": current,
                                       "desiredReplicas": desired,
                                       "currentMetrics": metrics_status or None,
                                       "conditions": conditions})

    def _normalize(self, key: str, hpa: Obj, current: int, proposed: int, minimum: int,
                   maximum: int, conditions: list[Obj], stamp: str,
                   now: float) -> tuple[int, str]:
        """normalizeDesiredReplicasWithBehaviors: stabilization, then the rate policies and
        the bounds; sets AbleToScale (when stabilized) and ScalingLimited."""
        behavior = hpa_api.effective_behavior(hpa.get("spec") or {}, self.downscale_window)
        history = [r for r in self.recommendations.get(key, []) if r[0] > now - HISTORY]
        stabilized, reason = calc.stabilize(
            now, current, proposed, history,
            int(behavior["scaleUp"].get("stabilizationWindowSeconds") or 0),
            int(behavior["scaleDown"].get("stabilizationWindowSeconds") or 0))
        history.append((now, proposed))
        self.recommendations[key] = history
        if reason == "ScaleDownStabilized":
            set_condition(conditions, "AbleToScale", "True", reason, "recent recommendations "
                          "were higher than current one, applying the highest recent "
                          "recommendation", stamp)
        elif reason == "ScaleUpStabilized":
            set_condition(conditions, "AbleToScale", "True", reason, "recent recommendations "
                          "were lower than current one, applying the lowest recent "
                          "recommendation", stamp)
        for table in (self.up_events, self.down_events):
            table[key] = [e for e in table.get(key, []) if e[0] > now - HISTORY]
        limited = calc.apply_rate(behavior, current, stabilized, minimum, maximum, now,
                                  self.up_events[key], self.down_events[key])
        if limited.reason:
            set_condition(conditions, "ScalingLimited", "True", limited.reason, limited.message,
                          stamp)
        else:
            set_condition(conditions, "ScalingLimited", "False", "DesiredWithinRange",
                          "the desired count is within the acceptable range", stamp)
        return limited.replicas, reason

    async def _write_status(self, hpa: Obj, status: Obj) -> None:
        """PUT /status when it changed (upstream updateStatusIfNeeded)."""
        # v2's JSON: currentReplicas is omitempty, desiredReplicas is not
        status = {k: v for k, v in status.items()
                  if v is not None and not (k == "currentReplicas" and v == 0)}
        status["observedGeneration"] = (hpa.get("metadata") or {}).get("generation")
        order = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas",
                 "currentMetrics", "conditions")
        status = {k: status[k] for k in order if k in status}
        if status == (hpa.get("status") or {}):
            return
        try:
            await self.client.update_status(HORIZONTALPODAUTOSCALERS, {**hpa, "status": status})
        except StatusError as exc:
            if exc.code in (404, 409):  # gone, or changed: the next sync sees the new one
                return
            raise
