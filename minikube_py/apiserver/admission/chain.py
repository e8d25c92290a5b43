"""The admission interface and the ordered chain (v1.0 pkg/admission/chain.go).

Plugins that keep caches of their own (the policy plugin's informers) may also have
`start()`/`stop()`; the chain starts them with the API server, before it serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ...registry.strategy import Strategy
from ..authn import UserInfo


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
    #: the authenticated caller (None on the insecure port: upstream's unauthenticated user)
    user: UserInfo | None = None
    #: the object being replaced, when the handler has it at hand (a patch); plugins that
    #: need it for a PUT or DELETE read it themselves
    old_obj: dict[str, Any] | None = None
    #: where a plugin adds `Warning` header texts for the response (upstream warning.AddWarning)
    warnings: list[str] | None = None


class Plugin(Protocol):
    name: str

    async def admit(self, attrs: Attributes) -> None: ...


class AdmissionChain:
    def __init__(self, plugins: list[Plugin]) -> None:
        self.plugins = plugins

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.admit(attrs)

    async def start(self) -> None:
        for plugin in self.plugins:
            start = getattr(plugin, "start", None)
            if start is not None:
                await start()

    async def stop(self) -> None:
        for plugin in self.plugins:
            stop = getattr(plugin, "stop", None)
            if stop is not None:
                await stop()
