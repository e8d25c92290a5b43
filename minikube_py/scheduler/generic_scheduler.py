"""genericScheduler.Schedule: findNodesThatFit -> extenders -> PrioritizeNodes -> selectHost.

Kubernetes v1.0 piece: plugin/pkg/scheduler/generic_scheduler.go (v1.5 for the extenders).
Pure apart from the extenders' HTTP calls: given a pod and the NodeTable, run every predicate
over all nodes at once, let each extender filter the survivors, score them with the weighted
priorities plus the extenders' weighted scores, and pick one among the best. Which reasons a
failing node is charged with depends on the algorithm's era: v1.0's findNodesThatFit stopped
at a node's first failing predicate; v1.5's podFitsOnNode runs them all and collects every
reason (`check_all_predicates`, set for the v1.5 providers and Policy files). An empty
cluster is not a FitError but upstream's ErrNoNodesAvailable ("no nodes available to
schedule pods", the same text from v1.0 to 1.31).

The result carries the explanation learners ask for — per node, the failed predicate reasons
or the weighted score — as arrays over the table's rows, turned into dicts only when someone
looks (`Failures.by_node`, `ScheduleResult.scores`): building a 5000-entry dict on every
decision would cost more than the decision.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import structlog

from .algorithm.predicates import PodMeta, Predicate, check_node_condition, check_node_unschedulable
from .algorithm.priorities import PriorityConfig, PriorityContext, prioritize
from .algorithm.select_host import HostSelector
from .nodetable import NodeTable

log = structlog.get_logger(component="scheduler")
Obj = dict[str, Any]


class Extender(Protocol):
    """An HTTP extender as the algorithm sees it (extender.HTTPExtender)."""

    weight: int

    async def filter(self, pod: Obj, nodes: list[Obj]) -> tuple[list[str], dict[str, str]]: ...

    async def prioritize(self, pod: Obj, nodes: list[Obj]) -> dict[str, int]: ...


def _extender_failed(exc: Exception) -> bool:
    from .extender import ExtenderError  # HTTP machinery only when extenders are configured

    return isinstance(exc, ExtenderError)


class Failures:
    """Which nodes failed for which reasons (upstream failedPredicateMap), kept as row masks
    over the table's names: `counts()` for the FitError message, `by_node()` on demand."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self.entries: list[tuple[str, np.ndarray]] = []

    def add(self, reason: str, rows: np.ndarray) -> None:
        if rows.any():
            self.entries.append((reason, rows))

    def counts(self) -> collections.Counter[str]:
        """Nodes per reason (a reason can come from several predicates or extenders)."""
        counts: collections.Counter[str] = collections.Counter()
        for reason, rows in self.entries:
            counts[reason] += int(rows.sum())
        return counts

    def by_node(self) -> dict[str, list[str]]:
        failed: dict[str, list[str]] = {}
        for reason, rows in self.entries:
            for row in np.flatnonzero(rows).tolist():
                failed.setdefault(self.names[row], []).append(reason)
        return failed


class FitError(Exception):
    """No node fits: upstream's message `0/5 nodes are available: 3 Insufficient cpu, 2
    node(s) didn't match node selector.` (reasons counted over nodes, sorted)."""

    def __init__(self, pod: Obj, total: int, failures: Failures | None = None) -> None:
        self.pod = pod
        self.total = total
        self.failures = failures or Failures(())
        super().__init__(self.message())

    @property
    def failed(self) -> dict[str, list[str]]:
        return self.failures.by_node()

    def message(self) -> str:
        parts = sorted(f"{n} {reason}" for reason, n in self.failures.counts().items())
        text = f"0/{self.total} nodes are available"
        return f"{text}: {', '.join(parts)}." if parts else f"{text}."


ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class NoNodesAvailable(Exception):
    """upstream ErrNoNodesAvailable: the scheduler knows no node at all."""

    def __init__(self) -> None:
        super().__init__(ERR_NO_NODES_AVAILABLE)


