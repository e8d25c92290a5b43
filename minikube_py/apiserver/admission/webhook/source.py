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

from dataclasses import dataclass
from typing import Any

import structlog

from .... import cel
from ....api.labels import LabelSelector
from ....api.webhookconfig import MATCH_CONDITION_VARIABLES
from ....storage import Store
from ...webhook_client import ClientConfig
from ..informer import StoreInformer
from .rules import selector

log = structlog.get_logger(component="admission-webhook")

Obj = dict[str, Any]


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
    """All webhooks of one configuration kind, sorted by configuration name then position,
    from an informer on the kind's keys (list, then watch; a failed watch relists). A
    configuration is parsed (selectors, CEL matchConditions compiled) once per
    resourceVersion."""

    def __init__(self, store: Store, root: str) -> None:
        self.informer = StoreInformer(store, root, name=f"webhooks:{root}")
        self.informer.listeners.append(self._rebuild)
        self.hooks: tuple[Hook, ...] = ()
        #: configuration name -> (its resourceVersion, its parsed hooks)
        self._parsed: dict[str, tuple[str, list[Hook]]] = {}

    @property
    def revision(self) -> int:
        """The store revision the webhooks reflect (tests wait on it)."""
        return self.informer.revision

    async def start(self) -> None:
        await self.informer.start()

    async def stop(self) -> None:
        await self.informer.stop()

    def _rebuild(self) -> None:
        parsed: dict[str, tuple[str, list[Hook]]] = {}
        for config in self.informer.items.values():
            name = config["metadata"]["name"]
            version = config["metadata"].get("resourceVersion", "")
            known = self._parsed.get(name)
            parsed[name] = known if known is not None and known[0] == version else (
                version, parse_configuration(config))
        self._parsed = parsed
        self.hooks = tuple(h for name in sorted(parsed) for h in parsed[name][1])
