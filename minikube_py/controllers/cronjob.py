"""The CronJob controller: create a Job for each scheduled time of each CronJob.

Kubernetes piece: pkg/controller/cronjob/cronjob_controllerv2.go (ControllerV2, sync,
syncCronJob, cleanupFinishedJobs) and utils.go (mostRecentScheduleTime, nextScheduleTime,
getJobName, getJobFromTemplate2) as of 1.31. kube-controller-manager's `cronjob` controller,
running as `system:serviceaccount:kube-system:cronjob-controller` (cronjobs: get, list, watch,
update; cronjobs/status: update; jobs: create, delete, get, list, patch, update, watch).

Time is `ctx.clock` (a test advances it); after each sync the CronJob is queued again for its
next scheduled time (plus upstream's 100 ms), on the queue's real-time delay.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..api import batch as b
from ..api import cronschedule, meta
from ..api.duration import parse_timestamp
from ..api.errors import StatusError
from ..client.errors import is_already_exists, is_conflict, is_not_found
from ..client.resources import CRONJOBS, JOBS
from .base import Controller, ControllerContext, split_key
from .controller_utils import (
    NAMESPACE_INDEXERS,
    controller_ref,
    get_controller_of,
    in_namespace,
)

Obj = dict[str, Any]

TOO_MANY_MISSED = ("too many missed start times: {}. Set or decrease "
                   ".spec.startingDeadlineSeconds or check clock skew")
#: upstream nextScheduleTimeDuration's margin past the scheduled time
NEXT_MARGIN = 0.1


def job_name(cron_job: Obj, scheduled: float) -> str:
    """`<cronjob>-<minutes since the epoch>` (upstream getJobName)."""
    return f"{cron_job['metadata']['name']}-{int(scheduled // 60)}"


def scheduled_timestamp_text(scheduled: float, time_zone: str | None) -> str:
    """RFC 3339 in the CronJob's zone, as the scheduled-timestamp annotation carries it."""
    zone = ZoneInfo(time_zone) if time_zone else None
    moment = datetime.fromtimestamp(scheduled, zone) if zone else datetime.fromtimestamp(
        scheduled).astimezone(ZoneInfo("UTC"))
    text = moment.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z") if text.endswith("+00:00") else text


