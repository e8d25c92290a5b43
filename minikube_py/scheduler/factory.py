"""Algorithm providers and Policy files: which predicates and priorities a scheduler runs.

Kubernetes v1.0 piece: plugin/pkg/scheduler/factory (CreateFromProvider, CreateFromConfig,
RegisterCustomFitPredicate / RegisterCustomPriorityFunction), algorithmprovider/defaults
(DefaultProvider) and api/validation (ValidatePolicy). A Policy file is v1.0's JSON
`{"kind": "Policy", "apiVersion": "v1", "predicates": [...], "priorities": [...],
"extenders": [...]}`; entries with an `argument` build a configured predicate or priority
(labelsPresence, serviceAffinity, labelPreference, serviceAntiAffinity) under the entry's own
name. Unknown names fail at start, naming what exists — never a silent default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .algorithm.predicates import (
    PREDICATES,
    NodeLister,
    PodLister,
    Predicate,
    ServiceLister,
    check_node_label_presence,
    check_service_affinity,
)
from .algorithm.priorities import (
    PRIORITIES,
    PriorityConfig,
    node_label_priority,
    service_anti_affinity,
)

#: v1.0's DefaultProvider (defaults.go): five predicates, three priorities of weight 1
DEFAULT_PROVIDER = "DefaultProvider"
PROVIDERS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {
    DEFAULT_PROVIDER: (
        ("PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName"),
        (("LeastRequestedPriority", 1), ("BalancedResourceAllocation", 1),
         ("ServiceSpreadingPriority", 1)),
    ),
    # the later default set (v1.5 shape, without the inter-pod and volume pieces of issue 7)
    "ClusterAutoscalerProvider": (
        ("GeneralPredicates", "NoDiskConflict", "PodToleratesNodeTaints",
         "CheckNodeMemoryPressure", "CheckNodeDiskPressure", "CheckNodeCondition",
         "CheckNodeUnschedulable"),
        (("MostRequestedPriority", 1), ("SelectorSpreadPriority", 1),
         ("NodeAffinityPriority", 1), ("TaintTolerationPriority", 1)),
    ),
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


@dataclass(frozen=True)
class Listers:
    """What configured predicates need to read (filled from informers by the scheduler)."""

    services: ServiceLister
    pods: PodLister
    nodes: NodeLister


def from_provider(name: str) -> Algorithm:
    if name not in PROVIDERS:
        raise PolicyError(f"unknown algorithm provider {name!r}; known: {', '.join(PROVIDERS)}")
    predicate_names, priority_names = PROVIDERS[name]
    return Algorithm({n: PREDICATES[n] for n in predicate_names},
                     [PriorityConfig(n, PRIORITIES[n], w) for n, w in priority_names])


def load_policy(path: str | Path, listers: Listers | None = None) -> Algorithm:
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
        return from_policy(policy, listers)
    except PolicyError as exc:
        raise PolicyError(f"policy file {path}: {exc}") from None


def from_policy(policy: Any, listers: Listers | None = None) -> Algorithm:
    if not isinstance(policy, dict):
        raise PolicyError("a Policy must be a JSON object")
    if policy.get("kind", "Policy") != "Policy":
        raise PolicyError(f"kind must be Policy, not {policy.get('kind')!r}")
    predicates = {}
    for entry in _entries(policy, "predicates"):
        name = entry["name"]
        predicates[name] = _predicate(name, entry.get("argument"), listers)
    priorities = []
    for entry in _entries(policy, "priorities"):
        name = entry["name"]
        weight = entry.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or weight <= 0:
            raise PolicyError(f"priority {name} should have a positive weight applied to it")
        priorities.append(PriorityConfig(name, _priority(name, entry.get("argument")), weight))
    extenders = [_extender(e) for e in policy.get("extenders") or policy.get("extenderConfigs") or []]
    return Algorithm(predicates, priorities, extenders)


def _entries(policy: dict, key: str) -> list[dict]:
    entries = policy.get(key) or []
    if not isinstance(entries, list):
        raise PolicyError(f"{key} must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise PolicyError(f"every entry of {key} needs a name: {entry!r}")
    return entries


def _predicate(name: str, argument: Any, listers: Listers | None) -> Predicate:
    if argument:
        if "labelsPresence" in argument:
            arg = argument["labelsPresence"]
            return check_node_label_presence(list(arg.get("labels") or []),
                                             bool(arg.get("presence")))
        if "serviceAffinity" in argument:
            if listers is None:
                raise PolicyError(f"predicate {name}: serviceAffinity needs listers")
            return check_service_affinity(list(argument["serviceAffinity"].get("labels") or []),
                                          listers.services, listers.pods, listers.nodes)
        raise PolicyError(f"predicate {name}: unknown argument {sorted(argument)}; known: "
                          "labelsPresence, serviceAffinity")
    if name not in PREDICATES:
        raise PolicyError(f"unknown predicate {name!r}; known: {', '.join(sorted(PREDICATES))}")
    return PREDICATES[name]


def _priority(name: str, argument: Any):
    if argument:
        if "labelPreference" in argument:
            arg = argument["labelPreference"]
            return node_label_priority(str(arg.get("label", "")), bool(arg.get("presence")))
        if "serviceAntiAffinity" in argument:
            return service_anti_affinity(str(argument["serviceAntiAffinity"].get("label", "")))
        raise PolicyError(f"priority {name}: unknown argument {sorted(argument)}; known: "
                          "labelPreference, serviceAntiAffinity")
    if name not in PRIORITIES:
        raise PolicyError(f"unknown priority {name!r}; known: {', '.join(sorted(PRIORITIES))}")
    return PRIORITIES[name]


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
