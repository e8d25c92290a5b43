"""Leader election: one active instance among several, through a lock object in the API.

Kubernetes piece: pkg/client/leaderelection (v1.3+) with the EndpointsLock of that era — the
record `{holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaderTransitions}` is
the JSON value of the annotation `control-plane.alpha.kubernetes.io/leader` on an Endpoints
object in kube-system. Every write is a compare-and-swap on the object's resourceVersion, so
two candidates can never both believe they acquired it. A leader that cannot renew within
`renew_deadline` stops leading before its lease can be taken over.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import structlog

from ..api import meta
from ..api.errors import StatusError
from .resources import ENDPOINTS
from .rest import Client

log = structlog.get_logger(component="client")

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"


class LeaderElector:
    def __init__(
        self,
        client: Client,
        *,
        name: str,
        identity: str,
        namespace: str = "kube-system",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock
        self.is_leader = False
        #: the lock record last seen (holder, renewTime) and when, by our clock: a lease
        #: expires lease_duration after we saw it last change (upstream: observedTime), so
        #: clock skew between candidates does not matter
        self._observed_record: tuple[str, Any] = ("", None)
        self._observed_at = 0.0

    async def run(self, lead: Callable[[], Awaitable[None]]) -> bool:
        """Campaign until elected, run `lead()` while leading. Returns True when leadership
        was lost (the caller stops fatally, as upstream's OnStoppedLeading does), False when
        `lead()` returned; an exception of `lead()` is raised."""
        while not await self.try_acquire_or_renew():
            await asyncio.sleep(self.retry_period)
        self.is_leader = True
        log.info("became leader", lock=f"{self.namespace}/{self.name}", identity=self.identity)
        leading = asyncio.create_task(lead())
        try:
            while not leading.done():
                deadline = self.clock() + self.renew_deadline
                while not await self._renew_quietly():
                    if self.clock() >= deadline:
                        log.warning("lost leadership", identity=self.identity)
                        return True
                    await asyncio.sleep(self.retry_period)
                await asyncio.wait({leading}, timeout=self.retry_period)
        finally:
            self.is_leader = False
            if not leading.done():
                leading.cancel()
                try:
                    await leading
                except asyncio.CancelledError:
                    pass
        leading.result()  # lead()'s own failure, if any
        return False

    async def _renew_quietly(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except Exception as exc:  # a failed renewal is retried until the renew deadline
            log.warning("leader lock renewal failed", error=str(exc))
            return False

    async def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        record = {"holderIdentity": self.identity,
                  "leaseDurationSeconds": int(self.lease_duration),
                  "acquireTime": meta.rfc3339(now), "renewTime": meta.rfc3339(now),
                  "leaderTransitions": 0}
        try:
            lock = await self.client.get(ENDPOINTS, self.name, self.namespace)
        except StatusError as exc:
            if exc.code != 404:
                raise
            body = {"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": self.name, "namespace": self.namespace,
                                 "annotations": {LEADER_ANNOTATION: orjson.dumps(record).decode()}}}
            try:
                await self.client.create(ENDPOINTS, body, self.namespace)
                return True
            except StatusError as race:
                if race.code == 409:
                    return False
                raise
        annotations = lock["metadata"].setdefault("annotations", {})
        try:
            current = orjson.loads(annotations.get(LEADER_ANNOTATION) or "{}")
        except orjson.JSONDecodeError:
            current = {}
        holder = current.get("holderIdentity", "")
        if self._observed_record != (holder, current.get("renewTime")):
            self._observed_record = (holder, current.get("renewTime"))
            self._observed_at = now
        expired = now >= self._observed_at + float(current.get("leaseDurationSeconds") or 0)
        if holder and holder != self.identity and not expired:
            return False
        if holder == self.identity:
            record["acquireTime"] = current.get("acquireTime", record["acquireTime"])
            record["leaderTransitions"] = current.get("leaderTransitions", 0)
        else:
            record["leaderTransitions"] = int(current.get("leaderTransitions", 0)) + (1 if holder else 0)
        annotations[LEADER_ANNOTATION] = orjson.dumps(record).decode()
        try:
            await self.client.update(ENDPOINTS, lock)  # CAS on the resourceVersion
        except StatusError as exc:
            if exc.code == 409:
                return False
            raise
        self._observed_record = (self.identity, record["renewTime"])
        self._observed_at = now
        return True
