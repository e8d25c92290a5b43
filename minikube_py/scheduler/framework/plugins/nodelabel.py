"""NodeLabel (upstream 1.19-1.22 only): required and preferred presence/absence of node labels.

Kubernetes piece: pkg/scheduler/framework/plugins/nodelabel (removed in 1.23), what a Policy's
`labelsPresence` predicate argument and `labelPreference` priority argument became under the
legacy mapping (plugins/legacy.py). Kept so a v1.x Policy still runs on the framework.
NodeLabelArgs: presentLabels / absentLabels (Filter: UnschedulableAndUnresolvable "node(s)
didn't have the requested labels"), presentLabelsPreference / absentLabelsPreference (Score:
100 per satisfied preference, averaged over the preferences — v1.5's 0/10 per label, x10).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_errors import ERR_NODE_LABEL_PRESENCE_VIOLATED
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.priorities_meta import at
from ...nodetable import ABSENT, Mask, NodeTable
from ..interface import MAX_NODE_SCORE, CycleState, FilterFailures, Handle, Rows, Status
from .common import arg, failing

NAME = "NodeLabel"


class NodeLabel:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle | None = None) -> None:
        self.present = list(arg(args, "presentLabels", []))
        self.absent = list(arg(args, "absentLabels", []))
        self.present_preference = list(arg(args, "presentLabelsPreference", []))
        self.absent_preference = list(arg(args, "absentLabelsPreference", []))

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        violated = nodes.everywhere(False)
        for key in self.present:
            violated |= nodes.label(key) == ABSENT
        for key in self.absent:
            violated |= nodes.label(key) != ABSENT
        return failing(Status.unresolvable(ERR_NODE_LABEL_PRESENCE_VIOLATED), violated)

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        total = np.zeros(len(rows), dtype=np.int64)
        count = len(self.present_preference) + len(self.absent_preference)
        if not count:
            return total
        for key, wanted in [(k, True) for k in self.present_preference] + \
                [(k, False) for k in self.absent_preference]:
            has = at(nodes.label(key), rows) != ABSENT
            total += np.where(has == wanted, MAX_NODE_SCORE, 0)
        return total // count

    def score_extensions(self) -> None:
        return None

