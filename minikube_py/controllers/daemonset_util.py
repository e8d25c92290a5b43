"""The DaemonSet controller's decisions, as pure functions over plain objects.

Kubernetes pieces: pkg/controller/daemon/util/daemonset_util.go (CreatePodTemplate,
AddOrUpdateDaemonPodTolerations, ReplaceDaemonSetPodNodeNameNodeAffinity, GetTargetNodeName,
IsPodUpdated, SurgeCount/UnavailableCount), daemon_controller.go (NodeShouldRunDaemonPod,
predicates, podsShouldBeOnNode, the status counts of updateDaemonSetStatus) and update.go
(rollingUpdate's maxSurge = 0 and maxSurge > 0 plans, findUpdatedPodsOnNode).

Why pure: every sync asks these questions for every node (a thousand of them in the
benchmark), and each answer depends only on the DaemonSet, the node and the node's daemon
pods; the controller around them only reads informers and calls the API.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from ..api.nodeaffinity import (
    find_untolerated_taint,
    node_taints,
    required_affinity_matches,
)
from ..api.taints import NO_EXECUTE, NO_SCHEDULE, NOT_READY, UNREACHABLE
from .conditions import is_pod_ready
from .controller_utils import by_creation, is_pod_available
from .history import REVISION_HASH_LABEL

Obj = dict[str, Any]

#: extensions.DaemonSetTemplateGenerationKey: the template generation a pod was made from
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
PID_PRESSURE = "node.kubernetes.io/pid-pressure"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
NODE_NAME_FIELD = "metadata.name"


# ---------------------------------------------------------------------------------------------
# The pod a DaemonSet creates


def _add_toleration(tolerations: list[Obj], key: str, effect: str) -> None:
    """AddOrUpdateTolerationInPodSpec: an Exists toleration of `key`, replacing one with the
    same key and effect."""
    wanted = {"key": key, "operator": "Exists", "effect": effect}
    for i, existing in enumerate(tolerations):
        if existing.get("key") == key and existing.get("effect") == effect:
            tolerations[i] = wanted
            return
    tolerations.append(wanted)


def add_daemon_tolerations(spec: Obj) -> None:
    """AddOrUpdateDaemonPodTolerations: daemon pods survive not-ready and unreachable nodes
    and are scheduled despite pressure, cordons, and (for host-network pods) a missing
    network."""
    tolerations = [t for t in spec.get("tolerations") or () if isinstance(t, dict)]
    for key in (NOT_READY, UNREACHABLE):
        _add_toleration(tolerations, key, NO_EXECUTE)
    for key in (DISK_PRESSURE, MEMORY_PRESSURE, PID_PRESSURE, UNSCHEDULABLE):
        _add_toleration(tolerations, key, NO_SCHEDULE)
    if spec.get("hostNetwork"):
        _add_toleration(tolerations, NETWORK_UNAVAILABLE, NO_SCHEDULE)
    spec["tolerations"] = tolerations


def template_generation(ds: Obj) -> int | None:
    raw = ((ds.get("metadata") or {}).get("annotations") or {}).get(
        "deprecated.daemonset.template.generation")
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def pod_template(ds: Obj, hash_: str) -> Obj:
    """CreatePodTemplate: the DaemonSet's template with the automatic tolerations and the
    generation and revision-hash labels."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    spec = template.setdefault("spec", {})
    add_daemon_tolerations(spec)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    generation = template_generation(ds)
    if generation is not None:
        labels[TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash_:
        labels[REVISION_HASH_LABEL] = hash_
    template.setdefault("metadata", {})["labels"] = labels
    return template


def node_name_affinity(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}]}


