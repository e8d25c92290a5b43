"""The TTL-after-finished controller: delete a finished Job `ttlSecondsAfterFinished` after
it finished, with its pods.

Kubernetes piece: pkg/controller/ttlafterfinished/ttlafterfinished_controller.go (needsCleanup,
processTTL, timeLeft, jobFinishTime): the finish time is the lastTransitionTime of the Complete
or Failed condition; a Job that is due is re-read from the API server (its TTL may have just
changed) and deleted with propagationPolicy Foreground and a uid precondition. Runs as
`system:serviceaccount:kube-system:ttl-after-finished-controller` (jobs: get, list, watch,
delete).
"""

from __future__ import annotations

from typing import Any

from ..api import batch as b
from ..api.duration import parse_timestamp
from ..api.errors import StatusError
from ..client.errors import is_not_found
from ..client.resources import JOBS
from .base import Controller, ControllerContext, enqueue_key, split_key

Obj = dict[str, Any]


def finish_time(job: Obj) -> float | None:
    """When the Job finished: its Complete/Failed condition's lastTransitionTime."""
    for kind in (b.JOB_COMPLETE, b.JOB_FAILED):
        cond = b.job_condition(job, kind)
        if cond is not None:
            return parse_timestamp(cond.get("lastTransitionTime"))
    return None


def time_left(job: Obj, now: float) -> float | None:
    """Seconds until the Job expires (<= 0: due); None when it has no TTL or is not finished
    (upstream needsCleanup + timeLeft)."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if not isinstance(ttl, int) or (job.get("metadata") or {}).get("deletionTimestamp"):
        return None
    finished = finish_time(job)
    if finished is None:
        return None
    return finished + ttl - now


class TTLAfterFinishedController(Controller):
    name = "ttl-after-finished"
    service_account = "ttl-after-finished-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_ttl_after_finished_syncs
        self.clock = ctx.clock
        self.jobs = ctx.informers.informer(JOBS)
        self.jobs.add_event_handler(self._changed, lambda old, cur: self._changed(cur),
                                    lambda job: None)

    def _changed(self, job: Obj) -> None:
        if time_left(job, self.clock()) is not None:
            enqueue_key(self.queue, job)

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        cached = self.jobs.indexer.get(key)
        if cached is None:
            return
        left = time_left(cached, self.clock())
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        try:  # the cache may be stale: decide on a fresh read
            fresh = await self.client.get(JOBS, name, namespace)
        except StatusError as exc:
            if is_not_found(exc):
                return
            raise
        left = time_left(fresh, self.clock())
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        self.log.info("cleaning up finished job", key=key)
        try:
            await self.client.delete(JOBS, name, namespace, propagation_policy="Foreground",
                                     preconditions={"uid": fresh["metadata"]["uid"]})
        except StatusError as exc:
            if not is_not_found(exc):
                raise
