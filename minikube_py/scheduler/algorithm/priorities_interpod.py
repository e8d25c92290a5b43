"""InterPodAffinityPriority: soft inter-pod affinity, from both sides, scored 0-10.

Kubernetes piece: plugin/pkg/scheduler/algorithm/priorities/interpod_affinity.go (v1.5
CalculateInterPodAffinityPriority, NewInterPodAffinityPriority with
`--hard-pod-affinity-symmetric-weight` and `--failure-domains`).

Each candidate node collects points (float64, as upstream):
- for every preferred affinity term of the pod, + weight per pod the term selects in the
  node's topology domain; for every preferred anti-affinity term, - weight per such pod
  (an empty topologyKey, allowed there, means any of the failure domains);
- symmetrically, for every existing pod whose term selects the incoming pod: + the hard
  weight for each of its *required* affinity terms (an implicit preference: a pod others
  must be near is pulled towards them; 0 disables it), + weight for each preferred affinity
  term and - weight for each preferred anti-affinity term — to every node in that pod's
  domain.
Scores are int(10 * (points - min) / (max - min)) with min <= 0 <= max taken over the
candidates (all 0 when every node has the same points).

Vectorised: each of the pod's terms is one derived count column and one bincount over the
topology label (interpod_topology.domain_sums); the existing pods' terms come grouped from
the per-table ExistingTerms index, so a group of identical terms (a ReplicaSet's replicas)
is matched against the pod once.
"""

from __future__ import annotations

import numpy as np

from ..nodetable import NodeTable
from .interpod_topology import domain_sums, existing_terms, selected_counts
from .pod_affinity import (
    DEFAULT_FAILURE_DOMAINS,
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    PREFERRED_AFFINITY,
    PREFERRED_ANTI,
    REQUIRED_AFFINITY,
    topology_keys,
)
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, PriorityFunction, Scores, at


def inter_pod_affinity_points(pod: Obj, nodes: NodeTable, ctx: PriorityContext,
                              hard_weight: int, failure_domains: tuple[str, ...],
                              existing_preferred: bool = True) -> np.ndarray:
    """Upstream's pm.counts for every row of the table (float64). `existing_preferred=False`
    leaves out the existing pods' preferred terms (the InterPodAffinity plugin's
    ignorePreferredTermsOfExistingPods)."""
    meta = ctx.meta(pod)
    points = np.zeros(nodes.size, dtype=np.float64)
    affinity = meta.pod_affinity
    if affinity is not None:
        for sign, terms in ((1.0, affinity.preferred_affinity), (-1.0, affinity.preferred_anti)):
            for term in terms:
                counts = selected_counts(nodes, term)
                if counts.any():
                    points += sign * term.weight * domain_sums(
                        nodes, counts, topology_keys(term, failure_domains))
    namespace, labels = meta.namespace, meta.labels
    index = existing_terms(nodes)
    for kind, factor in ((REQUIRED_AFFINITY, float(hard_weight)), (PREFERRED_AFFINITY, 1.0),
                         (PREFERRED_ANTI, -1.0)):
        if not factor or (kind != REQUIRED_AFFINITY and not existing_preferred):
            continue
        for (_kind, namespaces, selector, key), rows, weights in index.of_kind(kind):
            if namespace in namespaces and selector.matches(labels):
                per_row = np.zeros(nodes.size, dtype=np.float64)
                per_row[rows] = weights
                keys = (key,) if key else failure_domains
                points += factor * domain_sums(nodes, per_row, keys)
    return points


def inter_pod_affinity_priority(hard_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                                failure_domains: tuple[str, ...] = DEFAULT_FAILURE_DOMAINS
                                ) -> PriorityFunction:
    """The InterPodAffinityPriority function for the given symmetric weight and domains."""
    domains = tuple(failure_domains)

    def interpod_affinity(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                          ctx: PriorityContext) -> Scores:
        points = at(inter_pod_affinity_points(pod, nodes, ctx, hard_weight, domains), rows)
        high = max(0.0, float(points.max(initial=0.0)))
        low = min(0.0, float(points.min(initial=0.0)))
        if high - low <= 0:
            return np.zeros(len(rows), dtype=np.int64)
        return (MAX_PRIORITY * ((points - low) / (high - low))).astype(np.int64)

    return interpod_affinity


#: InterPodAffinityPriority with upstream's defaults (symmetric weight 1, default domains)
INTER_POD_AFFINITY_PRIORITY = inter_pod_affinity_priority()
