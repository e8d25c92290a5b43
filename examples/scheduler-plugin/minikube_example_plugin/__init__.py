"""RequireNodeLabel: an out-of-tree scheduler plugin, installed through an entry point.

Filter: a node qualifies only if it carries the label named by the plugin's args (`label`,
default "example.io/pool"), and, when the pod asks for a value through the annotation
`example.io/pool`, only with that value. Score: among the nodes that qualify, the ones
running fewer pods score higher (0..100).

Both points are column-wise over the scheduler's NodeTable (one numpy array per node fact),
as every in-tree plugin is; a plugin written per node can subclass
`minikube_py.scheduler.framework.interface.NodeByNodeFilter` instead.

Enable it in a profile (KubeSchedulerConfiguration):

    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter: {enabled: [{name: RequireNodeLabel}]}
        score: {enabled: [{name: RequireNodeLabel, weight: 2}]}
      pluginConfig:
      - name: RequireNodeLabel
        args: {label: example.io/pool}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from minikube_py.scheduler.framework.interface import MAX_NODE_SCORE, Status
from minikube_py.scheduler.nodetable import ABSENT

NAME = "RequireNodeLabel"
ANNOTATION = "example.io/pool"
#: the reasons, as FitError counts them: "0/3 nodes are available: 3 node(s) lack ..."
ERR_MISSING = "node(s) didn't have the required label"
ERR_VALUE = "node(s) are in another pool"


class RequireNodeLabel:
    name = NAME

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.label = str(args.get("label") or ANNOTATION)

    def filter(self, state, pod, nodes, candidates):
        values = nodes.label(self.label)
        failures = [(Status.unresolvable(ERR_MISSING), values == ABSENT)]
        wanted = (pod.pod.get("metadata") or {}).get("annotations", {}).get(ANNOTATION)
        if wanted:
            failures.append((Status.unschedulable(ERR_VALUE),
                             (values != ABSENT) & (values != nodes.strings.lookup(wanted))))
        return failures

    def score(self, state, pod, nodes, rows):
        return nodes.pod_count[rows].astype(np.int64)

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        """Fewer pods -> higher score: 100 for the emptiest node, 0 for the fullest."""
        low, high = int(scores.min()), int(scores.max())
        if high == low:
            scores[:] = MAX_NODE_SCORE
        else:
            scores[:] = (high - scores) * MAX_NODE_SCORE // (high - low)


def new(args: Mapping[str, Any], handle: Any) -> RequireNodeLabel:
    """The factory the entry point names: (pluginConfig args, framework handle) -> plugin."""
    return RequireNodeLabel(args)
