"""The admission interface and the ordered chain (v1.0 pkg/admission/chain.go).

Plugins that keep caches of their own (the webhook configurations, the policy plugin's
informers) may also have `start(context)`/`stop()`; the chain starts them with the API server,
before it serves, handing over a PluginContext.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ...registry.strategy import Strategy
from ..authn import UserInfo

#: (user, verb, signerName) -> allowed
SignerAuthorizer = Callable[[UserInfo, str, str], bool]


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
    #: the authenticated caller (None on the insecure port: upstream's unauthenticated user)
    user: UserInfo | None = None
    #: the object being replaced, when the handler has it at hand (a patch); plugins that
    #: need it for a PUT or DELETE read it with `read_old`
    old_obj: dict[str, Any] | None = None
    #: where a plugin adds `Warning` header texts for the response (upstream warning.AddWarning)
    warnings: list[str] | None = None
    #: reads the stored object an UPDATE or DELETE replaces (a store get: only on demand)
    read_old: Callable[[], Awaitable[dict[str, Any] | None]] = _no_old
    #: CreateOptions / UpdateOptions / DeleteOptions as sent (None for CONNECT)
    options: dict[str, Any] | None = None


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
    #: may (user, verb, signerName): authz/signers.py bound to the secure port's authorizer
    #: (upstream's WantsAuthorizer, for the CSR plugins); None without a secure port
    signer_authorizer: SignerAuthorizer | None = None


class AdmissionChain:
    def __init__(self, plugins: list[Plugin], informers: Any = None) -> None:
        self.plugins = plugins
        #: the plugins' shared informers (listers.SharedInformers), started before them
        self.informers = informers

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.admit(attrs)

    async def start(self, context: PluginContext) -> None:
        """Sync the shared informers, then start the plugins that keep state fed by watches
        (webhook configurations)."""
        if self.informers is not None:
            await self.informers.start()
        for plugin in self.plugins:
            start = getattr(plugin, "start", None)
            if start is not None:
                await start(context)

    async def stop(self) -> None:
        for plugin in self.plugins:
            stop = getattr(plugin, "stop", None)
            if stop is not None:
                await stop()
        if self.informers is not None:
            await self.informers.stop()
