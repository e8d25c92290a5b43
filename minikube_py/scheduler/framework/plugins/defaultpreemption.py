"""DefaultPreemption: the PostFilter plugin that makes room for a pod by evicting lower-priority pods.

Kubernetes piece: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
the I/O half of pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt,
prepareCandidate, PreemptPod, clearNominatedNodeName), 1.31. When no node fits, PostFilter:

1. checks the pod may preempt (not preemptionPolicy Never, no victim of its earlier preemption
   still terminating on its nominated node);
2. dry-runs the nodes Filter rejected as Unschedulable (not UnschedulableAndUnresolvable),
   from a random offset, until enough candidates (minCandidateNodesPercentage 10 %,
   minCandidateNodesAbsolute 100) are found — the decision itself is `framework.preemption`;
3. picks one node (fewest PDB violations, lowest victims, ...);
4. evicts its victims (a pod parked at Permit is rejected instead): each gets the
   DisruptionTarget condition (reason PreemptionByScheduler), a graceful delete and a
   "Preempted" event; lower-priority pods nominated to that node lose their nomination;
5. answers the node as the nominated node: the scheduler records it in
   status.nominatedNodeName and the pod is retried once the victims are gone.

Extenders' ProcessPreemption is not consulted (candidates are not sent to extenders).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog

from ....api import meta
from ....client.errors import StatusError, is_not_found
from ....client.resources import POD_DISRUPTION_BUDGETS, PODS
from ...metrics import SchedulerMetrics
from ..interface import Code, CycleState, Diagnosis, Handle, PostFilterResult, Status
from ..nominator import pod_uid
from ..preemption import (
    DECISION_KEY,
    DISRUPTION_TARGET,
    ERR_NOT_HELPFUL,
    REASON_PREEMPTION_BY_SCHEDULER,
    Candidate,
    calculate_num_candidates,
    dry_run_preemption,
    lower_priority_nominated_pods,
    pick_one_node_for_preemption,
    pod_eligible_to_preempt_others,
    status_of_row,
    unschedulable_rows,
)
from ..schedule_one import FitError

if TYPE_CHECKING:
    from ...algorithm.predicates_meta import PodMeta
    from ...nodetable import NodeTable

Obj = dict[str, Any]
NAME = "DefaultPreemption"
#: how long one eviction or status patch may take before preemption gives up on it
API_TIMEOUT = 30.0
log = structlog.get_logger(component="scheduler")


def new(args: Mapping[str, Any], handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args, handle)


class DefaultPreemption:
    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle,
                 rng: random.Random | None = None) -> None:
        self.handle = handle
        self.min_percentage = int(args.get("minCandidateNodesPercentage", 10))
        self.min_absolute = int(args.get("minCandidateNodesAbsolute", 100))
        self.rng = rng or random.Random()
        self.metrics = SchedulerMetrics.instance()
        informers = getattr(handle, "informers", None)
        pdbs = informers.informer(POD_DISRUPTION_BUDGETS) if informers is not None else None
        #: upstream's PDB lister: the shared informer's cache (none without informers)
        self.list_pdbs: Callable[[], list[Obj]] = pdbs.indexer.list if pdbs is not None \
            else list

    # -- PostFilter ------------------------------------------------------------------------
    async def post_filter(self, state: CycleState, pod: PodMeta, diagnosis: Diagnosis
                          ) -> tuple[PostFilterResult | None, Status | None]:
        try:
            result, status = await self.preempt(state, pod, diagnosis)
        finally:
            self.metrics.preemption_attempts.inc()
        if status is not None and status.message():
            status = Status(status.code, (f"preemption: {status.message()}",))
        return result, status

    async def preempt(self, state: CycleState, pod: PodMeta, diagnosis: Diagnosis
                      ) -> tuple[PostFilterResult | None, Status | None]:
        """upstream Evaluator.Preempt; None status: success (the node is nominated)."""
        found = self.find_candidate(state, pod, diagnosis)
        if not isinstance(found, Candidate):
            return found
        candidate = found
        failed = await self.prepare_candidate(candidate, pod.pod)
        if failed is not None:
            return None, failed
        return PostFilterResult(candidate.node), None

    def find_candidate(self, state: CycleState, pod: PodMeta, diagnosis: Diagnosis
                       ) -> Candidate | tuple[PostFilterResult | None, Status]:
        """Steps 1-3, pure apart from reading the snapshot and the PDB lister: the chosen
        candidate, or the PostFilter answer when there is none."""
        nodes = self.handle.snapshot()
        nominated = (pod.pod.get("status") or {}).get("nominatedNodeName") or ""
        row = nodes.row_of.get(nominated) if nominated else None
        eligible, why = pod_eligible_to_preempt_others(
            pod.pod, status_of_row(diagnosis.failures, row) if row is not None else None,
            nodes.infos[row] if row is not None else None)
        if not eligible:
            state.write(DECISION_KEY, {"notEligible": why})
            return None, Status.unschedulable(why)
        if not nodes.size:
            return None, Status.error("no nodes available")
        potential = np.flatnonzero(unschedulable_rows(diagnosis.failures, nodes.size))
        statuses: dict[str, Status] = {}
        if len(potential):
            offset = self.rng.randrange(len(potential))
            rotated = np.roll(potential, -offset).tolist()
            dry_run = dry_run_preemption(
                pod, state, [nodes.infos[r] for r in rotated], self.list_pdbs(),
                self.handle.run_filter_plugins_with_nominated_pods,
                calculate_num_candidates(len(potential), self.min_percentage, self.min_absolute),
                now=time.time(), extensions=self._extensions(state))
            state.write(DECISION_KEY, {"potentialNodes": len(potential),
                                       "candidates": len(dry_run.candidates),
                                       "notCandidates": len(dry_run.statuses)})
            if dry_run.candidates:
                best = pick_one_node_for_preemption(dry_run.candidates, time.time())
                assert best is not None
                state.get(DECISION_KEY).update(
                    node=best.node, numPDBViolations=best.victims.num_pdb_violations,
                    victims=[_key(p) for p in best.victims.pods])
                return best
            statuses = dry_run.statuses
            errors = [s.message() for s in statuses.values() if s.code is Code.ERROR]
            if errors:
                return None, Status.error(", ".join(errors))
        message = FitError(pod.pod, nodes.size, _diagnosis(nodes, statuses)).message()
        return PostFilterResult(""), Status.unschedulable(message)

    def _extensions(self, state: CycleState) -> Any:
        """The handle's PreFilter extension runner when some PreFilter plugin that ran this
        cycle (not skipped) keeps pod-dependent state (then each node is dry-run on its own
        state clone, as upstream); None: the column-wise dry run over all candidates."""
        framework = getattr(self.handle, "framework", None)
        plugins = getattr(framework, "pre_filter_plugins", ()) if framework is not None else ()
        if any(p.pre_filter_extensions() is not None and p.name not in state.skip_filter_plugins
               for p in plugins):
            return self.handle
        return None

    # -- prepareCandidate ------------------------------------------------------------------
    async def prepare_candidate(self, candidate: Candidate, preemptor: Obj) -> Status | None:
        """Evict the victims (in parallel), then clear lower-priority nominations on the
        node; an eviction that fails (other than NotFound) fails the attempt."""
        victims = candidate.victims.pods
        results = await asyncio.gather(
            *(self.preempt_pod(candidate.node, preemptor, v) for v in victims
              if not (v.get("metadata") or {}).get("deletionTimestamp")),
            return_exceptions=True)
        for outcome in results:
            if isinstance(outcome, BaseException):
                return Status.error(str(outcome))
        self.metrics.preemption_victims.observe(len(victims))
        nominated = getattr(self.handle, "nominated_pods_for_node", lambda _node: [])
        for other in lower_priority_nominated_pods(nominated(candidate.node), preemptor):
            await self._clear_nomination(other)
        return None

    async def preempt_pod(self, node: str, preemptor: Obj, victim: Obj) -> None:
        """upstream PreemptPod: reject a waiting pod, else mark and delete the victim."""
        waiting = self.handle.get_waiting_pod(pod_uid(victim))
        if waiting is not None:
            waiting.reject(self.name, "preempted")
        else:
            md = victim.get("metadata") or {}
            scheduler = (preemptor.get("spec") or {}).get("schedulerName") or "default-scheduler"
            condition = {"type": DISRUPTION_TARGET, "status": "True",
                         "reason": REASON_PREEMPTION_BY_SCHEDULER,
                         "message": f"{scheduler}: preempting to accommodate a higher priority pod",
                         "lastTransitionTime": meta.rfc3339(time.time())}
            try:
                await asyncio.wait_for(self.handle.client.patch(
                    PODS, md["name"], {"status": {"conditions": [condition]}},
                    md.get("namespace"), patch_type="strategic", subresource="status"),
                    API_TIMEOUT)
                await asyncio.wait_for(self.handle.client.delete(
                    PODS, md["name"], md.get("namespace")), API_TIMEOUT)
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
                return  # already gone
        preemptor_uid = (preemptor.get("metadata") or {}).get("uid", "")
        self.handle.event(victim, "Normal", "Preempted",
                          f"Preempted by pod {preemptor_uid} on node {node}")
        log.info("preempted", victim=_key(victim), preemptor=_key(preemptor), node=node)

    async def _clear_nomination(self, pod: Obj) -> None:
        md = pod.get("metadata") or {}
        try:
            await asyncio.wait_for(self.handle.client.patch(
                PODS, md["name"], {"status": {"nominatedNodeName": None}}, md.get("namespace"),
                subresource="status"), API_TIMEOUT)
        except (StatusError, TimeoutError) as exc:  # not critical (upstream logs it)
            log.warning("cannot clear nominatedNodeName", pod=_key(pod), error=str(exc))


def _key(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def _diagnosis(nodes: NodeTable, statuses: Mapping[str, Status]) -> Diagnosis:
    """The dry run's per-node statuses as a Diagnosis over the snapshot, nodes it did not
    reach being "Preemption is not helpful for scheduling" (upstream SetAbsentNodesStatus)."""
    failures: dict[Status, np.ndarray] = {}
    covered = nodes.everywhere(False)
    for name, status in statuses.items():
        row = nodes.row_of.get(name)
        if row is None:
            continue
        failures.setdefault(status, nodes.everywhere(False))[row] = True
        covered[row] = True
    diagnosis = Diagnosis(failures=list(failures.items()))
    if (~covered).any():
        diagnosis.failures.append((Status.unresolvable(ERR_NOT_HELPFUL), ~covered))
    return diagnosis
