"""Preemption's decision, pure: which nodes could take the pod if lower-priority pods left, which
pods would have to leave (PDB-aware), and which node to pick.

Kubernetes piece: pkg/scheduler/framework/preemption/preemption.go (Evaluator: findCandidates,
DryRunPreemption, SelectCandidate, pickOneNodeForPreemption, getLowerPriorityNominatedPods) and
the pure half of plugins/defaultpreemption/default_preemption.go (SelectVictimsOnNode,
PodEligibleToPreemptOthers, filterPodsWithPDBViolation, calculateNumCandidates), 1.31.

Upstream dry-runs each candidate node in a goroutine: copy the NodeInfo, remove every
lower-priority pod, run the Filter plugins on that one node, then add the victims back one at a
time (most important first, PDB-violating ones first) and keep those the pod still fits with.
Here one scratch NodeTable holds the copies of a whole batch of candidates and every step runs
the Filter plugins column-wise over all of them at once: step k re-adds each node's k-th
victim, one Filter run answers for every node, and the rows that stop fitting drop that victim
again. The outcome per node is upstream's (nodes are independent); the Filter runs are as many
as the longest victim list, not nodes x victims. When PreFilter plugins keep pod-dependent
state (PreFilterExtensions: inter-pod affinity, topology spread), one state cannot stand for
several nodes with different pods removed, so each node gets its own table and state clone,
as upstream.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ...api.labels import LabelSelector
from ...api.meta import parse_rfc3339
from ...api.poddisruptionbudget import budget_selector
from ..nodeinfo import NodeInfo, PodFootprint
from ..nodetable import build
from .interface import Code, CycleState, FilterFailures, Mask, Status, is_success
from .nominator import pod_priority

if TYPE_CHECKING:
    from ..algorithm.predicates_meta import PodMeta
    from ..nodetable import NodeTable

Obj = dict[str, Any]
RunFilters = Callable[[CycleState, "PodMeta", "NodeTable", Mask], FilterFailures]

#: CycleState key under which DefaultPreemption leaves its decision for the explanation
DECISION_KEY = "minikube_py/preemption-decision"
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
ERR_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_PREEMPTION_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
DISRUPTION_TARGET = "DisruptionTarget"


class PreFilterExtensionRunner(Protocol):
    """The handle's RunPreFilterExtensionAddPod/RemovePod."""

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: Obj,
                                         node: NodeInfo) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodMeta,
                                            pod_to_remove: Obj, node: NodeInfo) -> Status | None: ...


@dataclass
class Victims:
    """upstream extenderv1.Victims: the pods to evict, most important first."""

    pods: list[Obj]
    num_pdb_violations: int = 0


@dataclass(frozen=True)
class Candidate:
    node: str
    victims: Victims


@dataclass
class DryRun:
    """DryRunPreemption's answer: candidates (non-violating first) and, per node that is no
    candidate, why."""

    candidates: list[Candidate] = field(default_factory=list)
    statuses: dict[str, Status] = field(default_factory=dict)


# -- ordering --------------------------------------------------------------------------------


def pod_start_time(pod: Obj, now: float) -> float:
    """upstream util.GetPodStartTime: status.startTime, else now."""
    raw = (pod.get("status") or {}).get("startTime")
    parsed = _parse_time(raw) if isinstance(raw, str) else None
    return now if parsed is None else parsed


@functools.lru_cache(maxsize=4096)
def _parse_time(raw: str) -> float | None:
    """Start times repeat across a dry run's victims (and across decisions): parse once."""
    try:
        return parse_rfc3339(raw)
    except ValueError:
        return None


def importance(pod: Obj, now: float) -> tuple[int, float]:
    """Sort key, most important first (upstream util.MoreImportantPod: higher priority, then
    the one that started earlier)."""
    return -pod_priority(pod), pod_start_time(pod, now)


