"""Priorities that spread a set's pods and read node labels.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/selector_spreading.go (v1.2-v1.5:
SelectorSpreadPriority with its zone weighting, ServiceAntiAffinity), service_spreading.go
(v1.0 ServiceSpreadingPriority; from v1.2 the same name is SelectorSpread over services only)
and node_label.go (CalculateNodeLabelPriority, the Policy's `labelPreference` argument).

Why: replicas of one Service or controller should not share a node (or a zone, or a value of a
chosen node label), so a node loses points for every pod it already runs that the pod's
Services/RCs/ReplicaSets select. Counting walks the pods of the candidate nodes only, once per
decision; the selectors are built once per call.

Arithmetic: upstream computes these scores in float32. For the node-only score the exact
integer floor `10 * (max - count) // max` gives the same results (checked for every count up
to 400), so it is used; the zone blend is computed with float32 rounding emulated step by step.
"""

from __future__ import annotations

import struct
from functools import lru_cache

from ...api import errors
from ...api.labels import LabelSelector, selector_from_label_selector, selector_from_set
from ..nodeinfo import NodeInfo
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, PriorityFunction

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")

_F32 = struct.Struct("f")
_EMPTY: dict = {}


def _f32(x: float) -> float:
    """Round to the nearest float32, to mirror Go's float32 arithmetic one operation at a time."""
    return _F32.unpack(_F32.pack(x))[0]


_ONE_THIRD = _f32(1.0 - 2.0 / 3.0)   # upstream (1.0 - zoneWeighting) as a float32 constant
_TWO_THIRDS = _f32(2.0 / 3.0)        # upstream zoneWeighting


