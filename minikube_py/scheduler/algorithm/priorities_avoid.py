"""NodePreferAvoidPodsPriority: keep a controller's pods off nodes that asked to avoid them.

Kubernetes piece: plugin/pkg/scheduler/algorithm/priorities/node_prefer_avoid_pods.go (v1.5
CalculateNodePreferAvoidPodsPriorityMap) and api.GetAvoidPodsFromNodeAnnotations; registered
with weight 10000 in DefaultProvider so it outweighs every other priority together.

A node carries the annotation `scheduler.alpha.kubernetes.io/preferAvoidPods`, JSON
`{"preferAvoidPods": [{"podSignature": {"podController": {"kind": "ReplicationController",
"uid": "..."}}, "reason": "...", "message": "..."}]}` (written e.g. by an operator draining
it softly). A pod whose controlling ownerReference is a ReplicationController or ReplicaSet
scores 0 on a node whose annotation names that controller (kind and uid), 10 elsewhere; every
other pod scores 10 everywhere, as does a node whose annotation does not parse.

Vectorised: whether a node carries the annotation at all is a derived column (recomputed
only for changed nodes); only the few nodes that do are parsed (once per annotation text).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from ..nodeinfo import NodeInfo
from ..nodetable import NodeTable
from .priorities_meta import MAX_PRIORITY, Obj, PriorityContext, Scores, at

PREFER_AVOID_PODS_ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"
_AVOIDABLE_KINDS = ("ReplicationController", "ReplicaSet")


def _annotation(node: Obj | None) -> str | None:
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(PREFER_AVOID_PODS_ANNOTATION)
    return value if isinstance(value, str) else None


def _has_annotation(info: NodeInfo) -> int:
    return int(_annotation(info.node) is not None)


@lru_cache(maxsize=1024)
def avoided_controllers(text: str) -> frozenset[tuple[str, str]]:
    """(kind, uid) of every controller the annotation asks to avoid; none when it does not
    parse (upstream: "if we cannot get annotation, assume it's schedulable there")."""
    try:
        parsed: Any = json.loads(text)
        entries = parsed.get("preferAvoidPods") or []
        found = set()
        for entry in entries:
            controller = (entry.get("podSignature") or {}).get("podController") or {}
            found.add((str(controller.get("kind") or ""), str(controller.get("uid") or "")))
        return frozenset(found)
    except (ValueError, AttributeError, TypeError):
        return frozenset()


def node_prefer_avoid_pods_priority(pod: Obj, nodes: NodeTable, rows: np.ndarray,
                                    ctx: PriorityContext) -> Scores:
    """0 on nodes avoiding the pod's ReplicationController / ReplicaSet, else 10."""
    scores = np.full(len(rows), MAX_PRIORITY, dtype=np.int64)
    controller = ctx.meta(pod).controller_ref
    if controller is None or controller[0] not in _AVOIDABLE_KINDS:
        return scores
    annotated = at(nodes.derived(("prefer-avoid-pods",), _has_annotation), rows)
    for i in np.flatnonzero(annotated).tolist():
        text = _annotation(nodes.infos[int(rows[i])].node)
        if text is not None and controller in avoided_controllers(text):
            scores[i] = 0
    return scores
