"""Pods parked by a Permit plugin, and the map the binding cycle waits on them through.

Kubernetes piece: pkg/scheduler/framework/runtime/waiting_pods_map.go (1.31). A Permit plugin
that answers Wait names how long it may wait; the pod then waits in the binding cycle until
every waiting plugin allowed it (`allow(plugin)`), any plugin (or the plugin's own timer)
rejected it (`reject(plugin, message)`), or the pod was deleted (the scheduler rejects it
with "removed"). Upstream uses a one-slot channel and `time.AfterFunc` timers; here an
asyncio future and `loop.call_later` handles — allow and reject never block and the first
verdict wins, as upstream's non-blocking send into the one-slot channel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

from ...api.protobuf_tables import go_duration
from .interface import Code, Status

Obj = dict[str, Any]

#: upstream maxTimeout: a Permit plugin may not ask to wait longer than 15 minutes
MAX_PERMIT_TIMEOUT = 15 * 60.0


def pod_uid(pod: Obj) -> str:
    """The key waiting pods are found by (upstream types.UID); namespace/name for pods built
    without a uid (unit tests), which cannot collide with a real uid."""
    md = pod.get("metadata") or {}
    return md.get("uid") or f"{md.get('namespace', '')}/{md.get('name', '')}"


class WaitingPod:
    """upstream waitingPod: the pod, its pending plugins with their timers, and the verdict."""

    def __init__(self, pod: Obj, plugin_wait: Mapping[str, float]) -> None:
        loop = asyncio.get_running_loop()
        self._pod = pod
        self._verdict: asyncio.Future[Status] = loop.create_future()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        for plugin, seconds in plugin_wait.items():
            message = (f"rejected due to timeout after waiting "
                       f"{go_duration(round(seconds * 1e9))} at plugin {plugin}")
            self._timers[plugin] = loop.call_later(seconds, self.reject, plugin, message)

    def pod(self) -> Obj:
        return self._pod

    def pending_plugins(self) -> list[str]:
        """upstream GetPendingPlugins: the plugins that have not allowed the pod yet."""
        return list(self._timers)

    def allow(self, plugin: str) -> None:
        """`plugin` allows the pod; once every waiting plugin did, the pod goes on to bind."""
        timer = self._timers.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._timers:
            self._settle(Status(Code.SUCCESS))

    def reject(self, plugin: str, message: str) -> None:
        """Any plugin (or the scheduler, plugin "") rejects the pod: Unschedulable."""
        self.stop_timers()
        self._settle(Status(Code.UNSCHEDULABLE, (message,), plugin))

    def stop_timers(self) -> None:
        """No timeout fires any more (a verdict came, or the waiter went away)."""
        for timer in self._timers.values():
            timer.cancel()

    def _settle(self, status: Status) -> None:
        if not self._verdict.done():
            self._verdict.set_result(status)

    async def wait(self) -> Status:
        return await self._verdict


class WaitingPodsMap:
    """upstream waitingPodsMap: shared by every profile's framework (a plugin of one profile
    may allow a pod another profile parked, as upstream's single map allows)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        self._pods[pod_uid(waiting.pod())] = waiting

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
