"""The nominator: which pending pods were promised which node by preemption.

Kubernetes piece: pkg/scheduler/internal/queue/nominator.go (1.31, `nominator`). A preemptor
that evicted victims is nominated to the node (`status.nominatedNodeName`) while the victims
terminate; until it is bound, the scheduling cycle must count it on that node (Filter "with
nominated pods", so a lower-priority pod does not take the freed room), and a later preemption
on that node clears lower-priority nominations. The queue owns one nominator and feeds it from
pod adds, updates and deletes; nominations the scheduler made itself but the API has not
echoed yet are kept across an update that carries no nominatedNodeName (upstream's ModeOverride
case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


def pod_uid(pod: Obj) -> str:
    """The pod's uid, else namespace/name (objects built in tests may lack a uid)."""
    md = pod.get("metadata") or {}
    return md.get("uid") or f"{md.get('namespace', '')}/{md.get('name', '')}"


def nominated_node_name(pod: Obj) -> str:
    return (pod.get("status") or {}).get("nominatedNodeName") or ""


def pod_priority(pod: Obj) -> int:
    """upstream corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return int((pod.get("spec") or {}).get("priority") or 0)


@dataclass(frozen=True)
class NominatingInfo:
    """upstream framework.NominatingInfo: `override` sets `node` (possibly "" to clear);
    otherwise the pod's own status.nominatedNodeName is used (ModeNoop)."""

    node: str = ""
    override: bool = False


class Nominator:
    def __init__(self) -> None:
        #: node name -> the pods nominated to it, in nomination order
        self._by_node: dict[str, list[Obj]] = {}
        #: pod uid -> node name
        self._node_of: dict[str, str] = {}

    def add(self, pod: Obj, info: NominatingInfo | None = None) -> None:
        """upstream AddNominatedPod: (re)nominate `pod`; an assigned pod or one without a
        nominated node is only forgotten."""
        self.delete(pod)
        node = info.node if info is not None and info.override else nominated_node_name(pod)
        if not node or (pod.get("spec") or {}).get("nodeName"):
            return
        self._node_of[pod_uid(pod)] = node
        self._by_node.setdefault(node, []).append(pod)

    def delete(self, pod: Obj) -> None:
        uid = pod_uid(pod)
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        kept = [p for p in self._by_node.get(node, ()) if pod_uid(p) != uid]
        if kept:
            self._by_node[node] = kept
        else:
            self._by_node.pop(node, None)

    def update(self, old: Obj | None, new: Obj) -> None:
        """upstream UpdateNominatedPod: an update that neither adds, changes nor removes a
        nomination keeps the node the scheduler nominated in memory."""
        info = None
        if old is not None and not nominated_node_name(old) and not nominated_node_name(new):
            node = self._node_of.get(pod_uid(old))
            if node:
                info = NominatingInfo(node, override=True)
        if old is not None:
            self.delete(old)
        self.add(new, info)

    def node_of(self, pod: Obj) -> str:
        return self._node_of.get(pod_uid(pod), "")

    def nominated_pods_for_node(self, node: str) -> list[Obj]:
        """upstream NominatedPodsForNode (a copy: callers iterate while the queue changes)."""
        return list(self._by_node.get(node, ()))

    def nodes(self) -> list[str]:
        return list(self._by_node)
