"""The watch fan-out: one store watch per resource, decoded once, delivered to many watchers.

Kubernetes piece: pkg/storage/cacher (Cacher, watchCache, cacheWatcher; v1.2+) — in v1.0 every
HTTP watch opened its own etcd watch, which is what the cacher was invented to stop. Here:
- one store watch per resource feeds a ring of recent events (`window`), so a watcher that
  resumes from a resourceVersion inside the window is caught up from memory. The ring is
  bounded by count and by age, like upstream's watchCache (1.31: capacity between
  DefaultLowerBoundCapacity 100 and the upper bound, history kept for eventFreshDuration,
  75 s or --request-timeout + 15 s): events older than `fresh` seconds are dropped down to
  `min_events`, also while no writes arrive (a timer), so a burst's deleted objects — each
  event holds its value, previous value and encodings, ~8 KB a pod — do not stay in memory
  until 10,000 newer events push them out;
- each event is decoded once and encoded once per wire format (JSON line, Table row), and the
  same bytes are shared by every watcher that receives it;
- watchers are indexed by the exact value they select on (`metadata.name`, and `spec.nodeName`
  for pods), so an event reaches only watchers that can match it — 5000 kubelets watching their
  own node cost nothing on an event for another node;
- each watcher has a bounded buffer; one that falls `capacity` events behind is closed (its
  client re-lists), never allowed to grow memory or slow the others;
- a resourceVersion older than the window is served by a store watch of its own (the store
  answers 410 Expired when that history has been compacted);
- a resource that is a view of another's stored objects (events.k8s.io/v1 Events over core
  Events, Strategy.stored_as) shares the stored resource's fan-out: its watchers select in the
  storage's field labels and encode through `viewed(encoder, view)`, so each event is
  converted and encoded once per (view, wire format), shared by all of them;
- a version of a multi-version CRD (Strategy.conversion) shares the fan-out of all its
  versions (one key space): when conversion changes only apiVersion its watchers encode through
  `in_version(encoder, api_version)` (shared per version and wire format, like a view); with a
  conversion webhook (or a prune to differing schemas) the version's ConversionFeed (watch_conversion.py) converts each event
  once for all its watchers, one ConversionReview per batch, and each watcher writes its
  events in order as their conversions complete; a failed conversion ends the stream with an
  ERROR event carrying the failure.

Event semantics are upstream's cacheWatcher.convertToWatchEvent: an object that starts matching
a watcher's selector is ADDED for it, one that stops matching is DELETED (previous content, new
resourceVersion).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import time
from typing import Any, Callable

import orjson
import structlog

from ..api import errors
from ..api.fields import FieldSelector
from ..api.labels import LabelSelector
from ..apiextensions.conversion import Converter, set_api_version
from ..storage import CompactedError, Event, EventType, StorageError, Store
from ..trace import STORE, TRACE, WATCH
from . import codec
from .strategy import Obj, StoredAs, Strategy
from .watch_conversion import ConversionFeed, feed_for

log = structlog.get_logger(component="apiserver")

DEFAULT_WINDOW = 10_000
DEFAULT_CAPACITY = 10_000
#: upstream's DefaultEventFreshDuration (apiserver/pkg/storage/cacher): bookmark frequency
#: (1 min) + 15 s; kube-apiserver raises it to --request-timeout + 15 s when that is longer
DEFAULT_FRESH_SECONDS = 75.0
#: upstream's DefaultLowerBoundCapacity: the ring never shrinks below this many events
DEFAULT_MIN_EVENTS = 100


def events_history_window(request_timeout: float) -> float:
    """How long the watch cache keeps events: max(75 s, --request-timeout + 15 s), as
    kube-apiserver's options completion sets StorageConfig.EventsHistoryWindow."""
    return max(DEFAULT_FRESH_SECONDS, request_timeout + 15.0)

#: encodes (event type, object, event) into the bytes one watcher's client reads
Encoder = Callable[[str, Obj], bytes]


