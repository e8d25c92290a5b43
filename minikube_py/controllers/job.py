"""The Job controller: run a Job's pods to completion and record what happened to them.

Kubernetes piece: pkg/controller/job/job_controller.go (Controller, syncJob, manageJob,
trackJobStatusAndRemoveFinalizers, flushUncountedAndRemoveFinalizers, the pod event handlers)
as of 1.31, with its decisions in job_util.py. kube-controller-manager's `job` controller,
running as `system:serviceaccount:kube-system:job-controller` (which may update only
`jobs/status`, and patch — never get or update — pods).

Finalizer-based tracking, as upstream: every pod is created with the
`batch.kubernetes.io/job-tracking` finalizer. When a pod finishes (or is deleted), a sync first
records its uid in `status.uncountedTerminatedPods`, then removes the finalizer, then moves the
uid into `status.succeeded`/`failed`; so a pod is counted exactly once even if the controller
stops between the steps, and a deleted pod cannot vanish before it was counted.

A failing Job first gets `FailureTarget` (its active pods are deleted), and `Failed` with the
same reason once none of its pods is still running or terminating; a Job whose successPolicy
matched gets `SuccessCriteriaMet`, then `Complete` likewise; reaching `completions` gives
`Complete` at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..api import batch as b
from ..api import meta
from ..api.errors import StatusError
from ..client.errors import is_conflict, is_not_found
from ..client.resources import JOBS, PODS
from . import job_util as ju
from .base import Controller, ControllerContext, split_key
from .conditions import get_condition, is_pod_ready
from .controller_utils import (
    NAMESPACE_INDEXERS,
    ControllerExpectations,
    ControllerRefManager,
    PodControl,
    controller_ref,
    get_controller_of,
    label_selector,
    pod_key,
    recheck_deletion,
    with_kind,
)
from .sync_cpu import metered

Obj = dict[str, Any]

#: the pod index a sync reads instead of the whole namespace (upstream lists pods by the
#: Job's selector; here: the pods a Job controls, plus the namespace's orphans it may adopt)
CONTROLLER_INDEX = "job-controller"


def controller_index(pod: Obj) -> list[str]:
    """`<uid>` of the controlling Job, or `orphan/<namespace>` for a pod with no controller."""
    ref = get_controller_of(pod)
    if ref is None:
        return [f"orphan/{(pod.get('metadata') or {}).get('namespace', '')}"]
    return [ref.get("uid", "")] if ref.get("kind") == "Job" else []


#: queue keys of pods whose finalizer has no Job to remove it
ORPHAN_PREFIX = "orphan-pod:"

REMOVE_FINALIZER_PATCH = {"metadata": {
    "$deleteFromPrimitiveList/finalizers": [b.JOB_TRACKING_FINALIZER]}}


def _condition(kind: str, status: str, reason: str, message: str, now: float) -> Obj:
    stamp = meta.rfc3339(now)
    return {"type": kind, "status": status, "lastProbeTime": stamp,
            "lastTransitionTime": stamp, "reason": reason, "message": message}


def _set_condition(conditions: list[Obj], cond: Obj) -> list[Obj]:
    """Replace a condition of the same type when its status changes (upstream
    ensureJobConditionStatus), else append."""
    out = []
    replaced = False
    for existing in conditions:
        if existing.get("type") == cond["type"]:
            replaced = True
            if existing.get("status") == cond["status"]:
                out.append(existing)
                continue
            out.append(cond)
        else:
            out.append(existing)
    if not replaced:
        out.append(cond)
    return out


def _pod_change_matters(old: Obj, cur: Obj) -> bool:
    """Whether a pod update can change what a sync decides: its phase, readiness, deletion,
    finalizers, labels or owners (a binding or a heartbeat of a running pod cannot). Upstream
    syncs on every update; skipping the rest spares a sync per kubelet status write."""
    old_md, cur_md = old.get("metadata") or {}, cur.get("metadata") or {}
    return (ju.phase(old) != ju.phase(cur) or is_pod_ready(old) != is_pod_ready(cur)
            or old_md.get("deletionTimestamp") != cur_md.get("deletionTimestamp")
            or old_md.get("finalizers") != cur_md.get("finalizers")
            or old_md.get("labels") != cur_md.get("labels")
            or old_md.get("ownerReferences") != cur_md.get("ownerReferences")
            or _restarts(old) != _restarts(cur))


def _restarts(pod: Obj) -> int:
    return sum(int((cs or {}).get("restartCount") or 0)
               for cs in ju.status_of(pod).get("containerStatuses") or ())


class JobController(Controller):
    """kube-controller-manager's `job` controller."""

    name = "job"
    service_account = "job-controller"
    component = "job-controller"
    #: upstream DefaultJobPodFailureBackOff (a test may shorten it)
    pod_failure_backoff = ju.POD_FAILURE_BACKOFF
    #: upstream syncJobBatchPeriod: how long pod events are gathered before a sync
    sync_job_batch_period = 1.0

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_job_syncs
        self.clock = ctx.clock
        self.recorder = ctx.recorder(self.component)
        self.pod_control = PodControl(self.client, self.recorder)
        self.expectations = ControllerExpectations()
        #: job key -> uids whose finalizer removal is not observed yet (finalizerExpectations)
        self.finalizers_expected: dict[str, set[str]] = {}
        #: job key -> the Job as this controller last wrote it (the informer may lag)
        self.written: dict[str, Obj] = {}
        self.jobs = ctx.informers.informer(JOBS, indexers=NAMESPACE_INDEXERS)
        self.pods = ctx.informers.informer(PODS, indexers={CONTROLLER_INDEX: controller_index})
        self.jobs.add_event_handler(self._job_changed, self._job_updated, self._job_deleted)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)

    # -- events ---------------------------------------------------------------------------
    @staticmethod
    def key_of(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def _batched(self, key: str) -> None:
        """upstream enqueueSyncJobBatched: pod events and status updates of one Job within
        the batch period make one sync."""
        self.queue.add_after(key, self.sync_job_batch_period)

    def _job_changed(self, job: Obj) -> None:
        self.queue.add(self.key_of(job))

    def _job_updated(self, old: Obj, cur: Obj) -> None:
        key = self.key_of(cur)
        mine = self.written.get(key)
        if mine is not None and (mine.get("metadata") or {}).get("resourceVersion") == \
                (cur.get("metadata") or {}).get("resourceVersion"):
            return  # the echo of this controller's own status write: nothing new
        if (old.get("metadata") or {}).get("generation") != \
                (cur.get("metadata") or {}).get("generation"):
            self.queue.add(key)  # a spec change: at once
        else:
            self._batched(key)

    def _job_deleted(self, job: Obj) -> None:
        key = self.key_of(job)
        self.expectations.delete(key)
        self.written.pop(key, None)
        self.queue.add(key)
        for pod in self.pods.indexer.by_index(CONTROLLER_INDEX, ju.uid_of(job)):
            self._maybe_orphan(pod)

    def _maybe_orphan(self, pod: Obj) -> None:
        """A pod that still has the tracking finalizer but no Job to count it (the Job was
        deleted, or released it): queue it so a sync removes the finalizer (upstream
        enqueueOrphanPod / syncOrphanPod), or it would stay Terminating for ever."""
        if ju.has_finalizer(pod) and self._owner_key(pod) is None:
            md = pod.get("metadata") or {}
            self.queue.add(f"{ORPHAN_PREFIX}{md.get('namespace', '')}/{md.get('name', '')}")

    def _owner_key(self, pod: Obj) -> str | None:
        ref = get_controller_of(pod)
        if ref is None or ref.get("kind") != "Job":
            return None
        ns = (pod.get("metadata") or {}).get("namespace", "")
        job = self.jobs.indexer.get(f"{ns}/{ref.get('name', '')}")
        if job is None or ju.uid_of(job) != ref.get("uid"):
            return None
        return self.key_of(job)

    def _finalizer_observed(self, key: str, pod: Obj) -> None:
        expected = self.finalizers_expected.get(key)
        if expected and not ju.has_finalizer(pod):
            expected.discard(ju.uid_of(pod))

    def _pod_added(self, pod: Obj) -> None:
        key = self._owner_key(pod)
        if key is not None:
            self.expectations.creation_observed(key)
            self._batched(key)
        else:
            self._maybe_orphan(pod)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        key = self._owner_key(cur) or self._owner_key(old)
        if key is None:
            self._maybe_orphan(cur)
            return
        if not _pod_change_matters(old, cur):
            return
        if (cur.get("metadata") or {}).get("deletionTimestamp") and \
                not (old.get("metadata") or {}).get("deletionTimestamp"):
            self.expectations.deletion_observed(key, pod_key(cur))
        self._finalizer_observed(key, cur)
        self._batched(key)

    def _pod_deleted(self, pod: Obj) -> None:
        key = self._owner_key(pod)
        if key is None:
            return
        self.expectations.deletion_observed(key, pod_key(pod))
        expected = self.finalizers_expected.get(key)
        if expected:
            expected.discard(ju.uid_of(pod))
        self._batched(key)

    # -- sync -----------------------------------------------------------------------------
    def _latest(self, key: str) -> Obj | None:
        job = self.jobs.indexer.get(key)
        if job is None:
            return None
        mine = self.written.get(key)
        if mine is not None and ju.uid_of(mine) == ju.uid_of(job):
            try:
                if int(mine["metadata"]["resourceVersion"]) > int(
                        job["metadata"]["resourceVersion"]):
                    return mine
            except (KeyError, TypeError, ValueError):
                pass
        return job

    async def sync(self, key: str) -> None:
        if key.startswith(ORPHAN_PREFIX):
            await self._sync_orphan_pod(key[len(ORPHAN_PREFIX):])
            return
        namespace, _ = split_key(key)
        job = self._latest(key)
        if job is None:
            self.expectations.delete(key)
            self.finalizers_expected.pop(key, None)
            return
        job = with_kind(job, "batch/v1", "Job")
        candidates = (self.pods.indexer.by_index(CONTROLLER_INDEX, ju.uid_of(job))
                      + self.pods.indexer.by_index(CONTROLLER_INDEX, f"orphan/{namespace}"))
        pods = await self._claim(job, candidates)
        expected = self.finalizers_expected.setdefault(key, set())
        pods = [p for p in pods if ju.uid_of(p) not in expected or not ju.has_finalizer(p)]
        if b.is_job_finished(job):
            await self._remove_finalizers(key, [p for p in pods if ju.has_finalizer(p)])
            return
        now = self.clock()
        spec = ju.spec_of(job)
        suspended = spec.get("suspend") is True
        target = self._target(job)
        state = ju.build_state(job, pods, now, target is not None)
        finish = target or ju.failure_finish(state) or ju.success_finish(state)
        if finish is not None and target is None:
            # a new outcome: the active pods go, and every pod is counted and finalized now
            await self._delete_pods(key, job, state.active())
            state = ju.build_state(job, pods, now, True)
            if finish.failed:
                state.new_failed = list(dict.fromkeys(
                    state.new_failed + [ju.uid_of(p) for p in state.finalize
                                        if ju.phase(p) != "Succeeded"
                                        and ju.uid_of(p) not in state.uncounted_failed]))
        if suspended and finish is None:
            # pods deleted because the Job is suspended are not failures
            state.new_failed = [u for u in state.new_failed
                                if any(ju.uid_of(p) == u and ju.phase(p) == "Failed"
                                       for p in state.pods)]
        job = await self._record_uncounted(job, state, finish)
        await self._remove_finalizers(key, state.finalize)
        created = 0
        if finish is None:
            created = await self._manage(key, job, state, suspended)
        await self._flush(job, state, finish, created, suspended)

    async def _sync_orphan_pod(self, pod_key_: str) -> None:
        """Remove the finalizer of a pod whose Job is gone (checked with a GET: the informer
        may not have seen a new Job yet) or that no Job controls any more."""
        pod = self.pods.indexer.get(pod_key_)
        if pod is None or not ju.has_finalizer(pod) or self._owner_key(pod) is not None:
            return
        ref = get_controller_of(pod)
        if ref is not None and ref.get("kind") == "Job":
            try:
                job = await self.client.get(JOBS, ref.get("name", ""),
                                            pod["metadata"].get("namespace"))
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
            else:
                if ju.uid_of(job) == ref.get("uid"):
                    return  # it exists: its own sync counts the pod
        await self._remove_finalizers(f"orphan/{pod_key_}", [pod])
        self.finalizers_expected.pop(f"orphan/{pod_key_}", None)

    def _target(self, job: Obj) -> ju.Finish | None:
        for kind, failed in ((b.JOB_FAILURE_TARGET, True), (b.JOB_SUCCESS_CRITERIA_MET, False)):
            cond = get_condition(job, kind)
            if cond is not None and cond.get("status") == "True":
                return ju.Finish(failed, cond.get("reason", ""), cond.get("message", ""))
        return None

    async def _claim(self, job: Obj, pods: list[Obj]) -> list[Obj]:
        md = job["metadata"]
        try:
            selector = label_selector(ju.spec_of(job).get("selector"))
        except StatusError:
            return []

        async def fetch() -> Obj:
            return await self.client.get(JOBS, md["name"], md["namespace"])

        manager = ControllerRefManager(self.client, PODS, job,
                                       selector, controller_ref(job, "batch/v1", "Job"),
                                       recheck_deletion(fetch, job))
        return await manager.claim(pods)

    async def _record_uncounted(self, job: Obj, state: ju.JobState,
                                finish: ju.Finish | None) -> Obj:
        """Step 1 of tracking: the uids about to lose their finalizer go into
        uncountedTerminatedPods (with a new target condition), before any finalizer goes."""
        new_target = finish is not None and self._target(job) is None and (
            finish.failed or finish.reason == b.REASON_SUCCESS_POLICY)
        if not state.new_succeeded and not state.new_failed and not new_target:
            return job
        status = dict(ju.status_of(job))
        uncounted = dict(status.get("uncountedTerminatedPods") or {})
        if state.new_succeeded and not ju.is_indexed(job):
            uncounted["succeeded"] = [*(uncounted.get("succeeded") or ()), *state.new_succeeded]
        if state.new_failed:
            uncounted["failed"] = [*(uncounted.get("failed") or ()), *state.new_failed]
        status["uncountedTerminatedPods"] = uncounted
        if ju.is_indexed(job):
            status["completedIndexes"] = ju.indexes_text(state.succeeded_indexes)
            if ju.spec_of(job).get("backoffLimitPerIndex") is not None:
                status["failedIndexes"] = ju.indexes_text(state.failed_indexes)
        if new_target and finish is not None:
            kind = b.JOB_FAILURE_TARGET if finish.failed else b.JOB_SUCCESS_CRITERIA_MET
            status["conditions"] = _set_condition(
                list(status.get("conditions") or ()),
                _condition(kind, "True", finish.reason, finish.message, state.now))
        return await self._write_status(job, status)

    async def _remove_finalizers(self, key: str, pods: list[Obj]) -> None:
        """Step 2: strategic-merge patches deleting the finalizer (pods may only be patched)."""
        if not pods:
            return
        expected = self.finalizers_expected.setdefault(key, set())

        async def remove(pod: Obj) -> None:
            md = pod["metadata"]
            expected.add(ju.uid_of(pod))
            try:
                await self.client.patch(PODS, md["name"], REMOVE_FINALIZER_PATCH,
                                        md.get("namespace"), patch_type="strategic")
            except StatusError as exc:
                expected.discard(ju.uid_of(pod))
                if not is_not_found(exc):
                    raise

        results = await asyncio.gather(*(metered(remove(p)) for p in pods), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _delete_pods(self, key: str, job: Obj, pods: list[Obj]) -> None:
        if not pods:
            return
        self.expectations.expect_deletions(key, [pod_key(p) for p in pods])

        async def delete(pod: Obj) -> None:
            try:
                await self.pod_control.delete_pod(pod["metadata"]["namespace"],
                                                  pod["metadata"]["name"], job)
            except StatusError as exc:
                self.expectations.lower(key, delete=1, pod_keys=[pod_key(pod)])
                if not is_not_found(exc):
                    raise

        results = await asyncio.gather(*(metered(delete(p)) for p in pods), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _manage(self, key: str, job: Obj, state: ju.JobState, suspended: bool) -> int:
        """manageJob: create or delete pods toward the wanted number; returns the change of
        the active count."""
        active = state.active()
        if suspended:
            await self._delete_pods(key, job, active)
            return -len(active)
        if not self.expectations.satisfied(key):
            return 0
        wanted = ju.wanted_active(state)
        running = len(active) + (len(state.terminating()) if ju.only_replace_failed(job) else 0)
        remaining = ju.deadline_remaining(job, state.now)
        if remaining is not None:
            self.queue.add_after(key, max(remaining, 0.0) + 0.01)
        if running > wanted:
            doomed = sorted(active, key=lambda p: (ju.completion_index(p),
                                                   p["metadata"].get("creationTimestamp", "")),
                            reverse=True)[:running - wanted]
            await self._delete_pods(key, job, doomed)
            return -len(doomed)
        need = wanted - running
        if need <= 0:
            return 0
        failures = int(ju.status_of(job).get("failed") or 0) + len(state.new_failed)
        wait = ju.pod_failure_backoff(state.pods, failures, state.now, self.pod_failure_backoff)
        if wait > 0:
            self.queue.add_after(key, wait)
            return 0
        return await self._create_pods(key, job, state, need)

    async def _create_pods(self, key: str, job: Obj, state: ju.JobState, need: int) -> int:
        md = job["metadata"]
        ref = controller_ref(job, "batch/v1", "Job")
        if ju.is_indexed(job):
            plans: list[int | None] = list(ju.indexes_to_create(state, need))
        else:
            plans = [None] * need
        if not plans:
            return 0
        self.expectations.expect_creations(key, len(plans))

        async def create(ix: int | None) -> None:
            failures = ju.previous_index_failures(state, ix) if ix is not None else 0
            template = ju.pod_template_for(job, ix, failures)
            name = f"{md['name']}-{ix}-" if ix is not None else None
            try:
                await self.pod_control.create_pod(md["namespace"], template, job, ref, name)
            except BaseException:
                self.expectations.lower(key, add=1)
                raise

        results = await asyncio.gather(*(metered(create(ix)) for ix in plans),
                                         return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
        return len(plans)

    async def _flush(self, job: Obj, state: ju.JobState, finish: ju.Finish | None,
                     created: int, suspended: bool) -> None:
        """Step 3: move the uncounted uids into the counters, set the counts of running pods,
        startTime, and the terminal condition once nothing runs any more."""
        status = dict(ju.status_of(job))
        uncounted = status.get("uncountedTerminatedPods") or {}
        indexed = ju.is_indexed(job)
        failed = int(status.get("failed") or 0) + len(uncounted.get("failed") or ())
        if indexed:
            succeeded = len(state.succeeded_indexes)
            status["completedIndexes"] = ju.indexes_text(state.succeeded_indexes)
            if ju.spec_of(job).get("backoffLimitPerIndex") is not None:
                status["failedIndexes"] = ju.indexes_text(state.failed_indexes)
        else:
            succeeded = int(status.get("succeeded") or 0) + len(uncounted.get("succeeded") or ())
        status.update(succeeded=succeeded, failed=failed,
                      uncountedTerminatedPods={})
        active = [p for p in state.active() if finish is None]
        status["active"] = max(0, len(active) + created) if not suspended else 0
        status["ready"] = ju.ready_count(active) if not suspended else 0
        status["terminating"] = len(state.terminating())
        for name in ("succeeded", "failed", "active"):
            if not status[name]:
                status.pop(name)
        now = state.now
        conditions = list(status.get("conditions") or ())
        if suspended and finish is None:
            if get_condition(job, b.JOB_SUSPENDED) is None or \
                    get_condition(job, b.JOB_SUSPENDED).get("status") != "True":
                conditions = _set_condition(conditions, _condition(
                    b.JOB_SUSPENDED, "True", "JobSuspended", "Job suspended", now))
                self.recorder.event(job, "Normal", "Suspended", "Job suspended")
        else:
            cond = get_condition(job, b.JOB_SUSPENDED)
            if cond is not None and cond.get("status") == "True":
                conditions = _set_condition(conditions, _condition(
                    b.JOB_SUSPENDED, "False", "JobResumed", "Job resumed", now))
                status["startTime"] = meta.rfc3339(now)
                self.recorder.event(job, "Normal", "Resumed", "Job resumed")
            elif not status.get("startTime"):
                status["startTime"] = meta.rfc3339(now)
        if finish is not None and not state.active() and (
                not state.terminating() or not (finish.failed or finish.reason)):
            kind = b.JOB_FAILED if finish.failed else b.JOB_COMPLETE
            conditions = _set_condition(conditions, _condition(
                kind, "True", finish.reason, finish.message, now))
            status["ready"] = 0
            status.pop("active", None)
            if finish.failed:
                self.recorder.event(job, "Warning", finish.reason, finish.message)
            else:
                status["completionTime"] = meta.rfc3339(now)
                self.recorder.event(job, "Normal", "Completed", "Job completed")
        if conditions:
            status["conditions"] = conditions
        if status != ju.status_of(job):
            await self._write_status(job, status)

    async def _write_status(self, job: Obj, status: Obj) -> Obj:
        """UpdateStatus (the role allows update only); a conflict is retried by the queue
        with a fresh read."""
        key = self.key_of(job)
        try:
            updated = await self.client.update_status(JOBS, {**job, "status": status})
        except StatusError as exc:
            if is_conflict(exc):
                self.written.pop(key, None)
            raise
        self.written[key] = updated
        return updated
