"""The framework scheduler's queue and the informer events that feed it.

Kubernetes piece: pkg/scheduler/eventhandlers.go (1.31: addAllEventHandlers,
addPodToSchedulingQueue, updatePodInSchedulingQueue, deletePodFromSchedulingQueue,
addPodToCache/updatePodInCache/deletePodFromCache, addNodeToCache/updateNodeInCache) and
scheduler.New's queue construction (one PriorityQueue for every profile, ordered by the
profiles' QueueSort, with each profile's PreEnqueue plugins and queueing hints).

Every informer event becomes what upstream's handlers make of it: an unscheduled pod of ours
is added to, updated in or deleted from the queue; a bound pod updates the scheduler cache and
is a cluster event (AssignedPodAdd / AssignedPodUpdate / AssignedPodDelete); a node is
NodeAdd, or one event per scheduling-relevant change (a heartbeat is none). The queue then
decides, with the hints, which unschedulable pods the event may help.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .framework import events
from .framework.config.types import SchedulerConfiguration
from .framework.handle import FrameworkHandle
from .framework.queue import PriorityQueue
from .framework.queueing_hints import hint_entries
from .framework.runtime import Framework

if TYPE_CHECKING:
    from .scheduler import Scheduler

Obj = dict[str, Any]

def new_queue(frameworks: Mapping[str, Framework], config: SchedulerConfiguration,
              clock: Callable[[], float] = time.monotonic) -> PriorityQueue:
    """upstream scheduler.New: the queue for all profiles; each handle's nominator is the
    queue's (Filter with nominated pods, preemption)."""
    first = next(iter(frameworks.values()))
    queue = PriorityQueue(
        less=first.queue_sort_less(), clock=clock,
        pre_enqueue={name: fw.run_pre_enqueue_plugins for name, fw in frameworks.items()},
        hints={name: hint_entries(fw.events_to_register()) for name, fw in frameworks.items()},
        initial_backoff=float(config.pod_initial_backoff_seconds),
        max_backoff=float(config.pod_max_backoff_seconds))
    for fw in frameworks.values():
        if isinstance(fw.handle, FrameworkHandle):
            fw.handle.nominator = queue.nominator
    return queue


class QueueEventHandlers:
    """upstream addAllEventHandlers for one scheduler and its PriorityQueue."""

    def __init__(self, sched: Scheduler, queue: PriorityQueue,
                 pod_deleted: Callable[[Obj], None]) -> None:
        self.sched = sched
        self.queue = queue
        self._pod_deleted = pod_deleted

    def wire(self) -> None:
        sched = self.sched
        sched.unassigned.add_event_handler(on_add=self.add_unscheduled,
                                           on_update=self.update_unscheduled,
                                           on_delete=self.delete_unscheduled)
        sched.assigned.add_event_handler(on_add=self.add_assigned, on_update=self.update_assigned,
                                         on_delete=self.delete_assigned)
        sched.nodes.add_event_handler(on_add=self.add_node, on_update=self.update_node,
                                      on_delete=sched.cache.remove_node)

    # -- unscheduled pods (the queue) -------------------------------------------------------
    def add_unscheduled(self, pod: Obj) -> None:
        if self.sched.is_ours(pod):
            self.queue.add(pod)

    def update_unscheduled(self, old: Obj, new: Obj) -> None:
        """upstream updatePodInSchedulingQueue: an assumed pod's echo is ignored."""
        if not self.sched.is_ours(new) or self.sched.cache.is_assumed(new):
            return
        if ((old.get("metadata") or {}).get("resourceVersion")
                == (new.get("metadata") or {}).get("resourceVersion")):
            return  # a resync: nothing changed
        self.queue.update(old, new)

    def delete_unscheduled(self, pod: Obj) -> None:
        self.queue.delete(pod)
        self._pod_deleted(pod)

    # -- assigned pods (the cache, and cluster events) --------------------------------------
    def add_assigned(self, pod: Obj) -> None:
        self.sched._assigned_pod_added(pod)
        self.queue.assigned_pod_added(pod)

    def update_assigned(self, old: Obj, new: Obj) -> None:
        self.sched.cache.update_pod(old, new)
        for event in events.pod_scheduling_properties_change(new, old):
            self.queue.assigned_pod_updated(old, new, event)

    def delete_assigned(self, pod: Obj) -> None:
        self.sched.cache.remove_pod(pod)
        # freed room may fit a waiting pod (upstream deletePodFromCache)
        self.queue.move_all_to_active_or_backoff_queue(events.ASSIGNED_POD_DELETE, pod, None)

    # -- nodes ------------------------------------------------------------------------------
    def add_node(self, node: Obj) -> None:
        self.sched.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(events.NODE_ADD, None, node)

    def update_node(self, old: Obj, new: Obj) -> None:
        self.sched.cache.add_node(new)
        for event in events.node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new)
