"""selectHost: round robin over the top-scored hosts in upstream's order (v1.2-v1.5).

Upstream sorts with sort.Reverse(HostPriorityList): score descending, ties by host name
descending; the counter lastNodeIndex picks within the top group and always advances.
"""

from __future__ import annotations

import pytest

from minikube_py.scheduler.algorithm.select_host import HostSelector


def picks(selector: HostSelector, priorities, n: int) -> list[str]:
    return [selector.select(priorities) for _ in range(n)]


@pytest.mark.parametrize("priorities, seed, expected", [
    # three nodes tied at 8: cycle through them, names descending
    ([("a", 8), ("b", 8), ("c", 8), ("d", 3)], None, ["c", "b", "a", "c", "b"]),
    # input order does not matter, only score and name
    ([("d", 3), ("b", 8), ("c", 8), ("a", 8)], None, ["c", "b", "a", "c", "b"]),
    # the seed is the counter's start
    ([("a", 8), ("b", 8), ("c", 8)], 1, ["b", "a", "c", "b"]),
    ([("a", 8), ("b", 8), ("c", 8)], 5, ["a", "c", "b", "a"]),
    # a single best host always wins
    ([("m1", 5), ("m2", 10), ("m3", 9)], None, ["m2", "m2", "m2"]),
    ([("only", 0)], 7, ["only", "only"]),
])
def test_round_robin_over_top_scores(priorities, seed, expected):
    assert picks(HostSelector(seed), priorities, len(expected)) == expected


def test_counter_advances_across_calls_with_different_lists():
    selector = HostSelector()
    assert selector.select([("x", 1)]) == "x"             # counter 0 -> 1
    assert selector.select([("a", 2), ("b", 2)]) == "a"    # 1 % 2 = 1 -> second of (b, a)
    assert selector.select([("a", 2), ("b", 2)]) == "b"


def test_same_seed_same_sequence_and_input_untouched():
    priorities = [("n1", 4), ("n2", 4), ("n3", 4), ("n4", 4)]
    snapshot = list(priorities)
    assert picks(HostSelector(3), priorities, 9) == picks(HostSelector(3), priorities, 9)
    assert priorities == snapshot


def test_empty_list_raises():
    with pytest.raises(ValueError, match="empty priorityList"):
        HostSelector().select([])
