"""Event handlers of a shared informer, and who gets which notification when.

Kubernetes piece: client-go tools/cache/shared_informer.go's sharedProcessor and
processorListener, and controller.go's ResourceEventHandler / ResourceEventHandlerFuncs.
Why it is its own module: the rules of delivery are pure and worth testing alone —
- every listener gets every add, delete and real update;
- an update whose resourceVersion did not change (a Sync delta, or a re-list's Replaced for
  an unchanged object) goes only to the listeners that were due for a resync at the last
  resync check (upstream `distribute(obj, isSync)`);
- each listener has its own resync period, never below 1 s and never below the informer's
  resync check period (upstream determineResyncPeriod); a period of 0 means never.

Upstream gives each listener a goroutine and an unbounded buffer so a slow handler cannot
block the others. Here handlers are plain functions run on the one event loop, so the
processor calls them in turn, directly: a buffer would add an allocation and a task wake
per event and buy nothing (a slow handler holds the loop either way). A handler that raises
is logged and does not stop delivery to the others.

Two handler shapes:
- a `ResourceEventHandler` object (`on_add(obj, is_in_initial_list)`, `on_update(old, new)`,
  `on_delete(obj)`), as upstream: `on_delete` may get a `DeletedFinalStateUnknown`;
- three functions (`on_add(obj)`, `on_update(old, new)`, `on_delete(obj)`), the shape every
  component here registers: `on_delete` gets the tombstone's last known object instead, so
  code written before tombstones existed keeps working.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import structlog

from .delta_fifo import DeletedFinalStateUnknown

log = structlog.get_logger(component="client")

Obj = dict[str, Any]
OnAdd = Callable[[Obj], None]
OnUpdate = Callable[[Obj, Obj], None]
OnDelete = Callable[[Obj], None]

_EMPTY: dict[str, Any] = {}

#: upstream minimumResyncPeriod
MINIMUM_RESYNC_PERIOD = 1.0


@runtime_checkable
class ResourceEventHandler(Protocol):
    """Upstream cache.ResourceEventHandler."""

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None: ...
    def on_update(self, old: Obj, new: Obj) -> None: ...
    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None: ...


def determine_resync_period(desired: float, check: float) -> float:
    """A listener's effective period (upstream determineResyncPeriod): 0 stays 0; an informer
    that does not resync (check 0) cannot resync a listener; never faster than the check."""
    if desired == 0:
        return 0.0
    if check == 0:
        log.warning("resync period is invalid: this shared informer doesn't support resyncing",
                    resync_period=desired)
        return 0.0
    if desired < check:
        log.warning("resync period is smaller than the resync check period; using the check "
                    "period", resync_period=desired, resync_check_period=check)
        return check
    return desired


class Listener:
    """One registered handler and its resync schedule (upstream processorListener). Also
    the registration `add_event_handler` returns."""

    __slots__ = (
        "add",
        "add_wants_initial",
        "delete",
        "delete_unwraps",
        "next_resync",
        "requested_resync_period",
        "resync_period",
        "syncing",
        "update",
    )

    def __init__(self, add: Callable[..., None] | None, update: OnUpdate | None,
                 delete: Callable[[Any], None] | None, *, add_wants_initial: bool,
                 delete_unwraps: bool, requested_resync_period: float, resync_period: float,
                 now: float) -> None:
        self.add, self.update, self.delete = add, update, delete
        self.add_wants_initial = add_wants_initial
        self.delete_unwraps = delete_unwraps
        self.requested_resync_period = requested_resync_period
        self.resync_period = resync_period
        self.next_resync = now + resync_period
        #: due at the last resync check: gets the unchanged-resourceVersion updates
        self.syncing = False

    @classmethod
    def for_handler(cls, handler: ResourceEventHandler, **kwargs: Any) -> Listener:
        return cls(handler.on_add, handler.on_update, handler.on_delete,
                   add_wants_initial=True, delete_unwraps=False, **kwargs)

    @classmethod
    def for_funcs(cls, on_add: OnAdd | None, on_update: OnUpdate | None,
                  on_delete: OnDelete | None, **kwargs: Any) -> Listener:
        return cls(on_add, on_update, on_delete, add_wants_initial=False, delete_unwraps=True,
                   **kwargs)

    def should_resync(self, now: float) -> bool:
        return self.resync_period != 0 and now >= self.next_resync

    def determine_next_resync(self, now: float) -> None:
        self.next_resync = now + self.resync_period


class SharedProcessor:
    """The listeners of one informer and the delivery of its notifications."""

    def __init__(self, name: str = "", clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.clock = clock
        self.listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)

    # -- delivery (the hot path: one call per listener, nothing allocated) -------------------
    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        for listener in self.listeners:
            add = listener.add
            if add is not None:
                try:
                    if listener.add_wants_initial:
                        add(obj, is_in_initial_list)
                    else:
                        add(obj)
                except Exception:  # a broken handler must not stop delivery to the others
                    self._failed("add")

    def on_update(self, old: Obj, new: Obj) -> None:
        """An update with an unchanged resourceVersion is a resync: syncing listeners only."""
        old_md, new_md = old.get("metadata") or _EMPTY, new.get("metadata") or _EMPTY
        is_sync = old_md.get("resourceVersion") == new_md.get("resourceVersion")
        for listener in self.listeners:
            update = listener.update
            if update is not None and (not is_sync or listener.syncing):
                try:
                    update(old, new)
                except Exception:
                    self._failed("update")

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        tombstone = obj if isinstance(obj, DeletedFinalStateUnknown) else None
        for listener in self.listeners:
            delete = listener.delete
            if delete is None:
                continue
            try:
                if tombstone is not None and listener.delete_unwraps:
                    if tombstone.obj is not None:
                        delete(tombstone.obj)
                else:
                    delete(obj)
            except Exception:
                self._failed("delete")

    def _failed(self, what: str) -> None:
        log.exception("informer handler failed", resource=self.name, notification=what)

    # -- resync -----------------------------------------------------------------------------
    def should_resync(self) -> bool:
        """Mark the listeners due now as syncing and schedule their next resync; True if any
        is due (the Reflector's ShouldResync hook: only then is the DeltaFIFO resynced)."""
        now = self.clock()
        needed = False
        for listener in self.listeners:
            due = listener.should_resync(now)
            listener.syncing = due
            if due:
                needed = True
                listener.determine_next_resync(now)
        return needed

    def resync_check_period_changed(self, check: float) -> None:
        for listener in self.listeners:
            listener.resync_period = determine_resync_period(listener.requested_resync_period,
                                                             check)
