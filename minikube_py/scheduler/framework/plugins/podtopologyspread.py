"""PodTopologySpread: spread matching pods evenly over topology domains (zones, nodes, ...).

Kubernetes piece: pkg/scheduler/framework/plugins/podtopologyspread (1.31: common.go,
filtering.go, scoring.go, plugin.go), with PodTopologySpreadArgs (`defaultingType` System —
upstream's default — or List with `defaultConstraints`). Replaces v1.5's SelectorSpreadPriority
(the system defaults spread a Service's / controller's pods: maxSkew 3 per hostname and 5 per
zone, ScheduleAnyway).

- PreFilter (DoNotSchedule constraints; Skip when there are none): for each constraint, the
  number of matching pods per topology value, over the nodes that carry every constraint's
  key and pass the node inclusion policies (nodeAffinityPolicy Honor: the pod's nodeSelector
  and required affinity; nodeTaintsPolicy Honor: its tolerations). Stored by value *string*,
  so preemption can apply it to a scratch table and AddPod/RemovePod (PreFilterExtensions)
  adjust it for a pod added or removed on one node.
- Filter: a node without a constraint's key is UnschedulableAndUnresolvable ("... (missing
  required label)"); a node where `matching + self - global minimum > maxSkew` (the minimum
  is 0 while fewer than minDomains domains exist) is Unschedulable.
- PreScore / Score / NormalizeScore (ScheduleAnyway constraints, or the defaults when the pod
  has none): each node scores `sum(count in its domain * log(domains + 2) + maxSkew - 1)`,
  rounded; nodes missing a key are ignored (score 0) unless the constraints are the system
  defaults; normalised as `100 * (max + min - score) / max` (fewest matching pods -> 100).
Counting pods per node is a derived NodeTable column per (namespace, selector), recounted only
for rows whose pods changed; per-domain sums are bincounts over the key's label column.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....api import errors
from ....api.labels import (
    NOTHING,
    LabelSelector,
    Operator,
    new_requirement,
    selector_from_label_selector,
)
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.priorities_meta import at
from ...nodeinfo import NodeInfo
from ...nodetable import ABSENT, Mask, NodeTable, build
from ..interface import (
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
from .cluster_lookups import default_selector, selectors_for_pod
from .common import arg, nodes_matching_required_affinity
from .tainttoleration import untolerated_reason

NAME = "PodTopologySpread"
#: upstream ErrReasonConstraintsNotMatch / ErrReasonNodeLabelNotMatch
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
#: upstream systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"maxSkew": 3, "topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY},
    {"maxSkew": 5, "topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY},
)
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_SELECTOR_KEY = NAME + "/default-selector"


@dataclass(frozen=True)
class Constraint:
    """upstream topologySpreadConstraint: one constraint, its selector compiled."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy Honor (the default)
    honor_taints: bool = False  # nodeTaintsPolicy Honor (default Ignore)


def _selector(raw: Any) -> LabelSelector:
    try:
        return selector_from_label_selector(raw)
    except (errors.StatusError, ValueError, TypeError, AttributeError):
        return NOTHING


def constraints_of(raw: Any, pod_labels: Mapping[str, str], when: str) -> list[Constraint]:
    """upstream filterTopologySpreadConstraints: the constraints with `whenUnsatisfiable ==
    when`, matchLabelKeys merged into the selector as `key in (the pod's value)`."""
    out = []
    for c in raw or ():
        if not isinstance(c, dict) or (c.get("whenUnsatisfiable") or DO_NOT_SCHEDULE) != when:
            continue
        selector = _selector(c.get("labelSelector"))
        keys = [k for k in c.get("matchLabelKeys") or () if k in pod_labels]
        if keys and selector is not NOTHING:
            selector = LabelSelector((*selector.requirements,
                                      *(new_requirement(k, Operator.IN, (pod_labels[k],))
                                        for k in keys)))
        out.append(Constraint(
            max_skew=int(c.get("maxSkew") or 1), topology_key=str(c.get("topologyKey") or ""),
            selector=selector, min_domains=int(c.get("minDomains") or 1),
            honor_affinity=(c.get("nodeAffinityPolicy") or "Honor") == "Honor",
            honor_taints=(c.get("nodeTaintsPolicy") or "Ignore") == "Honor"))
    return out


def _count_matching(info: NodeInfo, namespace: str, selector: LabelSelector) -> int:
    """upstream countPodsMatchSelector: pods in the namespace the selector matches, not being
    deleted."""
    count = 0
    for pod in info.pods.values():
        md = pod.get("metadata") or {}
        if md.get("deletionTimestamp") or (md.get("namespace") or "") != namespace:
            continue
        if selector.matches(md.get("labels")):
            count += 1
    return count


def matching_counts(nodes: NodeTable, namespace: str, selector: LabelSelector) -> np.ndarray:
    return nodes.derived(("pod-topology-spread", namespace, selector),
                         lambda info: _count_matching(info, namespace, selector))


