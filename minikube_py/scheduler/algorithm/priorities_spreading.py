"""Priorities that spread a set's pods and read node labels.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/selector_spreading.go (v1.2-v1.5:
SelectorSpreadPriority with its zone weighting, ServiceAntiAffinity), service_spreading.go
(v1.0 ServiceSpreadingPriority; from v1.2 the same name is SelectorSpread over services only)
and node_label.go (CalculateNodeLabelPriority, the Policy's `labelPreference` argument).

Why: replicas of one Service or controller should not share a node (or a zone, or a value of a
chosen node label), so a node loses points for every pod it already runs that the pod's
Services/RCs/ReplicaSets select. Counting a node means walking its pods, so the count per node
is a derived NodeTable column (`NodeTable.derived`), keyed on the question (namespace and
selectors) and recounted only for rows whose pods changed since: replicas of one set asking
one after another pay for the node that got the previous replica, not for every node.

Arithmetic: upstream computes these scores in float32 — `10 * (float32(max - count) /
float32(max))`, then for zoned nodes `score * (1 - 2/3) + 2/3 * zoneScore` — and truncates
with int(). numpy's float32 operations round each step exactly as Go's do, so the scores are
computed over all candidates at once with the same result bit for bit (the test suite checks
them against a step-by-step emulation). The maximum counts are taken over the candidate rows,
as upstream does over the nodes it is given.
"""

from __future__ import annotations

import numpy as np

from ...api import errors
from ...api.labels import LabelSelector, selector_from_label_selector, selector_from_set
from ..nodeinfo import NodeInfo
from ..nodetable import ABSENT, NodeTable
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, PriorityFunction, Scores, at

_EMPTY: dict = {}
_TEN = np.float32(MAX_PRIORITY)
_ONE_THIRD = np.float32(1.0 - 2.0 / 3.0)   # upstream (1.0 - zoneWeighting) as a float32
_TWO_THIRDS = np.float32(2.0 / 3.0)        # upstream zoneWeighting


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
                    skip_terminating: bool = True) -> int:
    """Pods on the node in `namespace` selected by any selector; SelectorSpread also skips pods
    being deleted (the replacement's predecessor)."""
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


def matching_counts(nodes: NodeTable, namespace: str, selectors: list[LabelSelector],
                    skip_terminating: bool = True) -> np.ndarray:
    """`_count_matching` for every row of the table, as a cached derived column. The key
    holds the selectors themselves (hashable, and unlike their text NOTHING != EVERYTHING)."""
    key = ("matching", namespace, skip_terminating, tuple(selectors))
    return nodes.derived(key, lambda info: _count_matching(info, namespace, selectors,
                                                           skip_terminating))


def _share_score(counts: np.ndarray, max_count: int) -> np.ndarray:
    """float32 10 * (max - count) / max per entry (10 everywhere when max is 0), step by step
    as upstream's float32 expression rounds."""
    if max_count <= 0:
        return np.full(len(counts), _TEN, dtype=np.float32)
    return _TEN * ((max_count - counts).astype(np.float32) / np.float32(max_count))


def spread_scores(counts: np.ndarray, zones: np.ndarray) -> Scores:
    """Fewer matching pods -> higher score; for a node with a zone (id != ABSENT), 2/3 of the
    score comes from its zone's total. `counts` and `zones` are aligned with the candidates;
    the zone totals add up the candidates of each zone."""
    score = _share_score(counts, int(counts.max(initial=0)))
    zoned = zones != ABSENT
    if zoned.any():
        # per zone (a handful): its total, its score, and its 2/3 share of the blend
        zones = zones.astype(np.intp)  # numpy's native index type: bincount and take are faster
        by_zone = np.bincount(zones, weights=counts).astype(np.int64)  # exact: small counts
        by_zone[ABSENT] = 0
        zone_share = _TWO_THIRDS * _share_score(by_zone, int(by_zone.max()))
        blended = score * _ONE_THIRD + zone_share[zones]
        score = blended if zoned.all() else np.where(zoned, blended, score)
    return score.astype(np.int64)  # truncation, as Go's int(fScore)


