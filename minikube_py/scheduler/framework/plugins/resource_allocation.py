"""The resource scorers of NodeResourcesFit and NodeResourcesBalancedAllocation, over columns.

Kubernetes piece: pkg/scheduler/framework/plugins/noderesources resource_allocation.go
(resourceAllocationScorer), least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go, balanced_allocation.go's scorer and helper/shape_score.go
(BuildBrokenLinearFunction), 1.31. Upstream scores node by node; here each resource is one
(requested, allocatable) pair of int64 arrays over the scored rows and every formula is an
array expression with Go's integer arithmetic (truncating division — `go_div` — where a
quotient can be negative).

Resources are named by the strategy's `resources` list ({name, weight}). The NodeTable has
columns for cpu and memory; a resource without a column counts as allocatable 0, which
upstream skips (an extended resource the pod does not request, or the node lacks), so the
weights of the remaining resources decide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...algorithm.priorities_meta import at
from ...nodetable import NodeTable
from ..interface import MAX_NODE_SCORE, Rows

#: upstream config.MaxCustomPriorityScore: RequestedToCapacityRatio shapes score 0..10
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
#: upstream's default RequestedToCapacityRatio shape (v1 defaults.go)
DEFAULT_SHAPE = ({"utilization": 0, "score": 10}, {"utilization": 100, "score": 0})

#: (requested per resource, allocatable per resource) -> one score per row
Scorer = Callable[[list[np.ndarray], list[np.ndarray]], np.ndarray]


def go_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Go's int64 division (truncates toward zero; numpy's // floors)."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.sign(a) * np.sign(b)) < 0, -q, q)


def resources_of(strategy: Mapping[str, Any] | None) -> list[tuple[str, int]]:
    raw = (strategy or {}).get("resources") or DEFAULT_RESOURCES
    return [(str(r.get("name")), int(r.get("weight") or 1)) for r in raw if isinstance(r, dict)]


def requested_and_allocatable(nodes: NodeTable, rows: Rows, resources: Sequence[tuple[str, int]],
                              pod_request: Mapping[str, int], *, nonzero: bool
                              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per resource: (node's requests + the pod's, allocatable) over `rows` (upstream
    calculateResourceAllocatableRequest). `nonzero`: the node's NonZeroRequested sums (a
    container asking for nothing counts 100m / 200MB; the Fit strategies), else its real
    Requested sums (BalancedAllocation, useRequested)."""
    columns = {"cpu": (nodes.nonzero_cpu if nonzero else nodes.requested_cpu, nodes.alloc_cpu),
               "memory": (nodes.nonzero_memory if nonzero else nodes.requested_memory,
                          nodes.alloc_memory)}
    requested, allocatable = [], []
    zero = np.zeros(len(rows), dtype=np.int64)
    for name, _weight in resources:
        pair = columns.get(name)
        if pair is None:
            requested.append(zero)
            allocatable.append(zero)
            continue
        requested.append(at(pair[0], rows) + pod_request.get(name, 0))
        allocatable.append(at(pair[1], rows))
    return requested, allocatable


def _weighted_mean(scores: list[np.ndarray], allocatable: list[np.ndarray],
                   weights: Sequence[int], *, rounded: bool = False,
                   only_positive: bool = False) -> np.ndarray:
    n = len(allocatable[0]) if allocatable else 0
    if not only_positive and n and all(int(a.min()) > 0 for a in allocatable):
        # every node has every resource (the common case): one weighted sum, one division
        total = sum(score * weight for score, weight in zip(scores, weights))
        weight_sum = sum(weights)
        if rounded:
            return np.floor(total / weight_sum + 0.5).astype(np.int64)
        return total // weight_sum
    total = np.zeros(n, dtype=np.int64)
    weight_sum = np.zeros(n, dtype=np.int64)
    for score, alloc, weight in zip(scores, allocatable, weights):
        counted = alloc != 0
        if only_positive:
            counted &= score > 0
        total += np.where(counted, score * weight, 0)
        weight_sum += np.where(counted, weight, 0)
    if rounded:  # int64(math.Round(float64(nodeScore) / float64(weightSum)))
        quotient = total / np.maximum(weight_sum, 1)
        mean = np.floor(quotient + 0.5).astype(np.int64)
    else:
        mean = total // np.maximum(weight_sum, 1)
    return np.where(weight_sum == 0, 0, mean)