def pin_to_node(template: Obj, node_name: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: a copy of the template whose required node
    affinity is exactly `metadata.name In [node]` (the scheduler places it; the controller
    already checked the DaemonSet's own selection terms)."""
    pinned = {**template, "spec": dict(template.get("spec") or {})}
    spec = pinned["spec"]
    affinity = dict(spec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = node_name_affinity(node_name)
    affinity["nodeAffinity"] = node_affinity
    spec["affinity"] = affinity
    return pinned


def target_node_name(pod: Obj) -> str | None:
    """GetTargetNodeName: spec.nodeName, else the node its pinning affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or ():
        for expr in (term or {}).get("matchFields") or ():
            values = expr.get("values") or ()
            if (expr.get("key") == NODE_NAME_FIELD and expr.get("operator") == "In"
                    and len(values) == 1):
                return values[0]
    return None


def is_pod_updated(pod: Obj, hash_: str, generation: int | None) -> bool:
    """IsPodUpdated: the pod carries the current revision hash or template generation."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    template_matches = generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(
        generation)
    hash_matches = bool(hash_) and labels.get(REVISION_HASH_LABEL) == hash_
    return hash_matches or template_matches


# ---------------------------------------------------------------------------------------------
# Which nodes run a daemon pod


def daemon_pod_spec(ds: Obj) -> Obj:
    """The pod spec the node checks use (NewPod): the template's, with the automatic
    tolerations. Computed once per sync, asked once per node."""
    spec = dict(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    add_daemon_tolerations(spec)
    return spec


def should_run(spec: Obj, node: Obj) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod over `daemon_pod_spec(ds)`: (should run a new pod here, may
    keep running one here)."""
    name = (node.get("metadata") or {}).get("name", "")
    if spec.get("nodeName") and spec["nodeName"] != name:
        return False, False
    if not required_affinity_matches(spec, node):
        return False, False
    taints = node_taints(node)
    if not taints:  # most nodes: nothing to tolerate
        return True, True
    if find_untolerated_taint(taints, spec,
                              lambda t: t[2] in (NO_SCHEDULE, NO_EXECUTE)) is None:
        return True, True
    # a scheduled daemon pod keeps running while it tolerates every NoExecute taint
    return False, find_untolerated_taint(taints, spec, lambda t: t[2] == NO_EXECUTE) is None


def _by_creation_and_phase(pod: Obj) -> tuple:
    """podByCreationTimestampAndPhase: oldest first (running before pending on ties)."""
    return (*by_creation(pod), 0 if (pod.get("status") or {}).get("phase") == "Running" else 1)


def pods_by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
    """getNodesToDaemonPods: the claimed pods grouped by their target node."""
    grouped: dict[str, list[Obj]] = {}
    for pod in pods:
        node = target_node_name(pod)
        if node is not None:
            grouped.setdefault(node, []).append(pod)
    return grouped


@dataclass
class NodePlan:
    """What `manage` decided: nodes needing a pod, pods to delete, and failed pods (node,
    pod) to delete unless their node's backoff holds them back."""

    create_on: list[str] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    failed: list[tuple[str, Obj]] = field(default_factory=list)


class FailedPodBackoff:
    """failedPodsBackoff (flowcontrol.NewBackOff(1 s, 15 min)) per DaemonSet and node: a
    daemon pod the kubelet keeps rejecting is not deleted and recreated in a hot loop."""

    def __init__(self, initial: float = 1.0, maximum: float = 900.0) -> None:
        self.initial, self.maximum = initial, maximum
        self._entries: dict[str, tuple[float, float]] = {}  # key -> (last update, delay)

    def wait(self, key: str, now: float) -> float:
        """Seconds left in the key's backoff (0: not in backoff; IsInBackOffSinceUpdate)."""
        entry = self._entries.get(key)
        if entry is None:
            return 0.0
        return max(0.0, entry[0] + entry[1] - now)

    def next(self, key: str, now: float) -> None:
        """Next: start at `initial`, double per failure, reset after 2 x maximum of quiet."""
        entry = self._entries.get(key)
        if entry is None or now - entry[0] > 2 * self.maximum:
            delay = self.initial
        else:
            delay = min(entry[1] * 2, self.maximum)
        self._entries[key] = (now, delay)


Verdict = tuple[bool, bool]


def verdicts(spec: Obj, nodes: list[Obj]) -> dict[str, Verdict]:
    """should_run for every node, once per sync (`spec`: daemon_pod_spec(ds))."""
    return {(n.get("metadata") or {}).get("name", ""): should_run(spec, n) for n in nodes}


def plan_node(ds: Obj, verdict: Verdict, name: str, pods: list[Obj], hash_: str, now: float,
              plan: NodePlan) -> None:
    """podsShouldBeOnNode for one node, given its should_run `verdict`."""
    run, keep = verdict
    if run and not pods:
        plan.create_on.append(name)
        return
    if not keep:
        plan.delete.extend(p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp"))
        return
    running = []
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Failed":
            plan.failed.append((name, pod))
        elif phase == "Succeeded":
            plan.delete.append(pod)
        else:
            running.append(pod)
    if len(running) <= 1:
        return
    running.sort(key=_by_creation_and_phase)
    if not allows_surge(ds):
        plan.delete.extend(running[1:])
        return
    # surge: keep the oldest new pod, and the oldest old pod only while the new one is not
    # available yet and the old one is ready
    oldest_new = oldest_old = None
    for pod in running:
        is_new = ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH_LABEL) == hash_
        if is_new and oldest_new is None:
            oldest_new = pod
        elif not is_new and oldest_old is None:
            oldest_old = pod
        else:
            plan.delete.append(pod)
    if oldest_new is not None and oldest_old is not None:
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if not is_pod_ready(oldest_old) or is_pod_available(oldest_new, min_ready, now):
            plan.delete.append(oldest_old)


# ---------------------------------------------------------------------------------------------
# Rolling update


def _rolling(ds: Obj) -> Obj:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    return strategy.get("rollingUpdate") or {} if strategy.get("type") == "RollingUpdate" else {}


def scaled_value(value: Any, total: int) -> int:
    """GetScaledValueFromIntOrPercent rounding up."""
    if isinstance(value, str) and value.endswith("%"):
        try:
            return math.ceil(int(value[:-1]) * total / 100)
        except ValueError:
            return 0
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def allows_surge(ds: Obj) -> bool:
    return scaled_value(_rolling(ds).get("maxSurge"), 1) != 0


def surge_and_unavailable(ds: Obj, desired: int) -> tuple[int, int]:
    """updatedDesiredNodeCounts: maxSurge and maxUnavailable scaled to the desired count;
    both 0 (a percentage rounded away) means one at a time."""
    rolling = _rolling(ds)
    surge = scaled_value(rolling.get("maxSurge"), desired)
    unavailable = scaled_value(rolling.get("maxUnavailable"), desired)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def updated_pods_on_node(pods: list[Obj], hash_: str,
                         generation: int | None) -> tuple[Obj | None, Obj | None, bool]:
    """findUpdatedPodsOnNode: (new pod, old pod, ok) — not ok with two of either kind."""
    new = old = None
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def rolling_update_plan(ds: Obj, by_node: dict[str, list[Obj]], desired_nodes: list[str],
                        hash_: str, now: float) -> tuple[list[Obj], list[str]]:
    """rollingUpdate: (old pods to delete, nodes to create a surge pod on)."""
    generation = template_generation(ds)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    surge, max_unavailable = surge_and_unavailable(ds, len(desired_nodes))
    nodes = {name: by_node.get(name, []) for name in desired_nodes}
    for name, pods in by_node.items():
        nodes.setdefault(name, pods)
    if surge == 0:
        unavailable = 0
        replace: list[Obj] = []
        candidates: list[Obj] = []
        for name in sorted(nodes):
            new, old, ok = updated_pods_on_node(nodes[name], hash_, generation)
            if not ok or (new is None) == (old is None):
                unavailable += 1
            elif new is not None:
                if not is_pod_available(new, min_ready, now):
                    unavailable += 1
            elif not is_pod_available(old, min_ready, now):
                replace.append(old)
            elif unavailable < max_unavailable:
                candidates.append(old)
        room = max(0, min(max_unavailable - unavailable, len(candidates)))
        return replace + candidates[:room], []
    surging = 0
    allowed: list[str] = []
    candidate_nodes: list[str] = []
    delete: list[Obj] = []
    for name in sorted(nodes):
        new, old, ok = updated_pods_on_node(nodes[name], hash_, generation)
        if not ok or old is None:
            continue
        if new is None:
            if not is_pod_available(old, min_ready, now):
                allowed.append(name)
            elif surging < surge:
                candidate_nodes.append(name)
        elif not is_pod_available(new, min_ready, now):
            surging += 1
        else:
            delete.append(old)
    room = max(0, min(surge - surging, len(candidate_nodes)))
    return delete, allowed + candidate_nodes[:room]


# ---------------------------------------------------------------------------------------------
# Status


def calculate_status(ds: Obj, node_verdicts: dict[str, Verdict],
                     by_node: dict[str, list[Obj]], hash_: str, now: float) -> Obj:
    """updateDaemonSetStatus's counts over every node (`node_verdicts`: verdicts())."""
    desired = current = ready = available = updated = misscheduled = 0
    generation = template_generation(ds)
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    for name, (run, _) in node_verdicts.items():
        pods = by_node.get(name, [])
        if not run:
            if pods:
                misscheduled += 1
            continue
        desired += 1
        if not pods:
            continue
        current += 1
        pod = min(pods, key=_by_creation_and_phase)
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
        if is_pod_updated(pod, hash_, generation):
            updated += 1
    status = {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
              "desiredNumberScheduled": desired, "numberReady": ready,
              "updatedNumberScheduled": updated, "numberAvailable": available}
    if desired - available:
        status["numberUnavailable"] = desired - available
    return status
