"""Leader election: one active instance among several, through a lock object in the API.

Kubernetes piece: client-go tools/leaderelection (leaderelection.go: LeaderElector.Run,
acquire, renew, tryAcquireOrRenew, release) over the locks of resourcelock.py — a Lease by
default (`--leader-elect-resource-lock=leases`), or v1.3's annotation on an Endpoints or
ConfigMap object. Every write is a compare-and-swap on the lock object's resourceVersion, so
two candidates can never both believe they acquired it.

Expiry is judged by our own clock, never the holder's: a lease is valid until
leaseDurationSeconds after we last saw the record *change* (upstream observedTime), so clock
skew between candidates does not matter. A leader that cannot renew within `renew_deadline`
stops leading before its lease can be taken over. As upstream, a leader first tries the
optimistic fast path (update the object it read last, no GET); leaderTransitions counts every
acquisition by a new holder.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import structlog

from ..api.errors import StatusError
from .resourcelock import (
    LEADER_ANNOTATION,
    LEASES_LOCK,
    LeaderElectionRecord,
    ResourceLock,
    new_lock,
)
from .rest import Client

log = structlog.get_logger(component="client")

__all__ = ["LEADER_ANNOTATION", "LeaderElector"]


class LeaderElector:
    def __init__(
        self,
        client: Client,
        *,
        name: str,
        identity: str,
        namespace: str = "kube-system",
        lock_type: str = LEASES_LOCK,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lock: ResourceLock = new_lock(lock_type, client, namespace, name, identity)
        self.lock_type = lock_type
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.clock = clock
        #: the record last seen and when, by our clock (upstream observedRecord/observedTime)
        self.observed = LeaderElectionRecord()
        self._observed_raw = b""
        self._observed_at = 0.0

    @property
    def is_leader(self) -> bool:
        return self.observed.holder_identity == self.identity

    def _lease_valid(self, now: float) -> bool:
        return self._observed_at + self.observed.lease_duration_seconds > now

    def _observe(self, record: LeaderElectionRecord) -> None:
        self.observed = record
        self._observed_at = self.clock()

    async def run(self, lead: Callable[[], Awaitable[None]]) -> bool:
        """Campaign until elected, run `lead()` while leading. Returns True when leadership
        was lost (the caller stops fatally, as upstream's OnStoppedLeading does), False when
        `lead()` returned; an exception of `lead()` is raised."""
        while not await self._try_quietly():
            await asyncio.sleep(self.retry_period)
        log.info("became leader", lock=self.lock.describe(), lock_type=self.lock_type,
                 identity=self.identity)
        leading = asyncio.create_task(lead())
        try:
            while not leading.done():
                deadline = self.clock() + self.renew_deadline
                while not await self._try_quietly():
                    if self.clock() >= deadline:
                        log.warning("lost leadership", identity=self.identity)
                        self.observed = LeaderElectionRecord()
                        return True
                    await asyncio.sleep(self.retry_period)
                await asyncio.wait({leading}, timeout=self.retry_period)
        finally:
            if not leading.done():
                leading.cancel()
                try:
                    await leading
                except asyncio.CancelledError:
                    pass
            if self.release_on_cancel and self.is_leader:
                await asyncio.shield(self.release())
        leading.result()  # lead()'s own failure, if any
        return False

    async def _try_quietly(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - retried until the renew deadline
            log.warning("leader lock acquire/renew failed", lock=self.lock.describe(),
                        error=str(exc))
            return False

    async def try_acquire_or_renew(self) -> bool:
        """upstream tryAcquireOrRenew: True when we hold the lock after this call."""
        now = self.clock()
        record = LeaderElectionRecord(
            holder_identity=self.identity, lease_duration_seconds=int(self.lease_duration),
            acquire_time=now, renew_time=now)
        # 1. the leader's fast path: update the object read last, assuming it is current
        if self.is_leader and self._lease_valid(now):
            renewed = LeaderElectionRecord(
                holder_identity=self.identity, lease_duration_seconds=int(self.lease_duration),
                acquire_time=self.observed.acquire_time, renew_time=now,
                leader_transitions=self.observed.leader_transitions)
            try:
                await self.lock.update(renewed)
                self._observe(renewed)
                return True
            except StatusError as exc:
                log.debug("optimistic lock update failed, falling back to the slow path",
                          error=str(exc))
        # 2. read the record, or create it
        try:
            current, raw = await self.lock.get()
        except StatusError as exc:
            if exc.code != 404:
                raise
            try:
                await self.lock.create(record)
            except StatusError as race:
                if race.code == 409:
                    return False
                raise
            self._observe(record)
            return True
        # 3. someone else's unexpired lease: wait
        if raw != self._observed_raw:
            self._observe(current)
            self._observed_raw = raw
        if current.holder_identity and self._lease_valid(now) and not self.is_leader:
            return False
        # 4. take it (or renew it)
        if self.is_leader:
            record = LeaderElectionRecord(
                holder_identity=self.identity, lease_duration_seconds=int(self.lease_duration),
                acquire_time=current.acquire_time, renew_time=now,
                leader_transitions=current.leader_transitions)
        else:
            record = LeaderElectionRecord(
                holder_identity=self.identity, lease_duration_seconds=int(self.lease_duration),
                acquire_time=now, renew_time=now,
                leader_transitions=current.leader_transitions + 1)
        try:
            await self.lock.update(record)
        except StatusError as exc:
            if exc.code == 409:
                return False
            raise
        self._observe(record)
        return True

    async def release(self) -> bool:
        """upstream release (ReleaseOnCancel): an empty holder with a 1 s lease, so another
        candidate takes over at once instead of waiting out the lease."""
        if not self.is_leader:
            return True
        now = self.clock()
        record = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                      leader_transitions=self.observed.leader_transitions)
        try:
            await self.lock.update(record)
        except StatusError as exc:
            log.warning("failed to release lock", lock=self.lock.describe(), error=str(exc))
            return False
        self._observe(record)
        return True
