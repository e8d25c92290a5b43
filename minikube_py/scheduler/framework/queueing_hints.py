"""Queueing hints: may this cluster event make that unschedulable pod schedulable?

Kubernetes piece: pkg/scheduler/internal/queue/scheduling_queue.go `isPodWorthRequeuing` and
`isEventOfInterest`, plus the runtime's `fillEventToPluginMap` (pkg/scheduler/framework/runtime,
1.31). Each profile collects, from its plugins, the events each plugin registered
(EnqueueExtensions) with an optional hint function. A pod rejected by plugins P is requeued by an
event only if some plugin in P registered a matching event and its hint answers Queue (no hint,
or a hint that raises, counts as Queue, so a buggy hint cannot strand a pod). A plugin that does
not implement EnqueueExtensions is registered for every event, as upstream does; one that
returns an empty list is woken by nothing but the unschedulable timeout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from .events import WILDCARD_EVENT, is_wildcard, matches
from .interface import (
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    Plugin,
    QueueingHint,
    QueueingHintFn,
)

Obj = dict[str, Any]
log = structlog.get_logger("scheduler.queue")


@dataclass(frozen=True)
class HintEntry:
    """One plugin's registration for one event (upstream QueueingHintFunction + its event)."""

    plugin: str
    event: ClusterEvent
    fn: QueueingHintFn | None = None


def hint_entries(registrations: Mapping[str, Sequence[ClusterEventWithHint] | None]
                 ) -> list[HintEntry]:
    """A profile's registrations from its plugins' EnqueueExtensions (the framework's
    `events_to_register()`: plugin name -> its events, None for a plugin that does not
    implement EnqueueExtensions and so is woken by every event)."""
    entries: list[HintEntry] = []
    for plugin, registered in registrations.items():
        if registered is None:
            entries.append(HintEntry(plugin, WILDCARD_EVENT))
            continue
        entries.extend(HintEntry(plugin, r.event, r.hint) for r in registered)
    return entries


def registrations_of(plugins: Iterable[Plugin]) -> dict[str, list[ClusterEventWithHint] | None]:
    """`hint_entries`' input from plugin objects (what the runtime's events_to_register
    computes for a profile)."""
    return {p.name: p.events_to_register() if isinstance(p, EnqueueExtensions) else None
            for p in plugins}


def is_event_of_interest(hints: Mapping[str, Sequence[HintEntry]], event: ClusterEvent) -> bool:
    """Does any plugin of any profile care about `event`? (the queue skips walking its
    unschedulable pods when none does)."""
    if is_wildcard(event):
        return True
    return any(matches(entry.event, event) for entries in hints.values() for entry in entries)


class EventInterest:
    """`is_event_of_interest` remembered per (resource, action): the informers deliver the
    same few kinds of event thousands of times."""

    def __init__(self, hints: Mapping[str, Sequence[HintEntry]]) -> None:
        self._hints = hints
        self._known: dict[tuple[str, int], bool] = {}

    def __call__(self, event: ClusterEvent) -> bool:
        key = (event.resource, int(event.action))
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = is_event_of_interest(self._hints, event)
        return known


def worth_requeuing(rejectors: set[str], entries: Sequence[HintEntry] | None, pod: Obj,
                    event: ClusterEvent, old: Obj | None, new: Obj | None) -> bool:
    """upstream isPodWorthRequeuing (without Pending plugins: Queue means after backoff)."""
    if not rejectors or is_wildcard(event) or entries is None:
        return True
    for entry in entries:
        if entry.plugin not in rejectors or not matches(entry.event, event):
            continue
        if entry.fn is None:
            return True
        try:
            hint = entry.fn(pod, old, new)
        except Exception as err:  # noqa: BLE001 — upstream: an erroring hint counts as Queue
            log.warning("queueing hint failed; requeueing the pod", plugin=entry.plugin,
                        event=event.label, error=str(err))
            hint = QueueingHint.QUEUE
        if hint is QueueingHint.QUEUE:
            return True
    return False
