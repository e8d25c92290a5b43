"""A defaulted profile's plugin sets turned into each extension point's ordered plugin list.

Kubernetes piece: pkg/scheduler/framework/runtime/framework.go NewFramework (1.31):
updatePluginList for the explicitly configured points, expandMultiPointPlugins for
`multiPoint` (a plugin goes to every point it implements, unless disabled there — "*"
skips the point's expansion altogether —; a plugin also listed at the point explicitly keeps
that entry and goes first, then the multiPoint plugins, then the point's other plugins),
the one-QueueSort and at-least-one-Bind rules, and getScoreWeights (the explicit Score weight
wins over multiPoint's, an unset or 0 weight is 1, the sum must not overflow). Upstream does
this when it builds the framework, with Go type assertions telling which points a plugin
implements; here it is done once at load time (the runtime reads `Profile.plugins` ready),
with a `PointsResolver` answering the same question: the in-tree plugins' points are data
(default_plugins.IN_TREE_POINTS); an out-of-tree plugin's can be read off an instance with
`points_of`. Errors carry upstream's text, wrapped as scheduler.New wraps them. Pure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from .. import interface
from ..interface import MAX_NODE_SCORE, MAX_TOTAL_SCORE
from .default_plugins import IN_TREE_POINTS
from .types import EXTENSION_POINTS, PluginRef

Obj = dict[str, Any]

#: plugin name -> the extension points it implements, or None when no such plugin exists
PointsResolver = Callable[[str], "frozenset[str] | None"]

#: upstream getExtensionPoints' order, with each point's Go interface name (used in errors)
EXPANSION_ORDER: tuple[tuple[str, str], ...] = (
    ("preFilter", "PreFilterPlugin"), ("filter", "FilterPlugin"),
    ("postFilter", "PostFilterPlugin"), ("reserve", "ReservePlugin"),
    ("preScore", "PreScorePlugin"), ("score", "ScorePlugin"), ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"), ("postBind", "PostBindPlugin"), ("permit", "PermitPlugin"),
    ("preEnqueue", "PreEnqueuePlugin"), ("queueSort", "QueueSortPlugin"),
)

#: extension point -> the protocol a plugin satisfies to run there, and the method that
#: protocol names (checked by hasattr, so a plugin class answers as its instances do)
PROTOCOL_METHODS: dict[str, tuple[type, str]] = {
    "preEnqueue": (interface.PreEnqueuePlugin, "pre_enqueue"),
    "queueSort": (interface.QueueSortPlugin, "less"),
    "preFilter": (interface.PreFilterPlugin, "pre_filter"),
    "filter": (interface.FilterPlugin, "filter"),
    "postFilter": (interface.PostFilterPlugin, "post_filter"),
    "preScore": (interface.PreScorePlugin, "pre_score"),
    "score": (interface.ScorePlugin, "score"),
    "reserve": (interface.ReservePlugin, "reserve"),
    "permit": (interface.PermitPlugin, "permit"),
    "preBind": (interface.PreBindPlugin, "pre_bind"),
    "bind": (interface.BindPlugin, "bind"),
    "postBind": (interface.PostBindPlugin, "post_bind"),
}


_PLUGINS = __package__.rpartition(".")[0] + ".plugins"


class FrameworkError(ValueError):
    """A profile the framework cannot be built from (upstream NewFramework's errors)."""


def points_of(plugin: object) -> frozenset[str]:
    """The extension points a plugin (an instance or its class) implements: upstream's type
    assertions, by the method each point's protocol requires."""
    return frozenset(point for point, (_, method) in PROTOCOL_METHODS.items()
                     if callable(getattr(plugin, method, None)))


def in_tree_points(extra: Mapping[str, frozenset[str]] | None = None) -> PointsResolver:
    """A resolver knowing upstream's in-tree plugins (data), then `extra` (e.g. out-of-tree
    plugins), then any other plugin class registered in plugins/registry.IN_TREE (the v1.x
    predicates and priorities turned plugins), read off the class."""
    known = {**IN_TREE_POINTS, **(extra or {})}

    def resolve(name: str) -> frozenset[str] | None:
        points = known.get(name)
        return points if points is not None else registered_points(name)

    return resolve


def registered_points(name: str) -> frozenset[str] | None:
    """The points of the plugin registered under `name` in plugins/registry.IN_TREE, when
    its factory is the plugin class itself; None otherwise (unknown, or a factory function
    whose plugin's points cannot be known before it is built)."""
    from ..plugins.registry import IN_TREE

    entry = IN_TREE.get(name)
    if entry is None:
        return None
    module, attribute = entry
    target = getattr(importlib.import_module(f"{_PLUGINS}.{module}"), attribute, None)
    return points_of(target) if isinstance(target, type) else None


def _names(plugin_set: Obj | None, key: str) -> list[Obj]:
    return list((plugin_set or {}).get(key) or [])


def _explicit(point: str, go_name: str, plugin_set: Obj | None,
              resolve: PointsResolver) -> list[Obj]:
    """updatePluginList: every explicitly enabled plugin must exist, implement the point and
    be listed once."""
    seen: set[str] = set()
    out: list[Obj] = []
    for entry in _names(plugin_set, "enabled"):
        name = entry.get("name", "")
        points = resolve(name)
        if points is None:
            raise FrameworkError(f'{go_name} "{name}" does not exist')
        if point not in points:
            raise FrameworkError(f'plugin "{name}" does not extend {go_name} plugin')
        if name in seen:
            raise FrameworkError(f'plugin "{name}" already registered as "{go_name}"')
        seen.add(name)
        out.append(entry)
    return out


def _expand_point(point: str, go_name: str, explicit: list[Obj], plugin_set: Obj | None,
                  multi: list[Obj], resolve: PointsResolver) -> list[str]:
    """expandMultiPointPlugins for one point: the ordered plugin names."""
    enabled = [e.get("name", "") for e in explicit]
    disabled = {d.get("name", "") for d in _names(plugin_set, "disabled")}
    if "*" in disabled:
        return enabled
    overrides: list[str] = []
    from_multi: list[str] = []
    for entry in multi:
        name = entry.get("name", "")
        points = resolve(name)
        if points is None:
            raise FrameworkError(f'{go_name} "{name}" does not exist')
        if point not in points or name in disabled:
            continue
        if name in enabled:
            if name not in overrides:
                overrides.append(name)
            continue
        if name in from_multi:
            raise FrameworkError(f'plugin "{name}" already registered as "{go_name}"')
        from_multi.append(name)
    first = [n for n in enabled if n in overrides]
    rest = [n for n in enabled if n not in overrides]
    return first + from_multi + rest


def _score_weights(score_names: list[str], plugins: Obj, resolve: PointsResolver) -> dict[str, int]:
    """getScoreWeights: explicit Score entries first, then multiPoint's; 0 means 1."""
    weights: dict[str, int] = {}
    total = 0
    for entry in _names(plugins.get("score"), "enabled") + _names(plugins.get("multiPoint"),
                                                                   "enabled"):
        name = entry.get("name", "")
        if name not in score_names or name in weights:
            continue
        weights[name] = int(entry.get("weight") or 0) or 1
        if weights[name] * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise FrameworkError("total score of Score plugins could overflow")
        total += weights[name] * MAX_NODE_SCORE
    return weights


def expand(scheduler_name: str, plugins: Obj,
           resolve: PointsResolver | None = None) -> dict[str, list[PluginRef]]:
    """Each extension point's plugins in run order, Score ones with their weights.

    Raises FrameworkError with upstream's message, prefixed as scheduler.New reports it."""
    resolve = resolve or in_tree_points()
    try:
        return _expand(scheduler_name, plugins, resolve)
    except FrameworkError as exc:
        raise FrameworkError(f"initializing profiles: creating profile for scheduler name "
                             f"{scheduler_name}: {exc}") from None


def _expand(scheduler_name: str, plugins: Obj, resolve: PointsResolver) -> dict[str, list[PluginRef]]:
    explicit = {point: _explicit(point, go_name, plugins.get(point), resolve)
                for point, go_name in EXPANSION_ORDER}
    multi = _names(plugins.get("multiPoint"), "enabled")
    order: dict[str, list[str]] = {}
    for point, go_name in EXPANSION_ORDER:
        if multi:
            order[point] = _expand_point(point, go_name, explicit[point], plugins.get(point),
                                         multi, resolve)
        else:
            order[point] = [e.get("name", "") for e in explicit[point]]
    if len(order["queueSort"]) != 1:
        raise FrameworkError(f"only one queue sort plugin required for profile with scheduler "
                             f'name "{scheduler_name}", but got {len(order["queueSort"])}')
    if not order["bind"]:
        raise FrameworkError(f"at least one bind plugin is needed for profile with scheduler "
                             f'name "{scheduler_name}"')
    weights = _score_weights(order["score"], plugins, resolve)
    return {point: [PluginRef(name, weights.get(name, 0) if point == "score" else 0)
                    for name in order[point]]
            for point in EXTENSION_POINTS}