def _spread(pod: Obj, nodes: NodeTable, rows: np.ndarray, ctx: PriorityContext,
            controllers: bool) -> Scores:
    selectors = pod_selectors(pod, ctx, controllers)
    if not selectors:
        return np.full(len(rows), MAX_PRIORITY, dtype=np.int64)
    counts = matching_counts(nodes, ctx.meta(pod).namespace, selectors)
    return spread_scores(at(counts, rows), at(nodes.zone, rows))


def selector_spread_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                             ctx: PriorityContext) -> Scores:
    """SelectorSpreadPriority: spread the pods of the pod's Services, RCs and ReplicaSets over
    nodes (and zones, when nodes carry zone labels)."""
    return _spread(pod, nodes, rows, ctx, controllers=True)


def service_spreading_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                               ctx: PriorityContext) -> Scores:
    """ServiceSpreadingPriority (the v1.0 name): SelectorSpread counting Services only."""
    return _spread(pod, nodes, rows, ctx, controllers=False)


def _service_pods(pod: Obj, nodes: NodeTable, rows: np.ndarray, ctx: PriorityContext,
                  selector: LabelSelector) -> tuple[np.ndarray, int]:
    """(scheduled pods of the service in the pod's namespace per candidate row, their total).
    The total is cluster-wide when the context can list all pods (a pod on a node that is
    not a candidate still counts, as with upstream's pod lister), else over the candidates."""
    namespace = ctx.meta(pod).namespace
    if ctx.all_pods is None:
        counts = at(matching_counts(nodes, namespace, [selector], skip_terminating=False), rows)
        return counts, int(counts.sum())
    match = selector.matches
    by_node: dict[str, int] = {}
    for other in ctx.all_pods():
        node_name = (other.get("spec") or _EMPTY).get("nodeName")
        md = other.get("metadata") or _EMPTY
        if node_name and (md.get("namespace") or "") == namespace \
                and match(md.get("labels") or _EMPTY):
            by_node[node_name] = by_node.get(node_name, 0) + 1
    names = nodes.names
    counts = np.fromiter((by_node.get(names[row], 0) for row in rows.tolist()),
                         dtype=np.int64, count=len(rows))
    return counts, sum(by_node.values())


def service_anti_affinity(label: str) -> PriorityFunction:
    """ServiceAntiAffinity (Policy argument `serviceAntiAffinity`): spread the pods of the pod's
    first Service across the values of node label `label`; nodes without it score 0, the
    others 10 * (service pods - those on candidates sharing the node's value) / service pods
    (integer division)."""

    def calculate_anti_affinity_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                                         ctx: PriorityContext) -> Scores:
        values = at(nodes.label(label), rows)
        labeled = values != ABSENT
        services = ctx.services_for_pod(pod)
        selector = service_selector(services[0]) if services else None
        if selector is None:
            return np.where(labeled, MAX_PRIORITY, 0)
        counts, total = _service_pods(pod, nodes, rows, ctx, selector)
        if total == 0:
            return np.where(labeled, MAX_PRIORITY, 0)
        per_value = np.bincount(values[labeled], weights=counts[labeled],
                                minlength=len(nodes.strings.values)).astype(np.int64)
        return np.where(labeled, MAX_PRIORITY * (total - per_value[values]) // total, 0)

    return calculate_anti_affinity_priority


def node_label_priority(label: str, presence: bool) -> PriorityFunction:
    """CalculateNodeLabelPriority (Policy argument `labelPreference`): 10 for nodes that have
    `label` (any value) when presence is true, or lack it when false; 0 otherwise."""

    def calculate_node_label_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                                      ctx: PriorityContext) -> Scores:
        has_label = at(nodes.label(label), rows) != ABSENT
        return np.where(has_label == presence, MAX_PRIORITY, 0)

    return calculate_node_label_priority