def _tolerated(pod: PodMeta, nodes: NodeTable) -> Mask:
    sets = nodes.taint_set
    answers = np.array([untolerated_reason(t, pod.tolerations) is None
                        for t in nodes.taint_sets.values], dtype=bool)
    return answers[sets]


def _included(pod: PodMeta, nodes: NodeTable, constraints: list[Constraint],
              require_all: bool = True) -> list[Mask]:
    """Per constraint: rows that carry every constraint's key (when `require_all`) and pass
    its node inclusion policies."""
    base = nodes.everywhere()
    if require_all:
        for c in constraints:
            base &= nodes.label(c.topology_key) != ABSENT
    affinity = tolerated = None
    out = []
    for c in constraints:
        rows = base
        if c.honor_affinity:
            if affinity is None:
                affinity = nodes_matching_required_affinity(pod, nodes)
            rows = rows & affinity
        if c.honor_taints:
            if tolerated is None:
                tolerated = _tolerated(pod, nodes)
            rows = rows & tolerated
        out.append(rows)
    return out


@dataclass
class PreFilterState:
    """upstream preFilterState: per constraint, matching pods per topology value."""

    constraints: list[Constraint]
    counts: list[dict[str, int]] = field(default_factory=list)
    #: the counts per interned value id of the table PreFilter saw (id(table), arrays): Filter
    #: on that table indexes them directly; AddPod/RemovePod drop them
    by_id: tuple[int, list[np.ndarray]] | None = None

    def clone(self) -> PreFilterState:
        return PreFilterState(self.constraints, [dict(c) for c in self.counts], self.by_id)

    def counts_by_id(self, nodes: NodeTable, i: int) -> np.ndarray:
        if self.by_id is not None and self.by_id[0] == id(nodes):
            return self.by_id[1][i]
        return _by_id(nodes, self.counts[i])

    def min_match(self, i: int) -> int:
        counts = self.counts[i]
        if len(counts) < self.constraints[i].min_domains:
            return 0
        return min(counts.values()) if counts else 2**31 - 1


def domain_counts(nodes: NodeTable, key: str, rows: Mask,
                  per_row: np.ndarray) -> tuple[dict[str, int], np.ndarray]:
    """({topology value: sum of per_row over `rows` carrying it} for every value among
    `rows`, the same sums indexed by the table's value ids)."""
    ids = nodes.label(key)[rows]
    sums = np.bincount(ids, weights=per_row[rows],
                       minlength=len(nodes.strings.values)).astype(np.int64)
    sums[ABSENT] = 0
    present = np.flatnonzero(np.bincount(ids, minlength=len(nodes.strings.values)))
    values = nodes.strings.values
    return {values[i]: int(sums[i]) for i in present.tolist() if i != ABSENT}, sums


def _by_id(nodes: NodeTable, counts: dict[str, int]) -> np.ndarray:
    out = np.zeros(len(nodes.strings.values), dtype=np.int64)
    for value, count in counts.items():
        found = nodes.strings.lookup(value)
        if found >= 0:
            out[found] = count
    return out


