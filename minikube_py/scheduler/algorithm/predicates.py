"""Fit predicates: can this pod run on this node? Pure functions, registered by name.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/predicates.go (v1.0 PodFitsPorts,
PodFitsResources, NoDiskConflict, MatchNodeSelector, HostName; later upstream node affinity,
taints and tolerations, the node pressure and condition checks, GeneralPredicates) and the
names defaults.go registers them under, which a scheduler Policy file refers to.

Each predicate takes the pod's `PodMeta` (computed once per scheduling attempt) and a node's
`NodeInfo` and answers `(fits, reasons)`; the reasons are the strings `FailedScheduling`
events count ("0/3 nodes are available: 3 Insufficient cpu."). Per node a predicate does a
few comparisons against memoised `NodeFacts`; it never lists pods or parses quantities.
The two predicates that take Policy arguments are factories in `predicates_service`.
"""

from __future__ import annotations

from ..nodeinfo import NodeInfo
from .predicates_errors import (
    ERR_DISK_CONFLICT,
    ERR_INSUFFICIENT_CPU,
    ERR_INSUFFICIENT_MEMORY,
    ERR_NODE_NOT_FOUND,
    ERR_NODE_SELECTOR_NOT_MATCH,
    ERR_NODE_UNDER_DISK_PRESSURE,
    ERR_NODE_UNDER_MEMORY_PRESSURE,
    ERR_NODE_UNSCHEDULABLE,
    ERR_POD_NOT_FITS_HOST_PORTS,
    ERR_POD_NOT_MATCH_HOST_NAME,
    ERR_TAINTS_TOLERATIONS_NOT_MATCH,
    ERR_TOO_MANY_PODS,
)
from .predicates_meta import (
    FitResult,
    NodeFacts,
    PodMeta,
    Predicate,
    node_facts,
    tolerates,
)
from .predicates_service import (
    NodeLister,
    PodLister,
    ServiceLister,
    check_node_label_presence,
    check_service_affinity,
)
from .predicates_volumes import any_disk_conflict

__all__ = [
    "GENERAL_PREDICATES", "PREDICATES", "PREDICATE_FACTORIES", "FitResult", "NodeLister",
    "PodLister", "PodMeta", "Predicate", "ServiceLister", "check_node_label_presence",
    "check_service_affinity",
]


def _not_found() -> FitResult:
    return False, [ERR_NODE_NOT_FOUND]


def pod_fits_host_ports(meta: PodMeta, info: NodeInfo) -> FitResult:
    """PodFitsHostPorts (v1.0 PodFitsPorts): no host port of the pod is taken on the node."""
    if meta.host_ports:
        used = info.used_ports
        for port in meta.host_ports:
            if port in used:
                return False, [ERR_POD_NOT_FITS_HOST_PORTS]
    return True, []


def pod_fits_resources(meta: PodMeta, info: NodeInfo) -> FitResult:
    """PodFitsResources: room for one more pod, and the pod's cpu and memory requests fit in
    allocatable minus what the node's pods already request. A pod requesting nothing only
    needs the pod slot. Reports every shortage, as upstream does."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    reasons = []
    if len(info.pods) + 1 > facts.max_pods:
        reasons.append(ERR_TOO_MANY_PODS)
    if not meta.zero_request:
        requested = info.requested
        if facts.milli_cpu < meta.milli_cpu + requested.milli_cpu:
            reasons.append(ERR_INSUFFICIENT_CPU)
        if facts.memory < meta.memory + requested.memory:
            reasons.append(ERR_INSUFFICIENT_MEMORY)
    return not reasons, reasons


def no_disk_conflict(meta: PodMeta, info: NodeInfo) -> FitResult:
    """NoDiskConflict: no GCE PD / EBS / RBD / iSCSI volume of the pod is mounted by a pod on
    the node in a conflicting way (see predicates_volumes for the per-type rules)."""
    if meta.disks and any_disk_conflict(meta.disks, info.pods.values()):
        return False, [ERR_DISK_CONFLICT]
    return True, []


def _matches_node_labels(meta: PodMeta, facts: NodeFacts) -> bool:
    """Upstream podMatchesNodeLabels: nodeSelector AND the required node-affinity terms."""
    node_labels = facts.labels
    for key, value in meta.node_selector:
        if node_labels.get(key) != value:
            return False
    terms = meta.node_affinity
    if terms is None:
        return True
    for term in terms:
        if term(facts):
            return True
    return False


def match_node_selector(meta: PodMeta, info: NodeInfo) -> FitResult:
    """MatchNodeSelector (PodSelectorMatches): spec.nodeSelector is a subset of the node's
    labels and one of the required nodeSelectorTerms matches (terms ORed, expressions ANDed)."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    if _matches_node_labels(meta, facts):
        return True, []
    return False, [ERR_NODE_SELECTOR_NOT_MATCH]


