"""componentstatuses: probe the scheduler, the controller manager and the store, live.

Kubernetes v1.0 piece: pkg/registry/componentstatus (rest.go: List probes every server
concurrently, `Get` probes one) and pkg/apiserver/validator.go (`Server{Addr, Port, Path}`
with `DoServerCheck`). Nothing is stored: each row is a fresh probe, so `kubectl get cs` shows
the truth now — `Unhealthy` with the real error (`connection refused`) when a component is down.
Objects have no uid and a null creationTimestamp, as upstream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from ..api import errors

PROBE_TIMEOUT = 2.0


@dataclass(frozen=True)
class HTTPProbe:
    """`GET url` must answer 200; the body is the row's message (upstream "ok")."""

    url: str

    async def __call__(self, session: aiohttp.ClientSession) -> tuple[bool, str, str]:
        try:
            async with session.get(self.url) as resp:
                body = (await resp.read()).decode(errors="replace")[:1024]
                if resp.status != 200:
                    return False, "", f"Get \"{self.url}\": HTTP status code {resp.status}: {body}"
                return True, body, ""
        except TimeoutError:
            return False, "", f'Get "{self.url}": context deadline exceeded'
        except aiohttp.ClientConnectorError as exc:
            return False, "", f'Get "{self.url}": dial tcp {exc.host}:{exc.port}: connect: connection refused' \
                if isinstance(exc.os_error, ConnectionRefusedError) else f'Get "{self.url}": {exc}'
        except aiohttp.ClientError as exc:
            return False, "", f'Get "{self.url}": {exc}'


@dataclass(frozen=True)
class StoreProbe:
    """The store's health as etcd reports it (`{"health":"true"}`)."""

    check: Callable[[], Awaitable[Any]]

    async def __call__(self, session: aiohttp.ClientSession) -> tuple[bool, str, str]:
        try:
            await asyncio.wait_for(self.check(), PROBE_TIMEOUT)
            return True, '{"health":"true","reason":""}', ""
        except Exception as exc:  # any failure is the row's error text, never a 500
            return False, "", f"storage health check failed: {exc or type(exc).__name__}"


Probe = Callable[[aiohttp.ClientSession], Awaitable[tuple[bool, str, str]]]


def component_status(name: str, healthy: bool, message: str, error: str) -> dict[str, Any]:
    condition: dict[str, Any] = {"type": "Healthy", "status": "True" if healthy else "False"}
    if message:
        condition["message"] = message
    if error:
        condition["error"] = error
    return {"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": None}, "conditions": [condition]}


class ComponentStatuses:
    def __init__(self, probes: dict[str, Probe]) -> None:
        self.probes = probes

    async def list(self) -> list[dict[str, Any]]:
        timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            names = sorted(self.probes)
            results = await asyncio.gather(*(self.probes[n](session) for n in names))
        return [component_status(n, *r) for n, r in zip(names, results)]

    async def get(self, name: str) -> dict[str, Any]:
        probe = self.probes.get(name)
        if probe is None:
            raise errors.not_found("componentstatuses", name)
        timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            return component_status(name, *(await probe(session)))
