"""The default plugin set, the extension points each in-tree plugin implements, and mergePlugins.

Kubernetes piece: pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins,
mergePlugins, mergePluginSet) as of 1.31, where the deprecated non-CSI volume-limit plugins
(EBSLimits, GCEPDLimits, AzureDiskLimits) left the defaults (kubernetes#124500) and the
DynamicResources plugin is only added behind a feature gate that is off by default.

Upstream learns which extension points a plugin implements from Go type assertions when the
framework is built. Expansion of `multiPoint` happens here, at load time (the runtime reads
already expanded lists), so for in-tree plugins that knowledge is kept as data
(`IN_TREE_POINTS`, taken from each plugin's interface assertions, and checked against
upstream's ExpandedPluginsV1 test fixture); other plugins are resolved by the caller (see
`expand.PointsResolver`). Pure data and pure functions over versioned dicts.
"""

from __future__ import annotations

from typing import Any

from .types import EXTENSION_POINTS

Obj = dict[str, Any]

#: the versioned Plugins fields: `multiPoint` plus one per extension point
PLUGIN_SET_FIELDS = ("multiPoint", *EXTENSION_POINTS)

#: getDefaultPlugins(): the default profile's multiPoint, in order, with the Score weights
DEFAULT_MULTIPOINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

_FILTER_ONLY = frozenset({"filter"})
_PRE_AND_FILTER = frozenset({"preFilter", "filter"})
_FILTER_AND_SCORE = frozenset({"preFilter", "filter", "preScore", "score"})

#: in-tree plugin name -> the extension points it implements (upstream 1.31's interface
#: assertions: `var _ framework.FilterPlugin = &NodeName{}` and so on)
IN_TREE_POINTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": _FILTER_ONLY,
    "NodeName": _FILTER_ONLY,
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": _FILTER_AND_SCORE,
    "NodePorts": _PRE_AND_FILTER,
    "NodeResourcesFit": _FILTER_AND_SCORE,
    "VolumeRestrictions": _PRE_AND_FILTER,
    "NodeVolumeLimits": _PRE_AND_FILTER,
    "VolumeBinding": frozenset({"preFilter", "filter", "preScore", "score", "reserve", "preBind"}),
    "VolumeZone": _PRE_AND_FILTER,
    "PodTopologySpread": _FILTER_AND_SCORE,
    "InterPodAffinity": _FILTER_AND_SCORE,
    "DefaultPreemption": frozenset({"postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}


def plugin(name: str, weight: int | None = None) -> Obj:
    """A versioned Plugin entry; `weight` is a *int32 upstream (absent when unset)."""
    return {"name": name} if weight is None else {"name": name, "weight": weight}


def default_plugins() -> Obj:
    """getDefaultPlugins(): a fresh versioned Plugins object with only multiPoint set."""
    return {"multiPoint": {"enabled": [plugin(n, w) for n, w in DEFAULT_MULTIPOINT]}}


def merge_plugin_set(default: Obj, custom: Obj) -> Obj:
    """mergePluginSet: the custom set's disabled names (and the default's) are recorded; unless
    "*" is disabled the default plugins stay in order, a custom entry with the same name
    replacing the default in place (that is how a weight is changed); the other custom
    entries follow in their order (duplicates too: building the framework rejects them)."""
    custom_enabled = list(custom.get("enabled") or [])
    disabled = [{"name": p.get("name", "")} for p in (custom.get("disabled") or [])]
    disabled += [{"name": p.get("name", "")} for p in (default.get("disabled") or [])]
    disabled_names = {p["name"] for p in disabled}
    by_name: dict[str, int] = {}
    for i, p in enumerate(custom_enabled):
        by_name[p.get("name", "")] = i  # the last one wins, as upstream's map
    replaced: set[int] = set()
    enabled: list[Obj] = []
    if "*" not in disabled_names:
        for p in default.get("enabled") or []:
            if p["name"] in disabled_names:
                continue
            if p["name"] in by_name:
                i = by_name[p["name"]]
                replaced.add(i)
                p = custom_enabled[i]
            enabled.append(dict(p))
    enabled += [dict(p) for i, p in enumerate(custom_enabled) if i not in replaced]
    merged: Obj = {}
    if enabled:
        merged["enabled"] = enabled
    if disabled:
        merged["disabled"] = disabled
    return merged


def merge_plugins(default: Obj, custom: Obj | None) -> Obj:
    """mergePlugins: each extension point's set (and multiPoint's) merged separately."""
    if custom is None:
        return default
    return {name: merge_plugin_set(default.get(name) or {}, custom.get(name) or {})
            for name in PLUGIN_SET_FIELDS}


def plugin_names(plugins: Obj) -> list[str]:
    """pluginsNames: every plugin enabled anywhere in `plugins`, sorted (whose args default)."""
    names = {p.get("name", "") for f in PLUGIN_SET_FIELDS
             for p in ((plugins.get(f) or {}).get("enabled") or [])}
    return sorted(names)
