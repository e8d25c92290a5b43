"""Priorities for soft placement wishes: preferred node affinity and PreferNoSchedule taints.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/node_affinity.go
(CalculateNodeAffinityPriority, v1.2+) and taint_toleration.go (ComputeTaintTolerationPriority,
v1.3+), read from today's fields (pod spec.affinity / spec.tolerations, node spec.taints)
rather than the alpha annotations those versions used.

Why: these are the "soft" halves of the hard predicates. A pod can *prefer* nodes matching
weighted terms, and a node can *prefer* not to get pods that do not tolerate its taints. Both
score relative to the best/worst candidate: raw points per node, then normalised by the
maximum across the candidates (upstream's Map/Reduce pair), in float64 as upstream. Each term
is answered for the whole table at once (label columns, per distinct value), and the taints
once per distinct set of PreferNoSchedule taints, so neither walks the nodes.
"""

from __future__ import annotations

import numpy as np

from ..nodetable import NodeTable
from .predicates_meta import Taint, Toleration, tolerates
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, Scores, at


def node_affinity_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                           ctx: PriorityContext) -> Scores:
    """NodeAffinityPriority: each node earns the weights of the pod's
    preferredDuringSchedulingIgnoredDuringExecution terms it matches; scores are
    int(10 * (points / max points)) (all 0 when no node earns any)."""
    terms = ctx.meta(pod).preferred_node_terms
    points = np.zeros(len(rows), dtype=np.int64)
    for weight, term in terms:
        points += weight * at(term(nodes), rows)
    best = int(points.max(initial=0))
    if best <= 0:
        return np.zeros(len(rows), dtype=np.int64)
    return (MAX_PRIORITY * (points / best)).astype(np.int64)


def _intolerable(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    """How many of the (PreferNoSchedule) taints none of the tolerations tolerates."""
    return sum(1 for taint in taints if not any(tolerates(t, taint) for t in tolerations))


#: public for the TaintToleration plugin (one count, two callers)
intolerable_count = _intolerable


def taint_toleration_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                              ctx: PriorityContext) -> Scores:
    """TaintTolerationPriority: fewer untolerated PreferNoSchedule taints is better;
    int((1 - count / max count) * 10), and 10 for every node when no node has such a taint.
    Counted once per distinct taint set (`prefer_taint_set`), then broadcast to the rows."""
    tolerations = ctx.meta(pod).prefer_no_schedule_tolerations
    sets = at(nodes.prefer_taint_set, rows)
    per_set = np.zeros(len(nodes.taint_sets.values), dtype=np.int64)
    for set_id in np.unique(sets).tolist():
        per_set[set_id] = _intolerable(nodes.taint_sets.values[set_id], tolerations)
    counts = per_set[sets]
    worst = int(counts.max(initial=0))
    if worst == 0:
        return np.full(len(rows), MAX_PRIORITY, dtype=np.int64)
    return ((1.0 - counts / worst) * MAX_PRIORITY).astype(np.int64)
