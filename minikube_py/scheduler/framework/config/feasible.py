"""How many feasible nodes the scheduling cycle looks for before it stops filtering.

Kubernetes piece: pkg/scheduler/schedule_one.go numFeasibleNodesToFind (1.31) with
minFeasibleNodesToFind (100) and minFeasibleNodesPercentageToFind (5). A percentage of 0 (the
default, config.DefaultPercentageOfNodesToScore) is adaptive: 50 % minus one point per 125
nodes, never below 5 %, so a 5000-node cluster scores 10 % of its nodes and anything past 6125
nodes scores 5 %. The profile's own percentage, when set, wins over the configuration's.

The v1.5 scheduler's fixed rule stays where it was (generic_scheduler.sample_size); the
framework uses this one. Pure.
"""

from __future__ import annotations

#: upstream minFeasibleNodesToFind: below this many nodes every node is looked at
MIN_FEASIBLE_NODES_TO_FIND = 100
#: upstream minFeasibleNodesPercentageToFind: the adaptive percentage's floor
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def adaptive_percentage(num_all_nodes: int) -> int:
    """The percentage used when none is configured: 50 - nodes/125, at least 5."""
    return max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int | None = None,
                               profile_percentage: int | None = None) -> int:
    """numFeasibleNodesToFind: `profile_percentage` (a profile's own setting) wins over
    `percentage` (the configuration's); None or 0 is adaptive."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    chosen = profile_percentage if profile_percentage is not None else (percentage or 0)
    if chosen == 0:
        chosen = adaptive_percentage(num_all_nodes)
    found = num_all_nodes * chosen // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)
