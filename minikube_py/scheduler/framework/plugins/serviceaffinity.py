"""ServiceAffinity (upstream 1.19-1.22 only): keep a Service's pods on nodes agreeing on labels,
and spread them over a label's values.

Kubernetes piece: pkg/scheduler/framework/plugins/serviceaffinity (removed in 1.23), what a
Policy's `serviceAffinity` predicate argument and `serviceAntiAffinity` priority argument
became under the legacy mapping (plugins/legacy.py). ServiceAffinityArgs: affinityLabels
(Filter, Unschedulable "node(s) didn't match service affinity"), antiAffinityLabelsPreference
(Score: the v1.5 ServiceAntiAffinity priority per label, averaged, scaled from 0..10 to
0..100). Wraps the v1.x predicate and priority over the handle's Services and snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...algorithm.predicates_errors import ERR_SERVICE_AFFINITY_VIOLATED
from ...algorithm.predicates_meta import PodMeta
from ...algorithm.predicates_service import check_service_affinity
from ...algorithm.priorities_meta import MAX_PRIORITY, PriorityContext
from ...algorithm.priorities_spreading import service_anti_affinity
from ...nodetable import Mask, NodeTable
from ..interface import MAX_NODE_SCORE, CycleState, FilterFailures, Handle, Rows, Status
from .cluster_lookups import cluster_listers
from .common import arg, failing

NAME = "ServiceAffinity"


class ServiceAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle | None) -> None:
        self.listers = cluster_listers(handle)
        self._filter = check_service_affinity(list(arg(args, "affinityLabels", [])),
                                              self.listers, self.listers, self.listers)
        self._scores = [service_anti_affinity(label)
                        for label in arg(args, "antiAffinityLabelsPreference", [])]

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        violated = nodes.everywhere(False)
        for _reason, rows in self._filter(pod, nodes):
            violated |= rows
        return failing(Status.unschedulable(ERR_SERVICE_AFFINITY_VIOLATED), violated)

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        total = np.zeros(len(rows), dtype=np.int64)
        if not self._scores:
            return total
        ctx = PriorityContext(services_for_pod=self.listers.services_for_pod)
        for function in self._scores:
            total += np.asarray(function(pod.pod, nodes, rows, ctx), dtype=np.int64)
        return total * (MAX_NODE_SCORE // MAX_PRIORITY) // len(self._scores)

    def score_extensions(self) -> None:
        return None

