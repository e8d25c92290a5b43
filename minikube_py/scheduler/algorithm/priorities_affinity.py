"""Priorities for soft placement wishes: preferred node affinity and PreferNoSchedule taints.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/node_affinity.go
(CalculateNodeAffinityPriority, v1.2+) and taint_toleration.go (ComputeTaintTolerationPriority,
v1.3+), read from today's fields (pod spec.affinity / spec.tolerations, node spec.taints)
rather than the alpha annotations those versions used.

Why: these are the "soft" halves of the hard predicates. A pod can *prefer* nodes matching
weighted terms, and a node can *prefer* not to get pods that do not tolerate its taints. Both
score relative to the best/worst candidate: raw points per node, then normalised by the
maximum across the candidates (upstream's Map/Reduce pair), in float64 as upstream.
"""

from __future__ import annotations

from ..nodeinfo import NodeInfo
from .predicates_meta import Toleration, taint_of, tolerates
from .priorities_meta import MAX_PRIORITY, PREFER_NO_SCHEDULE, Obj, PriorityContext


def node_affinity_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """NodeAffinityPriority: each node earns the weights of the pod's
    preferredDuringSchedulingIgnoredDuringExecution terms it matches; scores are
    10 * points / max points (all 0 when no node earns any)."""
    terms = ctx.meta(pod).preferred_node_terms
    if not terms:
        return [0] * len(nodes)
    points = [sum(weight for weight, term in terms if term.matches(info.node)) for info in nodes]
    best = max(points, default=0)
    if best <= 0:
        return [0] * len(nodes)
    return [int(MAX_PRIORITY * (p / best)) for p in points]


def _intolerable(node: Obj | None, tolerations: tuple[Toleration, ...]) -> int:
    """How many PreferNoSchedule taints of the node none of the tolerations tolerates."""
    count = 0
    for taint in ((node or {}).get("spec") or {}).get("taints") or ():
        if taint.get("effect") != PREFER_NO_SCHEDULE:
            continue
        if not any(tolerates(t, taint_of(taint)) for t in tolerations):
            count += 1
    return count


def taint_toleration_priority(pod: Obj, nodes: list[NodeInfo],
                              ctx: PriorityContext) -> list[int]:
    """TaintTolerationPriority: fewer untolerated PreferNoSchedule taints is better;
    (1 - count / max count) * 10, and 10 for every node when no node has such a taint."""
    tolerations = ctx.meta(pod).prefer_no_schedule_tolerations
    counts = [_intolerable(info.node, tolerations) for info in nodes]
    worst = max(counts, default=0)
    if worst == 0:
        return [MAX_PRIORITY] * len(nodes)
    return [int((1.0 - c / worst) * MAX_PRIORITY) for c in counts]