class CachedEvent:
    """A store event decoded once; encodings are memoised per (encoder, type, which)."""

    __slots__ = ("revision", "type", "namespace", "name", "value", "prev_value", "_obj",
                 "_prev", "_attrs", "_prev_attrs", "_encoded", "strategy", "converted",
                 "recorded")

    def __init__(self, event: Event, strategy: Strategy, root: str,
                 recorded: float = 0.0) -> None:
        kv, prev = event.kv, event.prev_kv
        self.revision = kv.mod_revision
        #: when the fan-out received it (the cacher's clock): what the ring's age bound reads
        self.recorded = recorded
        self.strategy = strategy
        if event.type == EventType.DELETE:
            self.type = "DELETED"
            self.value = prev.value if prev is not None else b""
        else:
            self.type = "ADDED" if prev is None else "MODIFIED"
            self.value = kv.value
        self.prev_value = prev.value if prev is not None else None
        self._obj: Obj | None = None
        self._prev: Obj | None = None
        self._attrs: tuple[dict, dict] | None = None
        self._prev_attrs: tuple[dict, dict] | None = None
        self._encoded: dict[Any, bytes] = {}
        #: conversions of this event by webhook, shared by the watchers of each version
        self.converted: dict[Any, asyncio.Future] | None = None
        # namespace and name come from the key, so an event nobody filters is never decoded
        rest = kv.key[len(root):]
        if strategy.namespaced:
            self.namespace, _, self.name = rest.partition("/")
        else:
            self.namespace, self.name = "", rest

    @property
    def obj(self) -> Obj:
        """The object as of this event (for DELETED: its last state), at this revision."""
        if self._obj is None:
            self._obj = codec.decode_at(self.value, self.revision)
        return self._obj

    @property
    def prev(self) -> Obj | None:
        if self._prev is None and self.prev_value is not None:
            self._prev = codec.decode_at(self.prev_value, self.revision)
        return self._prev

    def attrs(self) -> tuple[dict, dict]:
        """(labels, selectable fields) of the current object."""
        if self._attrs is None:
            obj = self.obj
            self._attrs = ((obj.get("metadata") or {}).get("labels") or {},
                           self.strategy.field_attrs(obj))
        return self._attrs

    def prev_attrs(self) -> tuple[dict, dict] | None:
        if self.prev_value is None:
            return None
        if self._prev_attrs is None:
            prev = self.prev
            assert prev is not None
            self._prev_attrs = ((prev.get("metadata") or {}).get("labels") or {},
                                self.strategy.field_attrs(prev))
        return self._prev_attrs

    def release(self) -> None:
        """Drop the decoded objects once the event is dispatched: the ring keeps 10,000 events
        per resource, and their dicts (current and previous, ~5x the bytes) are what made it
        weigh ~100 MB at 5000 pods. Selector attributes and encodings stay; a watcher that
        resumes from the ring and needs the objects again decodes them again."""
        self._obj = self._prev = None
        self.converted = None  # the watchers that asked hold their futures

    def encoded(self, encoder: Encoder, kind: str, which: str) -> bytes:
        key = (encoder, kind, which)
        data = self._encoded.get(key)
        if data is None:
            version = getattr(encoder, "json_version", None)
            if encoder is json_line or version is not None:  # splice the stored bytes, no decode
                value = (self.value if which == "cur" else self.prev_value) or b"{}"
                if version is not None and not codec.in_api_version(value, version):
                    value = codec.with_api_version(value, version)  # a CRD's other version
                data = b'{"type":"%s","object":%s}\n' % (
                    kind.encode(), codec.with_revision(value, self.revision))
            else:
                obj = self.obj if which == "cur" else self.prev
                data = encoder(kind, obj)
            self._encoded[key] = data
        return data


def json_line(kind: str, obj: Obj) -> bytes:
    """The default watch wire format: one `{"type":..,"object":..}` JSON document per line."""
    return b'{"type":"%s","object":%s}\n' % (kind.encode(), orjson.dumps(obj))


@functools.cache
def viewed(encoder: Encoder, view: StoredAs) -> Encoder:
    """`encoder` over the stored objects seen through `view` (events.k8s.io/v1 over core
    events). One per (encoder, view), so the per-encoder memo of each event converts and
    encodes it once for every watcher of that representation and wire format."""

    def encode(kind: str, obj: Obj) -> bytes:
        return encoder(kind, view.from_storage(obj))

    return encode


