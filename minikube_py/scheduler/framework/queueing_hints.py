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


def hint_entries(plugins: Iterable[Plugin]) -> list[HintEntry]:
    """A profile's registrations from its (deduplicated) plugins."""
    entries: list[HintEntry] = []
    seen: set[str] = set()
    for plugin in plugins:
        if plugin.name in seen:
            continue
        seen.add(plugin.name)
        if not isinstance(plugin, EnqueueExtensions):
            entries.append(HintEntry(plugin.name, WILDCARD_EVENT))
            continue
        for registered in plugin.events_to_register():
            entries.append(HintEntry(plugin.name, registered.event, registered.hint))
    return entries


def is_event_of_interest(hints: Mapping[str, Sequence[HintEntry]], event: ClusterEvent) -> bool:
    """Does any plugin of any profile care about `event`? (the queue skips walking its
    unschedulable pods when none does)."""
    if is_wildcard(event):
        return True
    return any(matches(entry.event, event) for entries in hints.values() for entry in entries)


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