def earliest_start_time(victims: Victims, now: float) -> float:
    """upstream util.GetEarliestPodStartTime: the earliest start among the highest-priority
    victims."""
    top = max(pod_priority(p) for p in victims.pods)
    return min(pod_start_time(p, now) for p in victims.pods if pod_priority(p) == top)


# -- PDBs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """A PodDisruptionBudget as preemption reads it, its selector parsed once per decision."""

    namespace: str
    selector: LabelSelector | None
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def of(cls, pdb: Obj) -> Budget:
        status = pdb.get("status") or {}
        return cls((pdb.get("metadata") or {}).get("namespace", ""), budget_selector(pdb),
                   int(status.get("disruptionsAllowed") or 0),
                   frozenset(status.get("disruptedPods") or ()))


def filter_pods_with_pdb_violation(pods: Sequence[Obj], pdbs: Sequence[Obj | Budget]
                                   ) -> tuple[list[Obj], list[Obj]]:
    """upstream filterPodsWithPDBViolation: (violating, non-violating), order kept. Each pod
    spends one disruption of every budget covering it (unless the budget already counts it
    in disruptedPods); a pod that drives some budget below zero violates it."""
    budgets = [b if isinstance(b, Budget) else Budget.of(b) for b in pdbs]
    allowed = [b.allowed for b in budgets]
    violating: list[Obj] = []
    non_violating: list[Obj] = []
    for pod in pods:
        md = pod.get("metadata") or {}
        labels = md.get("labels")
        violated = False
        if labels:
            for i, budget in enumerate(budgets):
                if (budget.selector is None or budget.namespace != md.get("namespace")
                        or not budget.selector.matches(labels)):
                    continue
                if md.get("name") in budget.disrupted:
                    continue  # the API server already counted this one
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


# -- eligibility and candidates --------------------------------------------------------------


