"""Admission plugins' view of the API server's resources: the registry of (group, resource).

Kubernetes piece: the informers and dynamic listers upstream hands admission plugins
(k8s.io/apiserver admission initializers); here, a lookup over the server's live resource
table. Its own module so that plugins (the policy plugin) and the plugin registry can both
import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...registry.generic import Registry
from .listers import SharedInformers

#: finds the registry of (group, resource) in any version
Lookup = Callable[[str, str], "Registry | None"]


class RegistryLookup:
    """A Lookup over the server's live {(group, version, resource): Registry} table.

    Live, not a copy: custom resources are served and unserved while the server runs
    (serve_custom), and quota must count `count/widgets.example.com` from the moment the CRD
    is established, as upstream's quota admission finds them through its dynamic lister. A
    hit is remembered and checked to still be served; a miss scans the table (a few dozen
    entries). `by_kind` and `versions` serve the policy plugin (a paramKind names a kind;
    matchPolicy Equivalent needs the other served versions of a resource). `informers` is
    the plugins' shared informer factory (listers.py), started with the admission chain."""

    def __init__(self, registries: Mapping[tuple[str, str, str], Registry]) -> None:
        self._registries = registries
        self.informers = SharedInformers()
        self._remembered: dict[tuple[str, str], tuple[tuple[str, str, str], Registry]] = {}

    def __call__(self, group: str, resource: str) -> Registry | None:
        hit = self._remembered.get((group, resource))
        if hit is not None and self._registries.get(hit[0]) is hit[1]:
            return hit[1]
        self._remembered.pop((group, resource), None)
        for gvr, registry in list(self._registries.items()):
            if gvr[0] == group and gvr[2] == resource:
                self._remembered[group, resource] = (gvr, registry)
                return registry
        return None

    def by_kind(self, group: str, version: str, kind: str) -> Registry | None:
        """The registry serving `kind` in group/version (not a subresource's kind)."""
        for (g, v, _r), registry in list(self._registries.items()):
            if (g, v) == (group, version) and registry.strategy.kind == kind:
                return registry
        return None

    def versions(self, group: str, resource: str) -> tuple[str, ...]:
        return tuple(v for (g, v, r) in list(self._registries) if (g, r) == (group, resource))


def registry_lookup(registries: Mapping[tuple[str, str, str], Registry]) -> RegistryLookup:
    """A Lookup over the server's {(group, version, resource): Registry} table."""
    return RegistryLookup(registries)
