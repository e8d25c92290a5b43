"""InterPodAffinity: required pod (anti-)affinity as a Filter, preferred terms as a Score.

Kubernetes piece: pkg/scheduler/framework/plugins/interpodaffinity (1.31: filtering.go,
scoring.go, plugin.go) with InterPodAffinityArgs (`hardPodAffinityWeight` default 1,
`ignorePreferredTermsOfExistingPods` default false); the successor of MatchInterPodAffinity and
InterPodAffinityPriority.

- PreFilter counts, per (topology key, value), (a) existing pods whose required anti-affinity
  selects the incoming pod, (b) existing pods matching *all* of the pod's required affinity
  terms, (c) existing pods each of its required anti-affinity terms selects. Counts are keyed
  by value strings so preemption can reuse them on a scratch table, and AddPod/RemovePod
  (PreFilterExtensions) adjust them for one pod on one node. Skip when the pod has no required
  terms and no existing pod has required anti-affinity.
- Filter, in upstream's order: a node in a domain of (a) is Unschedulable "node(s) didn't
  satisfy existing pods anti-affinity rules"; a node lacking an affinity term's key, or whose
  domain has no pod of (b), is UnschedulableAndUnresolvable "node(s) didn't match pod affinity
  rules" — unless no pod matches anywhere and the pod matches its own terms (the first pod of
  a self-affine group); a node in a domain of (c) is Unschedulable "node(s) didn't match pod
  anti-affinity rules".
- PreScore/Score: InterPodAffinityPriority's vectorised points (the pod's preferred terms,
  and existing pods' required affinity times hardPodAffinityWeight and preferred terms);
  NormalizeScore maps min..max to 0..100.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...algorithm.interpod_topology import existing_terms, selected_counts
from ...algorithm.pod_affinity import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI,
    Term,
    pod_affinity_of,
)
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.priorities_interpod import inter_pod_affinity_points
from ...nodeinfo import NodeInfo
from ...nodetable import ABSENT, Mask, NodeTable
from ..interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterFailures,
    Handle,
    PreFilterResult,
    Rows,
    Status,
)
from .common import arg, priority_context

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
Counts = dict[tuple[str, str], int]


@dataclass
class PreFilterState:
    affinity_terms: tuple[Term, ...]
    anti_terms: tuple[Term, ...]
    existing_anti: Counts = field(default_factory=dict)
    affinity: Counts = field(default_factory=dict)
    anti: Counts = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        return PreFilterState(self.affinity_terms, self.anti_terms, dict(self.existing_anti),
                              dict(self.affinity), dict(self.anti))


def _add(counts: Counts, nodes: NodeTable, key: str, per_row: np.ndarray) -> None:
    """counts[(key, value)] += the sum of per_row over the rows carrying value."""
    if not key:
        return
    column = nodes.label(key)
    sums = np.bincount(column, weights=per_row, minlength=len(nodes.strings.values))
    sums[ABSENT] = 0
    for i in np.flatnonzero(sums).tolist():
        pair = (key, nodes.strings.values[i])
        counts[pair] = counts.get(pair, 0) + int(sums[i])


def _hit(counts: Counts, nodes: NodeTable, key: str) -> Mask:
    """Rows whose value of `key` has a positive count."""
    column = nodes.label(key)
    wanted = [nodes.strings.lookup(v) for (k, v), n in counts.items() if k == key and n > 0]
    wanted = [w for w in wanted if w > ABSENT]
    return np.isin(column, wanted) if wanted else nodes.everywhere(False)


def _matches_all(terms: tuple[Term, ...], namespace: str, labels: Mapping[str, str]) -> bool:
    return all(t.selects(namespace, labels) for t in terms)


def _count_all(info: NodeInfo, terms: tuple[Term, ...]) -> int:
    count = 0
    for other in info.pods.values():
        md = other.get("metadata") or {}
        if _matches_all(terms, md.get("namespace") or "", md.get("labels") or {}):
            count += 1
    return count


class InterPodAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.hard_weight = int(arg(args, "hardPodAffinityWeight", 1))
        self.ignore_existing_preferred = bool(arg(args, "ignorePreferredTermsOfExistingPods", False))

    # -- PreFilter / Filter --------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        affinity = pod.pod_affinity
        s = PreFilterState(affinity.required_affinity if affinity else (),
                           affinity.required_anti if affinity else ())
        index = existing_terms(nodes)
        any_existing_anti = False
        for (_kind, namespaces, selector, key), rows, weights in index.of_kind(REQUIRED_ANTI):
            any_existing_anti = True
            if pod.namespace in namespaces and selector.matches(pod.labels):
                per_row = np.zeros(nodes.size, dtype=np.float64)
                per_row[rows] = weights
                _add(s.existing_anti, nodes, key, per_row)
        if not s.affinity_terms and not s.anti_terms and not any_existing_anti:
            return None, Status(Code.SKIP)
        if s.affinity_terms:
            terms = s.affinity_terms
            per_row = nodes.derived(("inter-pod-affinity-all", terms),
                                    lambda info: _count_all(info, terms))
            for term in terms:
                _add(s.affinity, nodes, term.topology_key, per_row)
        for term in s.anti_terms:
            _add(s.anti, nodes, term.topology_key, selected_counts(nodes, term))
        state.write(_PRE_FILTER_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def _update(self, state: CycleState, pod: PodMeta, other: dict, node: NodeInfo,
                delta: int) -> Status | None:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None or node.node is None:
            return None
        labels = (node.node.get("metadata") or {}).get("labels") or {}
        md = other.get("metadata") or {}
        namespace, other_labels = md.get("namespace") or "", md.get("labels") or {}

        def bump(counts: Counts, key: str) -> None:
            if key in labels:
                pair = (key, labels[key])
                counts[pair] = counts.get(pair, 0) + delta

        compiled = pod_affinity_of(other)
        for term in compiled.required_anti if compiled else ():
            if term.selects(pod.namespace, pod.labels):
                bump(s.existing_anti, term.topology_key)
        if s.affinity_terms and _matches_all(s.affinity_terms, namespace, other_labels):
            for term in s.affinity_terms:
                bump(s.affinity, term.topology_key)
        for term in s.anti_terms:
            if term.selects(namespace, other_labels):
                bump(s.anti, term.topology_key)
        return None

    def add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: dict,
                node: NodeInfo) -> Status | None:
        return self._update(state, pod, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodMeta, pod_to_remove: dict,
                   node: NodeInfo) -> Status | None:
        return self._update(state, pod, pod_to_remove, node, -1)

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        if s is None:
            return []
        existing = nodes.everywhere(False)
        for key in {k for k, _v in s.existing_anti}:
            existing |= _hit(s.existing_anti, nodes, key)
        failing_affinity = nodes.everywhere(False)
        if s.affinity_terms:
            missing_key = nodes.everywhere(False)
            no_pods = nodes.everywhere(False)
            for term in s.affinity_terms:
                missing_key |= nodes.label(term.topology_key) == ABSENT
                no_pods |= ~_hit(s.affinity, nodes, term.topology_key)
            first_of_group = (not any(n > 0 for n in s.affinity.values())
                              and _matches_all(s.affinity_terms, pod.namespace, pod.labels))
            failing_affinity = missing_key | (no_pods & (not first_of_group))
        failing_anti = nodes.everywhere(False)
        for term in s.anti_terms:
            failing_anti |= _hit(s.anti, nodes, term.topology_key)
        failing_affinity &= ~existing
        failing_anti &= ~(existing | failing_affinity)
        out: FilterFailures = []
        for status, rows in ((Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY), existing),
                             (Status.unresolvable(ERR_REASON_AFFINITY), failing_affinity),
                             (Status.unschedulable(ERR_REASON_ANTI_AFFINITY), failing_anti)):
            if rows.any():
                out.append((status, rows))
        return out

    # -- PreScore / Score / NormalizeScore -----------------------------------------------
    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        affinity = pod.pod_affinity
        has_preferred = bool(affinity and (affinity.preferred_affinity or affinity.preferred_anti))
        if self.ignore_existing_preferred and not has_preferred:
            return Status(Code.SKIP)
        if not has_preferred:
            # only existing pods' terms can score: none of the kinds that do -> nothing to score
            scoring = {REQUIRED_AFFINITY} if self.hard_weight else set()
            if not self.ignore_existing_preferred:
                scoring |= {PREFERRED_AFFINITY, PREFERRED_ANTI}
            if not any(key[0] in scoring for key in existing_terms(nodes).groups):
                return Status(Code.SKIP)
        points = inter_pod_affinity_points(pod.pod, nodes, priority_context(state, pod),
                                           self.hard_weight, (),
                                           existing_preferred=not self.ignore_existing_preferred)
        if not points.any():
            return Status(Code.SKIP)
        state.write(_PRE_SCORE_KEY, points.astype(np.int64))
        return None

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        points = state.get(_PRE_SCORE_KEY)
        if points is None or len(points) != nodes.size:
            return np.zeros(len(rows), dtype=np.int64)
        return points[rows]

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodMeta, scores: np.ndarray) -> None:
        if not len(scores):
            return
        low, high = int(scores.min()), int(scores.max())
        if high - low > 0:
            scores[:] = (MAX_NODE_SCORE * ((scores - low) / (high - low))).astype(np.int64)
        else:
            scores[:] = 0

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.ALL)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]


def new(args: Mapping[str, Any], handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args)