@dataclass
class ScheduleResult:
    node: str
    score: int
    feasible: int
    total: int
    failures: Failures
    names: Sequence[str] = ()
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    totals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seconds: float = 0.0
    #: (priority, weight, scores aligned with rows) of each priority that ran
    parts: list[tuple[str, int, np.ndarray]] = field(default_factory=list)

    @property
    def failed(self) -> dict[str, list[str]]:
        """Per infeasible node, the reasons it failed (the explanation endpoint)."""
        return self.failures.by_node()

    @property
    def scores(self) -> dict[str, int]:
        """Per feasible node, its weighted score."""
        return {self.names[row]: total
                for row, total in zip(self.rows.tolist(), self.totals.tolist())}

    def priority_scores(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per scored node, per priority: its score (0-10), weight and product — the shape
        the framework's explanation gives its Score plugins (`pluginScores`)."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        columns = [(name, weight, scores.tolist()) for name, weight, scores in self.parts]
        for i, row in enumerate(self.rows.tolist()):
            out[self.names[row]] = {name: {"score": int(scores[i]), "weight": weight,
                                           "weighted": int(scores[i]) * weight}
                                    for name, weight, scores in columns}
        return out


def sample_size(total: int, percentage: int) -> int:
    """How many feasible nodes to score (upstream numFeasibleNodesToFind): all when
    percentage >= 100 or the cluster is small, else a share with a floor of 100."""
    if percentage >= 100 or total <= 100:
        return total
    return max(100, total * percentage // 100)


#: v1.0's ConfigFactory handed the algorithm only schedulable, Ready nodes (pollMinions kept
#: Ready=True; the node list watch selected spec.unschedulable=false; v1.1+'s
#: getNodeConditionPredicate). Whatever predicates a Policy names, a NotReady or Unknown node
#: — a dead kubelet — never gets new pods. Here they run as the first filters, so the
#: FitError still says why those nodes were skipped.
NODE_LISTER_FILTERS = (check_node_condition, check_node_unschedulable)


def _filter(meta: PodMeta, nodes: NodeTable, predicates: Sequence[Predicate], alive: np.ndarray,
            charged: np.ndarray | None, failures: Failures) -> None:
    """Run `predicates` in order, clearing failed rows from `alive` (in place). A failure is
    recorded for rows in `charged`, or (None) only for rows still alive: first failure wins."""
    for predicate in predicates:
        mask = alive if charged is None else charged
        failed_here = nodes.everywhere(False)
        for reason, rows in predicate(meta, nodes):
            newly = rows & mask
            failures.add(reason, newly)
            failed_here |= newly
        alive &= ~failed_here


class GenericScheduler:
    def __init__(
        self,
        predicates: Mapping[str, Predicate],
        priorities: list[PriorityConfig],
        *,
        extenders: Sequence[Extender] = (),
        selector: HostSelector | None = None,
        context: Callable[[], PriorityContext] | None = None,
        percentage_of_nodes_to_score: int = 100,
        check_all_predicates: bool = False,
    ) -> None:
        """`check_all_predicates`: charge a failing node with the reasons of every predicate
        it fails (v1.5 podFitsOnNode), not only its first (v1.0)."""
        self.predicates = list(predicates.items())
        self.check_all = check_all_predicates
        self.priorities = priorities
        self.extenders = list(extenders)
        self.selector = selector or HostSelector()
        self.context = context or PriorityContext.empty
        self.percentage = percentage_of_nodes_to_score
        self._next_start = 0  # rotate the sampling start so every node gets its turn

    def find_nodes_that_fit(self, meta: PodMeta, nodes: NodeTable) -> tuple[np.ndarray, Failures]:
        """Rows that pass every predicate, and why the others failed. Predicates run in the
        configured order. The node lister's filters (NotReady, unschedulable) always come
        first and exclude a node from the rest; then a node is charged with the reasons of
        its first failing predicate only (v1.0), or of every one it fails (v1.5)."""
        alive = nodes.everywhere()
        failures = Failures(nodes.names)
        _filter(meta, nodes, NODE_LISTER_FILTERS, alive, None, failures)
        listed = alive.copy() if self.check_all else None  # what the node lister hands over
        _filter(meta, nodes, [p for _, p in self.predicates], alive, listed, failures)
        return self._sample(np.flatnonzero(alive), nodes.size), failures

    def _sample(self, feasible: np.ndarray, total: int) -> np.ndarray:
        """With percentageOfNodesToScore below 100, keep only the first `wanted` feasible rows
        from a start that rotates across decisions (every node gets its turn)."""
        wanted = sample_size(total, self.percentage)
        if len(feasible) <= wanted:
            return feasible
        start = self._next_start % total
        rotated = np.concatenate((feasible[feasible >= start], feasible[feasible < start]))
        chosen = rotated[:wanted]
        self._next_start = int(chosen[-1]) + 1
        return np.sort(chosen)

    async def _extend(self, pod: Obj, nodes: NodeTable, rows: np.ndarray,
                      failures: Failures) -> tuple[np.ndarray, np.ndarray]:
        """Each extender filters the feasible rows in turn; then each scores what is left.
        Returns the rows kept and the extenders' weighted scores for them. A filter that
        fails raises ExtenderError (the attempt fails, as upstream); names an extender
        returns that were not sent are ignored."""
        for extender in self.extenders:
            if not len(rows):
                break
            objects = [nodes.infos[row].node for row in rows.tolist()]
            kept, failed = await extender.filter(pod, objects)
            keep = {nodes.row_of[name] for name in kept if name in nodes.row_of}
            for reason in sorted(set(failed.values())):
                mask = nodes.everywhere(False)
                mask[[nodes.row_of[n] for n, r in failed.items() if r == reason
                      and n in nodes.row_of]] = True
                failures.add(reason, mask)
            rows = np.array([row for row in rows.tolist() if row in keep], dtype=np.int64)
        extra = np.zeros(len(rows), dtype=np.int64)
        for extender in self.extenders:
            if not len(rows):
                break
            objects = [nodes.infos[row].node for row in rows.tolist()]
            try:
                scores = await extender.prioritize(pod, objects)
            except Exception as exc:
                if not _extender_failed(exc):
                    raise
                # upstream ignores a failing prioritize: the other scores still decide
                log.warning("extender prioritize failed, ignored", error=str(exc))
                continue
            if scores:
                extra += extender.weight * np.array(
                    [int(scores.get(nodes.names[row], 0)) for row in rows.tolist()],
                    dtype=np.int64)
        return rows, extra

    async def schedule(self, pod: Obj, nodes: NodeTable) -> ScheduleResult:
        started = time.perf_counter()
        if not nodes.size:
            raise NoNodesAvailable()
        meta = PodMeta.of(pod)
        rows, failures = self.find_nodes_that_fit(meta, nodes)
        extra = None
        parts: list[tuple[str, int, np.ndarray]] = []
        if self.extenders and len(rows):
            rows, extra = await self._extend(pod, nodes, rows, failures)
        if not len(rows):
            raise FitError(pod, nodes.size, failures)
        if len(rows) == 1 and extra is None:
            totals = np.zeros(1, dtype=np.int64)
            index = 0
        else:
            totals = prioritize(pod, nodes, rows, self.priorities, self.context(), parts)
            if extra is not None:
                totals = totals + extra
            index = self.selector.select_index(totals, nodes.name_ranks()[rows])
        return ScheduleResult(nodes.names[int(rows[index])], int(totals[index]), len(rows),
                              nodes.size, failures, nodes.names, rows, totals,
                              time.perf_counter() - started, parts)
