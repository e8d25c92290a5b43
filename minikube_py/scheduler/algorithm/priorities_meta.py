"""The vocabulary of the priority functions: scores, the context they read, pod-side metadata.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/types.go (PriorityFunction, PriorityConfig),
plugin/pkg/scheduler/api/types.go (HostPriority) and, from v1.5,
plugin/pkg/scheduler/algorithm/priorities/metadata.go (priorityMetadata: the pod's non-zero
requests, tolerations and affinity computed once per pod instead of once per node).

Why it exists: a priority scores every feasible node for one pod, so anything derived from the
pod alone (its requests, images, tolerations, compiled affinity terms) must be worked out once
per scheduling decision, not 1000 times. `PodMeta` holds those values lazily (a priority that
is not configured costs nothing) and `PriorityContext.meta(pod)` hands the same instance to
every priority of one `prioritize` call. The context also carries the listers a priority may
need (services, controllers), passed in so this package does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ...api import errors
from ...api.labels import NOTHING, LabelSelector, new_requirement
from ..nodeinfo import NodeInfo, Resources, pod_nonzero_requests
from .predicates_meta import NODE_SELECTOR_OPERATORS, Toleration, pod_tolerations

Obj = dict[str, Any]

#: (node name, score); a single priority scores 0..MAX_PRIORITY, `prioritize` sums weighted ones
HostPriority = tuple[str, int]
#: upstream's maxPriority: every priority function scores on a 0..10 scale
MAX_PRIORITY = 10

PREFER_NO_SCHEDULE = "PreferNoSchedule"



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


#: pod, candidate nodes, context -> one score (0..10) per node, in the nodes' order
PriorityFunction = Callable[[Obj, list[NodeInfo], PriorityContext], list[int]]


@dataclass(frozen=True)
class PriorityConfig:
    """One configured priority and its weight (upstream algorithm.PriorityConfig)."""

    name: str
    function: PriorityFunction
    weight: int


class PodMeta:
    """What the priorities derive from the pod alone, computed on first use."""

    def __init__(self, pod: Obj):
        self.pod = pod
        self._allocatable: dict[int, tuple[NodeInfo, Obj | None, Resources]] = {}

    @cached_property
    def spec(self) -> Obj:
        return self.pod.get("spec") or {}

    @cached_property
    def namespace(self) -> str:
        return (self.pod.get("metadata") or {}).get("namespace") or ""

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
    def preferred_node_terms(self) -> tuple[tuple[int, NodeTerm], ...]:
        """(weight, compiled term) for each preferred node-affinity term with a weight."""
        affinity = (self.spec.get("affinity") or {}).get("nodeAffinity") or {}
        terms = []
        for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            weight = int(term.get("weight") or 0)
            if weight:
                terms.append((weight, NodeTerm(term.get("preference") or {})))
        return tuple(terms)

    def allocatable(self, info: NodeInfo) -> Resources:
        """The node's allocatable cpu/memory, parsed once per node per decision (re-read if
        the NodeInfo now holds a different Node object)."""
        hit = self._allocatable.get(id(info))
        if hit is not None and hit[0] is info and hit[1] is info.node:
            return hit[2]
        resources = info.allocatable()[0]
        self._allocatable[id(info)] = (info, info.node, resources)
        return resources


class NodeTerm:
    """A NodeSelectorTerm compiled once: matchExpressions over node labels and matchFields over
    `metadata.name`, AND-ed. A term with neither selects nothing, and so does one that does not
    compile (upstream NodeSelectorRequirementsAsSelector errors; validation rejects such pods)."""

    __slots__ = ("_fields", "_labels")

    def __init__(self, term: Obj):
        self._labels = _compile(term.get("matchExpressions"))
        self._fields = _compile(term.get("matchFields"))
        if self._labels is None and self._fields is None:
            self._labels = NOTHING

    def matches(self, node: Obj | None) -> bool:
        md = (node or {}).get("metadata") or {}
        if self._labels is not None and not self._labels.matches(md.get("labels") or {}):
            return False
        return self._fields is None or self._fields.matches({"metadata.name": md.get("name", "")})


def _compile(requirements: Any) -> LabelSelector | None:
    """Node-selector requirements -> selector; None when there are none, NOTHING if invalid."""
    if not requirements:
        return None
    try:
        return LabelSelector(
            new_requirement(r.get("key") or "", NODE_SELECTOR_OPERATORS[r.get("operator")],
                            r.get("values") or ())
            for r in requirements
        )
    except (errors.StatusError, KeyError, TypeError, AttributeError):
        return NOTHING

