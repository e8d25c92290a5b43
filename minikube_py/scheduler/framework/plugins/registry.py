"""The in-tree plugin registry: plugin name -> factory (upstream plugins/registry.go NewInTreeRegistry).

Each plugin module registers its factory here under upstream's plugin name; out-of-tree plugins
from Python entry points are merged on top by `framework.registry` (upstream
WithFrameworkOutOfTreeRegistry). Factories import their module lazily so loading the registry
does not import every plugin.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..interface import Handle, Plugin, PluginFactory


def _lazy(module: str, attribute: str) -> PluginFactory:
    """A factory that imports `plugins.<module>` on first use and calls its `attribute`."""

    def factory(args: Mapping[str, Any], handle: Handle) -> Plugin:
        target = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        return target(args, handle)

    return factory


#: upstream plugin name -> (module under plugins/, factory callable in it). One line per plugin.
IN_TREE: dict[str, tuple[str, str]] = {
    "PrioritySort": ("queuesort", "new"),
    "SchedulingGates": ("schedulinggates", "new"),
    "DefaultBinder": ("defaultbinder", "new"),
    "NodeUnschedulable": ("nodeunschedulable", "new"),
    "NodeName": ("nodename", "new"),
    "TaintToleration": ("tainttoleration", "new"),
    "NodeAffinity": ("nodeaffinity", "new"),
    "NodePorts": ("nodeports", "new"),
    "NodeResourcesFit": ("noderesources_fit", "new"),
    "NodeResourcesBalancedAllocation": ("balanced_allocation", "new"),
    "VolumeRestrictions": ("volumerestrictions", "new"),
    "NodeVolumeLimits": ("nodevolumelimits", "new"),
    "VolumeBinding": ("volumebinding", "new"),
    "VolumeZone": ("volumezone", "new"),
    "PodTopologySpread": ("podtopologyspread", "new"),
    "InterPodAffinity": ("interpodaffinity", "new"),
    "ImageLocality": ("imagelocality", "new"),
    "NodeLabel": ("nodelabel", "NodeLabel"),
    "ServiceAffinity": ("serviceaffinity", "ServiceAffinity"),
    "NodePreferAvoidPods": ("nodepreferavoidpods", "NodePreferAvoidPods"),
    "DefaultPreemption": ("defaultpreemption", "new"),
}


def in_tree_registry() -> dict[str, PluginFactory]:
    return {name: _lazy(module, attribute) for name, (module, attribute) in IN_TREE.items()}
