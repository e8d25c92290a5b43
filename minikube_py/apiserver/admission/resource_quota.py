"""ResourceQuota admission: refuse creates that would exceed a namespace's quotas, keep usage.

Kubernetes v1.0 piece: plugin/pkg/admission/resourcequota (later the quota admission
controller). On a create, every quota in the namespace that tracks what the object costs is
checked (api/quota.py check); the first one exceeded is 403 Forbidden
`pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`.
When all fit, each quota's `status.used` (and `status.hard`) is written with the new usage
under the resourceVersion that was read, exactly as upstream does; a conflict re-evaluates.
Usage is recomputed from the namespace's objects when a quota has no complete status yet and
after every delete of a tracked object (standing in for the quota controller's resync), so
status.used stays current (the controller manager's resourcequota controller also
recalculates every quota periodically, as upstream). An update is charged only for what it
adds (a service becoming NodePort, a claim growing), as upstream's evaluators charge updates
of services and claims. A dry-run request is checked like any other but charges nothing.
Reads and writes go through the server's own registries.

The namespace's quotas are read as upstream's quotaAccessor reads them: from the admission
quota informer (listers.NamespacedLister, with its live lookup when the cache has none), and
live after a conflict — a cached quota that is stale only costs a conflict on the
compare-and-swap and a retry on fresh data, so the usage written is always exact.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from ...api import errors
from ...api import quota as qu
from ...api.defaults import apply_defaults
from ...registry import codec
from ...registry.generic import Registry
from .chain import Attributes
from .denial import forbidden
from .listers import NamespacedLister

log = structlog.get_logger(component="apiserver.admission.resourcequota")
Lookup = Callable[[str, str], "Registry | None"]
_ATTEMPTS = 5


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, lookup: Lookup, lister: NamespacedLister | None = None) -> None:
        self._lookup = lookup
        quotas = lookup("", "resourcequotas")
        assert quotas is not None
        self._quotas = quotas
        self._lister = lister

    async def _namespace_quotas(self, namespace: str, attempt: int) -> list[qu.Obj]:
        """The first attempt reads the cache; a retry after a conflict reads the store."""
        if attempt == 0 and self._lister is not None:
            return await self._lister.list(namespace)
        return await self._list("", "resourcequotas", namespace)

    async def _list(self, group: str, resource: str, namespace: str) -> list[qu.Obj]:
        registry = self._lookup(group, resource)
        if registry is None:
            return []
        return (await registry.list(namespace)).decoded()

    async def recompute(self, quota: qu.Obj, namespace: str,
                        exclude: tuple[str, str, str] | None = None) -> qu.Usage:
        """The quota's usage from the namespace's objects (upstream quota controller sync)."""
        used = qu.no_usage(quota)
        for group, resource in qu.tracked_resources(quota):
            objects = [obj for obj in await self._list(group, resource, namespace)
                       if exclude != (group, resource, obj["metadata"]["name"])]
            qu.tally(quota, group, resource, objects, used)
        return used

    async def admit(self, attrs: Attributes) -> None:
        strategy = attrs.strategy
        if (attrs.subresource or not strategy.namespaced or not attrs.namespace
                or attrs.operation not in ("CREATE", "UPDATE", "DELETE")
                or (attrs.operation == "DELETE" and attrs.dry_run)):
            return
        if attrs.operation == "UPDATE" and \
                (strategy.group, strategy.resource) not in qu.UPDATE_CHARGED:
            return
        old: qu.Obj | None = None
        for attempt in range(_ATTEMPTS):
            quotas = await self._namespace_quotas(attrs.namespace, attempt)
            if not quotas:
                return
            if attrs.operation == "UPDATE" and attempt == 0:
                # read only where a quota could charge it; None: an update that creates
                old = await self._current(attrs)
            try:
                if attrs.operation == "DELETE":
                    await self._release(attrs, quotas)
                else:
                    await self._charge(attrs, quotas, old)
                return
            except errors.StatusError as exc:
                if exc.reason != "Conflict":
                    raise
        raise errors.StatusError(409, "Conflict", "unable to update the quota of namespace "
                                 f"{attrs.namespace}: too many concurrent updates; please retry")

    async def _current(self, attrs: Attributes) -> qu.Obj | None:
        registry = self._lookup(attrs.strategy.group, attrs.strategy.resource)
        if registry is None:
            return None
        try:
            return await registry.get(attrs.namespace, attrs.name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise

    async def _charge(self, attrs: Attributes, quotas: list[qu.Obj],
                      old: qu.Obj | None = None) -> None:
        strategy = attrs.strategy
        if not isinstance(attrs.obj, dict):
            return
        obj = codec.clone(attrs.obj)
        apply_defaults(strategy.kind, obj, strategy.group)  # charge what will be stored (requests <- limits)
        delta = (qu.update_delta(strategy.group, strategy.resource, old, obj) if old is not None
                 else qu.usage(strategy.group, strategy.resource, obj))
        if not delta:
            return
        writes: list[tuple[qu.Obj, qu.Usage]] = []
        for quota in sorted(quotas, key=lambda q: q["metadata"]["name"]):
            if not qu.scopes_match(quota, strategy.group, strategy.resource, obj):
                continue
            hard = qu.hard_of(quota)
            if strategy.kind == "Pod" and not strategy.group:
                reason = qu.missing_requests(obj, hard)
                if reason:
                    raise forbidden(attrs, f"failed quota: {quota['metadata']['name']}: {reason}")
            stored = qu.used_of(quota)
            used = (qu.parse_used(stored) if stored is not None
                    else await self.recompute(quota, attrs.namespace))
            new_used, reason = qu.check(quota, used, delta)
            if reason:
                raise forbidden(attrs, reason)
            if new_used is not None:
                writes.append((quota, new_used))
        if attrs.dry_run:
            return
        for quota, new_used in writes:
            await self._write(quota, new_used)

    async def _release(self, attrs: Attributes, quotas: list[qu.Obj]) -> None:
        strategy = attrs.strategy
        target = (strategy.group, strategy.resource)
        exclude = (strategy.group, strategy.resource, attrs.name)
        for quota in quotas:
            if target in {qu.tracked_resource(name) for name in qu.hard_of(quota)}:
                await self._write(quota, await self.recompute(quota, attrs.namespace, exclude))

    async def _write(self, quota: qu.Obj, used: qu.Usage) -> None:
        md = quota["metadata"]
        status = qu.status_for(quota, used)

        def produce(old: qu.Obj | None) -> qu.Obj:
            assert old is not None
            new = codec.clone(old)
            new["metadata"]["resourceVersion"] = md["resourceVersion"]  # CAS on what was read
            new["status"] = status
            return new

        await self._quotas.update(md["namespace"], md["name"], produce, subresource="status")
        log.debug("quota usage updated", namespace=md["namespace"], quota=md["name"],
                  used=status["used"])
