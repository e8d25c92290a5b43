"""ClusterRole aggregation: a ClusterRole with an aggregationRule holds the rules of every
ClusterRole its selectors match.

Kubernetes piece: pkg/controller/clusterroleaggregation (ClusterRoleAggregationController,
run by kube-controller-manager): for each selector in order, the matching ClusterRoles sorted
by name (the role itself skipped) contribute their rules, each rule once; when the result
differs from the role's rules, the role is updated. Here it runs inside the API server,
fed by the RBAC authorizer's ClusterRole informer (a change wakes one worker; work is
coalesced), since RBAC is an API-server mode here and needs no separate process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

import structlog

from ....api import errors
from ....api.labels import selector_from_label_selector

log = structlog.get_logger(component="apiserver.rbac.aggregation")

Obj = dict[str, Any]


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def aggregated_rules(role: Obj, cluster_roles: Iterable[Obj]) -> list[Obj] | None:
    """The rules `role` should hold, or None when it has no aggregationRule (or a selector
    that does not parse, which validation prevents)."""
    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    others = sorted((r for r in cluster_roles if _name(r) != _name(role)), key=_name)
    rules: list[Obj] = []
    for spec in rule.get("clusterRoleSelectors") or ():
        try:
            selector = selector_from_label_selector(spec if isinstance(spec, dict) else {})
        except (ValueError, errors.StatusError):
            return None
        for other in others:
            if selector.matches((other.get("metadata") or {}).get("labels") or {}):
                for item in other.get("rules") or ():
                    if item not in rules:
                        rules.append(item)
    return rules


class AggregationController:
    """Keeps aggregated ClusterRoles up to date; `informer` is the ClusterRole StoreInformer,
    `registry` the clusterroles Registry (writes go through validation like any other)."""

    def __init__(self, informer: Any, registry: Any) -> None:
        self.informer = informer
        self.registry = registry
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        informer.listeners.append(self._wake.set)

    async def start(self) -> None:
        self._wake.set()
        self._task = asyncio.create_task(self._run(), name="rbac:aggregation")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.sync()
            except errors.StatusError as exc:  # a conflict: the next change wakes us again
                log.info("aggregation retry", error=str(exc))
                await asyncio.sleep(0.1)
                self._wake.set()

    async def settle(self, passes: int = 5) -> None:
        """Sync until nothing changes (an aggregated role may aggregate another: view into
        edit into admin), waiting for the informer to see each pass's writes."""
        for _ in range(passes):
            updated = await self.sync()
            if not updated:
                return
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 5.0
            while not all(self._seen(name, rv) for name, rv in updated.items()):
                if loop.time() > deadline:
                    return
                await asyncio.sleep(0.005)

    def _seen(self, name: str, resource_version: str) -> bool:
        cached = self.informer.by_name("", name) or {}
        seen = (cached.get("metadata") or {}).get("resourceVersion") or "0"
        return int(seen) >= int(resource_version or 0)

    async def sync(self) -> dict[str, str]:
        """One pass over every aggregated ClusterRole; returns name -> new resourceVersion
        of the roles updated."""
        roles = list(self.informer.items.values())
        updated: dict[str, str] = {}
        for role in roles:
            wanted = aggregated_rules(role, roles)
            if wanted is None or wanted == (role.get("rules") or []):
                continue

            def produce(latest: Obj | None, wanted: list[Obj] = wanted,
                        name: str = _name(role)) -> Obj:
                if latest is None:
                    raise errors.not_found("clusterroles", name, "rbac.authorization.k8s.io")
                latest["rules"] = wanted
                return latest

            obj, _ = await self.registry.update("", _name(role), produce)
            updated[_name(role)] = str(obj["metadata"].get("resourceVersion") or "0")
        if updated:
            log.info("aggregated cluster roles", names=sorted(updated))
        return updated
