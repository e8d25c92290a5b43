"""The Job, TTL-after-finished and pod GC controllers against a real API server (in-process
transport). No kubelet runs here: the tests write what a kubelet would (pod phase and container
exit codes through pods/{name}/status), so each outcome is decided by the test."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from minikube_py.api import batch as b
from minikube_py.api import meta
from minikube_py.api.errors import StatusError
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import EVENTS, JOBS, NODES, PODS
from minikube_py.controllers.base import Controller, ControllerContext
from minikube_py.controllers.garbagecollector import GarbageCollector
from minikube_py.controllers.job import JobController
from minikube_py.controllers.options import ControllerOptions
from minikube_py.controllers.podgc import PodGCController
from minikube_py.controllers.ttl_after_finished import TTLAfterFinishedController
from tests import polling
from tests.apiserver.conftest import start_api

Obj = dict[str, Any]
NS = "default"


class Clock:
    """Wall time plus whatever a test adds."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


#: Jobs batch pod events for a second (syncJobBatchPeriod): a longer wait than elsewhere
eventually = functools.partial(polling.eventually, timeout=10.0)


class Harness:
    def __init__(self, client: Client, controllers: list[Controller], clock: Clock) -> None:
        self.client, self.controllers, self.clock = client, controllers, clock

    async def create_job(self, name: str, **spec: Any) -> Obj:
        restart = spec.pop("restartPolicy", "Never")
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                "spec": {"template": {"spec": {
                    "containers": [{"name": "c", "image": "busybox"}],
                    "restartPolicy": restart, "terminationGracePeriodSeconds": 0}}, **spec}}
        return await self.client.create(JOBS, body, NS)

    async def job(self, name: str) -> Obj:
        return await self.client.get(JOBS, name, NS)

    async def pods(self, job: str) -> list[Obj]:
        listed = await self.client.list(PODS, NS, label_selector=f"{b.JOB_NAME_LABEL}={job}")
        return listed["items"]

    async def active_pods(self, job: str, count: int) -> list[Obj]:
        async def check() -> list[Obj] | None:
            pods = [p for p in await self.pods(job)
                    if p["status"].get("phase") not in ("Succeeded", "Failed")
                    and not p["metadata"].get("deletionTimestamp")]
            return pods if len(pods) == count else None
        return await eventually(check, message=f"{count} active pods of {job}")

    async def finish(self, pod: Obj, code: int = 0, ready: bool = False) -> Obj:
        """What the kubelet reports when the pod's only container exits with `code`."""
        fresh = await self.client.get(PODS, pod["metadata"]["name"], NS)
        now = meta.now_rfc3339()
        fresh["status"] = {**fresh["status"], "phase": "Succeeded" if code == 0 else "Failed",
                           "containerStatuses": [{
                               "name": "c", "ready": False, "restartCount": 0, "image": "busybox",
                               "imageID": "", "started": False,
                               "state": {"terminated": {"exitCode": code, "startedAt": now,
                                                        "finishedAt": now,
                                                        "reason": "Completed" if code == 0
                                                        else "Error"}}}]}
        return await self.client.update_status(PODS, fresh)

    async def condition(self, name: str, kind: str) -> Obj:
        async def check() -> Obj | None:
            return b.job_condition(await self.job(name), kind)
        return await eventually(check, message=f"{name} {kind}")

    async def events(self, reason: str) -> list[Obj]:
        listed = await self.client.list(EVENTS, NS, field_selector=f"reason={reason}")
        return listed["items"]


