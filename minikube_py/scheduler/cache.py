"""The scheduler cache: NodeInfo per node, kept current from informers, plus assumed pods.

Kubernetes piece: plugin/pkg/scheduler/schedulercache/cache.go (v1.5). The scheduler decides
faster than bindings come back through the watch, so a decided pod is *assumed* onto its node
at once (the next decision already sees its requests and ports). When the binding succeeds the
assumption gets a deadline (`ttl`, 30 s): the informer's ADDED/MODIFIED with spec.nodeName
confirms it; if that never comes, the assumption expires. A failed binding forgets it at once.
Pure bookkeeping, no I/O; the clock is injected.

The cache also keeps the NodeTable the algorithm reads (every schedulable node as columns):
each change marks the node's row dirty and `snapshot()` re-reads only dirty rows, so a
decision pays for the one or two nodes that changed since the last one, not for all of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .nodeinfo import NodeInfo, pod_key
from .nodetable import NodeTable, build

Obj = dict[str, Any]
ASSUMED_POD_TTL = 30.0


@dataclass
class _Assumed:
    pod: Obj
    node: str
    deadline: float | None  # None until the binding finished


class SchedulerCache:
    def __init__(self, *, ttl: float = ASSUMED_POD_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self.nodes: dict[str, NodeInfo] = {}
        self.assumed: dict[str, _Assumed] = {}
        self.pod_nodes: dict[str, str] = {}  # pod key -> node it is counted on
        self._table = NodeTable()
        self._dirty: dict[str, None] = {}  # nodes whose row must be re-read, in order
        self._rebuild = False  # a node went away: rows must be renumbered

    # -- nodes ---------------------------------------------------------------------------
    def add_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo()
        info.node = node
        info.generation += 1
        self._dirty.setdefault(name)

    update_node = add_node

    def remove_node(self, node: Obj) -> None:
        info = self.nodes.get(node["metadata"]["name"])
        if info is None:
            return
        info.node = None  # pods may still be reported on it; keep their sums until they go
        if not info.pods:
            del self.nodes[node["metadata"]["name"]]
        self._rebuild = True

    def node_infos(self) -> list[NodeInfo]:
        """Nodes that exist (a NodeInfo kept only for its pods is not schedulable)."""
        return [info for info in self.nodes.values() if info.node is not None]

    def snapshot(self) -> NodeTable:
        """The NodeTable of the schedulable nodes, brought up to date."""
        if self._rebuild:
            self._table = build(self.node_infos())
            self._rebuild = False
        else:
            table = self._table
            for name in self._dirty:
                info = self.nodes.get(name)
                if info is None or info.node is None:
                    continue
                row = table.row_of.get(name)
                if row is None:
                    table.append(info)
                else:
                    table.fill(row)
        self._dirty.clear()
        return self._table

    # -- pods observed through the informer ---------------------------------------------
    def add_pod(self, pod: Obj) -> None:
        """A bound pod seen in the API: confirms an assumption or is counted on its node."""
        key = pod_key(pod)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        self.assumed.pop(key, None)
        self._place(key, pod, node)

    def update_pod(self, old: Obj, new: Obj) -> None:
        if (new.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            self.remove_pod(new)  # finished pods no longer hold resources
        else:
            self.add_pod(new)

    def remove_pod(self, pod: Obj) -> None:
        key = pod_key(pod)
        self.assumed.pop(key, None)
        node = self.pod_nodes.pop(key, None)
        if node is not None and node in self.nodes:
            info = self.nodes[node]
            info.remove_pod(pod)
            self._dirty.setdefault(node)
            if info.node is None and not info.pods:
                del self.nodes[node]

    def _place(self, key: str, pod: Obj, node: str) -> None:
        current = self.pod_nodes.get(key)
        if current is not None and current != node and current in self.nodes:
            self.nodes[current].remove_pod(pod)
            self._dirty.setdefault(current)
        info = self.nodes.get(node)
        if info is None:
            info = self.nodes[node] = NodeInfo()
        info.add_pod(pod)
        self._dirty.setdefault(node)
        self.pod_nodes[key] = node

    # -- assume / forget -----------------------------------------------------------------
    def assume_pod(self, pod: Obj, node: str) -> Obj:
        """Count `pod` on `node` before the binding is confirmed; returns the assumed copy."""
        key = pod_key(pod)
        if key in self.assumed:
            raise ValueError(f"pod {key} is already assumed on {self.assumed[key].node}")
        assumed = dict(pod, spec=dict(pod.get("spec") or {}, nodeName=node))
        self.assumed[key] = _Assumed(assumed, node, None)
        self._place(key, assumed, node)
        return assumed

    def finish_binding(self, pod: Obj) -> None:
        entry = self.assumed.get(pod_key(pod))
        if entry is not None:
            entry.deadline = self.clock() + self.ttl

    def forget_pod(self, pod: Obj) -> None:
        """The binding failed: undo the assumption."""
        key = pod_key(pod)
        entry = self.assumed.pop(key, None)
        if entry is not None:
            self.remove_pod(entry.pod)

    def is_assumed(self, pod: Obj) -> bool:
        return pod_key(pod) in self.assumed

    def cleanup_expired(self) -> list[Obj]:
        """Drop assumptions whose binding was never observed within the ttl."""
        now = self.clock()
        expired = [e.pod for e in self.assumed.values()
                   if e.deadline is not None and now >= e.deadline]
        for pod in expired:
            self.forget_pod(pod)
        return expired
