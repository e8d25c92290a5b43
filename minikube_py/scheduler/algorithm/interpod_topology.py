"""The topology arithmetic of inter-pod affinity over the NodeTable, and existing pods' terms.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities/util/topologies.go (v1.5
NodesHaveSameTopologyKey, with the `--failure-domains` keys standing for an empty
topologyKey), the pod walks of predicates.go (anyPodMatchesPodAffinityTerm,
getMatchingAntiAffinityTerms) and of interpod_affinity.go (processTerm), and, from later
upstream, NodeInfo.PodsWithAffinity (only pods with terms are looked at for the symmetric half).

Why: the MatchInterPodAffinity predicate and the InterPodAffinityPriority both ask "how many
pods matching this term run in each node's topology domain?". Upstream answers by walking
every pod for every node. Here the matching pods are counted once per node (a derived
NodeTable column, recounted only for nodes whose pods changed) and the per-domain totals are
one `bincount` over the topology label's column (`domain_sums`), so a decision costs a few
array operations per term however many nodes and pods there are. Existing pods' own terms
(the symmetric half: their required anti-affinity against the incoming pod, their affinity
terms for the priority) are kept in an `ExistingTerms` index per table, grouped by what they
say and refreshed only for rows whose NodeInfo generation changed since the last decision.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from itertools import combinations

import numpy as np

from ...api.labels import LabelSelector
from ..nodeinfo import NodeInfo
from ..nodetable import ABSENT, NodeTable
from .pod_affinity import Term, pod_affinity_of

_NO_LABELS: Mapping[str, str] = {}

def _count_selected(info: NodeInfo, namespaces: frozenset[str], selector: LabelSelector) -> int:
    count = 0
    for pod in info.pods.values():
        md = pod.get("metadata") or _NO_LABELS
        if (md.get("namespace") or "") in namespaces and selector.matches(md.get("labels")):
            count += 1
    return count


def selected_counts(nodes: NodeTable, term: Term) -> np.ndarray:
    """Pods on each row that `term` selects (namespaces and label selector), as a derived
    column recounted only where pods changed: replicas asking the same question one after
    another pay for the one node that got the previous replica."""
    key = ("pod-affinity", term.namespaces, term.selector)
    return nodes.derived(key, lambda info: _count_selected(info, term.namespaces, term.selector))


def domain_sums(nodes: NodeTable, weights: np.ndarray, keys: Iterable[str]) -> np.ndarray:
    """For every row r: the sum of `weights[r']` over the rows r' that share a topology domain
    with r, i.e. carry the same value of some key in `keys` (both rows must carry it).

    One key is one bincount over the label's value ids. Several keys (an empty topologyKey:
    the failure domains) count each row r' once even when it shares several keys with r:
    inclusion-exclusion over the key subsets, grouping rows by their tuple of values."""
    keys = tuple(keys)
    total = np.zeros(nodes.size, dtype=np.float64)
    if not keys or not nodes.size:
        return total
    columns = {key: nodes.label(key) for key in keys}
    if len(keys) == 1:
        column = columns[keys[0]]
        by_value = np.bincount(column, weights=weights, minlength=len(nodes.strings.values))
        by_value[ABSENT] = 0
        return by_value[column]
    for size in range(1, len(keys) + 1):
        sign = 1.0 if size % 2 else -1.0
        for subset in combinations(keys, size):
            stacked = np.stack([columns[k] for k in subset], axis=1)
            present = np.all(stacked != ABSENT, axis=1)
            if not present.any():
                continue
            _, group = np.unique(stacked[present], axis=0, return_inverse=True)
            group = group.reshape(-1)
            sums = np.bincount(group, weights=weights[present])
            total[present] += sign * sums[group]
    return total


def shares_domain(nodes: NodeTable, rows: np.ndarray, keys: Iterable[str]) -> np.ndarray:
    """Rows sharing a topology domain (some key, same value, both carry it) with any of
    `rows`."""
    out = nodes.everywhere(False)
    if not len(rows):
        return out
    for key in keys:
        column = nodes.label(key)
        values = np.unique(column[rows])
        values = values[values != ABSENT]
        if len(values):
            out |= np.isin(column, values)
    return out


# ---------------------------------------------------------------------------------------------
# Existing pods' own terms


_MEMO_KEY = "pod-affinity-terms"


def _row_terms(info: NodeInfo) -> tuple[Term, ...]:
    """Every inter-pod term of the pods on one node, memoised on the NodeInfo (its memo is
    dropped whenever its pods change)."""
    cached = info.memo.get(_MEMO_KEY)
    if cached is None:
        found: list[Term] = []
        for pod in info.pods.values():
            compiled = pod_affinity_of(pod)
            if compiled is not None:
                found.extend(compiled.all())
        cached = info.memo[_MEMO_KEY] = tuple(found)
    return cached


#: (kind, namespaces, selector, topology key): existing terms that act alike
GroupKey = tuple[str, frozenset[str], LabelSelector, str]


class ExistingTerms:
    """The inter-pod terms of the pods already on the table's nodes, grouped by what they
    say (`GroupKey`) with, per group, the rows holding such a term and how many (or how much
    weight) each holds. Kept per NodeTable and refreshed for changed rows only."""

    def __init__(self) -> None:
        self.generations = np.zeros(0, dtype=np.int64)
        self.row_terms: list[tuple[Term, ...]] = []
        self.groups: dict[GroupKey, dict[int, int]] = {}
        self._arrays: dict[GroupKey, tuple[np.ndarray, np.ndarray]] = {}

    def refresh(self, nodes: NodeTable) -> ExistingTerms:
        n = nodes.size
        if len(self.row_terms) > n:  # cannot happen (rows are only appended); start over
            self.__init__()  # type: ignore[misc]
        old = len(self.row_terms)
        self.row_terms.extend(() for _ in range(n - old))
        generations = np.full(n, -1, dtype=np.int64)
        generations[:old] = self.generations[:old]
        for row in np.flatnonzero(generations != nodes.generation).tolist():
            self._replace(row, _row_terms(nodes.infos[row]))
        self.generations = nodes.generation.copy()
        return self

    def _replace(self, row: int, terms: tuple[Term, ...]) -> None:
        for term, sign in ((t, -1) for t in self.row_terms[row]):
            self._add(row, term, sign)
        for term in terms:
            self._add(row, term, 1)
        self.row_terms[row] = terms

    def _add(self, row: int, term: Term, sign: int) -> None:
        key = (term.kind, term.namespaces, term.selector, term.topology_key)
        group = self.groups.setdefault(key, {})
        left = group.get(row, 0) + sign * term.weight
        if left:
            group[row] = left
        else:
            group.pop(row, None)
            if not group:
                del self.groups[key]
        self._arrays.pop(key, None)

    def of_kind(self, kind: str) -> Iterator[tuple[GroupKey, np.ndarray, np.ndarray]]:
        """(group, rows, weight per row) for every group of `kind`."""
        for key, group in self.groups.items():
            if key[0] != kind:
                continue
            arrays = self._arrays.get(key)
            if arrays is None:
                arrays = self._arrays[key] = (
                    np.fromiter(group.keys(), dtype=np.int64, count=len(group)),
                    np.fromiter(group.values(), dtype=np.float64, count=len(group)))
            yield key, arrays[0], arrays[1]


_INDEXES: weakref.WeakKeyDictionary[NodeTable, ExistingTerms] = weakref.WeakKeyDictionary()


def existing_terms(nodes: NodeTable) -> ExistingTerms:
    """The ExistingTerms index of `nodes`, brought up to date (a rebuilt table is a new
    object and gets a new index)."""
    index = _INDEXES.get(nodes)
    if index is None:
        index = _INDEXES[nodes] = ExistingTerms()
    return index.refresh(nodes)