def least_allocated(weights: Sequence[int]) -> Scorer:
    """upstream leastResourceScorer: ((capacity - requested) * 100) / capacity per resource,
    0 past capacity, then the weighted mean (integer division)."""
    def scorer(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
        # past capacity (or without it) the free amount clips to 0, and so does the score
        scores = [np.maximum(cap - req, 0) * MAX_NODE_SCORE // np.maximum(cap, 1)
                  for req, cap in zip(requested, allocatable)]
        return _weighted_mean(scores, allocatable, weights)
    return scorer


def most_allocated(weights: Sequence[int]) -> Scorer:
    """upstream mostResourceScorer: requested * 100 / capacity per resource, requested capped
    at capacity (non-zero defaults can push it past), then the weighted mean."""
    def scorer(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
        scores = [np.minimum(req, cap) * MAX_NODE_SCORE // np.maximum(cap, 1)
                  for req, cap in zip(requested, allocatable)]
        return _weighted_mean(scores, allocatable, weights)
    return scorer


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[np.ndarray], np.ndarray]:
    """upstream helper.BuildBrokenLinearFunction over an array of utilizations: the first point's
    score up to its utilization, linear (Go integer arithmetic) between points, the last
    point's score past the end."""
    def f(p: np.ndarray) -> np.ndarray:
        out = np.full(p.shape, shape[-1][1], dtype=np.int64)
        done = np.zeros(p.shape, dtype=bool)
        for i, (utilization, score) in enumerate(shape):
            here = ~done & (p <= utilization)
            if i == 0:
                out[here] = score
            else:
                u0, s0 = shape[i - 1]
                out[here] = s0 + go_div((score - s0) * (p[here] - u0), utilization - u0)
            done |= here
        return out
    return f


def requested_to_capacity_ratio(weights: Sequence[int], shape: Sequence[Mapping[str, Any]]
                                ) -> Scorer:
    """upstream requestedToCapacityRatioScorer: utilization = requested * 100 / capacity
    (100 when past capacity or without capacity) through the shape, whose 0..10 scores are
    scaled to 0..100; the mean (rounded) over the resources that score above 0."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    points = sorted(((int(p.get("utilization") or 0), int(p.get("score") or 0) * scale)
                     for p in shape), key=lambda point: point[0])
    raw = broken_linear(points)

    def scorer(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
        scores = []
        for req, cap in zip(requested, allocatable):
            over = (cap == 0) | (req > cap)
            utilization = np.where(over, MAX_UTILIZATION,
                                   req * MAX_UTILIZATION // np.maximum(cap, 1))
            scores.append(raw(utilization))
        return _weighted_mean(scores, allocatable, weights, rounded=True, only_positive=True)
    return scorer


def balanced(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
    """upstream balancedResourceScorer: (1 - standard deviation of the resources' used
    fractions, each capped at 1) * 100, truncated; resources without capacity are left out
    (two resources: |f1 - f2| / 2, as upstream's shortcut)."""
    n = len(allocatable[0]) if allocatable else 0
    if len(requested) == 2 and all(int(a.min()) > 0 for a in allocatable):
        # upstream's shortcut for two resources, every node having both: |f1 - f2| / 2
        f1 = np.minimum(requested[0] / allocatable[0], 1.0)
        f2 = np.minimum(requested[1] / allocatable[1], 1.0)
        return ((1 - np.abs((f1 - f2) / 2)) * MAX_NODE_SCORE).astype(np.int64)
    fractions = []
    present = []
    for req, cap in zip(requested, allocatable):
        fractions.append(np.minimum(req / np.maximum(cap, 1), 1.0))
        present.append(cap != 0)
    if not fractions:
        return np.full(n, MAX_NODE_SCORE, dtype=np.int64)
    f = np.stack(fractions)
    mask = np.stack(present)
    count = mask.sum(axis=0)
    mean = np.where(count > 0, (f * mask).sum(axis=0) / np.maximum(count, 1), 0.0)
    variance = (((f - mean) ** 2) * mask).sum(axis=0) / np.maximum(count, 1)
    std = np.where(count >= 2, np.sqrt(variance), 0.0)
    if len(fractions) == 2:  # upstream's exact float path for the common case
        both = mask.all(axis=0)
        std = np.where(both, np.abs((f[0] - f[1]) / 2), std)
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
