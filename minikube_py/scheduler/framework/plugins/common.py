"""What the in-tree Filter/Score plugins share: reading args, normalising scores, grouping rows.

Kubernetes pieces: pkg/scheduler/framework/plugins/helper (DefaultNormalizeScore,
BuildBrokenLinearFunction's caller side), the `framework.NewStatus` calls every plugin repeats,
and the args structs of pkg/scheduler/apis/config/v1 read with their defaults
(pkg/scheduler/apis/config/v1/defaults.go). The fw-config helper owns defaulting and validation;
plugins still read args defensively (a missing field gets upstream's default) so a plugin built
by a test or a legacy Policy with partial args behaves as upstream.

Also the bridge from a plugin to the v1.0/v1.5 priority functions it reuses: those take a
`PriorityContext` whose `PodMeta` computes the pod-side values once; `priority_context(state,
pod)` keeps one per scheduling cycle in the CycleState so every Score plugin of a cycle shares
it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates import matches_node_labels
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.priorities_meta import PriorityContext
from ...nodetable import Mask, NodeTable
from ..interface import MAX_NODE_SCORE, CycleState, FilterFailures, Status

Obj = dict[str, Any]
_PRIORITY_CONTEXT_KEY = "minikube.io/priority-context"


def arg(args: Mapping[str, Any] | None, name: str, default: Any) -> Any:
    """args[name], or upstream's default when it is absent or null."""
    if not args:
        return default
    value = args.get(name)
    return default if value is None else value


def priority_context(state: CycleState, pod: PodMeta) -> PriorityContext:
    """The cycle's PriorityContext for `pod` (its lazily computed priorities PodMeta)."""
    ctx = state.get(_PRIORITY_CONTEXT_KEY)
    if ctx is None:
        ctx = PriorityContext()
        state.write(_PRIORITY_CONTEXT_KEY, ctx)
    ctx.meta(pod.pod)
    return ctx


def default_normalize_score(scores: np.ndarray, reverse: bool = False,
                            max_priority: int = MAX_NODE_SCORE) -> None:
    """upstream helper.DefaultNormalizeScore, in place: scale to 0..max by the highest score
    (integer division); `reverse` flips it (max - score). All zero: 0 each, or max each when
    reversed."""
    if not len(scores):
        return
    highest = int(scores.max())
    if highest == 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = max_priority * scores // highest
    scores[:] = max_priority - scaled if reverse else scaled


def failing(status: Status, rows: Mask) -> FilterFailures:
    """[(status, rows)] when some row fails, [] otherwise (so callers can return it as is)."""
    return [(status, rows)] if rows.any() else []


def group_by_reasons(nodes: NodeTable, checks: Iterable[tuple[str, Mask]],
                     code_of: Any) -> FilterFailures:
    """Rows failing several reasons at once get one status carrying all of them, in the order
    of `checks` (upstream returns one Status per node with every reason). `code_of(reasons)`
    gives the status code of a combination."""
    checks = [(reason, mask) for reason, mask in checks if mask.any()]
    if not checks:
        return []
    if len(checks) == 1:
        reason, mask = checks[0]
        return [(Status(code_of((reason,)), (reason,)), mask)]
    bits = np.zeros(nodes.size, dtype=np.int64)
    for i, (_reason, mask) in enumerate(checks):
        bits |= mask.astype(np.int64) << i
    out: FilterFailures = []
    for combo in np.unique(bits[bits != 0]).tolist():
        reasons = tuple(reason for i, (reason, _m) in enumerate(checks) if combo >> i & 1)
        out.append((Status(code_of(reasons), reasons), bits == combo))
    return out


def nodes_matching_required_affinity(pod: PodMeta, nodes: NodeTable) -> Mask:
    """Rows whose labels satisfy the pod's nodeSelector and required node affinity (upstream
    nodeaffinity.GetRequiredNodeAffinity(pod).Match); the same reading as MatchNodeSelector."""
    if not pod.node_selector and pod.node_affinity is None:
        return nodes.everywhere()
    return matches_node_labels(pod, nodes)
