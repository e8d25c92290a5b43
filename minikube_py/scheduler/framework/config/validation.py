"""Validation of a defaulted KubeSchedulerConfiguration, with upstream's field paths and messages.

Kubernetes piece: pkg/scheduler/apis/config/validation/validation.go (1.31)
ValidateKubeSchedulerConfiguration: the leader-election lock must be a Lease, parallelism > 0,
at least one profile, unique and non-empty schedulerNames, percentageOfNodesToScore in
[0-100] (globally and per profile), the same queueSort plugin (and args) in every profile,
unique pluginConfig entries with valid args (validation_args), podInitialBackoffSeconds > 0,
podMaxBackoffSeconds >= podInitialBackoffSeconds, and the extenders (a positive weight with a
prioritizeVerb, at most one binder, managed resources that are unique extended resource
names). The errors are returned as a list; `aggregate` renders them as upstream's
utilerrors.Aggregate ("msg", or "[msg1, msg2]"). Pure.
"""

from __future__ import annotations

from typing import Any

from ....api import naming
from ....api.errors import FieldError, GoValue, duplicate, invalid, required
from ....api.validation.resources import is_extended
from ....api.validation.typed import child, index
from .validation_args import ARGS_VALIDATORS, Errs

Obj = dict[str, Any]


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several in brackets."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _go_plugin_set(plugin_set: Obj | None) -> str:
    """A config.PluginSet as Go's %#v prints it (upstream's queueSort message shows it)."""
    def plugins(items: list[Obj] | None) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        inner = ", ".join(f'config.Plugin{{Name:"{p.get("name", "")}", Weight:{p.get("weight") or 0}}}'
                          for p in items)
        return f"[]config.Plugin{{{inner}}}"
    plugin_set = plugin_set or {}
    return (f"config.PluginSet{{Enabled:{plugins(plugin_set.get('enabled'))}, "
            f"Disabled:{plugins(plugin_set.get('disabled'))}}}")


def _percentage(value: Any, path: str, errs: Errs) -> None:
    if value is not None and not 0 <= value <= 100:
        errs.append(invalid(path, value, "not in valid range [0-100]"))


def _profile(profile: Obj, path: str, errs: Errs) -> None:
    if not profile.get("schedulerName"):
        errs.append(required(child(path, "schedulerName")))
    _percentage(profile.get("percentageOfNodesToScore"), child(path, "percentageOfNodesToScore"),
                errs)
    seen: set[str] = set()
    for i, entry in enumerate(profile.get("pluginConfig") or []):
        entry_path = index(child(path, "pluginConfig"), i)
        name = entry.get("name", "")
        if name in seen:
            errs.append(duplicate(entry_path, name))
        seen.add(name)
        validator = ARGS_VALIDATORS.get(name)
        if validator is not None and isinstance(entry.get("args"), dict):
            validator(entry["args"], child(entry_path, "args"), errs)


def _queue_sort_of(profile: Obj) -> Obj:
    return (profile.get("plugins") or {}).get("queueSort") or {}


def _common_queue_sort(profiles: list[Obj], errs: Errs) -> None:
    """validateCommonQueueSort: profiles[1:] must repeat profiles[0]'s queueSort set and args."""
    canon = _queue_sort_of(profiles[0])
    enabled = canon.get("enabled") or []
    name = enabled[0].get("name", "") if enabled else ""
    if len(enabled) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                            "only one queue sort plugin can be enabled"))
    canon_args = next((c.get("args") for c in profiles[0].get("pluginConfig") or []
                       if name and c.get("name") == name), None)
    for i, profile in enumerate(profiles[1:], start=1):
        current = _queue_sort_of(profile)
        if _plain(current) != _plain(canon):
            errs.append(invalid(f"profiles[{i}].plugins.queueSort", GoValue(_go_plugin_set(current)),
                                "must be the same for all profiles"))
        for entry in profile.get("pluginConfig") or []:
            if entry.get("name") == name and entry.get("args") != canon_args:
                errs.append(invalid(f"profiles[{i}].pluginConfig.args", entry.get("args"),
                                    "queueSort must be the same for all profiles"))


def _plain(plugin_set: Obj) -> tuple:
    """A PluginSet's content, for apiequality.Semantic.DeepEqual (an unset weight is 0)."""
    return tuple((p.get("name"), p.get("weight") or 0) for p in plugin_set.get("enabled") or []), \
        tuple(p.get("name") for p in plugin_set.get("disabled") or [])


def _extenders(extenders: list[Obj], errs: Errs) -> None:
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = index("extenders", i)
        weight = extender.get("weight") or 0
        if extender.get("prioritizeVerb") and weight <= 0:
            errs.append(invalid(child(path, "weight"), weight,
                                "must have a positive weight applied to it"))
        if extender.get("bindVerb"):
            binders += 1
        for j, resource in enumerate(extender.get("managedResources") or []):
            r_path = child(index(child(path, "managedResources"), j), "name")
            name = resource.get("name") or ""
            errs.extend(_extended_resource_name(name, r_path))
            if name in managed:
                errs.append(invalid(r_path, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))


def _extended_resource_name(name: str, path: str) -> list[FieldError]:
    """validateExtendedResourceName: a qualified name that is an extended resource."""
    problems = [invalid(path, name, msg) for msg in naming.is_qualified_name(name)]
    if problems:
        return problems
    if not is_extended(name):
        return [invalid(path, name, "is an invalid extended resource name")]
    return []


def validate(config: Obj) -> list[FieldError]:
    """ValidateKubeSchedulerConfiguration over the defaulted versioned document."""
    errs: Errs = []
    leader = config.get("leaderElection") or {}
    if leader.get("leaderElect") and leader.get("resourceLock") != "leases":
        errs.append(invalid("leaderElection.resourceLock", leader.get("resourceLock") or "",
                            'resourceLock value must be "leases"'))
    parallelism = config.get("parallelism") or 0
    if parallelism <= 0:
        errs.append(invalid("parallelism", parallelism,
                            "should be an integer value greater than zero"))
    profiles = config.get("profiles") or []
    if not profiles:
        errs.append(required("profiles"))
    else:
        first_index: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            path = index("profiles", i)
            _profile(profile, path, errs)
            name = profile.get("schedulerName") or ""
            if name in first_index:
                errs.append(duplicate(child(path, "schedulerName"),
                                      f"profiles[{first_index[name]}].schedulerName"))
            first_index[name] = i
        _common_queue_sort(profiles, errs)
    _percentage(config.get("percentageOfNodesToScore"), "percentageOfNodesToScore", errs)
    initial = config.get("podInitialBackoffSeconds") or 0
    if initial <= 0:
        errs.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    maximum = config.get("podMaxBackoffSeconds") or 0
    if maximum < initial:
        errs.append(invalid("podMaxBackoffSeconds", maximum,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    _extenders(config.get("extenders") or [], errs)
    return errs