@functools.cache
def in_version(encoder: Encoder, api_version: str) -> Encoder:
    """`encoder` over a CRD's stored objects served in `api_version` (conversion None): one per
    (encoder, version), so every watcher of that version and wire format shares the bytes."""

    def encode(kind: str, obj: Obj) -> bytes:
        return encoder(kind, set_api_version(obj, api_version))

    if encoder is json_line:  # CachedEvent.encoded swaps apiVersion in the stored bytes
        encode.json_version = api_version  # type: ignore[attr-defined]
    return encode


class Watcher:
    """One client's watch: its filters, its buffer, and a wake-up for its writer task."""

    def __init__(
        self,
        *,
        namespace: str | None,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
        encoder: Encoder = json_line,
        capacity: int = DEFAULT_CAPACITY,
        view: StoredAs | None = None,
        conversion: Converter | None = None,
        api_version: str = "",
    ) -> None:
        self.namespace = namespace or None
        self.labels = labels if labels is not None and not labels.empty() else None
        if view is not None:  # the fan-out selects on the stored objects
            fields = view.storage_selector(fields)
        self.fields = fields if fields is not None and not fields.empty() else None
        #: the stream's wire format (ERROR and BOOKMARK frames are written in it too)
        self.encoder = encoder
        #: what encodes the stored objects of the fan-out's events for this client: the wire
        #: format, after the conversion of a view
        self.event_encoder = encoder if view is None else viewed(encoder, view)
        if conversion is not None and conversion.api_version_only:
            self.event_encoder = in_version(encoder, api_version)
        #: a conversion webhook (or pruning to another version's schema): events wait here
        #: (type, conversion, revision), in order
        self.feed: ConversionFeed | None = feed_for(conversion, api_version) if (
            conversion is not None and not conversion.api_version_only) else None
        self._pending: collections.deque[tuple[str, asyncio.Future[Obj], int]] = \
            collections.deque()
        self._converting: asyncio.Task | None = None
        self.capacity = capacity
        self.min_revision = 0
        self.last_revision = 0
        self.buffer: list[bytes] = []
        self.wake = asyncio.Event()
        self.closed = False
        self.error: dict[str, Any] | None = None
        self.index_keys: list[tuple[str, str]] = []
        self._direct: asyncio.Task | None = None
        #: no selectors and the stored objects in JSON: gets the shared bytes without checks
        self.plain = (self.labels is None and self.fields is None and encoder is json_line
                      and view is None and conversion is None)
        self.transport: Any = None
        self.max_unsent_bytes = 0
        #: when the writer must wake even without events (deadline, bookmark, liveness);
        #: read by the API server's watch clock
        self.due = float("inf")
        #: who reads this stream (its User-Agent), as the trace names the delivery's receiver
        self.who = ""

    @property
    def behind(self) -> bool:
        """Whether events up to the fan-out's position may not be written yet: served by a
        store watch of its own, or waiting for their conversion (a bookmark must not claim
        a revision past them)."""
        return self._direct is not None or bool(self._pending)

    def matches(self, labels: dict, fields: dict) -> bool:
        if self.labels is not None and not self.labels.matches(labels):
            return False
        if self.fields is not None and not self.fields.matches(fields):
            return False
        return True

    def offer(self, event: CachedEvent) -> None:
        """Deliver `event` if it concerns this watcher (upstream convertToWatchEvent)."""
        if self.closed or event.revision <= self.min_revision:
            return
        if self.namespace is not None and event.namespace != self.namespace:
            return
        if self.labels is None and self.fields is None:
            self._emit(event, event.type, "cur")
            return
        now = event.type != "DELETED" and self.matches(*event.attrs())
        prev_attrs = event.prev_attrs()
        before = prev_attrs is not None and self.matches(*prev_attrs)
        if event.type == "DELETED":
            if before:
                self._emit(event, "DELETED", "prev")
        elif now and before:
            self._emit(event, "MODIFIED", "cur")
        elif now:
            self._emit(event, "ADDED", "cur")
        elif before:
            self._emit(event, "DELETED", "prev")

    def _emit(self, event: CachedEvent, kind: str, which: str) -> None:
        if TRACE.active:
            TRACE.emit(WATCH, self.who, event.strategy.resource, event.namespace, event.name,
                       "", (event.revision, kind))
        if self.feed is None:
            self.push(event.encoded(self.event_encoder, kind, which), event.revision)
            return
        if len(self._pending) >= self.capacity:
            self.close()  # too slow: the client re-lists rather than us buffering forever
            return
        obj = event.obj if which == "cur" else event.prev
        assert obj is not None
        if event.converted is None:
            event.converted = {}
        size = len(event.value if which == "cur" else event.prev_value or b"")
        self._pending.append((kind, self.feed.request(event.converted, which, obj, size),
                              event.revision))
        if self._converting is None:
            self._converting = asyncio.get_running_loop().create_task(
                self._push_converted(), name="watch-converted")

    async def _push_converted(self) -> None:
        """Write converted events in order as their conversions complete."""
        try:
            while self._pending and not self.closed:
                kind, future, revision = self._pending[0]
                obj = await asyncio.shield(future)  # shared: never cancelled for the others
                self._pending.popleft()
                self.push(self.encoder(kind, obj), revision)
        except errors.StatusError as exc:
            self._pending.clear()
            self.close(exc.status())
        finally:
            self._converting = None

    def push(self, data: bytes, revision: int) -> None:
        """Deliver encoded events: straight onto the connection once the stream is live (no
        task switch, no copy per watcher), else into the buffer the writer task drains."""
        if self.closed:
            return
        transport = self.transport
        if transport is not None:
            if transport.is_closing():
                self.close()
            elif transport.get_write_buffer_size() > self.max_unsent_bytes:
                self.close()  # too slow: the client re-lists rather than us buffering forever
            else:
                transport.write(b"%x\r\n%s\r\n" % (len(data), data))  # one HTTP chunk
                self.last_revision = revision
            return
        if len(self.buffer) >= self.capacity:
            self.close()  # too slow: the client re-lists rather than us buffering forever
            return
        self.buffer.append(data)
        self.last_revision = revision
        self.wake.set()

    def go_live(self, transport: Any, max_unsent_bytes: int) -> None:
        """From now on write events directly to `transport` (a chunked HTTP response whose
        headers and earlier chunks are already written)."""
        self.transport = transport
        self.max_unsent_bytes = max_unsent_bytes

    def take(self) -> list[bytes]:
        data, self.buffer = self.buffer, []
        self.wake.clear()
        return data

    def close(self, error: dict[str, Any] | None = None) -> None:
        if not self.closed:
            self.closed = True
            self.error = error
            self.wake.set()
        task = self._converting
        if task is not None and task is not asyncio.current_task():
            task.cancel()


