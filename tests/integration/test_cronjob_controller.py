"""The CronJob controller against a real API server, with a clock the test advances: a
`*/1` schedule creates `<name>-<minutes>` Jobs as minutes pass, concurrency policies, suspend,
startingDeadlineSeconds, history limits, lastScheduleTime/lastSuccessfulTime. The Job
controller runs too; the test plays the kubelet (pod phases)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from minikube_py.api import batch as b
from minikube_py.api import meta
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import CRONJOBS, JOBS
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.cronjob import CronJobController
from minikube_py.controllers.job import JobController
from minikube_py.controllers.options import ControllerOptions
from tests.apiserver.conftest import start_api
from tests.integration.test_job_controller import Harness, eventually

Obj = dict[str, Any]
NS = "default"


class StepClock:
    """A clock that stands still until the test moves it."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class CronHarness(Harness):
    cron: CronJobController

    async def create_cron_job(self, name: str, schedule: str = "*/1 * * * *",
                              command: str = "echo hi", **spec: Any) -> Obj:
        body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
                "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": {"template": {
                    "spec": {"containers": [{"name": "c", "image": "busybox",
                                             "command": ["sh", "-c", command]}],
                             "restartPolicy": "OnFailure",
                             "terminationGracePeriodSeconds": 0}}}}}}
        return await self.client.create(CRONJOBS, body, NS)

    async def advance(self, name: str, seconds: float) -> None:
        """Move the clock and let the controller look (its requeue waits in real time)."""
        self.clock.now += seconds
        self.cron.queue.add(f"{NS}/{name}")
        await asyncio.sleep(0.05)

    async def jobs(self) -> list[str]:
        return sorted(j["metadata"]["name"] for j in (await self.client.list(JOBS, NS))["items"])

    async def cron_job(self, name: str) -> Obj:
        return await self.client.get(CRONJOBS, name, NS)


@contextlib.asynccontextmanager
async def cron_harness(tmp_path: Path) -> AsyncIterator[CronHarness]:
    _, runner, store, session = await start_api(tmp_path)
    client = Client(InProcessTransport(runner.app), field_manager="test")
    # start just after a whole minute, as a real cluster's clock would be at some point
    clock = StepClock(math.floor(time.time() / 60) * 60 + 1)
    ctx = ControllerContext(client, InformerFactory(client), ControllerOptions(), clock=clock)
    cron, job = CronJobController(ctx), JobController(ctx)
    job.pod_failure_backoff = 0.05
    job.sync_job_batch_period = 0.01
    ctx.informers.start()
    tasks = [asyncio.create_task(c.run()) for c in (cron, job)]
    try:
        await ctx.informers.wait_for_sync(5)
        h = CronHarness(client, [cron, job], clock)  # type: ignore[arg-type]
        h.cron = cron
        yield h
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


async def test_every_minute_creates_named_jobs_and_tracks_them(tmp_path: Path) -> None:
    async with cron_harness(tmp_path) as h:
        cj = await h.create_cron_job("hello")
        created = meta.parse_rfc3339(cj["metadata"]["creationTimestamp"])
        # after the creation but inside its second: creationTimestamp has whole seconds, so
        # created + 1 is the next minute itself when the CronJob was created at :59 (CI was)
        h.clock.now = max(h.clock.now, created + 0.5)
        await asyncio.sleep(0.2)
        assert await h.jobs() == []  # the first minute has not come yet
        minute = (math.floor(h.clock.now / 60) + 1) * 60
        await h.advance("hello", minute - h.clock.now + 0.5)
        name = f"hello-{int(minute // 60)}"
        await eventually(lambda: _has(h, name))
        job = await h.job(name)
        assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
        stamp = job["metadata"]["annotations"][b.CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION]
        assert stamp == meta.rfc3339(minute)
        cj = await eventually(lambda: _cron_field(h, "hello", "active"))
        assert [r["name"] for r in cj["status"]["active"]] == [name]
        assert cj["status"]["lastScheduleTime"] == meta.rfc3339(minute)
        # its pod succeeds: the Job completes, the CronJob forgets it and records the success
        [pod] = await h.active_pods(name, 1)
        await h.finish(pod)
        await h.condition(name, b.JOB_COMPLETE)
        cj = await eventually(lambda: _cron_field(h, "hello", "lastSuccessfulTime"))
        assert "active" not in cj["status"]
        assert await eventually(lambda: h.events("SawCompletedJob"))
        # history limit 3: after five more minutes only the three newest completed remain
        for _ in range(5):
            await h.advance("hello", 60)
            await eventually(lambda: _cron_field(h, "hello", "active"))
            active = (await h.cron_job("hello"))["status"]["active"]
            [pod] = await h.active_pods(active[0]["name"], 1)
            await h.finish(pod)
            await h.condition(active[0]["name"], b.JOB_COMPLETE)
        await h.advance("hello", 0.01)

        async def three_left() -> list[str] | None:
            names = await h.jobs()
            return names if len(names) == 3 else None
        newest = sorted(await eventually(three_left, message="history limit"))
        assert newest == [f"hello-{int(minute // 60) + i}" for i in (3, 4, 5)]
        assert await h.events("SuccessfulDelete")


async def _has(h: CronHarness, name: str) -> bool:
    return name in await h.jobs()


async def _cron_field(h: CronHarness, name: str, field: str) -> Obj | None:
    cj = await h.cron_job(name)
    return cj if cj["status"].get(field) else None


async def test_forbid_and_replace(tmp_path: Path) -> None:
    async with cron_harness(tmp_path) as h:
        await h.create_cron_job("forbid", concurrencyPolicy="Forbid")
        await h.create_cron_job("replace", concurrencyPolicy="Replace")
        await h.advance("forbid", 60)
        h.cron.queue.add(f"{NS}/replace")
        await eventually(lambda: _cron_field(h, "forbid", "active"))
        first_replace = (await eventually(
            lambda: _cron_field(h, "replace", "active")))["status"]["active"][0]["name"]
        await h.advance("forbid", 60)
        h.cron.queue.add(f"{NS}/replace")
        assert await eventually(lambda: h.events("JobAlreadyActive"))

        async def replaced() -> bool:
            active = (await h.cron_job("replace"))["status"].get("active") or []
            return len(active) == 1 and active[0]["name"] != first_replace
        await eventually(replaced)
        assert len([n for n in await h.jobs() if n.startswith("forbid-")]) == 1


async def test_suspend_and_starting_deadline(tmp_path: Path) -> None:
    async with cron_harness(tmp_path) as h:
        await h.create_cron_job("sus", suspend=True)
        await h.advance("sus", 120)
        await asyncio.sleep(0.2)
        assert await h.jobs() == []
        await h.create_cron_job("late", startingDeadlineSeconds=10)
        # 35 s past a minute with a 10 s deadline: that minute is missed, nothing runs
        h.clock.now = math.floor(h.clock.now / 60) * 60 + 60 + 35
        await h.advance("late", 0)
        await asyncio.sleep(0.2)
        assert await h.jobs() == []
        await h.advance("late", 30)  # 5 s after the next minute: in time
        await eventually(lambda: _cron_field(h, "late", "active"))