def terminating_by_preemption(pod: Obj) -> bool:
    """upstream podTerminatingByPreemption (PodDisruptionConditions GA in 1.31)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == DISRUPTION_TARGET:
            return (condition.get("status") == "True"
                    and condition.get("reason") == REASON_PREEMPTION_BY_SCHEDULER)
    return False


def pod_eligible_to_preempt_others(pod: Obj, nominated_status: Status | None,
                                   nominated_node: NodeInfo | None) -> tuple[bool, str]:
    """upstream PodEligibleToPreemptOthers: not with preemptionPolicy Never, and not while
    victims of an earlier preemption still terminate on the nominated node (unless that node
    became hopeless for the pod)."""
    if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
        return False, MSG_PREEMPTION_NEVER
    if not (pod.get("status") or {}).get("nominatedNodeName"):
        return True, ""
    if nominated_status is not None and \
            nominated_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return True, ""
    if nominated_node is not None:
        priority = pod_priority(pod)
        for other in nominated_node.pods.values():
            if pod_priority(other) < priority and terminating_by_preemption(other):
                return False, MSG_TERMINATING_ON_NOMINATED
    return True, ""


def status_of_row(failures: FilterFailures, row: int) -> Status | None:
    """The (first) status a row got in a Filter answer; None: it passed."""
    for status, mask in failures:
        if mask[row]:
            return status
    return None


def unschedulable_rows(failures: FilterFailures, size: int) -> Mask:
    """upstream NodesForStatusCode(Unschedulable): rows rejected as Unschedulable and by no
    UnschedulableAndUnresolvable (removing pods cannot help those) or other status."""
    wanted = np.zeros(size, dtype=bool)
    other = np.zeros(size, dtype=bool)
    for status, mask in failures:
        if status.code is Code.UNSCHEDULABLE:
            wanted |= mask
        else:
            other |= mask
    return wanted & ~other


def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """upstream calculateNumCandidates: percentage of the nodes, at least `absolute`, at
    most all."""
    n = num_nodes * percentage // 100
    return min(max(n, absolute), num_nodes)


def lower_priority_nominated_pods(nominated: Sequence[Obj], pod: Obj) -> list[Obj]:
    """upstream getLowerPriorityNominatedPods (given the node's nominated pods)."""
    priority = pod_priority(pod)
    return [p for p in nominated if pod_priority(p) < priority]


def pick_one_node_for_preemption(candidates: Sequence[Candidate], now: float) -> Candidate | None:
    """upstream pickOneNodeForPreemption: fewest PDB violations, then the lowest
    highest-priority victim, the smallest priority sum, the fewest victims, the latest start
    of the highest-priority victims; then the first."""
    if not candidates:
        return None
    scores: list[Callable[[Candidate], float]] = [
        lambda c: -c.victims.num_pdb_violations,
        lambda c: -pod_priority(c.victims.pods[0]),
        # shifted by MaxInt32+1 so a few negative-priority pods do not beat fewer of them
        lambda c: -sum(pod_priority(p) + 2**31 for p in c.victims.pods),
        lambda c: -len(c.victims.pods),
        lambda c: earliest_start_time(c.victims, now),
    ]
    remaining = list(candidates)
    for score in scores:
        values = [score(c) for c in remaining]
        best = max(values)
        remaining = [c for c, v in zip(remaining, values) if v == best]
        if len(remaining) == 1:
            break
    return remaining[0]


# -- the dry run -----------------------------------------------------------------------------


def dry_run_preemption(pod: PodMeta, state: CycleState, potential: Sequence[NodeInfo],
                       pdbs: Sequence[Obj], run_filters: RunFilters, num_candidates: int, *,
                       now: float, extensions: PreFilterExtensionRunner | None = None) -> DryRun:
    """upstream DryRunPreemption over `potential` (already rotated to the random offset):
    batches of `num_candidates` nodes until some non-violating candidate exists and
    `num_candidates` were found, as upstream's parallel search stops."""
    result = DryRun()
    budgets = [Budget.of(pdb) for pdb in pdbs]
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    step = max(num_candidates, 1)
    for start in range(0, len(potential), step):
        batch = potential[start:start + step]
        if extensions is None:
            outcomes = select_victims(pod, state, batch, budgets, run_filters, now)
        else:  # pod-dependent PreFilter state: one node, one state clone at a time
            outcomes = [select_victims(pod, state.clone(), [info], budgets, run_filters, now,
                                       extensions)[0] for info in batch]
        for info, outcome in zip(batch, outcomes):
            if isinstance(outcome, Victims):
                found = Candidate(info.name, outcome)
                (violating if outcome.num_pdb_violations else non_violating).append(found)
            else:
                result.statuses[info.name] = outcome
        if non_violating and len(non_violating) + len(violating) >= num_candidates:
            break
    result.candidates = non_violating[:num_candidates] + violating[:num_candidates]
    return result


def select_victims(pod: PodMeta, state: CycleState, infos: Sequence[NodeInfo],
                   pdbs: Sequence[Obj | Budget], run_filters: RunFilters, now: float,
                   extensions: PreFilterExtensionRunner | None = None
                   ) -> list[Victims | Status]:
    """upstream SelectVictimsOnNode for every node of `infos` at once (see the module
    docstring); per node, its victims or the status that makes it no candidate."""
    budgets = [b if isinstance(b, Budget) else Budget.of(b) for b in pdbs]
    priority = pod_priority(pod.pod)
    clones: list[NodeInfo] = []
    outcomes: list[Victims | Status | None] = []
    potential: list[list[_Victim]] = []
    for info in infos:
        lower = [_Victim(p, key, prio, info.footprints.get(key) or PodFootprint.of(p))
                 for key, p, prio in [(k, p, pod_priority(p)) for k, p in info.pods.items()]
                 if prio < priority]
        clone = info.clone_without({v.key for v in lower})
        clones.append(clone)
        potential.append(lower)
        if not lower:
            outcomes.append(Status.unresolvable(ERR_NO_VICTIMS))
        elif extensions is not None:
            outcomes.append(next(filter(None, (_extend(extensions, state, pod, v.obj, clone,
                                                       remove=True) for v in lower)), None))
        else:
            outcomes.append(None)
    size = len(clones)
    table = build(clones)
    alive = np.fromiter((o is None for o in outcomes), dtype=bool, count=size)
    if alive.any():  # does the pod fit once every lower-priority pod is gone?
        for status, mask in run_filters(state, pod, table, alive.copy()):
            for row in np.flatnonzero(mask & alive).tolist():
                outcomes[row] = status
                alive[row] = False
    rows = np.flatnonzero(alive).tolist()
    orders: dict[int, list[_Victim]] = {}
    violating_count: dict[int, int] = {}
    for row in rows:
        ordered = sorted(potential[row], key=lambda v: (-v.priority, v.start(now)))
        if not budgets:
            orders[row], violating_count[row] = ordered, 0
            continue
        by_id = {id(v.obj): v for v in ordered}
        violating, non_violating = filter_pods_with_pdb_violation([v.obj for v in ordered], budgets)
        orders[row] = [by_id[id(p)] for p in violating + non_violating]
        violating_count[row] = len(violating)
    victims: dict[int, list[_Victim]] = {row: [] for row in rows}
    violations = dict.fromkeys(rows, 0)
    longest = max((len(order) for order in orders.values()), default=0)
    for k in range(longest):  # reprieve the k-th most important of every node together
        trying = [row for row in rows if outcomes[row] is None and k < len(orders[row])]
        if not trying:
            break
        mask = np.zeros(size, dtype=bool)
        for row in trying:
            victim = orders[row][k]
            clones[row].add_pod(victim.obj, victim.footprint)
            outcomes[row] = _extend(extensions, state, pod, victim.obj, clones[row], remove=False)
            mask[row] = outcomes[row] is None
        table.refill_pods(trying)
        failing = np.zeros(size, dtype=bool)
        for _status, rows_failing in run_filters(state, pod, table, mask.copy()):
            failing |= rows_failing
        dropped = np.flatnonzero(failing & mask).tolist()
        for row in dropped:
            victim = orders[row][k]
            clones[row].remove_pod(victim.obj)
            outcomes[row] = _extend(extensions, state, pod, victim.obj, clones[row], remove=True)
            victims[row].append(victim)
            if k < violating_count[row]:
                violations[row] += 1
        table.refill_pods(dropped)
    for row in rows:
        if outcomes[row] is not None:
            continue
        found = victims[row]
        if not found:
            outcomes[row] = Status.error(
                f'expected at least one victim pod on node "{clones[row].name}"')
            continue
        if 0 < violating_count[row] < len(orders[row]):
            found.sort(key=lambda v: (-v.priority, v.start(now)))
        outcomes[row] = Victims([v.obj for v in found], violations[row])
    return [o if o is not None else Status.error("preemption: no outcome") for o in outcomes]


@dataclass(slots=True)
class _Victim:
    """A lower-priority pod of a candidate node, with what the dry run asks of it often."""

    obj: Obj
    key: str
    priority: int
    footprint: PodFootprint
    _start: float | None = None

    def start(self, now: float) -> float:
        if self._start is None:
            self._start = pod_start_time(self.obj, now)
        return self._start


def _extend(extensions: PreFilterExtensionRunner | None, state: CycleState, pod: PodMeta,
            other: Obj, node: NodeInfo, *, remove: bool) -> Status | None:
    """Tell the PreFilter plugins a pod left or came back (an Error status on failure)."""
    if extensions is None:
        return None
    if remove:
        status = extensions.run_pre_filter_extension_remove_pod(state, pod, other, node)
    else:
        status = extensions.run_pre_filter_extension_add_pod(state, pod, other, node)
    return None if is_success(status) else Status.error(status.message() if status else "")
