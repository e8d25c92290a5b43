"""The webhook configurations, kept in memory from a watch on their keys.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/configuration (mutating_webhook_manager.go,
validating_webhook_manager.go: an informer-fed list of webhook accessors, sorted by
configuration name, rebuilt when a configuration changes) and webhook/accessors.go (each
webhook's parsed selectors, client config and compiled matchConditions, made once per
configuration version rather than per request).

Admission reads `hooks` (a tuple swapped whole on every change), so a request never waits
for the store and a cluster without configurations pays one attribute read per write.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import structlog

from .... import cel
from ....api.labels import LabelSelector
from ....api.webhookconfig import MATCH_CONDITION_VARIABLES
from ....registry import codec
from ....storage import StorageError, Store
from ....storage.kv import EventType
from ...webhook_client import ClientConfig
from .rules import selector

log = structlog.get_logger(component="admission-webhook")

Obj = dict[str, Any]
_RELIST_DELAY = 0.2  # seconds before a relist after a watch error


@dataclass(frozen=True)
class Condition:
    name: str
    expression: str
    program: cel.Program | None
    error: str = ""  # why it did not compile (stored before validation compiled them)


@dataclass(frozen=True)
class Hook:
    """One webhook of one configuration, parsed once (upstream WebhookAccessor)."""
    configuration: str
    index: int
    spec: Obj
    client: ClientConfig
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    conditions: tuple[Condition, ...]

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def uid(self) -> tuple[str, int]:
        """Upstream's accessor UID: configuration name and position."""
        return self.configuration, self.index


def parse_configuration(config: Obj) -> list[Hook]:
    """The hooks of one stored configuration (validated on write; a bad selector found here
    makes the webhook select nothing rather than break admission)."""
    name = config["metadata"]["name"]
    hooks = []
    for i, spec in enumerate(config.get("webhooks") or ()):
        try:
            ns_sel = selector(spec.get("namespaceSelector"))
            obj_sel = selector(spec.get("objectSelector"))
        except Exception as exc:  # noqa: BLE001 - a stored selector we cannot parse
            log.warning("webhook selector ignored", webhook=spec.get("name"), error=str(exc))
            continue
        hooks.append(Hook(name, i, spec, ClientConfig.from_api(spec.get("clientConfig") or {}),
                          ns_sel, obj_sel, tuple(_conditions(spec))))
    return hooks


def _conditions(spec: Obj) -> list[Condition]:
    out = []
    for cond in spec.get("matchConditions") or ():
        name, expression = str(cond.get("name", "")), str(cond.get("expression", ""))
        try:
            out.append(Condition(name, expression,
                                 cel.compile(expression, MATCH_CONDITION_VARIABLES)))
        except cel.CompileError as exc:
            out.append(Condition(name, expression, None, str(exc)))
    return out


class ConfigurationSource:
    """All webhooks of one configuration kind, sorted by configuration name then position."""

    def __init__(self, store: Store, root: str) -> None:
        self.store, self.root = store, root
        self.hooks: tuple[Hook, ...] = ()
        self._configs: dict[str, list[Hook]] = {}
        self._task: asyncio.Task | None = None
        self.revision = 0  # of the last event applied (tests wait on it)

    async def start(self) -> None:
        watch = await self._list_and_watch()
        self._task = asyncio.create_task(self._run(watch), name=f"webhooks:{self.root}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _list_and_watch(self) -> Any:
        """List every configuration, then watch from the list's revision (the informer's
        ListAndWatch); the cache is replaced whole."""
        result = await self.store.range(self.root)
        self._configs = {}
        for kv in result.kvs:
            self._put(codec.decode(kv))
        self.revision = max(self.revision, result.revision)
        self._rebuild()
        return await self.store.watch(self.root, start_revision=result.revision + 1)

    async def _run(self, watch: Any) -> None:
        """Apply events; a watch that ends with an error (compaction, the store going away
        and coming back) is replaced by a fresh list and watch, as an informer relists."""
        while True:
            try:
                await self._follow(watch)
                return  # cancelled by its owner
            except StorageError as exc:
                log.warning("webhook configuration watch ended, relisting", root=self.root,
                            error=str(exc))
            finally:
                await watch.cancel()
            while True:
                await asyncio.sleep(_RELIST_DELAY)
                try:
                    watch = await self._list_and_watch()
                    break
                except StorageError as exc:
                    log.warning("webhook configuration relist failed", root=self.root,
                                error=str(exc))

    async def _follow(self, watch: Any) -> None:
        while True:
            batch = await watch.next_batch()
            if not batch:
                return
            for event in batch:
                if event.type is EventType.DELETE:
                    self._configs.pop(codec.decode(event.prev_kv)["metadata"]["name"], None)
                else:
                    self._put(codec.decode(event.kv))
                self.revision = max(self.revision, event.kv.mod_revision)
            self._rebuild()

    def _put(self, config: Obj) -> None:
        self._configs[config["metadata"]["name"]] = parse_configuration(config)

    def _rebuild(self) -> None:
        self.hooks = tuple(h for name in sorted(self._configs) for h in self._configs[name])
