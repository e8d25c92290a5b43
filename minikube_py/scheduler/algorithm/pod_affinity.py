"""Inter-pod affinity terms, compiled once per pod.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/util/topologies.go (v1.5:
GetNamespacesFromPodAffinityTerm, PodMatchesTermsNamespaceAndSelector, Topologies with the
`--failure-domains` DefaultKeys used for an empty topologyKey) and the term accessors of
predicates.go (getPodAffinityTerms / getPodAntiAffinityTerms), read from spec.affinity
(v1.6+; v1.5 kept the same structure in the scheduler.alpha.kubernetes.io/affinity
annotation).

Why a module of its own: the MatchInterPodAffinity predicate, the InterPodAffinityPriority and
the per-node index of existing pods' terms (interpod_topology) all read a pod's terms; they
are compiled once here (namespaces defaulted, label selector built, weights kept) so nothing
re-parses a selector per node. Pure: no table, no I/O (PodMeta imports it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...api import errors
from ...api.labels import NOTHING, LabelSelector, selector_from_label_selector

Obj = dict[str, Any]
_NO_LABELS: Mapping[str, str] = {}

#: upstream api.DefaultFailureDomains: the "all topologies" set for an empty topologyKey
DEFAULT_FAILURE_DOMAINS = ("kubernetes.io/hostname", "failure-domain.beta.kubernetes.io/zone",
                           "failure-domain.beta.kubernetes.io/region")
#: upstream api.DefaultHardPodAffinitySymmetricWeight
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

# the four kinds of term a pod can carry
REQUIRED_AFFINITY, REQUIRED_ANTI = "required-affinity", "required-anti-affinity"
PREFERRED_AFFINITY, PREFERRED_ANTI = "preferred-affinity", "preferred-anti-affinity"


class Term(NamedTuple):
    """One PodAffinityTerm, compiled: which pods it selects and the domain it speaks of."""

    kind: str
    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str  # "" only for preferred anti-affinity (then: the failure domains)
    weight: int  # the WeightedPodAffinityTerm's weight; 1 for required terms

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """upstream PodMatchesTermsNamespaceAndSelector."""
        return namespace in self.namespaces and self.selector.matches(labels)


@dataclass(frozen=True, slots=True)
class PodAffinity:
    """A pod's spec.affinity.podAffinity / podAntiAffinity terms, by kind."""

    required_affinity: tuple[Term, ...] = ()
    required_anti: tuple[Term, ...] = ()
    preferred_affinity: tuple[Term, ...] = ()
    preferred_anti: tuple[Term, ...] = ()

    def all(self) -> tuple[Term, ...]:
        return (*self.required_affinity, *self.required_anti, *self.preferred_affinity,
                *self.preferred_anti)


def _selector(spec: Any) -> LabelSelector:
    """upstream LabelSelectorAsSelector; a selector that does not parse selects nothing
    (upstream errors the term, and validation rejects such a pod anyway)."""
    try:
        return selector_from_label_selector(spec)
    except (errors.StatusError, ValueError, TypeError, AttributeError):
        return NOTHING


def _term(kind: str, raw: Any, namespace: str, weight: int = 1) -> Term | None:
    if not isinstance(raw, dict):
        return None
    namespaces = raw.get("namespaces") or ()
    return Term(kind, frozenset(namespaces) if namespaces else frozenset((namespace,)),
                _selector(raw.get("labelSelector")), str(raw.get("topologyKey") or ""), weight)


def _weighted(kind: str, entries: Any, namespace: str) -> Iterator[Term]:
    for entry in entries or ():
        if isinstance(entry, dict):
            term = _term(kind, entry.get("podAffinityTerm"), namespace,
                         int(entry.get("weight") or 0))
            if term is not None and term.weight:
                yield term


def compile_pod_affinity(pod: Obj) -> PodAffinity | None:
    """The pod's inter-pod terms; None when it has neither podAffinity nor podAntiAffinity.
    An empty `namespaces` means the pod's own namespace (GetNamespacesFromPodAffinityTerm)."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    positive = affinity.get("podAffinity") or {}
    negative = affinity.get("podAntiAffinity") or {}
    if not positive and not negative:
        return None
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"

    def terms(kind: str, entries: Any) -> tuple[Term, ...]:
        built = (_term(kind, raw, namespace) for raw in entries or ())
        return tuple(t for t in built if t is not None)

    compiled = PodAffinity(
        terms(REQUIRED_AFFINITY, positive.get(required)),
        terms(REQUIRED_ANTI, negative.get(required)),
        tuple(_weighted(PREFERRED_AFFINITY, positive.get(preferred), namespace)),
        tuple(_weighted(PREFERRED_ANTI, negative.get(preferred), namespace)))
    return compiled if compiled.all() else None


def topology_keys(term: Term, failure_domains: tuple[str, ...]) -> tuple[str, ...]:
    """upstream Topologies.NodesHaveSameTopologyKey: an empty key means "same value for any of
    the failure domains"."""
    return (term.topology_key,) if term.topology_key else failure_domains


_COMPILED: dict[tuple[str, str], PodAffinity] = {}
_COMPILED_KEPT = 50_000


def pod_affinity_of(pod: Obj) -> PodAffinity | None:
    """`compile_pod_affinity`, remembered per pod version: the incoming pod is read by the
    predicates and the priorities, and every pod on a node whose pods changed is re-read by
    the existing-terms index. Most pods have no inter-pod terms and answer None after two
    lookups, uncached. The memo is keyed on (uid, resourceVersion) and holds only the
    compiled terms: keyed on the object it would have to keep the object alive, and at
    50,000 pods stale pod versions held that way weighed ~0.5 GiB."""
    affinity = (pod.get("spec") or {}).get("affinity")
    if not affinity or not isinstance(affinity, dict) or not (
            affinity.get("podAffinity") or affinity.get("podAntiAffinity")):
        return None
    meta = pod.get("metadata") or {}
    key = (meta.get("uid") or "", meta.get("resourceVersion") or "")
    if not all(key):
        return compile_pod_affinity(pod)  # not a stored object: nothing identifies it
    found = _COMPILED.get(key)
    if found is None:
        if len(_COMPILED) >= _COMPILED_KEPT:
            _COMPILED.clear()
        compiled = compile_pod_affinity(pod)
        if compiled is None:
            return None
        found = _COMPILED[key] = compiled
    return found
