"""Admission plugin names -> constructors, and the chain `--admission-control` asks for.

Kubernetes v1.0 piece: pkg/admission/plugins.go (RegisterPlugin / InitPlugin /
NewFromPlugins). Plugins are built from the API server's own registries (upstream hands them
the server's client and informers). An unknown name is a startup error naming it and listing
the known plugins, as upstream's "Unknown admission plugin" is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...registry.generic import Registry
from .always import AlwaysAdmit, AlwaysDeny
from .chain import AdmissionChain, Plugin
from .limit_ranger import LimitRanger
from .namespace_exists import NamespaceAutoProvision, NamespaceExists
from .namespace_lifecycle import NamespaceLifecycle
from .resource_quota import ResourceQuota
from .security_context_deny import SecurityContextDeny
from .service_account import ServiceAccount

#: finds the registry of (group, resource) in any version
Lookup = Callable[[str, str], "Registry | None"]


def _required(lookup: Lookup, group: str, resource: str) -> Registry:
    registry = lookup(group, resource)
    if registry is None:
        raise ValueError(f"admission: no registry for {resource}")
    return registry


def _namespaces(lookup: Lookup) -> Registry:
    return _required(lookup, "", "namespaces")


async def _list_all(registry: Registry, namespace: str) -> list[dict[str, Any]]:
    return (await registry.list(namespace)).decoded()


def _limit_ranger(lookup: Lookup) -> Plugin:
    limit_ranges = _required(lookup, "", "limitranges")
    return LimitRanger(lambda ns: _list_all(limit_ranges, ns))


def _service_account(lookup: Lookup) -> Plugin:
    accounts = _required(lookup, "", "serviceaccounts")
    return ServiceAccount(accounts.get)


def _auto_provision(lookup: Lookup) -> Plugin:
    namespaces = _namespaces(lookup)
    return NamespaceAutoProvision(lambda ns: namespaces.get("", ns),
                                  lambda obj: namespaces.create("", obj))


PLUGINS: Mapping[str, Callable[[Lookup], Plugin]] = {
    "AlwaysAdmit": lambda lookup: AlwaysAdmit(),
    "AlwaysDeny": lambda lookup: AlwaysDeny(),
    "NamespaceLifecycle": lambda lookup: NamespaceLifecycle(
        lambda ns: _namespaces(lookup).get("", ns)),
    "NamespaceExists": lambda lookup: NamespaceExists(lambda ns: _namespaces(lookup).get("", ns)),
    "NamespaceAutoProvision": _auto_provision,
    "LimitRanger": _limit_ranger,
    "ResourceQuota": ResourceQuota,
    "ServiceAccount": _service_account,
    "SecurityContextDeny": lambda lookup: SecurityContextDeny(),
}


def check_names(names: Iterable[str]) -> None:
    """ValueError naming the first unknown plugin and listing the known ones."""
    for name in names:
        if name not in PLUGINS:
            raise ValueError(f'unknown admission plugin "{name}" in --admission-control; known '
                             f"plugins: {', '.join(sorted(PLUGINS))}")


def build_chain(names: Iterable[str], lookup: Lookup) -> AdmissionChain:
    """The chain for `--admission-control=<names>`, in the order given."""
    names = [n.strip() for n in names if n.strip()]
    check_names(names)
    return AdmissionChain([PLUGINS[name](lookup) for name in names])


def registry_lookup(registries: Mapping[tuple[str, str, str], Registry]) -> Lookup:
    """A Lookup over the server's {(group, version, resource): Registry} table."""
    by_resource = {(group, resource): registry
                   for (group, _version, resource), registry in registries.items()}
    return lambda group, resource: by_resource.get((group, resource))
