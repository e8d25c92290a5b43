"""v1.0/v1.5 predicates and priorities expressed as framework plugins: a Policy as a Profile.

Kubernetes piece: pkg/scheduler/framework/plugins/legacy_registry.go (1.19-1.22: LegacyRegistry,
predicateOrdering, mandatoryPredicates, DefaultPredicates/DefaultPriorities,
ProcessPredicatePolicy / ProcessPriorityPolicy, appendToPluginSet keeping the highest weight)
and the part of pkg/scheduler/factory.go createFromConfig that adds PrioritySort,
DefaultPreemption and DefaultBinder, which "were neither predicates nor priorities before".

Each predicate becomes the Filter (and PreFilter / Reserve / PreBind) points of its plugin,
each priority the (PreScore and) Score point with the priority's weight; arguments become the
plugin's args in their versioned field names. Targets are the 1.31 plugins, so three upstream
1.22 mappings changed shape:
- LeastRequestedPriority / MostRequestedPriority / RequestedToCapacityRatioPriority are
  NodeResourcesFit's `scoringStrategy` (1.22 had one plugin each): a Policy naming two of
  them cannot be expressed and is refused.
- MaxEBSVolumeCount / MaxGCEPDVolumeCount / MaxAzureDiskVolumeCount all map to
  NodeVolumeLimits (1.22: EBSLimits, GCEPDLimits, AzureDiskLimits).
- SelectorSpreadPriority / ServiceSpreadingPriority map to PodTopologySpread with the system
  default constraints (1.22 with the DefaultPodTopologySpread gate on, as 1.31 has it).
CheckNodeCondition / CheckNodeMemoryPressure / CheckNodeDiskPressure were dropped upstream
when TaintNodesByCondition went GA (conditions become taints): they map to TaintToleration.
EqualPriority maps to no plugin: without Score plugins every node scores the same.

The scale changes: v1.5 priorities score 0..10, plugins 0..100, so with the same weights
the totals are ten times larger; the ranking is the same up to the finer rounding.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from typing import Any

from ...factory import (
    PROVIDERS,
    AlgorithmArgs,
    PolicyError,
)
from ..config.types import EXTENSION_POINTS, PluginRef, Profile

Obj = dict[str, Any]
FIT, NODE_LABEL, SERVICE_AFFINITY = "NodeResourcesFit", "NodeLabel", "ServiceAffinity"
SPREAD, INTER_POD = "PodTopologySpread", "InterPodAffinity"

#: the extension points each plugin takes when a predicate maps to it (1.31 plugin shapes)
FILTER_POINTS: dict[str, tuple[str, ...]] = {
    FIT: ("preFilter", "filter"), "NodeName": ("filter",), "NodePorts": ("preFilter", "filter"),
    "NodeAffinity": ("preFilter", "filter"), "TaintToleration": ("filter",),
    "NodeUnschedulable": ("filter",),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind"),
    "VolumeRestrictions": ("preFilter", "filter"), "VolumeZone": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"), INTER_POD: ("preFilter", "filter"),
    SPREAD: ("preFilter", "filter"), NODE_LABEL: ("filter",), SERVICE_AFFINITY: ("filter",),
}
#: the extension points each plugin takes when a priority maps to it
SCORE_POINTS: dict[str, tuple[str, ...]] = {
    FIT: ("preScore", "score"), "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "TaintToleration": ("preScore", "score"), "NodeAffinity": ("preScore", "score"),
    "ImageLocality": ("score",), INTER_POD: ("preScore", "score"),
    SPREAD: ("preScore", "score"), "NodePreferAvoidPods": ("score",),
    NODE_LABEL: ("score",), SERVICE_AFFINITY: ("score",),
}

#: predicate name -> the plugins it becomes (upstream registerPredicateConfigProducer)
PREDICATE_PLUGINS: dict[str, tuple[str, ...]] = {
    "GeneralPredicates": (FIT, "NodeName", "NodePorts", "NodeAffinity"),
    "PodToleratesNodeTaints": ("TaintToleration",),
    "PodFitsResources": (FIT,),
    "HostName": ("NodeName",),
    "PodFitsHostPorts": ("NodePorts",),
    "PodFitsPorts": ("NodePorts",),  # v1.0's name (upstream ProcessPredicatePolicy alias)
    "MatchNodeSelector": ("NodeAffinity",),
    "CheckNodeUnschedulable": ("NodeUnschedulable",),
    "CheckVolumeBinding": ("VolumeBinding",),
    "NoDiskConflict": ("VolumeRestrictions",),
    "NoVolumeZoneConflict": ("VolumeZone",),
    "MaxEBSVolumeCount": ("NodeVolumeLimits",),
    "MaxGCEPDVolumeCount": ("NodeVolumeLimits",),
    "MaxAzureDiskVolumeCount": ("NodeVolumeLimits",),
    "MaxCSIVolumeCountPred": ("NodeVolumeLimits",),
    "MatchInterPodAffinity": (INTER_POD,),
    "EvenPodsSpread": (SPREAD,),
    "CheckNodeLabelPresence": (NODE_LABEL,),
    "CheckServiceAffinity": (SERVICE_AFFINITY,),
    # TaintNodesByCondition (GA 1.17): node conditions are taints, TaintToleration judges them
    "CheckNodeCondition": ("TaintToleration",),
    "CheckNodeMemoryPressure": ("TaintToleration",),
    "CheckNodeDiskPressure": ("TaintToleration",),
    "CheckNodePIDPressure": ("TaintToleration",),
}
#: upstream predicateOrdering (the order the plugins are appended in)
PREDICATE_ORDERING = (
    "CheckNodeUnschedulable", "GeneralPredicates", "HostName", "PodFitsHostPorts",
    "MatchNodeSelector", "PodFitsResources", "NoDiskConflict", "PodToleratesNodeTaints",
    "CheckNodeLabelPresence", "CheckServiceAffinity", "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount", "MaxCSIVolumeCountPred", "MaxAzureDiskVolumeCount",
    "CheckVolumeBinding", "NoVolumeZoneConflict", "EvenPodsSpread", "MatchInterPodAffinity",
)
#: upstream mandatoryPredicates: configured whatever the Policy says
MANDATORY_PREDICATES = ("PodToleratesNodeTaints", "CheckNodeUnschedulable")
#: upstream LegacyRegistry.DefaultPredicates / DefaultPriorities: a Policy whose predicates
#: (priorities) field is absent gets these
DEFAULT_PREDICATES = (
    "NoVolumeZoneConflict", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxAzureDiskVolumeCount",
    "MaxCSIVolumeCountPred", "MatchInterPodAffinity", "NoDiskConflict", "GeneralPredicates",
    "PodToleratesNodeTaints", "CheckVolumeBinding", "CheckNodeUnschedulable", "EvenPodsSpread",
)
DEFAULT_PRIORITIES = {
    "SelectorSpreadPriority": 1, "InterPodAffinityPriority": 1, "LeastRequestedPriority": 1,
    "BalancedResourceAllocation": 1, "NodePreferAvoidPodsPriority": 10000,
    "NodeAffinityPriority": 1, "TaintTolerationPriority": 1, "ImageLocalityPriority": 1,
    "EvenPodsSpreadPriority": 2,
}
#: priority name -> (plugin, NodeResourcesFit strategy when the plugin is NodeResourcesFit)
PRIORITY_PLUGINS: dict[str, tuple[str | None, str | None]] = {
    "SelectorSpreadPriority": (SPREAD, None),
    "ServiceSpreadingPriority": (SPREAD, None),  # upstream alias of SelectorSpreadPriority
    "EvenPodsSpreadPriority": (SPREAD, None),
    "TaintTolerationPriority": ("TaintToleration", None),
    "NodeAffinityPriority": ("NodeAffinity", None),
    "ImageLocalityPriority": ("ImageLocality", None),
    "InterPodAffinityPriority": (INTER_POD, None),
    "NodePreferAvoidPodsPriority": ("NodePreferAvoidPods", None),
    "LeastRequestedPriority": (FIT, "LeastAllocated"),
    "MostRequestedPriority": (FIT, "MostAllocated"),
    "RequestedToCapacityRatioPriority": (FIT, "RequestedToCapacityRatio"),
    "BalancedResourceAllocation": ("NodeResourcesBalancedAllocation", None),
    "EqualPriority": (None, None),
}
#: what createFromConfig adds to every Policy-built profile
FRAMEWORK_ONLY = {"preEnqueue": ("SchedulingGates",), "queueSort": ("PrioritySort",),
                  "postFilter": ("DefaultPreemption",), "bind": ("DefaultBinder",)}
_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


class _Builder:
    """Accumulates plugin sets and args (upstream's *config.Plugins and []PluginConfig)."""

    def __init__(self) -> None:
        self.plugins: dict[str, list[PluginRef]] = {p: [] for p in EXTENSION_POINTS}
        self.args: dict[str, Obj] = {}

    def append(self, point: str, name: str, weight: int = 0) -> None:
        """upstream appendToPluginSet: once per point, keeping the highest weight."""
        refs = self.plugins[point]
        for i, ref in enumerate(refs):
            if ref.name == name:
                if weight > ref.weight:
                    refs[i] = PluginRef(name, weight)
                return
        refs.append(PluginRef(name, weight))

    def add_filter(self, plugin: str) -> None:
        for point in FILTER_POINTS[plugin]:
            self.append(point, plugin)

    def add_score(self, plugin: str, weight: int) -> None:
        for point in SCORE_POINTS[plugin]:
            self.append(point, plugin, weight if point == "score" else 0)

    def profile(self, scheduler_name: str) -> Profile:
        for point, names in FRAMEWORK_ONLY.items():
            for name in names:
                self.append(point, name)
        return Profile(scheduler_name=scheduler_name,
                       plugins={p: refs for p, refs in self.plugins.items() if refs},
                       plugin_config=self.args)


def _predicates(builder: _Builder, names: list[str]) -> None:
    """upstream AppendPredicateConfigs: mandatory ones added, predicateOrdering first, the rest
    sorted."""
    wanted = set(names) | set(MANDATORY_PREDICATES)
    ordered = [n for n in PREDICATE_ORDERING if n in wanted]
    ordered += sorted(wanted - set(PREDICATE_ORDERING))
    for name in ordered:
        for plugin in PREDICATE_PLUGINS[name]:
            builder.add_filter(plugin)


def _fit_strategy(builder: _Builder, strategy: str, argument: Obj | None) -> None:
    args = builder.args.setdefault(FIT, {})
    current = (args.get("scoringStrategy") or {}).get("type")
    if current and current != strategy:
        raise PolicyError(f"{current} and {strategy} both configure NodeResourcesFit's "
                          "scoringStrategy; a profile can use only one")
    scoring: Obj = {"type": strategy, "resources": deepcopy(_DEFAULT_RESOURCES)}
    if strategy == "RequestedToCapacityRatio":
        shape = [{"utilization": int(p.get("utilization", 0)), "score": int(p.get("score", 0))}
                 for p in (argument or {}).get("shape") or
                 ({"utilization": 0, "score": 10}, {"utilization": 100, "score": 0})]
        resources = (argument or {}).get("resources")
        if resources:
            scoring["resources"] = [{"name": r.get("name"), "weight": int(r.get("weight") or 1)}
                                    for r in resources]
        scoring["requestedToCapacityRatio"] = {"shape": shape}
    args["scoringStrategy"] = scoring


def _priority(builder: _Builder, name: str, weight: int, argument: Obj | None,
              algorithm_args: AlgorithmArgs) -> None:
    if argument and "labelPreference" in argument:
        pref = argument["labelPreference"]
        args = builder.args.setdefault(NODE_LABEL, {})
        key = "presentLabelsPreference" if pref.get("presence") else "absentLabelsPreference"
        args.setdefault(key, []).append(str(pref.get("label", "")))
        count = len(args.get("presentLabelsPreference", [])) + len(args.get("absentLabelsPreference", []))
        builder.add_score(NODE_LABEL, weight * count)
        return
    if argument and "serviceAntiAffinity" in argument:
        args = builder.args.setdefault(SERVICE_AFFINITY, {})
        labels = args.setdefault("antiAffinityLabelsPreference", [])
        labels.append(str(argument["serviceAntiAffinity"].get("label", "")))
        builder.add_score(SERVICE_AFFINITY, weight * len(labels))
        return
    if argument and "requestedToCapacityRatioArguments" in argument:
        name = "RequestedToCapacityRatioPriority"
        argument = argument["requestedToCapacityRatioArguments"]
    if argument and name != "RequestedToCapacityRatioPriority":
        raise PolicyError(f"priority {name}: unknown argument {sorted(argument)}; known: "
                          "labelPreference, serviceAntiAffinity, requestedToCapacityRatioArguments")
    if name not in PRIORITY_PLUGINS:
        raise PolicyError(f'priority type not found for "{name}"')
    plugin, strategy = PRIORITY_PLUGINS[name]
    if plugin is None:
        return
    if strategy is not None:
        _fit_strategy(builder, strategy, argument)
    if plugin == SPREAD:
        args = builder.args.setdefault(SPREAD, {})
        if name != "EvenPodsSpreadPriority":
            args["defaultingType"] = "System"  # SelectorSpread's successor: overrides List
            args.pop("defaultConstraints", None)
        elif "defaultingType" not in args:
            args.update({"defaultingType": "List", "defaultConstraints": []})
    if plugin == INTER_POD:
        builder.args.setdefault(INTER_POD, {})["hardPodAffinityWeight"] = \
            algorithm_args.hard_pod_affinity_symmetric_weight
    builder.add_score(plugin, weight)


def _predicate_name(builder: _Builder, entry: Obj) -> str:
    """upstream ProcessPredicatePolicy: a known name, or an argument naming its plugin."""
    name, argument = entry["name"], entry.get("argument")
    if name == "PodFitsPorts":
        name = "PodFitsHostPorts"  # "for compatibility reasons, PodFitsPorts is still supported"
    if not argument:
        if name not in PREDICATE_PLUGINS:
            raise PolicyError(f'predicate type not found for "{name}"')
        return name
    if "serviceAffinity" in argument:
        labels = list(argument["serviceAffinity"].get("labels") or [])
        builder.args.setdefault(SERVICE_AFFINITY, {}).setdefault("affinityLabels", []).extend(labels)
        return "CheckServiceAffinity"
    if "labelsPresence" in argument:
        presence = argument["labelsPresence"]
        key = "presentLabels" if presence.get("presence") else "absentLabels"
        builder.args.setdefault(NODE_LABEL, {}).setdefault(key, []).extend(
            list(presence.get("labels") or []))
        return "CheckNodeLabelPresence"
    raise PolicyError(f"predicate {name}: unknown argument {sorted(argument)}; known: "
                      "labelsPresence, serviceAffinity")


def _entries(policy: Obj, key: str) -> list[Obj] | None:
    entries = policy.get(key)
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise PolicyError(f"{key} must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise PolicyError(f"every entry of {key} needs a name: {entry!r}")
    return entries


def profile_for_policy(policy: Any, args: AlgorithmArgs | None = None,
                       scheduler_name: str = "default-scheduler") -> Profile:
    """The framework profile a v1 Policy (`{"kind": "Policy", "predicates": [...],
    "priorities": [...]}`) stands for. Extenders are not part of a profile (upstream moves
    them to the configuration's `extenders`)."""
    algorithm_args = args or AlgorithmArgs()
    if not isinstance(policy, dict):
        raise PolicyError("a Policy must be a JSON object")
    weight = policy.get("hardPodAffinitySymmetricWeight")
    if weight:  # the Policy's own field wins over the flag, as upstream's createFromConfig
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise PolicyError(f"hardPodAffinitySymmetricWeight must be an integer, not {weight!r}")
        algorithm_args = replace(algorithm_args, hard_pod_affinity_symmetric_weight=weight)
    algorithm_args.check()
    if policy.get("kind", "Policy") != "Policy":
        raise PolicyError(f"kind must be Policy, not {policy.get('kind')!r}")
    builder = _Builder()
    predicates = _entries(policy, "predicates")
    names = (list(DEFAULT_PREDICATES) if predicates is None
             else [_predicate_name(builder, e) for e in predicates])
    _predicates(builder, names)
    priorities = _entries(policy, "priorities")
    if priorities is None:
        priorities = [{"name": n, "weight": w} for n, w in sorted(DEFAULT_PRIORITIES.items())]
    for entry in sorted(priorities, key=lambda e: e["name"]):
        weight = entry.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or weight <= 0:
            raise PolicyError(f"priority {entry['name']} should have a positive weight applied to it")
        _priority(builder, entry["name"], weight, entry.get("argument"), algorithm_args)
    return builder.profile(scheduler_name)


def profile_for_provider(name: str, args: AlgorithmArgs | None = None,
                         scheduler_name: str = "default-scheduler") -> Profile:
    """The profile for an `--algorithm-provider` (DefaultProvider = v1.5's set,
    ClusterAutoscalerProvider, V1.0Provider), through the same mapping as a Policy."""
    if name not in PROVIDERS:
        raise PolicyError(f"unknown algorithm provider {name!r}; known: {', '.join(PROVIDERS)}")
    predicates, priorities = PROVIDERS[name]
    return profile_for_policy({"kind": "Policy",
                               "predicates": [{"name": n} for n in predicates],
                               "priorities": [{"name": n, "weight": w} for n, w in priorities]},
                              args, scheduler_name)