def host_name(meta: PodMeta, info: NodeInfo) -> FitResult:
    """HostName (PodFitsHost): a pod that names its node (spec.nodeName) fits only there."""
    if not meta.node_name:
        return True, []
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    if facts.name == meta.node_name:
        return True, []
    return False, [ERR_POD_NOT_MATCH_HOST_NAME]


def pod_tolerates_node_taints(meta: PodMeta, info: NodeInfo) -> FitResult:
    """PodToleratesNodeTaints: every NoSchedule and NoExecute taint of the node is tolerated.
    PreferNoSchedule taints are left to the TaintToleration priority."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    tolerations = meta.tolerations
    for taint in facts.taints:
        if not any(tolerates(t, taint) for t in tolerations):
            return False, [ERR_TAINTS_TOLERATIONS_NOT_MATCH]
    return True, []


def check_node_memory_pressure(meta: PodMeta, info: NodeInfo) -> FitResult:
    """CheckNodeMemoryPressure: a node reporting MemoryPressure=True takes no BestEffort pod
    (those are the first the kubelet would evict); pods with requests still fit."""
    if not meta.best_effort:
        return True, []
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    if facts.memory_pressure:
        return False, [ERR_NODE_UNDER_MEMORY_PRESSURE]
    return True, []


def check_node_disk_pressure(meta: PodMeta, info: NodeInfo) -> FitResult:
    """CheckNodeDiskPressure: a node reporting DiskPressure=True takes no pod."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    if facts.disk_pressure:
        return False, [ERR_NODE_UNDER_DISK_PRESSURE]
    return True, []


def check_node_condition(meta: PodMeta, info: NodeInfo) -> FitResult:
    """CheckNodeCondition: Ready must be True, OutOfDisk and NetworkUnavailable False (a
    condition the node does not report is not held against it, as upstream)."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    reasons = facts.condition_reasons
    if reasons:
        return False, list(reasons)
    return True, []


def check_node_unschedulable(meta: PodMeta, info: NodeInfo) -> FitResult:
    """CheckNodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that
    tolerate the node.kubernetes.io/unschedulable:NoSchedule taint."""
    facts = node_facts(info)
    if facts is None:
        return _not_found()
    if facts.unschedulable and not meta.tolerates_unschedulable:
        return False, [ERR_NODE_UNSCHEDULABLE]
    return True, []


def general_predicates(meta: PodMeta, info: NodeInfo) -> FitResult:
    """GeneralPredicates: resources, host name, host ports and node selector, all evaluated so
    every reason is reported (the kubelet re-runs this set on admission upstream)."""
    if info.node is None:
        return _not_found()  # upstream stops at the first predicate's "node not found" error
    reasons: list[str] = []
    for predicate in (pod_fits_resources, host_name, pod_fits_host_ports, match_node_selector):
        fits, why = predicate(meta, info)
        if not fits:
            reasons.extend(why)
    return not reasons, reasons


GENERAL_PREDICATES: Predicate = general_predicates

#: every argument-free predicate under its upstream registration name (aliases included)
PREDICATES: dict[str, Predicate] = {
    "PodFitsHostPorts": pod_fits_host_ports,
    "PodFitsPorts": pod_fits_host_ports,  # the v1.0 name, still accepted in Policy files
    "PodFitsResources": pod_fits_resources,
    "NoDiskConflict": no_disk_conflict,
    "MatchNodeSelector": match_node_selector,
    "HostName": host_name,
    "PodToleratesNodeTaints": pod_tolerates_node_taints,
    "CheckNodeMemoryPressure": check_node_memory_pressure,
    "CheckNodeDiskPressure": check_node_disk_pressure,
    "CheckNodeCondition": check_node_condition,
    "CheckNodeUnschedulable": check_node_unschedulable,
    "GeneralPredicates": general_predicates,
}

#: the predicates a Policy configures with arguments, by upstream name
PREDICATE_FACTORIES = {
    "CheckNodeLabelPresence": check_node_label_presence,
    "CheckServiceAffinity": check_service_affinity,
}
