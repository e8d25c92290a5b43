"""MatchInterPodAffinity: the pod's required inter-pod (anti-)affinity, and existing pods'.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.5)
PodAffinityChecker.InterPodAffinityMatches (NewPodAffinityPredicate with the
`--failure-domains` keys for an empty topologyKey), with the failure reasons of v1.11+.

A node fits when, in this order:
1. no existing pod's required anti-affinity term selects the pod while that pod runs in the
   node's topology domain (the symmetry: anti-affinity is honoured from both sides) —
   else "node(s) didn't satisfy existing pods anti-affinity rules";
2. for each of the pod's required affinity terms, some pod the term selects runs in the
   node's domain — else "node(s) didn't match pod affinity rules". Exception (v1.5's "first
   pod of a group"): when no pod anywhere matches the term and the pod matches its own term,
   the term is disregarded, so the first replica of a self-affine set can schedule;
3. for each of the pod's required anti-affinity terms, no pod the term selects runs in the
   node's domain — else "node(s) didn't match pod anti-affinity rules".
A failing node is charged "node(s) didn't match pod affinity/anti-affinity" plus the specific
reason, as upstream v1.11–1.17 report it. Terms are evaluated per term for the whole table at
once (interpod_topology); v1.5's per-term reading of the affinity terms is kept (later
upstream required one pod to satisfy all affinity terms together).
"""

from __future__ import annotations

import numpy as np

from ..nodetable import NodeTable
from .interpod_topology import domain_sums, existing_terms, selected_counts, shares_domain
from .pod_affinity import DEFAULT_FAILURE_DOMAINS, REQUIRED_ANTI, Term, topology_keys
from .predicates_meta import Failure, PodMeta, Predicate

ERR_POD_AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity/anti-affinity"
ERR_POD_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH = \
    "node(s) didn't satisfy existing pods anti-affinity rules"


def existing_anti_affinity(meta: PodMeta, nodes: NodeTable,
                           failure_domains: tuple[str, ...]) -> np.ndarray:
    """Rows where placing the pod would break an existing pod's required anti-affinity
    (upstream satisfiesExistingPodsAntiAffinity). Terms that say the same thing are grouped,
    so each distinct term is matched against the pod once."""
    violated = nodes.everywhere(False)
    for (_kind, namespaces, selector, key), rows, _weights in \
            existing_terms(nodes).of_kind(REQUIRED_ANTI):
        if meta.namespace in namespaces and selector.matches(meta.labels):
            keys = (key,) if key else failure_domains
            violated |= shares_domain(nodes, rows, keys)
    return violated


def _in_domain(nodes: NodeTable, term: Term, failure_domains: tuple[str, ...]
               ) -> tuple[np.ndarray, int]:
    """(rows whose domain holds a pod `term` selects, how many such pods exist at all)."""
    counts = selected_counts(nodes, term)
    total = int(counts.sum())
    if not total:
        return nodes.everywhere(False), 0
    return domain_sums(nodes, counts, topology_keys(term, failure_domains)) > 0, total


def match_inter_pod_affinity(failure_domains: tuple[str, ...] = DEFAULT_FAILURE_DOMAINS
                             ) -> Predicate:
    """The MatchInterPodAffinity predicate for the given failure domains."""
    domains = tuple(failure_domains)

    def inter_pod_affinity(meta: PodMeta, nodes: NodeTable) -> list[Failure]:
        existing = existing_anti_affinity(meta, nodes, domains)
        affinity = meta.pod_affinity
        failing_affinity = nodes.everywhere(False)
        failing_anti = nodes.everywhere(False)
        if affinity is not None:
            for term in affinity.required_affinity:
                in_domain, total = _in_domain(nodes, term, domains)
                if not total and term.selects(meta.namespace, meta.labels):
                    continue  # the first pod of a self-affine group
                failing_affinity |= ~in_domain
            for term in affinity.required_anti:
                failing_anti |= _in_domain(nodes, term, domains)[0]
        failing_affinity &= ~existing
        failing_anti &= ~(existing | failing_affinity)
        if not (existing.any() or failing_affinity.any() or failing_anti.any()):
            return []
        return [(ERR_POD_AFFINITY_NOT_MATCH, existing | failing_affinity | failing_anti),
                (ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH, existing),
                (ERR_POD_AFFINITY_RULES_NOT_MATCH, failing_affinity),
                (ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH, failing_anti)]

    return inter_pod_affinity


#: MatchInterPodAffinity with upstream's default failure domains
MATCH_INTER_POD_AFFINITY = match_inter_pod_affinity()
