"""Algorithm providers and Policy files: which predicates and priorities a scheduler runs.

Kubernetes v1.0 piece: plugin/pkg/scheduler/factory (CreateFromProvider, CreateFromConfig,
RegisterCustomFitPredicate / RegisterCustomPriorityFunction), algorithmprovider/defaults
(DefaultProvider) and api/validation (ValidatePolicy). A Policy file is v1.0's JSON
`{"kind": "Policy", "apiVersion": "v1", "predicates": [...], "priorities": [...],
"extenders": [...]}`; entries with an `argument` build a configured predicate or priority
(labelsPresence, serviceAffinity, labelPreference, serviceAntiAffinity) under the entry's own
name. Unknown names fail at start, naming what exists — never a silent default.

Providers (issue 7): `DefaultProvider` is v1.5's set (algorithmprovider/defaults.go
defaultPredicates / defaultPriorities), `ClusterAutoscalerProvider` the same with
MostRequestedPriority for LeastRequestedPriority, and `V1.0Provider` v1.0's original five
predicates and three priorities. Predicates that read PersistentVolumes and claims, and the
inter-pod ones that take scheduler flags (`AlgorithmArgs`: --hard-pod-affinity-symmetric-weight,
--failure-domains, --max-*-volumes), are built here per algorithm (`BUILT_PREDICATES`,
`BUILT_PRIORITIES`) whether a provider or a Policy names them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any

from .algorithm.cluster_listers import ClusterListers
from .algorithm.pod_affinity import DEFAULT_FAILURE_DOMAINS, DEFAULT_HARD_POD_AFFINITY_WEIGHT
from .algorithm.predicates import (
    PREDICATES,
    NodeLister,
    PodLister,
    Predicate,
    ServiceLister,
    check_node_label_presence,
    check_service_affinity,
)
from .algorithm.predicates_affinity import match_inter_pod_affinity
from .algorithm.predicates_volume_count import (
    AZURE_DISK,
    DEFAULT_MAX_AZURE_DISK_VOLUMES,
    DEFAULT_MAX_EBS_VOLUMES,
    DEFAULT_MAX_GCE_PD_VOLUMES,
    EBS,
    GCE_PD,
    max_pd_volume_count,
    max_volumes_default,
    no_disk_conflict_with_claims,
)
from .algorithm.predicates_volume_zone import check_volume_binding, no_volume_zone_conflict
from .algorithm.priorities import (
    PRIORITIES,
    PriorityConfig,
    PriorityFunction,
    inter_pod_affinity_priority,
    node_label_priority,
    service_anti_affinity,
)
from .algorithm.volume_listers import VolumeListers

#: v1.5's algorithmprovider/defaults.go: defaultPredicates() (listed in later upstream's
#: predicatesOrdering, cheapest and most decisive first) and defaultPriorities()
V1_5_PREDICATES = (
    "GeneralPredicates", "NoDiskConflict", "PodToleratesNodeTaints", "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount", "NoVolumeZoneConflict", "CheckNodeMemoryPressure",
    "CheckNodeDiskPressure", "MatchInterPodAffinity",
)
V1_5_PRIORITIES = (
    ("SelectorSpreadPriority", 1), ("InterPodAffinityPriority", 1),
    ("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
    ("NodePreferAvoidPodsPriority", 10000), ("NodeAffinityPriority", 1),
    ("TaintTolerationPriority", 1),
)
DEFAULT_PROVIDER = "DefaultProvider"
#: v1.0's DefaultProvider, kept under its own name (the learning path starts there)
V1_0_PROVIDER = "V1.0Provider"
PROVIDERS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {
    DEFAULT_PROVIDER: (V1_5_PREDICATES, V1_5_PRIORITIES),
    # upstream copyAndReplace(defaultPriorities(), "LeastRequestedPriority", "MostRequested...")
    "ClusterAutoscalerProvider": (V1_5_PREDICATES, tuple(
        ("MostRequestedPriority" if n == "LeastRequestedPriority" else n, w)
        for n, w in V1_5_PRIORITIES)),
    V1_0_PROVIDER: (
        ("PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName"),
        (("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
         ("ServiceSpreadingPriority", 1)),
    ),
}

#: providers of the v1.0 scheduler, whose findNodesThatFit stopped at a node's first failing
#: predicate (the others, and Policy files, run v1.5's podFitsOnNode: every reason counts)
FIRST_FAILURE_PROVIDERS = frozenset({V1_0_PROVIDER})


@dataclass(frozen=True)
class AlgorithmArgs:
    """The scheduler flags predicates and priorities take (upstream PluginFactoryArgs'
    HardPodAffinitySymmetricWeight and FailureDomains, and the volume limits that upstream
    read from KUBE_MAX_PD_VOLS). Field names are the flags' dests, for `options_from`; a
    limit of None is upstream's default (KUBE_MAX_PD_VOLS when set, else 39 / 16 / 16)."""

    hard_pod_affinity_symmetric_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    failure_domains: str = ",".join(DEFAULT_FAILURE_DOMAINS)
    max_ebs_volumes: int | None = None
    max_gce_pd_volumes: int | None = None
    max_azure_disk_volumes: int | None = None

    def domains(self) -> tuple[str, ...]:
        return tuple(d.strip() for d in self.failure_domains.split(",") if d.strip())

    def check(self) -> None:
        weight = self.hard_pod_affinity_symmetric_weight
        if not 0 <= weight <= 100:  # upstream ValidatePolicy / options validation
            raise PolicyError(f"--hard-pod-affinity-symmetric-weight must be in 0-100, "
                              f"not {weight}")
        for name in ("max_ebs_volumes", "max_gce_pd_volumes", "max_azure_disk_volumes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise PolicyError(f"--{name.replace('_', '-')} must be positive, not {value}")

    def limit(self, value: int | None, default: int) -> int:
        return value if value is not None else max_volumes_default(default)


PredicateBuilder = Callable[[AlgorithmArgs, VolumeListers], Predicate]
#: predicates built per algorithm: from the flags, or over the PV/PVC listers
BUILT_PREDICATES: dict[str, PredicateBuilder] = {
    "MatchInterPodAffinity": lambda args, _v: match_inter_pod_affinity(args.domains()),
    "NoVolumeZoneConflict": lambda _a, volumes: no_volume_zone_conflict(volumes),
    "CheckVolumeBinding": lambda _a, volumes: check_volume_binding(volumes),
    "NoDiskConflict": lambda _a, volumes: no_disk_conflict_with_claims(volumes),
    "MaxEBSVolumeCount": lambda args, volumes: max_pd_volume_count(
        EBS, args.limit(args.max_ebs_volumes, DEFAULT_MAX_EBS_VOLUMES), volumes),
    "MaxGCEPDVolumeCount": lambda args, volumes: max_pd_volume_count(
        GCE_PD, args.limit(args.max_gce_pd_volumes, DEFAULT_MAX_GCE_PD_VOLUMES), volumes),
    "MaxAzureDiskVolumeCount": lambda args, volumes: max_pd_volume_count(
        AZURE_DISK, args.limit(args.max_azure_disk_volumes, DEFAULT_MAX_AZURE_DISK_VOLUMES),
        volumes),
}
#: the built predicates that read PersistentVolumes / claims
VOLUME_PREDICATES = frozenset(BUILT_PREDICATES) - {"MatchInterPodAffinity"}
BUILT_PRIORITIES: dict[str, Callable[[AlgorithmArgs], PriorityFunction]] = {
    "InterPodAffinityPriority": lambda args: inter_pod_affinity_priority(
        args.hard_pod_affinity_symmetric_weight, args.domains()),
}


class PolicyError(ValueError):
    """A Policy or provider that cannot be used, with a message naming the problem."""


@dataclass(frozen=True)
class ExtenderConfig:
    """An HTTP extender (api/types.go ExtenderConfig)."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 1
    enable_https: bool = False
    http_timeout: float = 5.0


@dataclass
class Algorithm:
    """What a scheduler runs: predicates by name, weighted priorities, extenders."""

    predicates: dict[str, Predicate]
    priorities: list[PriorityConfig]
    extenders: list[ExtenderConfig] = field(default_factory=list)
    #: what the volume predicates read; the scheduler plugs its PV/PVC informers in
    volumes: VolumeListers = field(default_factory=VolumeListers)
    #: what serviceAffinity reads (services, scheduled pods, nodes); the scheduler binds it
    listers: ClusterListers = field(default_factory=ClusterListers)
    #: charge a failing node with every failing predicate's reasons (v1.5 podFitsOnNode)
    #: rather than its first (v1.0 findNodesThatFit)
    check_all_predicates: bool = True


@dataclass(frozen=True)
class Listers:
    """What configured predicates need to read (filled from informers by the scheduler)."""

    services: ServiceLister
    pods: PodLister
    nodes: NodeLister


def from_provider(name: str, args: AlgorithmArgs | None = None) -> Algorithm:
    if name not in PROVIDERS:
        raise PolicyError(f"unknown algorithm provider {name!r}; known: {', '.join(PROVIDERS)}")
    args = _checked(args)
    predicate_names, priority_names = PROVIDERS[name]
    volumes = VolumeListers()
    return Algorithm({n: _named_predicate(n, args, volumes) for n in predicate_names},
                     [PriorityConfig(n, _named_priority(n, args), w) for n, w in priority_names],
                     volumes=volumes, check_all_predicates=name not in FIRST_FAILURE_PROVIDERS)


def _checked(args: AlgorithmArgs | None) -> AlgorithmArgs:
    args = args or AlgorithmArgs()
    args.check()
    return args


def _named_predicate(name: str, args: AlgorithmArgs, volumes: VolumeListers) -> Predicate:
    builder = BUILT_PREDICATES.get(name)
    if builder is not None:
        volumes.needed |= name in VOLUME_PREDICATES
        return builder(args, volumes)
    if name not in PREDICATES:
        known = sorted({*PREDICATES, *BUILT_PREDICATES})
        raise PolicyError(f"unknown predicate {name!r}; known: {', '.join(known)}")
    return PREDICATES[name]


def _named_priority(name: str, args: AlgorithmArgs) -> PriorityFunction:
    builder = BUILT_PRIORITIES.get(name)
    if builder is not None:
        return builder(args)
    if name not in PRIORITIES:
        raise PolicyError(f"unknown priority {name!r}; known: {', '.join(sorted(PRIORITIES))}")
    return PRIORITIES[name]


def load_policy(path: str | Path, listers: Listers | None = None,
                args: AlgorithmArgs | None = None) -> Algorithm:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {path}: {exc.strerror or exc}") from None
    try:
        policy = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyError(f"policy file {path} is not valid JSON: line {exc.lineno} column "
                          f"{exc.colno}: {exc.msg}") from None
    try:
        return from_policy(policy, listers, args)
    except PolicyError as exc:
        raise PolicyError(f"policy file {path}: {exc}") from None


def from_policy(policy: Any, listers: Listers | None = None,
                args: AlgorithmArgs | None = None) -> Algorithm:
    """`listers`: fixed sources for serviceAffinity (tests); without them the predicates read
    the Algorithm's ClusterListers, which the Scheduler binds to its informers and cache."""
    args = _checked(args)
    volumes = VolumeListers()
    cluster = ClusterListers()
    sources: Listers = listers or Listers(cluster, cluster, cluster)
    if not isinstance(policy, dict):
        raise PolicyError("a Policy must be a JSON object")
    if policy.get("kind", "Policy") != "Policy":
        raise PolicyError(f"kind must be Policy, not {policy.get('kind')!r}")
    predicates = {}
    for entry in _entries(policy, "predicates"):
        name = entry["name"]
        predicates[name] = _predicate(name, entry.get("argument"), sources, args, volumes)
    priorities = []
    for entry in _entries(policy, "priorities"):
        name = entry["name"]
        weight = entry.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or weight <= 0:
            raise PolicyError(f"priority {name} should have a positive weight applied to it")
        priorities.append(PriorityConfig(name, _priority(name, entry.get("argument"), args),
                                         weight))
    extenders = [_extender(e) for e in policy.get("extenders") or policy.get("extenderConfigs") or []]
    return Algorithm(predicates, priorities, extenders, volumes, cluster)


def _entries(policy: dict, key: str) -> list[dict]:
    entries = policy.get(key) or []
    if not isinstance(entries, list):
        raise PolicyError(f"{key} must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise PolicyError(f"every entry of {key} needs a name: {entry!r}")
    return entries


def _predicate(name: str, argument: Any, listers: Listers, args: AlgorithmArgs,
               volumes: VolumeListers) -> Predicate:
    if argument:
        if "labelsPresence" in argument:
            arg = argument["labelsPresence"]
            return check_node_label_presence(list(arg.get("labels") or []),
                                             bool(arg.get("presence")))
        if "serviceAffinity" in argument:
            return check_service_affinity(list(argument["serviceAffinity"].get("labels") or []),
                                          listers.services, listers.pods, listers.nodes)
        raise PolicyError(f"predicate {name}: unknown argument {sorted(argument)}; known: "
                          "labelsPresence, serviceAffinity")
    return _named_predicate(name, args, volumes)


def _priority(name: str, argument: Any, args: AlgorithmArgs) -> PriorityFunction:
    if argument:
        if "labelPreference" in argument:
            arg = argument["labelPreference"]
            return node_label_priority(str(arg.get("label", "")), bool(arg.get("presence")))
        if "serviceAntiAffinity" in argument:
            return service_anti_affinity(str(argument["serviceAntiAffinity"].get("label", "")))
        raise PolicyError(f"priority {name}: unknown argument {sorted(argument)}; known: "
                          "labelPreference, serviceAntiAffinity")
    return _named_priority(name, args)


def _extender(entry: Any) -> ExtenderConfig:
    if not isinstance(entry, dict) or not entry.get("urlPrefix"):
        raise PolicyError(f"an extender needs a urlPrefix: {entry!r}")
    weight = entry.get("weight", 1)
    if not isinstance(weight, int) or weight <= 0:
        raise PolicyError(f"extender {entry['urlPrefix']}: weight must be positive")
    timeout = entry.get("httpTimeout", 5.0)
    if isinstance(timeout, (int, float)) and timeout > 1000:  # Go durations in nanoseconds
        timeout = timeout / 1e9
    return ExtenderConfig(entry["urlPrefix"], entry.get("filterVerb", ""),
                          entry.get("prioritizeVerb", ""), weight,
                          bool(entry.get("enableHttps")), float(timeout))