@contextlib.asynccontextmanager
async def harness(tmp_path: Path, *classes: type[Controller],
                  **options: Any) -> AsyncIterator[Harness]:
    _, runner, store, session = await start_api(tmp_path)
    client = Client(InProcessTransport(runner.app), field_manager="test")
    clock = Clock()
    ctx = ControllerContext(client, InformerFactory(client), ControllerOptions(**options),
                            clock=clock)
    controllers = [cls(ctx) for cls in classes]
    for c in controllers:
        if isinstance(c, JobController):
            c.pod_failure_backoff = 0.05
            c.sync_job_batch_period = 0.01
    ctx.informers.start()
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        await ctx.informers.wait_for_sync(5)
        yield Harness(client, controllers, clock)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await ctx.informers.stop()
        await ctx.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_single_pod_job_completes_with_finalizer_tracking(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("pi")
        [pod] = await h.active_pods("pi", 1)
        assert b.JOB_TRACKING_FINALIZER in pod["metadata"]["finalizers"]
        assert pod["metadata"]["generateName"] == "pi-"
        ref = pod["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["controller"], ref["blockOwnerDeletion"]) == ("Job", True, True)
        job = await eventually(lambda: _with_status(h, "pi", "active"))
        assert job["status"]["active"] == 1 and job["status"]["startTime"]
        await h.finish(pod)
        cond = await h.condition("pi", b.JOB_COMPLETE)
        assert cond["status"] == "True"
        job = await h.job("pi")
        status = job["status"]
        assert status["succeeded"] == 1 and "active" not in status
        assert status["uncountedTerminatedPods"] == {} and status["completionTime"]
        assert status["ready"] == 0
        [pod] = await h.pods("pi")
        assert "finalizers" not in pod["metadata"]  # the last one gone: no empty list
        assert await eventually(lambda: h.events("Completed"))
        assert await h.events("SuccessfulCreate")


async def _with_status(h: Harness, name: str, field: str) -> Obj | None:
    job = await h.job(name)
    return job if job["status"].get(field) else None


async def test_parallel_completions(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("par", completions=4, parallelism=2)
        done = 0
        while done < 4:
            pods = await h.active_pods("par", min(2, 4 - done))
            await h.finish(pods[0])
            done += 1
            await eventually(lambda d=done: _succeeded(h, "par", d))
        await h.condition("par", b.JOB_COMPLETE)
        assert len(await h.pods("par")) == 4


async def _succeeded(h: Harness, name: str, count: int) -> bool:
    return (await h.job(name))["status"].get("succeeded", 0) >= count


async def test_backoff_limit_fails_the_job(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("fail", backoffLimit=1)
        for _ in range(2):
            [pod] = await h.active_pods("fail", 1)
            await h.finish(pod, code=1)
        target = await h.condition("fail", b.JOB_FAILURE_TARGET)
        failed = await h.condition("fail", b.JOB_FAILED)
        for cond in (target, failed):
            assert cond["reason"] == "BackoffLimitExceeded"
            assert cond["message"] == "Job has reached the specified backoff limit"
        job = await h.job("fail")
        assert job["status"]["failed"] == 2 and "succeeded" not in job["status"]
        assert len(await h.pods("fail")) == 2
        assert await eventually(lambda: h.events("BackoffLimitExceeded"))


async def test_indexed_job(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("idx", completions=3, parallelism=3, completionMode="Indexed")
        pods = await h.active_pods("idx", 3)
        by_index = {int(p["metadata"]["annotations"][b.JOB_COMPLETION_INDEX_ANNOTATION]): p
                    for p in pods}
        assert sorted(by_index) == [0, 1, 2]
        p1 = by_index[1]
        assert p1["metadata"]["generateName"] == "idx-1-"
        assert p1["metadata"]["labels"][b.JOB_COMPLETION_INDEX_ANNOTATION] == "1"
        assert p1["spec"]["hostname"] == "idx-1"
        env = p1["spec"]["containers"][0]["env"]
        assert env == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]
        await h.finish(by_index[2])
        await h.finish(by_index[0])
        await eventually(lambda: _field(h, "idx", "completedIndexes", "0,2"))
        # a failed index is recreated with the same index
        await h.finish(by_index[1], code=3)
        [again] = await h.active_pods("idx", 1)
        assert again["metadata"]["annotations"][b.JOB_COMPLETION_INDEX_ANNOTATION] == "1"
        await h.finish(again)
        await h.condition("idx", b.JOB_COMPLETE)
        job = await h.job("idx")
        assert job["status"]["completedIndexes"] == "0-2"
        assert (job["status"]["succeeded"], job["status"]["failed"]) == (3, 1)


async def _field(h: Harness, name: str, field: str, value: Any) -> bool:
    return (await h.job(name))["status"].get(field) == value


async def test_pod_failure_policy_fail_job_and_ignore(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("pfp", backoffLimit=6, podFailurePolicy={"rules": [
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [7]}},
            {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In",
                                                  "values": [42]}}]})
        [pod] = await h.active_pods("pfp", 1)
        await h.finish(pod, code=7)  # ignored: replaced, not counted
        [pod2] = await h.active_pods("pfp", 1)
        assert pod2["metadata"]["name"] != pod["metadata"]["name"]
        assert "failed" not in (await h.job("pfp"))["status"]
        await h.finish(pod2, code=42)
        failed = await h.condition("pfp", b.JOB_FAILED)
        assert failed["reason"] == "PodFailurePolicy"
        assert failed["message"] == (f"Container c for pod default/{pod2['metadata']['name']} "
                                     "failed with exit code 42 matching FailJob rule at index 1")
        assert (await h.job("pfp"))["status"]["failed"] == 1


async def test_active_deadline(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("slow", activeDeadlineSeconds=1)
        # not waited for as "1 active": on a loaded machine the deadline can pass before a
        # poll sees the pod; the failed count below says it was there
        cond = await h.condition("slow", b.JOB_FAILURE_TARGET)
        assert (cond["reason"], cond["message"]) == (
            "DeadlineExceeded", "Job was active longer than specified deadline")
        # the pod was deleted; with its grace period 0 it goes, and the Job is Failed
        await h.condition("slow", b.JOB_FAILED)
        status = (await h.job("slow"))["status"]
        assert status.get("failed") == 1 and not status.get("active"), status


async def test_suspend_and_resume(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("sus", suspend=True)
        cond = await h.condition("sus", b.JOB_SUSPENDED)
        assert (cond["reason"], cond["message"]) == ("JobSuspended", "Job suspended")
        assert await h.pods("sus") == []
        job = await h.job("sus")
        job["spec"]["suspend"] = False
        await h.client.update(JOBS, job)
        await h.active_pods("sus", 1)

        async def resumed() -> bool:
            cond = (await h.job("sus"))["status"]["conditions"][0]
            return cond["status"] == "False" and cond["reason"] == "JobResumed"
        await eventually(resumed)


async def test_success_policy(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("sp", completions=3, parallelism=3, completionMode="Indexed",
                           successPolicy={"rules": [{"succeededIndexes": "0"}]})
        pods = await h.active_pods("sp", 3)
        leader = next(p for p in pods
                      if p["metadata"]["annotations"][b.JOB_COMPLETION_INDEX_ANNOTATION] == "0")
        await h.finish(leader)
        met = await h.condition("sp", b.JOB_SUCCESS_CRITERIA_MET)
        assert (met["reason"], met["message"]) == ("SuccessPolicy", "Matched rules at index 0")
        complete = await h.condition("sp", b.JOB_COMPLETE)
        assert complete["reason"] == "SuccessPolicy"


async def test_ttl_after_finished_deletes_the_job_and_its_pods(tmp_path: Path) -> None:
    """Foreground deletion: the garbage collector deletes the pod, then the Job."""
    async with harness(tmp_path, JobController, TTLAfterFinishedController,
                       GarbageCollector) as h:
        await h.create_job("ttl", ttlSecondsAfterFinished=30)
        [pod] = await h.active_pods("ttl", 1)
        await h.finish(pod)
        await h.condition("ttl", b.JOB_COMPLETE)
        await asyncio.sleep(0.2)
        assert await h.job("ttl")  # not due yet
        h.clock.offset = 31.0
        # the controller re-checks when the TTL runs out: jump there by a job update
        job = await h.job("ttl")
        job["metadata"].setdefault("annotations", {})["poke"] = "1"
        await h.client.update(JOBS, job)

        async def gone() -> bool:
            try:
                await h.job("ttl")
            except StatusError as exc:
                return exc.code == 404
            return False
        await eventually(gone)
        assert await h.pods("ttl") == []


async def test_podgc_terminated_threshold_and_orphans(tmp_path: Path) -> None:
    async with harness(tmp_path, PodGCController, terminated_pod_gc_threshold=2) as h:
        gc = h.controllers[0]
        assert isinstance(gc, PodGCController)
        gc.quarantine = 0.0
        for i in range(4):
            pod = await h.client.create(PODS, {"metadata": {"name": f"t{i}"}, "spec": {
                "containers": [{"name": "c", "image": "busybox"}]}}, NS)
            await h.finish({**pod, "metadata": pod["metadata"]})
        await h.client.create(NODES, {"metadata": {"name": "n1"}})
        orphan = await h.client.create(PODS, {"metadata": {"name": "orphan"}, "spec": {
            "nodeName": "gone", "containers": [{"name": "c", "image": "busybox"}]}}, NS)
        assert orphan["spec"]["nodeName"] == "gone"

        async def collected() -> list[str] | None:
            await gc.gc()
            names = sorted(p["metadata"]["name"] for p in
                           (await h.client.list(PODS, NS))["items"])
            return names if names == ["t2", "t3"] else None
        assert await eventually(collected, message="podgc") == ["t2", "t3"]


async def test_deleting_a_running_job_releases_its_pods(tmp_path: Path) -> None:
    """kubectl delete job (Background): the garbage collector deletes the pod, and the pod's
    tracking finalizer, with no Job left to count it, is removed so the pod can go."""
    async with harness(tmp_path, JobController, GarbageCollector) as h:
        await h.create_job("doomed")
        [pod] = await h.active_pods("doomed", 1)
        assert b.JOB_TRACKING_FINALIZER in pod["metadata"]["finalizers"]
        await h.client.delete(JOBS, "doomed", NS, propagation_policy="Background")

        async def pod_gone() -> bool:
            return await h.pods("doomed") == []
        await eventually(pod_gone, message="the running Job's pod to go")


async def test_backoff_limit_per_index(tmp_path: Path) -> None:
    async with harness(tmp_path, JobController) as h:
        await h.create_job("per", completions=2, parallelism=2, completionMode="Indexed",
                           backoffLimitPerIndex=1)
        job = await h.job("per")
        assert job["spec"]["backoffLimit"] == 2**31 - 1
        pods = await h.active_pods("per", 2)
        by_index = {p["metadata"]["annotations"][b.JOB_COMPLETION_INDEX_ANNOTATION]: p
                    for p in pods}
        assert by_index["1"]["metadata"]["annotations"][
            b.JOB_INDEX_FAILURE_COUNT_ANNOTATION] == "0"
        await h.finish(by_index["0"])
        await h.finish(by_index["1"], code=1)
        [retry] = await h.active_pods("per", 1)  # one retry of index 1
        assert retry["metadata"]["annotations"][b.JOB_INDEX_FAILURE_COUNT_ANNOTATION] == "1"
        await h.finish(retry, code=1)
        failed = await h.condition("per", b.JOB_FAILED)
        assert (failed["reason"], failed["message"]) == ("FailedIndexes", "Job has failed indexes")
        status = (await h.job("per"))["status"]
        assert (status["completedIndexes"], status["failedIndexes"]) == ("0", "1")
        assert status["failed"] == 2
