"""Upstream's defaults for a decoded KubeSchedulerConfiguration and for every in-tree plugin's args.

Kubernetes piece: pkg/scheduler/apis/config/v1/defaults.go (1.31): SetDefaults_KubeSchedulerConfiguration
(parallelism 16, one `default-scheduler` profile, percentageOfNodesToScore 0 = adaptive, lease
leader election in kube-system/kube-scheduler, client QPS 50 / burst 100 / protobuf, backoff 1 s
to 10 s, profiling on), setDefaults_KubeSchedulerProfile (the default plugins merged in through
mergePlugins, then an args object for every enabled plugin that has an args kind) and the
SetDefaults_<Plugin>Args functions. Feature-gated defaults follow 1.31's gates:
VolumeCapacityPriority is off, so VolumeBindingArgs gets no `shape`.

Works on the versioned document (v1 field names), returning a defaulted deep copy: that is
what /configz shows, and what `convert` turns into the runtime's types. Pure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .default_plugins import default_plugins, merge_plugins, plugin_names
from .scheme import API_VERSION, ARGS_KINDS

Obj = dict[str, Any]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: config.DefaultPercentageOfNodesToScore: 0 means "adaptive" (numFeasibleNodesToFind)
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0


def _resource_spec() -> list[Obj]:
    return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _default_preemption(args: Obj) -> None:
    args.setdefault("minCandidateNodesPercentage", 10)
    args.setdefault("minCandidateNodesAbsolute", 100)


def _inter_pod_affinity(args: Obj) -> None:
    if args.get("hardPodAffinityWeight") is None:
        args["hardPodAffinityWeight"] = 1
    # a plain bool upstream (no pointer): always printed
    args.setdefault("ignorePreferredTermsOfExistingPods", False)


def _volume_binding(args: Obj) -> None:
    if args.get("bindTimeoutSeconds") is None:
        args["bindTimeoutSeconds"] = 600


def _weights_to_one(resources: list[Obj]) -> None:
    """A weight left out or explicitly 0 becomes 1 (upstream's comment: same thing)."""
    for resource in resources:
        if not resource.get("weight"):
            resource["weight"] = 1


def _balanced_allocation(args: Obj) -> None:
    if not args.get("resources"):
        args["resources"] = _resource_spec()
        return
    _weights_to_one(args["resources"])


def _pod_topology_spread(args: Obj) -> None:
    if not args.get("defaultingType"):
        args["defaultingType"] = "System"


def _node_resources_fit(args: Obj) -> None:
    strategy = args.get("scoringStrategy")
    if strategy is None:
        strategy = args["scoringStrategy"] = {"type": "LeastAllocated",
                                              "resources": _resource_spec()}
    if not strategy.get("resources"):
        strategy["resources"] = _resource_spec()
    _weights_to_one(strategy["resources"])


#: args kind -> SetDefaults_<kind> (NodeAffinityArgs has none)
ARGS_DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "DefaultPreemptionArgs": _default_preemption,
    "InterPodAffinityArgs": _inter_pod_affinity,
    "VolumeBindingArgs": _volume_binding,
    "NodeResourcesBalancedAllocationArgs": _balanced_allocation,
    "PodTopologySpreadArgs": _pod_topology_spread,
    "NodeResourcesFitArgs": _node_resources_fit,
}


def default_args(plugin: str, args: Obj | None) -> Obj | None:
    """The defaulted args object of an in-tree plugin (with apiVersion and kind, as upstream's
    scheme sets the GVK); None for a plugin without an args kind (out-of-tree or argless)."""
    kind = f"{plugin}Args"
    if kind not in ARGS_KINDS:
        return None
    out = copy.deepcopy(args) if args else {}
    out["apiVersion"] = API_VERSION
    out["kind"] = kind
    defaulter = ARGS_DEFAULTERS.get(kind)
    if defaulter is not None:
        defaulter(out)
    return out


def default_profile(profile: Obj) -> None:
    """setDefaults_KubeSchedulerProfile, in place on a copy."""
    profile["plugins"] = merge_plugins(default_plugins(), profile.get("plugins"))
    configs = profile.get("pluginConfig") or []
    existing = set()
    for entry in configs:
        existing.add(entry.get("name", ""))
        defaulted = default_args(entry.get("name", ""), entry.get("args"))
        if defaulted is not None:
            entry["args"] = defaulted
    for name in plugin_names(profile["plugins"]):
        if name in existing:
            continue
        defaulted = default_args(name, None)
        if defaulted is not None:
            configs.append({"name": name, "args": defaulted})
    profile["pluginConfig"] = configs


def set_defaults(doc: Obj) -> Obj:
    """SetDefaults_KubeSchedulerConfiguration on a deep copy of a decoded document."""
    out = copy.deepcopy(doc)
    if out.get("parallelism") is None:
        out["parallelism"] = 16
    profiles = out.get("profiles") or [{}]
    profiles = [p if isinstance(p, dict) else {} for p in profiles]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for profile in profiles:
        default_profile(profile)
    out["profiles"] = profiles
    if out.get("percentageOfNodesToScore") is None:
        out["percentageOfNodesToScore"] = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    given = out.get("leaderElection") or {}
    # component-base RecommendedDefaultLeaderElectionConfiguration, then the scheduler's lock
    leader = {"leaderElect": True if given.get("leaderElect") is None else given["leaderElect"],
              "leaseDuration": given.get("leaseDuration") or "15s",
              "renewDeadline": given.get("renewDeadline") or "10s",
              "retryPeriod": given.get("retryPeriod") or "2s",
              "resourceLock": given.get("resourceLock") or "leases",  # Lease locks since 1.20
              "resourceName": given.get("resourceName") or "kube-scheduler",
              "resourceNamespace": given.get("resourceNamespace") or "kube-system"}
    out["leaderElection"] = leader
    given = out.get("clientConnection") or {}
    client = {"kubeconfig": given.get("kubeconfig") or "",
              "acceptContentTypes": given.get("acceptContentTypes") or "",
              "contentType": given.get("contentType") or "application/vnd.kubernetes.protobuf",
              # the scheduler's own opinion on QPS/burst, over the generic defaults
              "qps": given.get("qps") or 50, "burst": given.get("burst") or 100}
    out["clientConnection"] = client
    if out.get("podInitialBackoffSeconds") is None:
        out["podInitialBackoffSeconds"] = 1
    if out.get("podMaxBackoffSeconds") is None:
        out["podMaxBackoffSeconds"] = 10
    if out.get("enableProfiling") is None:
        out["enableProfiling"] = True
    if out["enableProfiling"] and out.get("enableContentionProfiling") is None:
        out["enableContentionProfiling"] = True
    return out
