"""The admission interface and the ordered chain (v1.0 pkg/admission/chain.go)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...registry.strategy import Strategy


async def _no_old() -> dict[str, Any] | None:
    return None


@dataclass(frozen=True)
class Attributes:
    """What is being written (upstream admission.Attributes)."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    strategy: Strategy
    namespace: str
    name: str
    subresource: str
    obj: dict[str, Any] | None
    #: ?dryRun=All: plugins check as usual but must leave no side effect (a quota's usage)
    dry_run: bool = False
    #: the stored object an UPDATE or DELETE replaces, read only by a plugin that needs it
    #: (upstream passes it always; reading it costs a store get, so here it is on demand)
    old: Callable[[], Awaitable[dict[str, Any] | None]] = _no_old
    #: the authenticated user (authn.UserInfo), None on the insecure port
    user: Any = None
    #: CreateOptions / UpdateOptions / DeleteOptions as sent
    options: dict[str, Any] | None = None
    #: `Warning` header texts plugins add (admission webhooks' `warnings`)
    warnings: list[str] = field(default_factory=list)


class Plugin(Protocol):
    name: str

    async def admit(self, attrs: Attributes) -> None: ...


@dataclass(frozen=True)
class PluginContext:
    """What a plugin may need from the running server, handed over at start (upstream's
    plugin initializers: the webhook client manager, the equivalent-resource mapper)."""

    webhook_client: Any = None
    #: (group, resource) -> the served Strategies of every version
    versions: Callable[[str, str], list[Strategy]] = lambda group, resource: []


class AdmissionChain:
    def __init__(self, plugins: list[Plugin]) -> None:
        self.plugins = plugins

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.admit(attrs)

    async def start(self, context: PluginContext) -> None:
        """Start the plugins that keep state fed by watches (webhook configurations)."""
        for plugin in self.plugins:
            start = getattr(plugin, "start", None)
            if start is not None:
                await start(context)

    async def stop(self) -> None:
        for plugin in self.plugins:
            stop = getattr(plugin, "stop", None)
            if stop is not None:
                await stop()
