"""Priority functions by name, and PrioritizeNodes: the weighted sum that ranks feasible nodes.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities (the functions, split here into
priorities_resources / priorities_spreading / priorities_affinity, with the shared types in
priorities_meta), the registrations in algorithmprovider/defaults and factory/plugins.go, and
generic_scheduler.go prioritizeNodes (v1.0) / PrioritizeNodes (v1.5).

Why: after the predicates have kept the nodes a pod *can* run on, each configured priority
scores every one of them 0-10 and `prioritize` adds the scores up, each times its weight;
selectHost then picks among the best. A priority is a pure function of (pod, the NodeTable
and its candidate rows, injected listers), registered by its upstream name so a Policy file
or provider can name it; the two that take Policy arguments are factories. `prioritize`
computes the pod-side values once per call (PriorityContext.meta) and skips weight-0 entries
as v1.0 did.

Shape of a call: the candidates are rows of the NodeTable (`rows`, the feasible ones in table
order), and every priority answers one int64 array aligned with them, so the weighted sum is a
few array operations however many nodes there are.
"""

from __future__ import annotations

import numpy as np

from ..nodetable import NodeTable
from .priorities_affinity import node_affinity_priority, taint_toleration_priority
from .priorities_avoid import node_prefer_avoid_pods_priority
from .priorities_interpod import INTER_POD_AFFINITY_PRIORITY, inter_pod_affinity_priority
from .priorities_meta import (
    MAX_PRIORITY,
    HostPriority,
    PodMeta,
    PriorityConfig,
    PriorityContext,
    PriorityFunction,
    Scores,
)
from .priorities_resources import (
    balanced_resource_allocation,
    equal_priority,
    image_locality_priority,
    least_requested_priority,
    most_requested_priority,
)
from .priorities_spreading import (
    node_label_priority,
    selector_spread_priority,
    service_anti_affinity,
    service_spreading_priority,
)

__all__ = [
    "MAX_PRIORITY", "PRIORITIES", "HostPriority", "PodMeta", "PriorityConfig", "PriorityContext",
    "PriorityFunction", "Scores", "balanced_resource_allocation", "equal_priority",
    "image_locality_priority", "inter_pod_affinity_priority", "least_requested_priority",
    "most_requested_priority", "node_affinity_priority", "node_label_priority",
    "node_prefer_avoid_pods_priority", "prioritize", "selector_spread_priority",
    "service_anti_affinity", "service_spreading_priority", "taint_toleration_priority",
]

#: the argument-free priorities under their upstream names (Policy `priorities[].name`);
#: CalculateNodeLabelPriority and ServiceAntiAffinity need arguments: use the factories
PRIORITIES: dict[str, PriorityFunction] = {
    "LeastRequestedPriority": least_requested_priority,
    "MostRequestedPriority": most_requested_priority,
    "BalancedResourceAllocation": balanced_resource_allocation,
    "SelectorSpreadPriority": selector_spread_priority,
    "ServiceSpreadingPriority": service_spreading_priority,
    "ImageLocalityPriority": image_locality_priority,
    "NodeAffinityPriority": node_affinity_priority,
    "TaintTolerationPriority": taint_toleration_priority,
    "EqualPriority": equal_priority,
    "NodePreferAvoidPodsPriority": node_prefer_avoid_pods_priority,
    # with the default symmetric weight and failure domains; factory.py builds it for the
    # configured --hard-pod-affinity-symmetric-weight / --failure-domains
    "InterPodAffinityPriority": INTER_POD_AFFINITY_PRIORITY,
}


def prioritize(pod: dict, nodes: NodeTable, rows: np.ndarray, configs: list[PriorityConfig],
               ctx: PriorityContext,
               parts: list[tuple[str, int, np.ndarray]] | None = None) -> Scores:
    """Sum of score * weight for each candidate row, aligned with `rows` (int64).

    No configs -> EqualPriority (1 each), as upstream, so selectHost still has totals to pick
    from. A weight-0 priority is not run. A function returning the wrong number of scores is a
    programming error and raises ValueError rather than silently misattributing scores.
    `parts`: gets (name, weight, scores) of each priority run — the explanation's per-priority
    columns (upstream logs them at -v=10); the arrays are the ones computed anyway."""
    if not configs:
        return np.ones(len(rows), dtype=np.int64)
    ctx.meta(pod, fresh=True)
    totals = np.zeros(len(rows), dtype=np.int64)
    for config in configs:
        weight = config.weight
        if weight == 0:
            continue
        scores = np.asarray(config.function(pod, nodes, rows, ctx))
        if scores.shape != totals.shape:
            raise ValueError(f"priority {config.name} returned {scores.size} scores "
                             f"for {len(totals)} nodes")
        totals += scores * weight
        if parts is not None:
            parts.append((config.name, weight, scores))
    return totals
