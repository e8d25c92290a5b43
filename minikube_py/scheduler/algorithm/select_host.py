"""selectHost: pick the node to bind to among the best-scored ones.

Kubernetes piece: plugin/pkg/scheduler/generic_scheduler.go selectHost as in v1.2-v1.5 (the
same round-robin idea lasted until v1.16). v1.0 picked a random host among the top scores;
v1.2 replaced that with a round-robin counter (lastNodeIndex) so that identical pods created
together spread over equally good nodes instead of piling onto one by chance, and so that
tests are reproducible.

Order, exactly as upstream: sort by score descending, ties by host name descending (that is
sort.Reverse over HostPriorityList, whose Less breaks score ties by name ascending), take the
top group, return group[lastNodeIndex % len(group)] and advance the counter.
"""

from __future__ import annotations

from .priorities_meta import HostPriority


def _order(priority: HostPriority) -> tuple[int, str]:
    return priority[1], priority[0]


class HostSelector:
    """Round-robin over the top-scored hosts; one instance lives as long as the scheduler.

    `seed` is the counter's starting value (upstream starts at 0); two schedulers given
    different seeds start their round robins at different hosts. Either way the sequence of
    choices is fully determined by the inputs."""

    __slots__ = ("_last_node_index",)

    def __init__(self, seed: int | None = None):
        self._last_node_index = seed or 0

    def select(self, priorities: list[HostPriority]) -> str:
        """The host to use; ValueError when there is nothing to choose from."""
        if not priorities:
            raise ValueError("empty priorityList")
        best = max(score for _, score in priorities)
        top = sorted((p for p in priorities if p[1] == best), key=_order, reverse=True)
        index = self._last_node_index % len(top)
        self._last_node_index += 1
        return top[index][0]
