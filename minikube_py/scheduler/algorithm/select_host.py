"""selectHost: pick the node to bind to among the best-scored ones.

Kubernetes piece: plugin/pkg/scheduler/generic_scheduler.go selectHost as in v1.2-v1.5 (the
same round-robin idea lasted until v1.16). v1.0 picked a random host among the top scores;
v1.2 replaced that with a round-robin counter (lastNodeIndex) so that identical pods created
together spread over equally good nodes instead of piling onto one by chance, and so that
tests are reproducible.

Order, exactly as upstream: sort by score descending, ties by host name descending (that is
sort.Reverse over HostPriorityList, whose Less breaks score ties by name ascending), take the
top group, return group[lastNodeIndex % len(group)] and advance the counter. With thousands
of tied nodes sorting their names on every decision would dominate, so `select_index` takes
each candidate's precomputed rank in name order instead (the NodeTable keeps it).
"""

from __future__ import annotations

import numpy as np

from .priorities_meta import HostPriority


class HostSelector:
    """Round-robin over the top-scored hosts; one instance lives as long as the scheduler.

    `seed` is the counter's starting value (upstream starts at 0); two schedulers given
    different seeds start their round robins at different hosts. Either way the sequence of
    choices is fully determined by the inputs."""

    __slots__ = ("_last_node_index",)

    def __init__(self, seed: int | None = None):
        self._last_node_index = seed or 0

    def select_index(self, totals: np.ndarray, name_ranks: np.ndarray) -> int:
        """Index into `totals` of the host to use. `name_ranks[i]` orders candidate i's name
        among all names (any order-preserving integers)."""
        if not len(totals):
            raise ValueError("empty priorityList")
        top = np.flatnonzero(totals == totals.max())
        index = self._last_node_index % len(top)
        self._last_node_index += 1
        if len(top) == 1:
            return int(top[0])
        by_name_descending = top[np.argsort(-name_ranks[top], kind="stable")]
        return int(by_name_descending[index])

    def select(self, priorities: list[HostPriority]) -> str:
        """The host to use from (name, score) pairs; ValueError when there are none."""
        names = [name for name, _ in priorities]
        ranks = {name: rank for rank, name in enumerate(sorted(set(names)))}
        totals = np.array([score for _, score in priorities], dtype=np.int64)
        index = self.select_index(totals, np.array([ranks[n] for n in names], dtype=np.int64))
        return names[index]
