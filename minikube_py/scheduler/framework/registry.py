"""The plugin registry the scheduler builds its frameworks from: in-tree plus out-of-tree plugins.

Kubernetes piece: pkg/scheduler/framework/runtime/registry.go (Registry, Merge) and
`app.WithPlugin` / scheduler.WithFrameworkOutOfTreeRegistry, by which a custom kube-scheduler
binary adds its plugins. Python's equivalent of linking a plugin into the binary is an entry
point: a distribution declares

    [project.entry-points."minikube_py.scheduler.plugins"]
    MyPlugin = "my_package.my_module:new"

where `new(args, handle)` returns the plugin, and every scheduler in an environment where that
distribution is installed can enable `MyPlugin` in a profile. A name already taken (in-tree or
by another entry point) is an error, with upstream's message. Entry points are loaded when a
profile instantiates the plugin, so a broken plugin that no profile enables costs nothing.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from typing import Any

from .interface import Handle, Plugin, PluginFactory
from .plugins.registry import in_tree_registry

#: the entry-point group out-of-tree plugins register under
ENTRY_POINT_GROUP = "minikube_py.scheduler.plugins"


class RegistryError(ValueError):
    """Two plugins under one name (upstream Registry.Register / Merge)."""


def merge(registry: dict[str, PluginFactory], extra: Mapping[str, PluginFactory]) -> None:
    """upstream Registry.Merge: add `extra` to `registry`, refusing any name already there."""
    for name, factory in extra.items():
        if name in registry:
            raise RegistryError(f"a plugin named {name} already exists")
        registry[name] = factory


def _entry_point_factory(entry_point: importlib.metadata.EntryPoint) -> PluginFactory:
    """A factory that imports the entry point's target on first use."""

    def factory(args: Mapping[str, Any], handle: Handle) -> Plugin:
        target = entry_point.load()
        return target(args, handle)

    return factory


def out_of_tree_registry(group: str = ENTRY_POINT_GROUP) -> dict[str, PluginFactory]:
    """The plugins installed distributions declare under `group`."""
    registry: dict[str, PluginFactory] = {}
    for entry_point in importlib.metadata.entry_points(group=group):
        merge(registry, {entry_point.name: _entry_point_factory(entry_point)})
    return registry


def build_registry(extra: Mapping[str, PluginFactory] | None = None, *,
                   group: str | None = ENTRY_POINT_GROUP) -> dict[str, PluginFactory]:
    """In-tree plugins, then the entry points of `group` (None: none), then `extra` (plugins
    handed over in code, as upstream's WithFrameworkOutOfTreeRegistry)."""
    registry = in_tree_registry()
    if group is not None:
        merge(registry, out_of_tree_registry(group))
    if extra:
        merge(registry, extra)
    return registry
