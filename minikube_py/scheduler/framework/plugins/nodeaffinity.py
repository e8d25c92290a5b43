"""NodeAffinity: nodeSelector and required node affinity as a Filter, preferred terms as a Score.

Kubernetes piece: pkg/scheduler/framework/plugins/nodeaffinity (1.31), the successor of the
MatchNodeSelector predicate and NodeAffinityPriority, with NodeAffinityArgs.addedAffinity
(a profile-wide affinity every pod of the profile must also satisfy, and preferred terms
every pod also earns points for).

- PreFilter: Skip when the pod has no nodeSelector, no required affinity and the profile adds
  none. When every required term names nodes by `matchFields metadata.name In`, the
  candidates narrow to those names (PreFilterResult; the runtime then filters only those rows)
  — and to none, "pod affinity terms conflict", when the terms' names cannot agree.
- Filter: rows failing the added affinity are "node(s) didn't match scheduler-enforced node
  affinity"; rows failing the pod's own are "node(s) didn't match Pod's node affinity/selector";
  both UnschedulableAndUnresolvable. The terms are compiled once per pod (PodMeta) and each
  is a few label-column comparisons.
- Score: the sum of the weights of the matched preferred terms (the pod's and the added
  ones); NormalizeScore is DefaultNormalizeScore (best node -> 100).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_meta import PodMeta, TermMatcher, compile_term
from ...algorithm.priorities_meta import at
from ...nodetable import Mask, NodeTable
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
from .common import (
    arg,
    default_normalize_score,
    nodes_matching_required_affinity,
    priority_context,
)

NAME = "NodeAffinity"
#: upstream nodeaffinity.ErrReasonPod
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: upstream errReasonEnforced
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: upstream errReasonConflict
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def compile_selector(selector: Any) -> tuple[TermMatcher, ...]:
    """A NodeSelector's terms compiled (ORed); terms that select nothing are dropped."""
    terms = (selector or {}).get("nodeSelectorTerms") or () if isinstance(selector, dict) else ()
    compiled = (compile_term(t) for t in terms if isinstance(t, dict))
    return tuple(t for t in compiled if t is not None)


def compile_preferred(entries: Any) -> tuple[tuple[int, TermMatcher], ...]:
    out = []
    for entry in entries or ():
        if not isinstance(entry, dict):
            continue
        weight = int(entry.get("weight") or 0)
        matcher = compile_term(entry.get("preference") or {}) if weight else None
        if matcher is not None:
            out.append((weight, matcher))
    return tuple(out)


def any_term(nodes: NodeTable, terms: tuple[TermMatcher, ...]) -> Mask:
    rows = nodes.everywhere(False)
    for term in terms:
        rows |= term(nodes)
    return rows


def named_nodes(pod: PodMeta) -> tuple[frozenset[str] | None, bool]:
    """(node names the required terms restrict the pod to, or None for no restriction;
    whether the terms conflict) — upstream PreFilter's metadata.name reading: within a term
    the `metadata.name In` requirements intersect, across terms they unite, and a term
    without one leaves every node eligible."""
    affinity = ((pod.pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get(_REQUIRED) or {}).get("nodeSelectorTerms") or ()
    if not terms:
        return None, False
    names: set[str] | None = None
    for term in terms:
        term_names: set[str] | None = None
        for requirement in (term or {}).get("matchFields") or ():
            if requirement.get("key") == "metadata.name" and requirement.get("operator") == "In":
                values = set(requirement.get("values") or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None, False
        names = term_names if names is None else names | term_names
    if names is not None and not names:
        return None, True
    return (frozenset(names) if names else None), False


class NodeAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any]) -> None:
        added = arg(args, "addedAffinity", None) or {}
        required = added.get(_REQUIRED)
        self.added_required = None if required is None else compile_selector(required)
        self.added_preferred = compile_preferred(added.get(_PREFERRED))

    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if pod.node_affinity is None and not pod.node_selector and self.added_required is None:
            return None, Status(Code.SKIP)
        names, conflict = named_nodes(pod)
        if conflict:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return (PreFilterResult(names) if names else None), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        out: FilterFailures = []
        enforced = nodes.everywhere(False)
        if self.added_required is not None:
            enforced = ~any_term(nodes, self.added_required)
            if enforced.any():
                out.append((Status.unresolvable(ERR_REASON_ENFORCED), enforced))
        mismatch = ~nodes_matching_required_affinity(pod, nodes) & ~enforced
        if mismatch.any():
            out.append((Status.unresolvable(ERR_REASON_POD), mismatch))
        return out

    def _preferred(self, state: CycleState, pod: PodMeta) -> tuple[tuple[int, TermMatcher], ...]:
        return priority_context(state, pod).meta(pod.pod).preferred_node_terms + self.added_preferred

    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None:
        return None if self._preferred(state, pod) else Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        points = np.zeros(len(rows), dtype=np.int64)
        for weight, term in self._preferred(state, pod):
            points += weight * at(term(nodes), rows)
        return points

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodMeta, scores: np.ndarray) -> None:
        default_normalize_score(scores)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeAffinity:
    return NodeAffinity(args)
