"""Priorities that score a node by what it holds: requested cpu/memory and present images.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities (v1.0-v1.5) LeastRequestedPriority,
MostRequestedPriority, BalancedResourceAllocation, ImageLocalityPriority and
plugin/pkg/scheduler/generic_scheduler.go EqualPriority.

Why these formulas: they are upstream's, integer arithmetic included, so a cluster scores as a
real scheduler would: `((capacity - requested) * 10) / capacity` truncates (2.5 -> 2) and the
cpu and memory scores are averaged with integer division (int64 floor division over the
columns: every operand is non-negative where the result is kept, so floor is Go's truncation).
BalancedResourceAllocation is float64 as upstream, which converts both operands to float64
before dividing, exactly what numpy does. "Requested" is the node's non-zero sum (a container
asking for nothing counts as 100m / 200MB) plus the pod being placed, so empty nodes of
different sizes still differ and zero-request pods still spread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..nodetable import NodeTable
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, Scores, at

_MB = 1024 * 1024
#: ImageLocality's range: 90% of Docker Hub images fall between these sizes (upstream comment)
MIN_IMAGE_SIZE = 23 * _MB
MAX_IMAGE_SIZE = 1000 * _MB

#: (requested, capacity) arrays -> 0..10 per entry
_Score = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _requested(pod: Obj, nodes: NodeTable, rows: np.ndarray,
               ctx: PriorityContext) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(cpu requested, cpu allocatable, memory requested, memory allocatable) per row: the
    node's non-zero requested sums with the incoming pod's added."""
    pod_request = ctx.meta(pod).nonzero_requests
    return (at(nodes.nonzero_cpu, rows) + pod_request.milli_cpu, at(nodes.alloc_cpu, rows),
            at(nodes.nonzero_memory, rows) + pod_request.memory, at(nodes.alloc_memory, rows))


def unused_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """upstream calculateScore / calculateUnusedScore: free share on a 0-10 scale, 0 when the
    node lacks the resource or the requests exceed it. Requests are never negative, so both
    zeros fall out of clipping the free amount at 0 (and dividing a 0 by 1, not by 0)."""
    free = np.maximum(capacity - requested, 0)
    return free * MAX_PRIORITY // np.maximum(capacity, 1)


def used_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """upstream calculateUsedScore: used share on a 0-10 scale, with unused_score's zeros
    (a node without the resource has every non-zero request exceed it)."""
    fits = requested <= capacity
    return requested * MAX_PRIORITY // np.maximum(capacity, 1) * fits


def _resource_scores(pod: Obj, nodes: NodeTable, rows: np.ndarray, ctx: PriorityContext,
                     score: _Score) -> Scores:
    """(cpu score + memory score) / 2 per row, after placing the pod's non-zero requests."""
    cpu, cpu_capacity, memory, memory_capacity = _requested(pod, nodes, rows, ctx)
    return (score(cpu, cpu_capacity) + score(memory, memory_capacity)) // 2


def least_requested_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                             ctx: PriorityContext) -> Scores:
    """LeastRequestedPriority: favour the node with the most free cpu and memory after placing
    the pod; (cpuScore + memoryScore) / 2 with each score ((capacity - requested) * 10) / capacity.
    """
    return _resource_scores(pod, nodes, rows, ctx, unused_score)


def most_requested_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                            ctx: PriorityContext) -> Scores:
    """MostRequestedPriority (v1.4+): pack pods, favouring the fullest node;
    (cpuScore + memoryScore) / 2 with each score requested * 10 / capacity."""
    return _resource_scores(pod, nodes, rows, ctx, used_score)


def balanced_resource_allocation(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                                 ctx: PriorityContext) -> Scores:
    """BalancedResourceAllocation: favour nodes whose cpu and memory fill up evenly;
    int(10 - |cpuFraction - memoryFraction| * 10), and 0 once either fraction reaches 1.
    Meant to be combined with LeastRequestedPriority, never used alone (upstream note)."""
    cpu, cpu_capacity, memory, memory_capacity = _requested(pod, nodes, rows, ctx)
    # upstream fractionOfCapacity counts a node without the resource as full; such a node
    # scores 0 either way, so its fraction only needs to be finite here
    cpu_fraction = cpu / np.maximum(cpu_capacity, 1)
    memory_fraction = memory / np.maximum(memory_capacity, 1)
    balance = MAX_PRIORITY - np.abs(cpu_fraction - memory_fraction) * MAX_PRIORITY
    room = ((cpu_fraction < 1) & (memory_fraction < 1)
            & (cpu_capacity > 0) & (memory_capacity > 0))
    return balance.astype(np.int64) * room  # astype truncates, as Go's int()


def image_score(total_size: int) -> int:
    """upstream calculateScoreFromSize: 0 below 23 MB, 10 from 1000 MB, else one of ten
    buckets in between (integer division, then +1)."""
    if total_size < MIN_IMAGE_SIZE:
        return 0
    if total_size >= MAX_IMAGE_SIZE:
        return MAX_PRIORITY
    return MAX_PRIORITY * (total_size - MIN_IMAGE_SIZE) // (MAX_IMAGE_SIZE - MIN_IMAGE_SIZE) + 1


def _image_sizes(node: Obj | None, wanted: frozenset[str]) -> dict[str, int]:
    """Size of each wanted image the node reports (node.status.images); first listing wins."""
    found: dict[str, int] = {}
    for image in ((node or {}).get("status") or {}).get("images") or ():
        for name in image.get("names") or ():
            if name in wanted and name not in found:
                found[name] = int(image.get("sizeBytes") or 0)
    return found


def image_locality_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                            ctx: PriorityContext) -> Scores:
    """ImageLocalityPriority (v1.3+): favour nodes that already have the pod's images, by the
    total size of those present (image names compared exactly, as upstream v1.5). Not in the
    default provider, so it reads each candidate's node object (status.images is not a
    column: image lists are long and only this priority wants them)."""
    images = ctx.meta(pod).images
    scores = np.zeros(len(rows), dtype=np.int64)
    if not images:
        return scores
    wanted = frozenset(images)
    for i, row in enumerate(rows.tolist()):
        sizes = _image_sizes(nodes.infos[row].node, wanted)
        if sizes:
            scores[i] = image_score(sum(sizes.get(image, 0) for image in images))
    return scores


def equal_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                   ctx: PriorityContext) -> Scores:
    """EqualPriority: 1 for every node (what v1.0 used when no priority is configured)."""
    return np.ones(len(rows), dtype=np.int64)
