"""The admission interface and the ordered chain (v1.0 pkg/admission/chain.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ...registry.strategy import Strategy


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


class Plugin(Protocol):
    name: str

    async def admit(self, attrs: Attributes) -> None: ...


class AdmissionChain:
    def __init__(self, plugins: list[Plugin]) -> None:
        self.plugins = plugins

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.admit(attrs)
