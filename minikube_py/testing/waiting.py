"""Waiting for an object to reach a state: list once, then watch — never sleep-and-poll.

Kubernetes piece: client-go's `watchtools.UntilWithSync` (what `kubectl wait` uses): read the
object and its resourceVersion, test the condition, then follow a watch from that version and
test every event, until the condition holds or the deadline passes. The predicates here are
pure functions of one object (or None once it is gone), so they are unit-testable alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..api.errors import StatusError
from ..client import Client
from ..client import resources as known
from ..client.resources import Resource

Obj = dict[str, Any]
#: a predicate sees the object, or None when it does not exist (or was deleted)
Predicate = Callable[[Obj | None], bool]


class WaitTimeout(TimeoutError):
    """The condition did not hold in time; `last` is the object as last seen (None: absent)."""

    def __init__(self, message: str, last: Obj | None) -> None:
        super().__init__(message)
        self.last = last


def resource_of(name: str | Resource) -> Resource:
    """A Resource from a constant, or a plural, singular or kind name ("pods", "Pod",
    "deployment", "apps/v1/deployments" is not needed: names are unique enough here)."""
    if isinstance(name, Resource):
        return name
    wanted = name.lower()
    for value in vars(known).values():
        if isinstance(value, Resource) and wanted in (value.plural, value.kind.lower()):
            return value
    raise ValueError(f"unknown resource {name!r}: pass a minikube_py.client.resources "
                     "constant or a Resource(group, version, plural, namespaced, kind)")


def condition(type_: str, status: str = "True") -> Predicate:
    """status.conditions has `type_` with `status` (Ready, Available, Complete, ...)."""
    def check(obj: Obj | None) -> bool:
        for c in ((obj or {}).get("status") or {}).get("conditions") or ():
            if c.get("type") == type_:
                return c.get("status") == status
        return False
    check.__doc__ = f"condition {type_}={status}"
    return check


def phase(value: str) -> Predicate:
    """status.phase is `value` (Running, Succeeded, Bound, Active, ...)."""
    def check(obj: Obj | None) -> bool:
        return ((obj or {}).get("status") or {}).get("phase") == value
    check.__doc__ = f"phase {value}"
    return check


def deleted(obj: Obj | None) -> bool:
    """the object no longer exists"""
    return obj is None


def exists(obj: Obj | None) -> bool:
    """the object exists"""
    return obj is not None


def describe(predicate: Predicate) -> str:
    return (predicate.__doc__ or getattr(predicate, "__name__", "condition")).strip()


async def wait_for(client: Client, resource: str | Resource, name: str,
                   predicate: Predicate, *, namespace: str | None = None,
                   timeout: float = 10.0) -> Obj | None:
    """Until `predicate(object)` holds; returns the object (None for `deleted`). Raises
    WaitTimeout after `timeout` seconds, naming the condition and the last state seen."""
    res = resource_of(resource)
    ns = namespace if res.namespaced else None
    last: Obj | None = None
    try:
        async with asyncio.timeout(timeout):
            while True:  # a watch the server ends (timeout, 410) is resumed by a new list
                listed = await client.list(res, ns, field_selector=f"metadata.name={name}")
                items = listed.get("items") or []
                last = items[0] if items else None
                if predicate(last):
                    return last
                rv = listed["metadata"]["resourceVersion"]
                try:
                    async for event in client.watch(res, ns, resource_version=rv,
                                                    field_selector=f"metadata.name={name}",
                                                    allow_bookmarks=False):
                        last = None if event.type == "DELETED" else event.object
                        if predicate(last):
                            return last
                except StatusError as exc:
                    if exc.code != 410:
                        raise
    except TimeoutError:
        where = f"{ns}/{name}" if ns else name
        raise WaitTimeout(f"{res.kind} {where}: not {describe(predicate)} after {timeout:g} s "
                          f"(last seen: {summary(last)})", last) from None


def summary(obj: Obj | None) -> str:
    if obj is None:
        return "absent"
    status = obj.get("status") or {}
    conditions = ", ".join(f"{c.get('type')}={c.get('status')}"
                           for c in status.get("conditions") or ())
    parts = [f"resourceVersion {obj.get('metadata', {}).get('resourceVersion')}"]
    if status.get("phase"):
        parts.append(f"phase {status['phase']}")
    if conditions:
        parts.append(f"conditions {conditions}")
    return "; ".join(parts)
