"""Priorities that score a node by what it holds: requested cpu/memory and present images.

Kubernetes pieces: plugin/pkg/scheduler/algorithm/priorities (v1.0-v1.5) LeastRequestedPriority,
MostRequestedPriority, BalancedResourceAllocation, ImageLocalityPriority and
plugin/pkg/scheduler/generic_scheduler.go EqualPriority.

Why these formulas: they are upstream's, integer arithmetic included, so a cluster scores as a
real scheduler would: `((capacity - requested) * 10) / capacity` truncates (2.5 -> 2) and the
cpu and memory scores are averaged with integer division. "Requested" is the node's non-zero
sum (a container asking for nothing counts as 100m / 200MB) plus the pod being placed, so empty
nodes of different sizes still differ and zero-request pods still spread.
"""

from __future__ import annotations

from collections.abc import Callable

from ..nodeinfo import NodeInfo, Resources
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext

_MB = 1024 * 1024
#: ImageLocality's range: 90% of Docker Hub images fall between these sizes (upstream comment)
MIN_IMAGE_SIZE = 23 * _MB
MAX_IMAGE_SIZE = 1000 * _MB


def _requested(info: NodeInfo, pod_request: Resources) -> tuple[int, int]:
    """Node's non-zero requested cpu/memory with the incoming pod's added."""
    total = info.nonzero_requested
    return total.milli_cpu + pod_request.milli_cpu, total.memory + pod_request.memory


def unused_score(requested: int, capacity: int) -> int:
    """upstream calculateScore / calculateUnusedScore: free share on a 0-10 scale."""
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_PRIORITY) // capacity


def used_score(requested: int, capacity: int) -> int:
    """upstream calculateUsedScore: used share on a 0-10 scale."""
    if capacity == 0 or requested > capacity:
        return 0
    return (requested * MAX_PRIORITY) // capacity


def _resource_scores(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext,
                     score: Callable[[int, int], int]) -> list[int]:
    """(cpu score + memory score) / 2 per node, after placing the pod's non-zero requests."""
    meta = ctx.meta(pod)
    pod_request = meta.nonzero_requests
    scores = []
    for info in nodes:
        cpu, memory = _requested(info, pod_request)
        alloc = meta.allocatable(info)
        scores.append((score(cpu, alloc.milli_cpu) + score(memory, alloc.memory)) // 2)
    return scores


def least_requested_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """LeastRequestedPriority: favour the node with the most free cpu and memory after placing
    the pod; (cpuScore + memoryScore) / 2 with each score ((capacity - requested) * 10) / capacity.
    """
    return _resource_scores(pod, nodes, ctx, unused_score)


def most_requested_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """MostRequestedPriority (v1.4+): pack pods, favouring the fullest node;
    (cpuScore + memoryScore) / 2 with each score requested * 10 / capacity."""
    return _resource_scores(pod, nodes, ctx, used_score)


def _fraction(requested: int, capacity: int) -> float:
    """upstream fractionOfCapacity: a node without the resource counts as full."""
    return 1.0 if capacity == 0 else requested / capacity


def balanced_resource_allocation(pod: Obj, nodes: list[NodeInfo],
                                 ctx: PriorityContext) -> list[int]:
    """BalancedResourceAllocation: favour nodes whose cpu and memory fill up evenly;
    10 - |cpuFraction - memoryFraction| * 10, and 0 once either fraction reaches 1.
    Meant to be combined with LeastRequestedPriority, never used alone (upstream note)."""
    meta = ctx.meta(pod)
    pod_request = meta.nonzero_requests
    scores = []
    for info in nodes:
        cpu, memory = _requested(info, pod_request)
        alloc = meta.allocatable(info)
        cpu_fraction = _fraction(cpu, alloc.milli_cpu)
        memory_fraction = _fraction(memory, alloc.memory)
        if cpu_fraction >= 1 or memory_fraction >= 1:
            scores.append(0)
        else:
            scores.append(int(MAX_PRIORITY - abs(cpu_fraction - memory_fraction) * MAX_PRIORITY))
    return scores


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


def image_locality_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """ImageLocalityPriority (v1.3+): favour nodes that already have the pod's images, by the
    total size of those present (image names compared exactly, as upstream v1.5)."""
    images = ctx.meta(pod).images
    if not images:
        return [0] * len(nodes)
    wanted = frozenset(images)
    scores = []
    for info in nodes:
        sizes = _image_sizes(info.node, wanted)
        scores.append(image_score(sum(sizes.get(image, 0) for image in images)) if sizes else 0)
    return scores


def equal_priority(pod: Obj, nodes: list[NodeInfo], ctx: PriorityContext) -> list[int]:
    """EqualPriority: 1 for every node (what v1.0 used when no priority is configured)."""
    return [1] * len(nodes)
