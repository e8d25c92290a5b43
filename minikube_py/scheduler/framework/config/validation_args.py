"""Validation of the in-tree plugins' args, with upstream's field paths and messages.

Kubernetes piece: pkg/scheduler/apis/config/validation/validation_pluginargs.go (1.31):
ValidateDefaultPreemptionArgs, ValidateInterPodAffinityArgs, ValidatePodTopologySpreadArgs,
ValidateNodeResourcesBalancedAllocationArgs, ValidateNodeAffinityArgs, ValidateVolumeBindingArgs
and ValidateNodeResourcesFitArgs. Upstream runs the last one when the NodeResourcesFit plugin
is built (validatePluginConfig's table names it "NodeResourcesFitArgs", so the config pass skips
it); here it runs with the others, so a bad scoring strategy is reported with its full path at
load time. Each validator takes the defaulted versioned args and the path of `args`. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....api import naming
from ....api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from ....api.validation.common import validate_qualified_name
from ....api.validation.scheduling import validate_node_selector_term
from ....api.validation.typed import child, index

Obj = dict[str, Any]
Errs = list[FieldError]

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: config.MaxCustomPriorityScore
MAX_CUSTOM_PRIORITY_SCORE = 10


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def default_preemption(args: Obj, path: str, errs: Errs) -> None:
    percentage, absolute = _int(args.get("minCandidateNodesPercentage")), \
        _int(args.get("minCandidateNodesAbsolute"))
    p_path, a_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    if not 0 <= percentage <= 100:
        errs.append(invalid(p_path, percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(a_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        errs.append(invalid(p_path, percentage,
                            "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(a_path, absolute,
                            "cannot be zero at the same time as minCandidateNodesPercentage"))


def inter_pod_affinity(args: Obj, path: str, errs: Errs) -> None:
    weight = _int(args.get("hardPodAffinityWeight"))
    if not 0 <= weight <= 100:
        errs.append(invalid(child(path, "hardPodAffinityWeight"), weight,
                            "not in valid range [0, 100]"))


def pod_topology_spread(args: Obj, path: str, errs: Errs) -> None:
    defaulting = args.get("defaultingType") or ""
    constraints = args.get("defaultConstraints") or []
    d_path = child(path, "defaultingType")
    if defaulting not in ("System", "List"):
        errs.append(not_supported(d_path, defaulting, ["System", "List"]))
    elif defaulting == "System" and constraints:
        errs.append(invalid(d_path, defaulting, "when .defaultConstraints are not empty"))
    c_path = child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = index(c_path, i)
        max_skew = _int(c.get("maxSkew"))
        if max_skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        else:
            validate_qualified_name(key, child(p, "topologyKey"), errs)
        action = c.get("whenUnsatisfiable") or ""
        if not action:
            errs.append(required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(child(p, "whenUnsatisfiable"), action,
                                      ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(forbidden(child(p, "labelSelector"), "constraint must not define a "
                                  "selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey"), other.get("whenUnsatisfiable")) == (key, action):
                errs.append(duplicate(index(c_path, i), f"{{{key}, {action}}}"))
                break


def _function_shape(shape: list[Obj], path: str, errs: Errs) -> None:
    """validateFunctionShape."""
    if not shape:
        errs.append(required(path, "at least one point must be specified"))
        return
    for i in range(1, len(shape)):
        if _int(shape[i - 1].get("utilization")) >= _int(shape[i].get("utilization")):
            errs.append(invalid(child(index(path, i), "utilization"),
                                _int(shape[i].get("utilization")),
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = _int(point.get("utilization")), _int(point.get("score"))
        if not 0 <= utilization <= 100:
            errs.append(invalid(child(index(path, i), "utilization"), utilization,
                                "not in valid range [0, 100]"))
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(child(index(path, i), "score"), score,
                                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))


def balanced_allocation(args: Obj, path: str, errs: Errs) -> None:
    seen: set[str] = set()
    for i, resource in enumerate(args.get("resources") or []):
        r_path = index(child(path, "resources"), i)
        name = resource.get("name") or ""
        if name in seen:
            errs.append(duplicate(child(r_path, "name"), name))
        seen.add(name)
        weight = _int(resource.get("weight"))
        if weight != 1:
            errs.append(invalid(child(r_path, "weight"), weight, "must be 1"))


def node_affinity(args: Obj, path: str, errs: Errs) -> None:
    affinity = args.get("addedAffinity")
    if not isinstance(affinity, dict):
        return
    a_path = child(path, "addedAffinity")
    required_selector = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_selector, dict):
        r_path = child(a_path, "requiredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(required_selector.get("nodeSelectorTerms") or []):
            if isinstance(term, dict):
                validate_node_selector_term(term, index(child(r_path, "nodeSelectorTerms"), i),
                                            errs, check_values=True)
    p_path = child(a_path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        preference = term.get("preference") if isinstance(term, dict) else None
        if isinstance(preference, dict):
            validate_node_selector_term(preference, child(index(p_path, i), "preference"), errs,
                                        check_values=True)


def volume_binding(args: Obj, path: str, errs: Errs) -> None:
    timeout = _int(args.get("bindTimeoutSeconds"))
    if timeout < 0:
        errs.append(invalid(child(path, "bindTimeoutSeconds"), timeout,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:  # 1.31: the VolumeCapacityPriority gate is off
        errs.append(invalid(child(path, "shape"), args["shape"], "unexpected field `shape`, "
                            "remove it or turn on the feature gate VolumeCapacityPriority"))


def node_resources_fit(args: Obj, path: str, errs: Errs) -> None:
    for i, name in enumerate(args.get("ignoredResources") or []):
        validate_qualified_name(name, index(child(path, "ignoredResources"), i), errs)
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        g_path = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(invalid(g_path, group, "resource group name can't contain '/'"))
        for msg in naming.is_qualified_name(group):
            errs.append(invalid(g_path, group, msg))
    s_path = child(path, "scoringStrategy")
    strategy = args.get("scoringStrategy")
    if strategy is None:
        errs.append(required(s_path, "ScoringStrategy field is required"))
        return
    kind = strategy.get("type") or ""
    if kind not in SCORING_STRATEGIES:
        errs.append(not_supported(child(s_path, "type"), kind, SCORING_STRATEGIES))
    for i, resource in enumerate(strategy.get("resources") or []):
        weight = _int(resource.get("weight"))
        if not 0 < weight <= 100:
            errs.append(invalid(child(index(child(s_path, "resources"), i), "weight"), weight,
                                f"resource weight of {resource.get('name', '')} not in valid "
                                "range (0, 100]"))
    ratio = strategy.get("requestedToCapacityRatio")
    r_path = child(s_path, "requestedToCapacityRatio")
    if kind == "RequestedToCapacityRatio":
        if ratio is None:
            errs.append(required(r_path, "must be specified when type is RequestedToCapacityRatio"))
        else:
            _function_shape(ratio.get("shape") or [], child(r_path, "shape"), errs)
    elif ratio is not None:
        errs.append(forbidden(r_path, "must be nil when type is not RequestedToCapacityRatio"))


#: plugin name -> its args validator (upstream validatePluginConfig's table, plus
#: NodeResourcesFit which upstream validates when building the plugin)
ARGS_VALIDATORS: dict[str, Callable[[Obj, str, Errs], None]] = {
    "DefaultPreemption": default_preemption,
    "InterPodAffinity": inter_pod_affinity,
    "NodeAffinity": node_affinity,
    "NodeResourcesBalancedAllocation": balanced_allocation,
    "NodeResourcesFit": node_resources_fit,
    "PodTopologySpread": pod_topology_spread,
    "VolumeBinding": volume_binding,
}
