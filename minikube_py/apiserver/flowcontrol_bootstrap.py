"""The API Priority and Fairness configuration producer: bootstrap objects and FlowSchema status.

Kubernetes pieces: pkg/registry/flowcontrol/rest/storage_flowcontrol.go's post-start hook
`priority-and-fairness-config-producer` (ensure the mandatory and suggested objects at start,
then again every minute, so a deleted `exempt` or `catch-all` comes back; remove objects the
server once auto-updated that are no longer part of the configuration) and the config controller
of k8s.io/apiserver/pkg/util/flowcontrol, which keeps each FlowSchema's `Dangling` condition
true while its priority level does not exist.

What is not here: request classification and fair queuing. This server still admits requests by
--max-requests-inflight / --max-mutating-requests-inflight (filters.py); the objects are served
so that clients, `kubectl get flowschemas` and operators that manage them find upstream's data.
The decisions are api/flowcontrol's; this module only reads and writes through the registries.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from typing import Any

import structlog

from ..api import errors
from ..api import flowcontrol as apf
from ..api.meta import rfc3339
from ..registry.generic import Registry
from .admission.informer import StoreInformer

log = structlog.get_logger(component="apiserver.flowcontrol")

#: upstream re-ensures the configuration every minute
ENSURE_INTERVAL = 60.0


async def _ensure_one(registry: Registry, bootstrap: dict[str, Any], mandatory: bool) -> str:
    """Create the object when missing, or bring it back to its spec; returns what was done."""
    name = bootstrap["metadata"]["name"]
    try:
        current = await registry.get("", name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        try:
            await registry.create("", copy.deepcopy(bootstrap))
        except errors.StatusError as create_exc:
            if create_exc.code != 409:  # another server created it meanwhile
                raise
            return "kept"
        return "created"
    if apf.ensure_update(bootstrap, current, mandatory) is None:
        return "kept"

    def produce(old: dict[str, Any] | None) -> dict[str, Any]:
        updated = apf.ensure_update(bootstrap, old or current, mandatory)
        return updated if updated is not None else (old or current)

    await registry.update("", name, produce)
    return "updated"


async def ensure_configuration(levels: Registry, schemas: Registry) -> dict[str, list[str]]:
    """One pass of the config producer: levels first (schemas refer to them), then schemas,
    then removal of auto-updated objects that the configuration no longer has. Returns
    {"created": [...], "updated": [...], "deleted": [...]} (kind/name) for logs and tests."""
    done: dict[str, list[str]] = {"created": [], "updated": [], "deleted": []}
    boot = apf.load_bootstrap()
    for registry, entries in ((levels, boot.levels()), (schemas, boot.schemas())):
        for obj, mandatory in entries:
            action = await _ensure_one(registry, obj, mandatory)
            if action != "kept":
                done[action].append(f"{obj['kind']}/{obj['metadata']['name']}")
        names = frozenset(o["metadata"]["name"] for o, _ in entries)
        for obj in (await registry.list("")).decoded():
            if apf.is_dangling_bootstrap_object(obj, names):
                name = obj["metadata"]["name"]
                with contextlib.suppress(errors.StatusError):
                    await registry.delete("", name)
                    done["deleted"].append(f"{registry.strategy.kind}/{name}")
    return done


class FlowControlBootstrap:
    """Started after the server's informers: ensures the configuration, re-ensures it every
    `interval` seconds, and writes FlowSchema `Dangling` conditions whenever flow schemas or
    priority levels change."""

    def __init__(self, levels: Registry, schemas: Registry,
                 interval: float = ENSURE_INTERVAL) -> None:
        self.levels, self.schemas, self.interval = levels, schemas, interval
        self._level_informer = StoreInformer(levels.store, levels.root, "prioritylevels")
        self._schema_informer = StoreInformer(schemas.store, schemas.root, "flowschemas")
        self._dirty = asyncio.Event()
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        try:
            done = await ensure_configuration(self.levels, self.schemas)
        except errors.StatusError as exc:  # the loop retries; the server still serves
            log.warning("flowcontrol bootstrap ensure failed", error=exc.message)
        else:
            if any(done.values()):
                log.info("flowcontrol bootstrap configuration ensured", **done)
        for informer in (self._level_informer, self._schema_informer):
            informer.listeners.append(self._dirty.set)
            await informer.start()
        await self.sync_status()
        self._tasks = [asyncio.create_task(self._ensure_loop(), name="apf-config-producer"),
                       asyncio.create_task(self._status_loop(), name="apf-status")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        await self._level_informer.stop()
        await self._schema_informer.stop()

    async def _ensure_loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                done = await ensure_configuration(self.levels, self.schemas)
            except errors.StatusError as exc:  # retried next round, as upstream's poll
                log.warning("flowcontrol bootstrap ensure failed", error=exc.message)
                continue
            if any(done.values()):
                log.info("flowcontrol bootstrap configuration restored", **done)

    async def _status_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self.sync_status()
            except errors.StatusError as exc:
                log.warning("flowcontrol status update failed", error=exc.message)
                await asyncio.sleep(1.0)
                self._dirty.set()

    async def sync_status(self) -> None:
        """Write the Dangling condition of every FlowSchema whose condition is stale."""
        level_names = {o["metadata"]["name"] for o in self._level_informer.items.values()}
        now = rfc3339(time.time())
        for fs in list(self._schema_informer.items.values()):
            condition = apf.dangling_condition(fs, level_names)
            if apf.with_condition(fs, condition, now) is None:
                continue
            name = fs["metadata"]["name"]

            def produce(old: dict[str, Any] | None, condition: dict = condition,
                        fs: dict = fs) -> dict:
                base = old if old is not None else fs
                return apf.with_condition(base, condition, now) or base

            with contextlib.suppress(errors.StatusError):  # deleted meanwhile: next event
                await self.schemas.update("", name, produce, subresource="status")
