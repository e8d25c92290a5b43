"""schedulePod for one framework: PreFilter -> Filter -> sample -> PreScore/Score -> selectHost.

Kubernetes piece: pkg/scheduler/schedule_one.go (1.31) — schedulePod, findNodesThatFitPod,
evaluateNominatedNode, findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes —
and framework.FitError / Diagnosis (types.go) for the "0/N nodes are available: ..." text.
Pure apart from the PostFilter plugins the caller runs on a FitError: given the framework, a
fresh CycleState, the pod and the cycle's NodeTable, it answers the node, or raises.

Column-wise as the rest of the framework: every Filter plugin answers for all candidate rows
at once, so all rows are filtered (cheap in numpy) and percentageOfNodesToScore then keeps
the first `numFeasibleNodesToFind` feasible rows from a start that rotates across cycles —
the same nodes upstream's early-stopping search would find. The explanation (per failing row
its status, per plugin its normalised score per scored row, time per extension point) stays
in arrays on the result; `explain.py` turns it into dicts only when someone asks.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..algorithm.select_host import HostSelector
from ..extender import ExtenderError
from ..generic_scheduler import Extender, NoNodesAvailable
from .interface import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Diagnosis,
    Mask,
    Status,
    StatusError,
    is_success,
)
from .runtime import Framework, ScoreResult

if TYPE_CHECKING:
    from ..algorithm.predicates_meta import PodMeta
    from ..nodetable import NodeTable
    from .handle import FrameworkHandle

Obj = dict[str, Any]

#: CycleState key under which the runtime's callers collect seconds per extension point
TIMINGS_KEY = "minikube_py/extension-point-seconds"
#: upstream minFeasibleNodesToFind / minFeasibleNodesPercentageToFind
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
ERR_PREFILTER_RESULT = "node is filtered out by the prefilter result"
#: upstream extenderv1.MaxExtenderPriority: extenders score 0..10, scaled to 0..100
MAX_EXTENDER_PRIORITY = 10


def num_feasible_nodes_to_find(percentage: int | None, total: int) -> int:
    """upstream numFeasibleNodesToFind: all nodes below 100; else the percentage (0 or None:
    the adaptive 50% - nodes/125, at least 5%), at least 100 nodes."""
    if total < MIN_FEASIBLE_NODES_TO_FIND:
        return total
    if not percentage:
        percentage = max(50 - total // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    if percentage >= 100:
        return total
    return max(total * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def add_plugin_status(diagnosis: Diagnosis, status: Status) -> None:
    """upstream Diagnosis.AddPluginStatus: the plugin that rejected, by kind of rejection."""
    if not status.plugin:
        return
    if status.code is Code.PENDING:
        diagnosis.pending_plugins.add(status.plugin)
    else:
        diagnosis.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """upstream framework.FitError: no node fits. `message()` is upstream's
    "0/N nodes are available: <prefilter msg | reasons histogram>. <postfilter msg>."."""

    def __init__(self, pod: Obj, total: int, diagnosis: Diagnosis,
                 names: list[str] | None = None) -> None:
        self.pod = pod
        self.total = total
        self.diagnosis = diagnosis
        self.names = names or []
        super().__init__(self.message())

    def reason_counts(self) -> collections.Counter[str]:
        counts: collections.Counter[str] = collections.Counter()
        for status, rows in self.diagnosis.failures:
            n = int(rows.sum())
            for reason in status.reasons:
                counts[reason] += n
        return counts

    def message(self) -> str:
        text = f"0/{self.total} nodes are available:"
        diagnosis = self.diagnosis
        if diagnosis.pre_filter_msg:
            text += f" {diagnosis.pre_filter_msg}."
        else:
            histogram = sorted(f"{n} {reason}" for reason, n in self.reason_counts().items())
            if histogram:
                text += f" {', '.join(histogram)}."
        if diagnosis.post_filter_msg:
            text += f" {diagnosis.post_filter_msg}."
        return text

    def __str__(self) -> str:
        return self.message()


def single_node_fit_error(pod: Obj, node: str, status: Status) -> FitError:
    """A Reserve or Permit rejection (upstream: FitError with NumAllNodes 1)."""
    mask = np.ones(1, dtype=bool)
    diagnosis = Diagnosis(failures=[(status, mask)])
    add_plugin_status(diagnosis, status)
    return FitError(pod, 1, diagnosis, [node])


@dataclass
class Decision:
    """upstream ScheduleResult plus what the explanation needs (arrays, not dicts)."""

    node: str
    evaluated: int
    feasible: int
    total: int
    diagnosis: Diagnosis
    names: list[str]
    rows: np.ndarray  # the scored rows (int64)
    scores: ScoreResult | None
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    #: each row's final score: Score plugins' weighted sum plus the extenders' (1 each
    #: when neither scored, as upstream)
    totals: np.ndarray | None = None
    #: the extenders' scaled and weighted part of `totals`
    extender_scores: np.ndarray | None = None


class PodScheduler:
    """One scheduler's schedulePod state that outlives a cycle: the rotating start of the
    feasible-node search (upstream nextStartNodeIndex) and selectHost's round robin."""

    def __init__(self, selector: HostSelector | None = None,
                 percentage_of_nodes_to_score: int | None = None,
                 extenders: Sequence[Extender] = ()) -> None:
        """`extenders`: HTTP extenders (scheduler/extender.py), consulted after the Filter
        plugins and added to the Score plugins' totals, as upstream's WithExtenders."""
        self.selector = selector or HostSelector()
        self.percentage = percentage_of_nodes_to_score
        self.extenders = list(extenders)
        self.next_start = 0

    async def schedule_pod(self, framework: Framework, handle: FrameworkHandle, state: CycleState,
                           pod: PodMeta, nodes: NodeTable) -> Decision:
        """upstream schedulePod. Raises NoNodesAvailable, FitError (the caller runs
        PostFilter) or StatusError (an Error status: the attempt errors)."""
        started = time.perf_counter()
        timings = state.get(TIMINGS_KEY)
        if timings is None:
            timings = {}
            state.write(TIMINGS_KEY, timings)
        if not nodes.size:
            raise NoNodesAvailable()
        feasible, diagnosis = self.find_nodes_that_fit_pod(framework, handle, state, pod, nodes,
                                                           timings)
        if self.extenders and len(feasible):
            feasible = await self.find_nodes_that_pass_extenders(pod.pod, nodes, feasible,
                                                                 diagnosis, timings)
        if not len(feasible):
            raise FitError(pod.pod, nodes.size, diagnosis, nodes.names)
        evaluated = len(feasible) + int(sum(int(m.sum()) for _, m in diagnosis.failures))
        if len(feasible) == 1:
            return Decision(nodes.names[int(feasible[0])], evaluated, 1, nodes.size, diagnosis,
                            nodes.names, feasible, None, timings, time.perf_counter() - started)
        scores = self.prioritize_nodes(framework, state, pod, nodes, feasible, timings)
        extra = None
        if self.extenders:
            extra = await self.extender_scores(pod.pod, nodes, feasible, timings)
            totals = extra + (scores.totals if scores is not None else 0)
        else:
            totals = scores.totals if scores is not None else \
                np.ones(len(feasible), dtype=np.int64)
        index = self.selector.select_index(totals, nodes.name_ranks()[feasible])
        return Decision(nodes.names[int(feasible[index])], evaluated, len(feasible), nodes.size,
                        diagnosis, nodes.names, feasible, scores, timings,
                        time.perf_counter() - started, totals, extra)

    async def find_nodes_that_pass_extenders(self, pod: Obj, nodes: NodeTable, rows: np.ndarray,
                                             diagnosis: Diagnosis,
                                             timings: dict[str, float]) -> np.ndarray:
        """upstream findNodesThatPassExtenders: each extender filters what the previous
        left; a rejected node gets Unschedulable with the extender's reason. An extender
        that fails aborts the attempt (StatusError, an Error)."""
        begun = time.perf_counter()
        try:
            for extender in self.extenders:
                if not len(rows):
                    break
                try:
                    kept, failed = await extender.filter(pod, [nodes.infos[r].node
                                                               for r in rows.tolist()])
                except ExtenderError as exc:
                    raise StatusError(Status.error(str(exc))) from exc
                by_reason: dict[str, list[int]] = {}
                for name, reason in failed.items():
                    row = nodes.row_of.get(name)
                    if row is not None:
                        by_reason.setdefault(reason, []).append(row)
                for reason, failed_rows in by_reason.items():
                    mask = nodes.everywhere(False)
                    mask[failed_rows] = True
                    diagnosis.failures.append((Status.unschedulable(reason), mask))
                keep = {nodes.row_of[name] for name in kept if name in nodes.row_of}
                rows = np.array([r for r in rows.tolist() if r in keep], dtype=np.int64)
            return rows
        finally:
            timings["Extenders"] = time.perf_counter() - begun

    async def extender_scores(self, pod: Obj, nodes: NodeTable, rows: np.ndarray,
                              timings: dict[str, float]) -> np.ndarray:
        """upstream prioritizeNodes' extender part: score x weight x (100 / 10); a failing
        prioritize is ignored (the other scores still decide)."""
        begun = time.perf_counter()
        extra = np.zeros(len(rows), dtype=np.int64)
        objects = [nodes.infos[r].node for r in rows.tolist()]
        names = [nodes.names[r] for r in rows.tolist()]
        for extender in self.extenders:
            try:
                scores = await extender.prioritize(pod, objects)
            except ExtenderError:
                continue
            if scores:
                extra += extender.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY) * np.array(
                    [int(scores.get(name, 0)) for name in names], dtype=np.int64)
        timings["Extenders"] = timings.get("Extenders", 0.0) + time.perf_counter() - begun
        return extra

    def find_nodes_that_fit_pod(self, framework: Framework, handle: FrameworkHandle,
                                state: CycleState, pod: PodMeta, nodes: NodeTable,
                                timings: dict[str, float]) -> tuple[np.ndarray, Diagnosis]:
        """upstream findNodesThatFitPod: PreFilter (a rejection there fails every node with
        its status), the nominated node first, the PreFilterResult's narrowing, Filter."""
        diagnosis = Diagnosis()
        begun = time.perf_counter()
        result, status, with_nodes = framework.run_pre_filter_plugins(state, pod, nodes)
        timings["PreFilter"] = time.perf_counter() - begun
        diagnosis.unschedulable_plugins = set(with_nodes)
        if not is_success(status):
            assert status is not None
            if not status.is_rejected():
                raise StatusError(status)
            diagnosis.failures = [(status, nodes.everywhere())]
            diagnosis.pre_filter_msg = status.message()
            add_plugin_status(diagnosis, status)
            return np.zeros(0, dtype=np.int64), diagnosis
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName") or "")
        row = nodes.row_of.get(nominated) if nominated else None
        if row is not None and (result is None or result.all_nodes()
                                or nominated in (result.node_names or ())):
            only = nodes.everywhere(False)
            only[row] = True
            if self._filter(framework, handle, state, pod, nodes, only, Diagnosis(),
                            timings).any():
                return np.array([row], dtype=np.int64), diagnosis
        candidates = nodes.everywhere()
        if result is not None and not result.all_nodes():
            candidates = nodes.everywhere(False)
            candidates[[row for name in result.node_names or ()
                        if (row := nodes.row_of.get(name)) is not None]] = True
            if (~candidates).any():
                diagnosis.failures.append((Status.unresolvable(ERR_PREFILTER_RESULT),
                                           ~candidates))
        alive = self._filter(framework, handle, state, pod, nodes, candidates, diagnosis, timings)
        return self._sample(np.flatnonzero(alive), nodes.size, framework), diagnosis

    def _filter(self, framework: Framework, handle: FrameworkHandle, state: CycleState,
                pod: PodMeta, nodes: NodeTable, candidates: Mask, diagnosis: Diagnosis,
                timings: dict[str, float]) -> Mask:
        """Filter (with nominated pods) over `candidates`; rows left alive. An Error status
        on any row aborts the attempt, as upstream's parallel search cancels on one."""
        begun = time.perf_counter()
        outcome: Status | None = None
        try:
            alive = candidates.copy()
            if not framework.has_filter_plugins():
                return alive
            failures = handle.run_filter_plugins_with_nominated_pods(state, pod, nodes, candidates)
            for status, rows in failures:
                if status.code is Code.ERROR:
                    outcome = status
                    raise StatusError(status)
                diagnosis.failures.append((status, rows))
                add_plugin_status(diagnosis, status)
                alive &= ~rows
            return alive
        finally:
            seconds = time.perf_counter() - begun
            timings["Filter"] = timings.get("Filter", 0.0) + seconds
            framework.metrics.observe_point("Filter", "Success" if outcome is None
                                            else str(outcome.code), framework.profile_name,
                                            seconds)

    def _sample(self, feasible: np.ndarray, total: int, framework: Framework) -> np.ndarray:
        """The first numFeasibleNodesToFind feasible rows from the rotating start."""
        percentage = framework.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage
        wanted = num_feasible_nodes_to_find(percentage, total)
        if len(feasible) <= wanted:
            return feasible
        # feasible is ascending: the rotation from `start` is feasible[i:] then feasible[:i]
        i = int(np.searchsorted(feasible, self.next_start % total))
        tail = len(feasible) - i
        if tail >= wanted:
            chosen = feasible[i:i + wanted]
            self.next_start = int(chosen[-1]) + 1
            return chosen
        head = feasible[:wanted - tail]
        self.next_start = int(head[-1]) + 1
        return np.concatenate((head, feasible[i:]))

    @staticmethod
    def prioritize_nodes(framework: Framework, state: CycleState, pod: PodMeta, nodes: NodeTable,
                         rows: np.ndarray, timings: dict[str, float]) -> ScoreResult | None:
        """upstream prioritizeNodes: without Score plugins every node scores 1 (None here);
        else PreScore, then Score/NormalizeScore/weights. Failures raise StatusError."""
        if not framework.has_score_plugins():
            return None
        begun = time.perf_counter()
        status = framework.run_pre_score_plugins(state, pod, nodes, rows)
        timings["PreScore"] = time.perf_counter() - begun
        if not is_success(status):
            assert status is not None
            raise StatusError(status)
        begun = time.perf_counter()
        try:
            return framework.run_score_plugins(state, pod, nodes, rows)
        finally:
            timings["Score"] = time.perf_counter() - begun
