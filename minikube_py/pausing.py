"""Pausing components: a gate per scheduler or controller that its loop checks before taking
the next item from its queue.

Kubernetes piece: none — upstream has no "pause a controller" switch; the nearest things are
scaling kube-controller-manager to zero or losing its leader lease, which stop *everything*.
This is a teaching tool (issue 21's console action): pause the scheduler and watch pods pile up
Pending in the scheduling queue; pause the ReplicaSet controller, scale a ReplicaSet, and see
that nothing happens until it resumes and drains its backlog. What pausing keeps is exactly what
those upstream outages keep: informers go on watching and feeding the queues, so no event is
lost; only the workers (scheduleOne, processNextWorkItem) stop taking items.

Ownership: a `PauseRegistry` holds the gates of one cluster, so names are unique per cluster.
`REGISTRY` is the process's default, the one the all-in-one (`minikube-py start`, one cluster
per process) registers its components in and the console and `/debug/components` read. Code that
runs several clusters in one process (tests) passes each its own `PauseRegistry()`; a component
built without any registry gets a private one (pausable through its own `.pauses`, invisible to
others) so two of them never share a gate by accident. Registering a name twice in one registry
is an error; components unregister when they stop.

Cost: a loop checks `gate.paused` (one attribute) before awaiting `wait_resumed()`; nothing is
awaited on the hot path. Gates are thread-safe to flip (a test or the console may pause from
another thread than the cluster's loop): waiters are woken through their own loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import structlog
from prometheus_client import Gauge

from .crossloop import wake
from .trace import PAUSE, TRACE

#: the kinds of component that can be paused
SCHEDULER = "scheduler"
CONTROLLER = "controller"
GATE_KINDS = (SCHEDULER, CONTROLLER)

_log = structlog.get_logger(component="pausing")

_PAUSED = Gauge("paused_components",
                "Components paused through /debug/components (1 paused, 0 running), by name.",
                ["name", "kind"])


class PauseGate:
    """One pausable component. Its loop does `if gate.paused: await gate.wait_resumed()`
    before taking the next item; `pause()`/`resume()` flip it from anywhere."""

    __slots__ = ("_lock", "_waiters", "kind", "name", "paused", "since")

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.paused = False
        #: epoch seconds of the last pause or resume (registration counts as a resume)
        self.since = time.time()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def pause(self) -> None:
        """Stop the component taking new items (the one in hand finishes). Idempotent."""
        with self._lock:
            if self.paused:
                return
            self.paused = True
            self.since = time.time()
        self._record("pause")

    def resume(self) -> None:
        """Let the component take items again; its backlog drains. Idempotent."""
        with self._lock:
            if not self.paused:
                return
            self.paused = False
            self.since = time.time()
            waiters, self._waiters = self._waiters, []
        self._record("resume")
        wake(waiters)

    async def wait_resumed(self) -> None:
        """Return once the gate is open (at once when it is)."""
        while self.paused:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:
                if not self.paused:
                    return
                self._waiters.append((loop, future))
            try:
                await future
            finally:
                with self._lock:
                    if (loop, future) in self._waiters:
                        self._waiters.remove((loop, future))

    def to_dict(self) -> dict[str, Any]:
        """The gate as `/debug/components` and the console show it."""
        return {"name": self.name, "kind": self.kind, "paused": self.paused,
                "since": self.since}

    def _record(self, action: str) -> None:
        _PAUSED.labels(self.name, self.kind).set(1 if self.paused else 0)
        _log.info(f"component {action}d", name=self.name, kind=self.kind)
        if TRACE.active:
            TRACE.emit(PAUSE, self.name, "", "", self.name, "", (self.kind, action))

    def __repr__(self) -> str:
        return f"PauseGate({self.name!r}, {self.kind!r}, paused={self.paused})"


class PauseRegistry:
    """The gates of one cluster, by name (unique within the registry)."""

    def __init__(self) -> None:
        self._gates: dict[str, PauseGate] = {}
        self._lock = threading.Lock()

    def register(self, name: str, kind: str) -> PauseGate:
        """A new open gate named `name`. ValueError if the name is taken (two clusters in one
        process must use one registry each) or the kind unknown."""
        if kind not in GATE_KINDS:
            raise ValueError(f"unknown component kind {kind!r} (one of {', '.join(GATE_KINDS)})")
        gate = PauseGate(name, kind)
        with self._lock:
            if name in self._gates:
                raise ValueError(
                    f"component {name!r} is already registered: give each cluster in a process "
                    "its own PauseRegistry")
            self._gates[name] = gate
        _PAUSED.labels(name, kind).set(0)
        return gate

    def unregister(self, gate: PauseGate) -> None:
        """Forget `gate` (its component stopped); a paused gate is opened first so nothing
        stays parked on it."""
        gate.resume()
        with self._lock:
            if self._gates.get(gate.name) is not gate:
                return
            del self._gates[gate.name]
        try:
            _PAUSED.remove(gate.name, gate.kind)
        except KeyError:
            pass

    def get(self, name: str) -> PauseGate:
        """The gate named `name`; KeyError if none."""
        with self._lock:
            return self._gates[name]

    def __contains__(self, name: object) -> bool:
        return name in self._gates

    def __len__(self) -> int:
        return len(self._gates)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every gate as `{"name", "kind", "paused", "since"}`, sorted by name."""
        with self._lock:
            gates = sorted(self._gates.values(), key=lambda gate: gate.name)
        return [gate.to_dict() for gate in gates]


#: the process's default registry (the all-in-one's; see the module docstring)
REGISTRY = PauseRegistry()

__all__ = ["CONTROLLER", "GATE_KINDS", "REGISTRY", "SCHEDULER", "PauseGate", "PauseRegistry"]
