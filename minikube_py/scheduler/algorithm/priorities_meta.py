"""The vocabulary of the priority functions: scores, the context they read, pod-side metadata.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/types.go (PriorityFunction, PriorityConfig),
plugin/pkg/scheduler/api/types.go (HostPriority) and, from v1.5,
plugin/pkg/scheduler/algorithm/priorities/metadata.go (priorityMetadata: the pod's non-zero
requests, tolerations and affinity computed once per pod instead of once per node).

Why it exists: a priority scores every feasible node for one pod, so anything derived from the
pod alone (its requests, images, tolerations, compiled affinity terms) must be worked out once
per scheduling decision, not 1000 times. `PodMeta` holds those values lazily (a priority that
is not configured costs nothing) and `PriorityContext.meta(pod)` hands the same instance to
every priority of one `prioritize` call. Everything node-side (allocatable, requested sums,
zones, taints, labels) is a column of the NodeTable, so PodMeta holds nothing per node. The
context also carries the listers a priority may need (services, controllers), passed in so
this package does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..nodeinfo import Resources, pod_nonzero_requests
from ..nodetable import NodeTable
from .pod_affinity import PodAffinity, pod_affinity_of
from .predicates_meta import (
    PREFER_NO_SCHEDULE,
    TermMatcher,
    compile_term,
    Toleration,
    pod_tolerations,
)

Obj = dict[str, Any]

#: (node name, score): the extenders' and selectHost's wire form of one node's total
HostPriority = tuple[str, int]
#: upstream's maxPriority: every priority function scores on a 0..10 scale
MAX_PRIORITY = 10

__all__ = [
    "MAX_PRIORITY", "PREFER_NO_SCHEDULE", "HostPriority", "Obj", "PodMeta", "PriorityConfig",
    "PriorityContext", "PriorityFunction", "Scores", "at",
]


def _no_objects(_obj: Obj) -> list[Obj]:
    return []


def _no_pods(_node_name: str) -> list[Obj]:
    return []


def _no_node(_node_name: str) -> Obj | None:
    return None


@dataclass(eq=False)
class PriorityContext:
    """The listers a priority may consult (upstream PluginFactoryArgs), injected by the shell.

    `services_for_pod` / `controllers_for_pod` return the Services / ReplicationControllers and
    ReplicaSets in the pod's namespace whose selector matches it (upstream GetPodServices,
    GetPodControllers, GetPodReplicaSets). `all_pods` (optional, an addition) lists every pod
    the scheduler knows; ServiceAntiAffinity counts a service's pods cluster-wide as upstream's
    pod lister does, and falls back to the pods on the candidate nodes when it is None.
    """

    services_for_pod: Callable[[Obj], list[Obj]] = _no_objects
    controllers_for_pod: Callable[[Obj], list[Obj]] = _no_objects
    pods_on_node: Callable[[str], list[Obj]] = _no_pods
    node_of: Callable[[str], Obj | None] = _no_node
    all_pods: Callable[[], Iterable[Obj]] | None = None
    _meta: PodMeta | None = field(default=None, init=False, repr=False)

    @classmethod
    def empty(cls) -> PriorityContext:
        """A context with no Services, controllers or pods: spreading scores every node 10."""
        return cls()

    def meta(self, pod: Obj, *, fresh: bool = False) -> PodMeta:
        """The pod-side values for `pod`, shared by every priority scoring it.

        Keyed on the pod object's identity (the metadata keeps a reference, so the identity
        cannot be reused); `prioritize` passes fresh=True so each decision starts clean."""
        current = self._meta
        if fresh or current is None or current.pod is not pod:
            current = self._meta = PodMeta(pod)
        return current


#: int64 scores, one per entry of `rows`
Scores = np.ndarray
#: (pod, node table, feasible rows in table order, context) -> a 0..10 score per row
PriorityFunction = Callable[[Obj, NodeTable, np.ndarray, PriorityContext], Scores]


@dataclass(frozen=True)
class PriorityConfig:
    """One configured priority and its weight (upstream algorithm.PriorityConfig)."""

    name: str
    function: PriorityFunction
    weight: int


def at(column: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`column[rows]` for a table column. `rows` are distinct and in table order, so when
    there are as many as the column is long they are every row: the column is returned as is
    (a read-only use; a decision where every node fits is the common case at scale)."""
    return column if len(rows) == len(column) else column[rows]


class PodMeta:
    """What the priorities derive from the pod alone, computed on first use."""

    def __init__(self, pod: Obj):
        self.pod = pod

    @cached_property
    def spec(self) -> Obj:
        return self.pod.get("spec") or {}

    @cached_property
    def namespace(self) -> str:
        return (self.pod.get("metadata") or {}).get("namespace") or ""

    @cached_property
    def labels(self) -> dict[str, str]:
        return (self.pod.get("metadata") or {}).get("labels") or {}

    @cached_property
    def pod_affinity(self) -> PodAffinity | None:
        """spec.affinity.podAffinity / podAntiAffinity compiled (InterPodAffinityPriority)."""
        return pod_affinity_of(self.pod)

    @cached_property
    def controller_ref(self) -> tuple[str, str] | None:
        """(kind, uid) of the ownerReference marked controller (upstream GetControllerRef)."""
        for ref in (self.pod.get("metadata") or {}).get("ownerReferences") or ():
            if isinstance(ref, dict) and ref.get("controller"):
                return ref.get("kind") or "", ref.get("uid") or ""
        return None

    @cached_property
    def nonzero_requests(self) -> Resources:
        """The pod's requests with upstream's defaults for containers asking for nothing."""
        return pod_nonzero_requests(self.pod)

    @cached_property
    def images(self) -> tuple[str, ...]:
        """One entry per container (a repeated image counts once per container, as upstream)."""
        return tuple(c.get("image") or "" for c in self.spec.get("containers") or ())

    @cached_property
    def prefer_no_schedule_tolerations(self) -> tuple[Toleration, ...]:
        """Tolerations that can tolerate a PreferNoSchedule taint (effect empty or equal)."""
        return tuple(t for t in pod_tolerations(self.spec) if t[3] in ("", PREFER_NO_SCHEDULE))

    @cached_property
    def preferred_node_terms(self) -> tuple[tuple[int, TermMatcher], ...]:
        """(weight, compiled term) for each preferred node-affinity term that has a weight and
        can select something. Terms compile as the required ones do (predicates_meta): an
        empty term, or one that does not compile (upstream NodeSelectorRequirementsAsSelector
        errors; validation rejects such pods), selects no node and so earns no points."""
        affinity = (self.spec.get("affinity") or {}).get("nodeAffinity") or {}
        terms = []
        for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            weight = int(term.get("weight") or 0)
            matcher = compile_term(term.get("preference") or {}) if weight else None
            if matcher is not None:
                terms.append((weight, matcher))
        return tuple(terms)