class Cacher:
    """The fan-out for one resource."""

    def __init__(self, strategy: Strategy, store: Store, prefix: str, *,
                 window: int = DEFAULT_WINDOW, fresh: float = DEFAULT_FRESH_SECONDS,
                 min_events: int = DEFAULT_MIN_EVENTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.strategy = strategy
        self.store = store
        self.prefix = prefix
        self.ring: collections.deque[CachedEvent] = collections.deque(maxlen=window)
        #: the ring's age bound: events older than this (seconds) go, down to min_events
        self.fresh = fresh
        self.min_events = min_events
        self.clock = clock
        self._expiry: asyncio.TimerHandle | None = None
        self.position = 0  # every event up to here has been dispatched
        self.oldest = 0  # the ring holds every event after this revision
        self.unindexed: set[Watcher] = set()
        #: watchers without selectors, by namespace (None = all namespaces)
        self.plain: dict[str | None, set[Watcher]] = {}
        self.index: dict[tuple[str, str], set[Watcher]] = {}
        self.index_fields = ("metadata.name",) + (
            (strategy.watch_index_field,) if strategy.watch_index_field else ())
        self._task: asyncio.Task | None = None
        self.ready = asyncio.Event()

    @property
    def watcher_count(self) -> int:
        return (len(self.unindexed) + sum(len(s) for s in self.index.values())
                + sum(len(s) for s in self.plain.values()))

    async def start(self) -> None:
        revision = await self.store.current_revision()
        watch = await self.store.watch(self.prefix, start_revision=revision + 1)
        self.position = self.oldest = revision
        self._task = asyncio.create_task(self._run(watch), name=f"cacher:{self.strategy.resource}")
        self._arm_expiry()
        self.ready.set()

    def _arm_expiry(self) -> None:
        """Check the ring's age every quarter of `fresh`, so it shrinks while idle too."""
        self._expiry = asyncio.get_running_loop().call_later(self.fresh / 4, self._expire_tick)

    def _expire_tick(self) -> None:
        self.expire()
        self._arm_expiry()

    def expire(self) -> int:
        """Drop the ring's events older than `fresh` seconds, keeping at least `min_events`;
        a watcher resuming from before the ring is then served by the store (until its
        compaction), as one older than the count bound already is. Returns how many went."""
        ring, dropped = self.ring, 0
        if len(ring) <= self.min_events:
            return 0
        cutoff = self.clock() - self.fresh
        while len(ring) > self.min_events and ring[0].recorded < cutoff:
            self.oldest = ring.popleft().revision
            dropped += 1
        return dropped

    async def stop(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        self.close_watchers()

    def close_watchers(self) -> None:
        for watcher in list(self._all_watchers()):
            watcher.close()

    def _all_watchers(self):
        yield from self.unindexed
        for group in self.plain.values():
            yield from group
        for group in self.index.values():
            yield from group

    async def _run(self, watch) -> None:
        while True:
            try:
                batch = await watch.next_batch()
            except asyncio.CancelledError:
                await watch.cancel()
                raise
            except StorageError as exc:
                log.warning("cacher watch failed, restarting", resource=self.strategy.resource,
                            error=str(exc))
                watch = await self._restart_watch()
                continue
            if not batch:
                watch = await self._restart_watch()
                continue
            now = self.clock()
            events = [CachedEvent(e, self.strategy, self.prefix, now) for e in batch]
            if TRACE.active:
                trace_writes(batch, events)
            self.dispatch_batch(events)

    async def _restart_watch(self):
        """Resume after the last dispatched revision; if that history is gone, every watcher
        is closed with 410 and the window restarts (clients re-list, like upstream)."""
        while True:
            try:
                return await self.store.watch(self.prefix, start_revision=self.position + 1)
            except CompactedError:
                revision = await self.store.current_revision()
                self.ring.clear()
                self.position = self.oldest = revision
                for watcher in list(self._all_watchers()):
                    watcher.close(expired_status(self.position))
            except StorageError:
                await asyncio.sleep(0.5)

    def dispatch_batch(self, events: list[CachedEvent]) -> None:
        """Deliver one store batch. Watchers without selectors (kubectl get -w, informers)
        get the whole batch as one shared chunk — joined once per namespace group, one write
        per watcher — since that write, not the matching, is what fan-out costs."""
        if self.plain:
            self._dispatch_plain(events)
        for event in events:
            self.dispatch(event, plain=False)

    def _dispatch_plain(self, events: list[CachedEvent]) -> None:
        tracing = TRACE.active
        for key, group in tuple(self.plain.items()):
            selected = events if key is None else [e for e in events if e.namespace == key]
            if not selected:
                continue
            shared = b"".join(e.encoded(json_line, e.type, "cur") for e in selected)
            last = selected[-1].revision
            for watcher in tuple(group):
                if watcher.closed:
                    continue
                if selected[0].revision > watcher.min_revision:
                    watcher.push(shared, last)
                    if tracing:
                        trace_deliveries(watcher, selected)
                else:  # registered mid-batch: only what it has not seen
                    later = [e for e in selected if e.revision > watcher.min_revision]
                    if later:
                        watcher.push(b"".join(e.encoded(json_line, e.type, "cur")
                                              for e in later), last)
                        if tracing:
                            trace_deliveries(watcher, later)

    def dispatch(self, event: CachedEvent, *, plain: bool = True) -> None:
        if len(self.ring) == self.ring.maxlen:
            self.oldest = self.ring[0].revision
        self.ring.append(event)
        self.position = event.revision
        if plain and self.plain:
            self._dispatch_plain([event])
        for watcher in tuple(self.unindexed):
            watcher.offer(event)
        if self.index:
            for watcher in self._indexed_candidates(event):
                watcher.offer(event)
        event.release()

    def _indexed_candidates(self, event: CachedEvent) -> set[Watcher]:
        found: set[Watcher] = set()
        index = self.index
        group = index.get(("metadata.name", event.name))
        if group:
            found.update(group)
        for field in self.index_fields[1:]:
            value = event.attrs()[1].get(field, "")
            group = index.get((field, value))
            if group:
                found.update(group)
            prev = event.prev_attrs()
            if prev is not None:
                old = prev[1].get(field, "")
                if old != value:
                    group = index.get((field, old))
                    if group:
                        found.update(group)
        return found

    def register(self, watcher: Watcher, after_revision: int) -> None:
        """Start delivering events with revision > after_revision (raises nothing: a revision
        older than the window is served by a store watch of its own)."""
        watcher.min_revision = after_revision
        if after_revision < self.oldest:
            watcher._direct = asyncio.create_task(self._direct_feed(watcher, after_revision))
            return
        for event in self.ring:
            if event.revision > after_revision:
                watcher.offer(event)
        self._add(watcher)

    def _add(self, watcher: Watcher) -> None:
        if watcher.plain:
            self.plain.setdefault(watcher.namespace, set()).add(watcher)
            return
        for field in self.index_fields:
            value = watcher.fields.exact_value(field) if watcher.fields is not None else None
            if value is not None:
                key = (field, value)
                watcher.index_keys = [key]
                self.index.setdefault(key, set()).add(watcher)
                return
        self.unindexed.add(watcher)

    def unregister(self, watcher: Watcher) -> None:
        if watcher._direct is not None:
            watcher._direct.cancel()
            watcher._direct = None
        if watcher._converting is not None:  # a conversion webhook call nobody waits for
            watcher._converting.cancel()
        self.unindexed.discard(watcher)
        group = self.plain.get(watcher.namespace)
        if group is not None:
            group.discard(watcher)
            if not group:
                del self.plain[watcher.namespace]
        for key in watcher.index_keys:
            group = self.index.get(key)
            if group is not None:
                group.discard(watcher)
                if not group:
                    del self.index[key]

    async def _direct_feed(self, watcher: Watcher, after_revision: int) -> None:
        """Serve a watcher from the store until it catches up with the ring, then hand it
        over to the shared fan-out."""
        try:
            watch = await self.store.watch(self.prefix, start_revision=after_revision + 1)
        except CompactedError as exc:
            watcher.close(expired_status(exc.compact_revision, after_revision))
            return
        except StorageError as exc:
            watcher.close(internal_status(str(exc)))
            return
        try:
            while not watcher.closed:
                if watcher.min_revision >= self.oldest:
                    # caught up: the ring has everything after what this watcher has seen
                    watcher._direct = None
                    self.register(watcher, watcher.min_revision)
                    return
                batch = await watch.next_batch()
                if not batch:
                    watcher.close()
                    return
                for event in batch:
                    cached = CachedEvent(event, self.strategy, self.prefix)
                    watcher.offer(cached)
                    watcher.min_revision = cached.revision
        except StorageError as exc:
            watcher.close(expired_status(self.oldest) if isinstance(exc, CompactedError)
                          else internal_status(str(exc)))
        finally:
            await watch.cancel()


def expired_status(oldest: int, requested: int | None = None) -> dict[str, Any]:
    message = (f"too old resource version: {requested} ({oldest})" if requested is not None
               else f"too old resource version ({oldest})")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Expired", "code": 410}


def internal_status(message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Internal error occurred: {message}", "reason": "InternalError",
            "code": 500}


# -- the trace (minikube_py.trace): called only while it records ---------------------------
def trace_writes(batch: list[Event], events: list[CachedEvent]) -> None:
    """One STORE record per write of the batch: key, revision and the previous revision."""
    for raw, event in zip(batch, events):
        prev = raw.prev_kv
        TRACE.emit(STORE, "storage", event.strategy.resource, event.namespace, event.name, "",
                   (event.type, raw.kv.key, event.revision,
                    prev.mod_revision if prev is not None else 0))


def trace_deliveries(watcher: Watcher, events: list[CachedEvent]) -> None:
    """One WATCH record per event a plain (selector-less) watcher was handed."""
    for event in events:
        TRACE.emit(WATCH, watcher.who, event.strategy.resource, event.namespace, event.name,
                   "", (event.revision, event.type))