class PodTopologySpread:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle | None) -> None:
        self.defaulting_type = arg(args, "defaultingType", SYSTEM_DEFAULTING)
        listed = arg(args, "defaultConstraints", [])
        self.system_defaulted = self.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints = (list(SYSTEM_DEFAULT_CONSTRAINTS) if self.system_defaulted
                                    else list(listed))
        self._selecting: Callable[[dict], list[LabelSelector]] = selectors_for_pod(handle)
        #: the defaults parsed once per kind (they name no matchLabelKeys: a profile's
        #: defaults cannot depend on the pod's labels)
        self._parsed_defaults: dict[str, list[Constraint]] | None = None
        if not any(c.get("matchLabelKeys") for c in self.default_constraints
                   if isinstance(c, dict)):
            self._parsed_defaults = {when: constraints_of(self.default_constraints, {}, when)
                                     for when in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)}

    # -- constraints ---------------------------------------------------------------------
    def constraints(self, pod: PodMeta, when: str, state: CycleState | None = None
                    ) -> list[Constraint]:
        """The pod's own constraints of kind `when`, else the defaults with the selector of
        the Services / controllers selecting it (none without such objects; looked up once
        per cycle when a `state` is given)."""
        raw = (pod.pod.get("spec") or {}).get("topologySpreadConstraints")
        if raw:
            return constraints_of(raw, pod.labels, when)
        defaults = (self._parsed_defaults[when] if self._parsed_defaults is not None
                    else constraints_of(self.default_constraints, pod.labels, when))
        if not defaults:
            return []
        selector = state.get(_SELECTOR_KEY) if state is not None else None
        if selector is None:
            selector = default_selector(self._selecting(pod.pod))
            if state is not None:
                state.write(_SELECTOR_KEY, selector)
        if selector.empty():
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains,
                           c.honor_affinity, c.honor_taints) for c in defaults]

    # -- PreFilter / Filter --------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE, state)
        if not constraints:
            return None, Status(Code.SKIP)
        s = PreFilterState(constraints)
        arrays = []
        for c, rows in zip(constraints, _included(pod, nodes, constraints)):
            per_row = matching_counts(nodes, pod.namespace, c.selector)
            counts, by_id = domain_counts(nodes, c.topology_key, rows, per_row)
            s.counts.append(counts)
            arrays.append(by_id)
        s.by_id = (id(nodes), arrays)
        state.write(_PRE_FILTER_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def _update(self, state: CycleState, pod: PodMeta, other: dict, node: NodeInfo,
                delta: int) -> Status | None:
        s: PreFilterState | None = state.get(_PRE_FILTER_KEY)
        other_md = other.get("metadata") or {}
        if s is None or node.node is None or (other_md.get("namespace") or "") != pod.namespace:
            return None
        one = build([node])
        included = _included(pod, one, s.constraints)
        labels = ((node.node.get("metadata") or {}).get("labels")) or {}
        for i, c in enumerate(s.constraints):
            if included[i][0] and c.selector.matches(other_md.get("labels")):
                value = labels[c.topology_key]
                s.counts[i][value] = s.counts[i].get(value, 0) + delta
                s.by_id = None  # the arrays no longer say the same
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
        if s is None or not s.constraints:
            return []
        decided = nodes.everywhere(False)
        missing = nodes.everywhere(False)
        skewed = nodes.everywhere(False)
        for i, c in enumerate(s.constraints):
            column = nodes.label(c.topology_key)
            miss = (column == ABSENT) & ~decided
            missing |= miss
            decided |= miss
            self_match = 1 if c.selector.matches(pod.labels) else 0
            skew = s.counts_by_id(nodes, i)[column] + self_match - s.min_match(i)
            over = (skew > c.max_skew) & ~decided
            skewed |= over
            decided |= over
        out: FilterFailures = []
        if missing.any():
            out.append((Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH), missing))
        if skewed.any():
            out.append((Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH), skewed))
        return out

    # -- PreScore / Score / NormalizeScore -----------------------------------------------
    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        if not nodes.size:
            return Status(Code.SKIP)
        constraints = self.constraints(pod, SCHEDULE_ANYWAY, state)
        if not constraints:
            return Status(Code.SKIP)
        has_own = bool((pod.pod.get("spec") or {}).get("topologySpreadConstraints"))
        require_all = has_own or not self.system_defaulted
        ignored = np.zeros(len(rows), dtype=bool)
        if require_all:
            for c in constraints:
                ignored |= at(nodes.label(c.topology_key), rows) == ABSENT
        kept = rows[~ignored] if require_all else rows
        included = _included(pod, nodes, constraints, require_all)
        n_values = len(nodes.strings.values)
        score = np.zeros(len(rows), dtype=np.float64)
        counted_by: dict[LabelSelector, np.ndarray] = {}  # the defaults share one selector
        for c, eligible in zip(constraints, included):
            per_row = counted_by.get(c.selector)
            if per_row is None:
                per_row = counted_by[c.selector] = matching_counts(nodes, pod.namespace, c.selector)
            column = nodes.label(c.topology_key)
            in_rows = at(column, rows)
            if c.topology_key == LABEL_HOSTNAME:
                size = len(kept)  # upstream: per-node counts, one domain per node
                counts = at(per_row, rows)
            else:
                present = np.bincount(at(column, kept), minlength=n_values) > 0
                size = int(np.count_nonzero(present))
                # pods on eligible nodes of the scored domains, summed per domain
                counted = np.where(eligible & present[column], per_row, 0)
                counts = np.bincount(column, weights=counted, minlength=n_values)[in_rows]
            part = counts * math.log(size + 2) + (c.max_skew - 1)
            if not require_all:  # a node without this key earns nothing for it
                part[in_rows == ABSENT] = 0.0
            score += part
        scores = np.floor(score + 0.5).astype(np.int64)
        scores[ignored] = 0
        state.write(_PRE_SCORE_KEY, (rows.copy(), scores, ignored))
        return None

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        found = state.get(_PRE_SCORE_KEY)
        if found is None or not np.array_equal(found[0], rows):
            self.pre_score(state, pod, nodes, rows)  # scored on other rows than PreScore saw
            found = state.get(_PRE_SCORE_KEY)
            if found is None:
                return np.zeros(len(rows), dtype=np.int64)
        return found[1].copy()

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: PodMeta, scores: np.ndarray) -> None:
        found = state.get(_PRE_SCORE_KEY)
        if found is None:
            return
        ignored = found[2]
        valid = ~ignored
        if not valid.any():
            scores[:] = 0
            return
        low = int(scores[valid].min())
        high = max(int(scores[valid].max()), 0)
        if high == 0:
            scores[valid] = 100
        else:
            scores[valid] = 100 * (high + low - scores[valid]) // high
        scores[ignored] = 0

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.ALL)),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.DELETE
                                                  | ActionType.UPDATE_NODE_LABEL
                                                  | ActionType.UPDATE_NODE_TAINT))]


def new(args: Mapping[str, Any], handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle)