def _labels(obj: Obj | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def service_selector(obj: Obj) -> LabelSelector | None:
    """A Service's / RC's map selector; an empty one selects no pods here (a selector-less
    Service has no endpoints and should not make every pod in the namespace count)."""
    selector = (obj.get("spec") or {}).get("selector")
    return selector_from_set(selector) if selector else None


def controller_selector(obj: Obj) -> LabelSelector | None:
    """RCs carry a label map, ReplicaSets a LabelSelector (matchLabels/matchExpressions)."""
    selector = (obj.get("spec") or {}).get("selector")
    if not selector or not isinstance(selector, dict):
        return None
    if obj.get("kind") == "ReplicationController" or all(isinstance(v, str)
                                                          for v in selector.values()):
        return selector_from_set(selector)
    try:
        return selector_from_label_selector(selector)
    except (errors.StatusError, TypeError, AttributeError):  # upstream skips a bad one
        return None


def pod_selectors(pod: Obj, ctx: PriorityContext, controllers: bool = True) -> list[LabelSelector]:
    """Selectors of the Services (and RCs/ReplicaSets) selecting `pod` (upstream getSelectors)."""
    selectors = [s for s in map(service_selector, ctx.services_for_pod(pod)) if s is not None]
    if controllers:
        selectors.extend(s for s in map(controller_selector, ctx.controllers_for_pod(pod))
                         if s is not None)
    return selectors


def _count_matching(info: NodeInfo, namespace: str, selectors: list[LabelSelector],
                    skip_terminating: bool = True, memo_key: tuple | None = None) -> int:
    """Pods on the node in `namespace` selected by any selector; SelectorSpread also skips pods
    being deleted (the replacement's predecessor). Counting walks every pod of a node, so the
    count is memoised on the NodeInfo (`memo_key` names the question) until its pods change:
    a decision then costs one lookup per unchanged node instead of a walk over its pods."""
    if memo_key is not None:
        cached = info.memo.get(memo_key)
        if cached is not None:
            return cached
        count = _count_matching(info, namespace, selectors, skip_terminating)
        info.memo[memo_key] = count
        return count
    matchers = [s.matches for s in selectors]
    only = matchers[0] if len(matchers) == 1 else None
    count = 0
    for other in info.pods.values():
        md = other.get("metadata") or _EMPTY
        if (md.get("namespace") or "") != namespace or (
                skip_terminating and md.get("deletionTimestamp")):
            continue
        labels = md.get("labels") or _EMPTY
        if only is not None:
            count += only(labels)
        else:
            for match in matchers:
                if match(labels):
                    count += 1
                    break
    return count


def zone_key(node: Obj | None) -> str:
    """upstream utilnode.GetZoneKey: region and zone labels joined, "" when neither is set
    (the topology.kubernetes.io labels first, then the failure-domain.beta ones, as v1.17+)."""
    labels = _labels(node)
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def _spread_scores(counts: list[int], zones: list[str]) -> list[int]:
    """Fewer matching pods -> higher score; with zones, 2/3 of the score comes from the zone."""
    max_count = max(counts, default=0)
    by_zone: dict[str, int] = {}
    for zone, count in zip(zones, counts):
        if zone:
            by_zone[zone] = by_zone.get(zone, 0) + count
    if not by_zone:
        if max_count == 0:
            return [MAX_PRIORITY] * len(counts)
        return [MAX_PRIORITY * (max_count - c) // max_count for c in counts]
    max_zone = max(by_zone.values())
    return [_zoned_score(count, max_count, by_zone[zone] if zone else -1, max_zone)
            for zone, count in zip(zones, counts)]


@lru_cache(maxsize=65536)
def _zoned_score(count: int, max_count: int, zone_count: int, max_zone: int) -> int:
    """One node's score from its count and its zone's (zone_count -1: the node has no zone).
    Memoised: the inputs are small counts that repeat across nodes, and the float32 steps
    are the expensive part."""
    score = float(MAX_PRIORITY)
    if max_count > 0:
        score = _f32(MAX_PRIORITY * _f32((max_count - count) / max_count))
    if zone_count >= 0:
        zone_score = float(MAX_PRIORITY)  # v1.2-1.5 divided 0/0 here; later releases give 10
        if max_zone > 0:
            zone_score = _f32(MAX_PRIORITY * _f32((max_zone - zone_count) / max_zone))
        score = _f32(_f32(score * _ONE_THIRD) + _f32(_TWO_THIRDS * zone_score))
    return int(score)


def _spread(namespace: str, nodes: list[NodeInfo], selectors: list[LabelSelector]) -> list[int]:
    if not selectors:
        return [MAX_PRIORITY] * len(nodes)
    key = ("spread", namespace, tuple(str(s) for s in selectors))
    counts = [_count_matching(info, namespace, selectors, memo_key=key) for info in nodes]
    return _spread_scores(counts, [node_zone(info) for info in nodes])


def node_zone(info: NodeInfo) -> str:
    """zone_key of the node, remembered per node object."""
    cached = info.memo.get("zone")
    if cached is None or cached[0] is not info.node:
        cached = info.memo["zone"] = (info.node, zone_key(info.node))
    return cached[1]


def selector_spread_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """SelectorSpreadPriority: spread the pods of the pod's Services, RCs and ReplicaSets over
    nodes (and zones, when nodes carry zone labels)."""
    return _spread(ctx.meta(pod).namespace, nodes, pod_selectors(pod, ctx))


def service_spreading_priority(pod: Obj, nodes: list[NodeInfo],
                               ctx: PriorityContext) -> list[int]:
    """ServiceSpreadingPriority (the v1.0 name): SelectorSpread counting Services only."""
    return _spread(ctx.meta(pod).namespace, nodes, pod_selectors(pod, ctx, controllers=False))


def _service_pods_per_node(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext,
                          selector: LabelSelector) -> dict[str, int]:
    """node name -> scheduled pods of the service (in the pod's namespace) it runs; cluster-wide
    when the context can list all pods, else over the candidate nodes."""
    namespace = ctx.meta(pod).namespace
    if ctx.all_pods is None:
        key = ("anti-affinity", namespace, str(selector))
        return {info.name: _count_matching(info, namespace, [selector], skip_terminating=False,
                                           memo_key=key)
                for info in nodes}
    match = selector.matches
    counts: dict[str, int] = {}
    for other in ctx.all_pods():
        node_name = (other.get("spec") or _EMPTY).get("nodeName")
        md = other.get("metadata") or _EMPTY
        if node_name and (md.get("namespace") or "") == namespace \
                and match(md.get("labels") or _EMPTY):
            counts[node_name] = counts.get(node_name, 0) + 1
    return counts


def service_anti_affinity(label: str) -> PriorityFunction:
    """ServiceAntiAffinity (Policy argument `serviceAntiAffinity`): spread the pods of the pod's
    first Service across the values of node label `label`; nodes without it score 0."""

    def calculate_anti_affinity_priority(pod: Obj, nodes: list[NodeInfo],
                                         ctx: PriorityContext) -> list[int]:
        values = [_labels(info.node).get(label) for info in nodes]
        labeled = {info.name: value for info, value in zip(nodes, values) if value is not None}
        services = ctx.services_for_pod(pod)
        selector = service_selector(services[0]) if services else None
        total = 0
        per_value: dict[str, int] = {}
        if selector is not None:
            for node_name, count in _service_pods_per_node(pod, nodes, ctx, selector).items():
                total += count
                value = labeled.get(node_name)
                if value is not None:
                    per_value[value] = per_value.get(value, 0) + count
        return [0 if value is None
                else MAX_PRIORITY if total == 0
                else MAX_PRIORITY * (total - per_value.get(value, 0)) // total
                for value in values]

    return calculate_anti_affinity_priority


def node_label_priority(label: str, presence: bool) -> PriorityFunction:
    """CalculateNodeLabelPriority (Policy argument `labelPreference`): 10 for nodes that have
    `label` (any value) when presence is true, or lack it when false; 0 otherwise."""

    def calculate_node_label_priority(pod: Obj, nodes: list[NodeInfo],
                                      ctx: PriorityContext) -> list[int]:
        return [MAX_PRIORITY if (label in _labels(info.node)) == presence else 0
                for info in nodes]

    return calculate_node_label_priority