def job_from_template(cron_job: Obj, scheduled: float) -> Obj:
    """getJobFromTemplate2: the template's labels, annotations and spec, the scheduled
    timestamp annotation and the controller reference."""
    spec = cron_job.get("spec") or {}
    template = spec.get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[b.CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled_timestamp_text(
        scheduled, spec.get("timeZone"))
    md: Obj = {"name": job_name(cron_job, scheduled), "annotations": annotations,
               "ownerReferences": [controller_ref(cron_job, "batch/v1", "CronJob")]}
    if tmeta.get("labels"):
        md["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md,
            "spec": dict(template.get("spec") or {})}


def earliest_time(cron_job: Obj, now: float) -> float:
    """Where to look for missed times from: the last schedule (or creation), moved up to
    `now - startingDeadlineSeconds` when that is later."""
    status = cron_job.get("status") or {}
    earliest = parse_timestamp(status.get("lastScheduleTime")) or parse_timestamp(
        (cron_job.get("metadata") or {}).get("creationTimestamp")) or now
    deadline = (cron_job.get("spec") or {}).get("startingDeadlineSeconds")
    if isinstance(deadline, int) and earliest < now - deadline:
        earliest = now - deadline
    return earliest


def finished_time(job: Obj) -> float:
    status = job.get("status") or {}
    for field in ("completionTime", "startTime"):
        value = parse_timestamp(status.get(field))
        if value is not None:
            return value
    return parse_timestamp((job.get("metadata") or {}).get("creationTimestamp")) or 0.0


def _rv(obj: Obj) -> int:
    try:
        return int(obj["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return 0


def _ref(job: Obj) -> Obj:
    md = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": md["name"],
            "namespace": md.get("namespace", ""), "uid": md.get("uid", ""),
            "resourceVersion": md.get("resourceVersion", "")}


class CronJobController(Controller):
    name = "cronjob"
    service_account = "cronjob-controller"
    component = "cronjob-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_cron_job_syncs
        self.clock = ctx.clock
        self.recorder = ctx.recorder(self.component)
        #: key -> the CronJob as this controller last wrote it (the informer may lag)
        self.written: dict[str, Obj] = {}
        self.cron_jobs = ctx.informers.informer(CRONJOBS, indexers=NAMESPACE_INDEXERS)
        self.jobs = ctx.informers.informer(JOBS, indexers=NAMESPACE_INDEXERS)
        self.cron_jobs.add_event_handler(self._enqueue, lambda old, cur: self._enqueue(cur),
                                         self._enqueue)
        self.jobs.add_event_handler(self._job_event, lambda old, cur: self._job_event(cur),
                                    self._job_event)

    @staticmethod
    def _key(obj: Obj) -> str:
        md = obj.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def _enqueue(self, cron_job: Obj) -> None:
        self.queue.add(self._key(cron_job))

    def _job_event(self, job: Obj) -> None:
        ref = get_controller_of(job)
        if ref is not None and ref.get("kind") == "CronJob":
            self.queue.add(f"{(job.get('metadata') or {}).get('namespace', '')}/{ref['name']}")

    # -- sync -----------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        namespace, _ = split_key(key)
        cached = self.cron_jobs.indexer.get(key)
        if cached is None:
            self.written.pop(key, None)
            return
        mine = self.written.get(key)
        if mine is not None and mine["metadata"].get("uid") == cached["metadata"].get("uid") \
                and _rv(mine) > _rv(cached):
            cached = mine  # the informer has not seen our last status write yet
        cron_job = {**cached, "apiVersion": "batch/v1", "kind": "CronJob",
                    "status": dict(cached.get("status") or {})}
        uid = cron_job["metadata"].get("uid")
        jobs = [j for j in in_namespace(self.jobs, namespace)
                if (get_controller_of(j) or {}).get("uid") == uid]
        changed = await self._track_active(cron_job, jobs)
        changed |= await self._cleanup_finished(cron_job, jobs)
        requeue_after, schedule_changed = await self._schedule(cron_job)
        if changed or schedule_changed:
            await self._write_status(cron_job)
        if requeue_after is not None:
            self.queue.add_after(key, requeue_after)

    async def _track_active(self, cron_job: Obj, jobs: list[Obj]) -> bool:
        status = cron_job["status"]
        active = list(status.get("active") or ())
        active_uids = {ref.get("uid") for ref in active}
        changed = False
        children = set()
        for job in jobs:
            juid = job["metadata"].get("uid")
            children.add(juid)
            finished = b.is_job_finished(job)
            if juid not in active_uids and not finished:
                self.recorder.event(cron_job, "Warning", "UnexpectedJob", "Saw a job that the "
                                    f"controller did not create or forgot: {job['metadata']['name']}")
            elif juid in active_uids and finished:
                kind = b.JOB_COMPLETE if b.job_condition(job, b.JOB_COMPLETE) else b.JOB_FAILED
                active = [r for r in active if r.get("uid") != juid]
                self.recorder.event(cron_job, "Normal", "SawCompletedJob",
                                    f"Saw completed job: {job['metadata']['name']}, "
                                    f"condition: {kind}")
                changed = True
            if b.job_condition(job, b.JOB_COMPLETE):
                completed = parse_timestamp((job.get("status") or {}).get("completionTime"))
                last = parse_timestamp(status.get("lastSuccessfulTime"))
                if completed is not None and (last is None or completed > last):
                    status["lastSuccessfulTime"] = job["status"]["completionTime"]
                    changed = True
        for ref in list(active):
            if ref.get("uid") in children:
                continue
            try:  # the job informer may lag: ask the API server
                await self.client.get(JOBS, ref.get("name", ""), ref.get("namespace"))
            except StatusError as exc:
                if not is_not_found(exc):
                    raise
                self.recorder.event(cron_job, "Normal", "MissingJob",
                                    f"Active job went missing: {ref.get('name')}")
                active = [r for r in active if r.get("uid") != ref.get("uid")]
                changed = True
        if changed:
            if active:
                status["active"] = active
            else:
                status.pop("active", None)
        return changed

    async def _cleanup_finished(self, cron_job: Obj, jobs: list[Obj]) -> bool:
        """cleanupFinishedJobs: keep the newest `successfulJobsHistoryLimit` completed and
        `failedJobsHistoryLimit` failed Jobs."""
        spec = cron_job.get("spec") or {}
        changed = False
        for kind, limit_field in ((b.JOB_COMPLETE, "successfulJobsHistoryLimit"),
                                  (b.JOB_FAILED, "failedJobsHistoryLimit")):
            limit = spec.get(limit_field)
            if not isinstance(limit, int):
                continue
            done = sorted((j for j in jobs if b.job_condition(j, kind)
                           and not j["metadata"].get("deletionTimestamp")), key=finished_time)
            for job in done[:max(0, len(done) - limit)]:
                changed |= await self._delete_job(cron_job, job)
        return changed

    async def _delete_job(self, cron_job: Obj, job: Obj) -> bool:
        md = job["metadata"]
        try:
            await self.client.delete(JOBS, md["name"], md.get("namespace"),
                                     propagation_policy="Background")
        except StatusError as exc:
            if is_not_found(exc):
                return False
            self.recorder.event(cron_job, "Warning", "FailedDelete",
                                f"Deleted job: {exc.message}")
            raise
        self.recorder.event(cron_job, "Normal", "SuccessfulDelete", f"Deleted job {md['name']}")
        status = cron_job["status"]
        active = [r for r in status.get("active") or () if r.get("uid") != md.get("uid")]
        if active:
            status["active"] = active
        else:
            status.pop("active", None)
        return True

    async def _schedule(self, cron_job: Obj) -> tuple[float | None, bool]:
        """Create the Job of the most recent unmet scheduled time, if any is due; returns
        (seconds until the next time, whether the status changed)."""
        md, spec, status = cron_job["metadata"], cron_job.get("spec") or {}, cron_job["status"]
        if md.get("deletionTimestamp") or spec.get("suspend") is True:
            return None, False
        schedule, tz = spec.get("schedule", ""), spec.get("timeZone")
        if tz:
            try:
                ZoneInfo(tz)
            except Exception:  # noqa: BLE001 - any bad zone name
                self.recorder.event(cron_job, "Warning", "UnknownTimeZone",
                                    f"invalid timeZone: {tz!r}")
                return None, False
        error = cronschedule.schedule_error(schedule)
        if error:
            self.recorder.event(cron_job, "Warning", "UnparseableSchedule",
                                f"unparseable schedule: {schedule!r} : {error}")
            return None, False
        now = self.clock()
        upcoming = cronschedule.next_after(schedule, tz, now)
        following = None if upcoming is None else upcoming - now + NEXT_MARGIN
        scheduled, missed = cronschedule.most_recent(schedule, tz, earliest_time(cron_job, now),
                                                     now)
        if scheduled is None:
            return following, False
        if missed > 100:
            self.recorder.event(cron_job, "Warning", "TooManyMissedTimes",
                                TOO_MANY_MISSED.format(missed))
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and scheduled + deadline < now:
            self.recorder.event(cron_job, "Warning", "MissSchedule", "Missed scheduled time to "
                                f"start a job: {meta.rfc3339(scheduled)}")
            return following, False
        name = job_name(cron_job, scheduled)
        active = list(status.get("active") or ())
        if any(r.get("name") == name for r in active) or \
                parse_timestamp(status.get("lastScheduleTime")) == scheduled:
            return following, False
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.recorder.event(cron_job, "Normal", "JobAlreadyActive", "Not starting job "
                                "because prior execution is running and concurrency policy is "
                                "Forbid")
            return following, False
        if policy == "Replace":
            for ref in active:
                job = self.jobs.indexer.get(f"{ref.get('namespace')}/{ref.get('name')}")
                if job is not None:
                    await self._delete_job(cron_job, job)
            status.pop("active", None)
        try:
            created = await self.client.create(JOBS, job_from_template(cron_job, scheduled),
                                               md["namespace"])
        except StatusError as exc:
            if is_already_exists(exc):
                # ours from a sync whose status write was lost: record it now (upstream
                # assumes whoever created it updated the status)
                existing = self.jobs.indexer.get(f"{md['namespace']}/{name}")
                if existing is None or (get_controller_of(existing) or {}).get(
                        "uid") != md.get("uid"):
                    return following, False
                created = existing
            else:
                self.recorder.event(cron_job, "Warning", "FailedCreate",
                                    f"Error creating job: {exc.message}")
                raise
        else:
            self.recorder.event(cron_job, "Normal", "SuccessfulCreate",
                                f"Created job {created['metadata']['name']}")
        if not any(r.get("uid") == created["metadata"].get("uid") for r in active):
            status["active"] = [*(status.get("active") or ()), _ref(created)]
        status["lastScheduleTime"] = meta.rfc3339(scheduled)
        return following, True

    async def _write_status(self, cron_job: Obj) -> None:
        """UpdateStatus (the role allows update); a conflict is retried with the queue."""
        key = self._key(cron_job)
        try:
            self.written[key] = await self.client.update_status(CRONJOBS, cron_job)
        except StatusError as exc:
            if is_conflict(exc):
                self.written.pop(key, None)
            raise

