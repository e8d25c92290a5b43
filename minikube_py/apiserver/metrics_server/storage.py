"""Usage from two readings: metrics-server's pkg/storage (node.go, pod.go).

A cumulative CPU counter says nothing alone: usage is the rate between the previous and the
last point, and the window is the time between them. A container seen for the first time
whose start time is known is measured from its start (counter 0 then), as metrics-server does
for a fresh container, so a new pod has metrics after one scrape; a node needs two scrapes.
A counter that went back (a restarted container) starts over from the new point. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .scrape import NodePoints, Point


@dataclass(frozen=True)
class Usage:
    """Cores and bytes over `window` seconds ending at `timestamp`."""

    cpu: float
    memory: float
    timestamp: float
    window: float


def rate(prev: Point | None, last: Point) -> Usage | None:
    """The usage between two points of one counter, or None when it cannot be told yet."""
    if prev is not None and prev.timestamp < last.timestamp and prev.cpu_seconds <= last.cpu_seconds \
            and (not last.start or prev.start == last.start):
        window = last.timestamp - prev.timestamp
        return Usage((last.cpu_seconds - prev.cpu_seconds) / window, last.memory,
                     last.timestamp, window)
    if last.start and last.start < last.timestamp:
        window = last.timestamp - last.start
        return Usage(last.cpu_seconds / window, last.memory, last.timestamp, window)
    return None


@dataclass
class Storage:
    """The last two scrapes of every node (by node name)."""

    prev: dict[str, NodePoints] = field(default_factory=dict)
    last: dict[str, NodePoints] = field(default_factory=dict)

    def store(self, node: str, points: NodePoints) -> None:
        if node in self.last:
            self.prev[node] = self.last[node]
        self.last[node] = points

    def forget(self, keep: set[str]) -> None:
        """Drop the nodes that no longer exist."""
        for table in (self.prev, self.last):
            for name in [n for n in table if n not in keep]:
                del table[name]

    def node(self, name: str) -> Usage | None:
        last = self.last.get(name)
        if last is None or last.node is None:
            return None
        prev = self.prev.get(name)
        return rate(prev.node if prev is not None else None, last.node)

    def pods(self) -> dict[tuple[str, str], dict[str, Usage]]:
        """(namespace, pod) -> container -> usage, for pods whose every container has one
        (metrics-server leaves out a pod with a container it cannot measure)."""
        out: dict[tuple[str, str], dict[str, Usage]] = {}
        for node, last in self.last.items():
            prev = self.prev.get(node)
            for key, containers in last.pods.items():
                before = prev.pods.get(key, {}) if prev is not None else {}
                usages = {name: rate(before.get(name), point) for name, point in containers.items()}
                if usages and all(u is not None for u in usages.values()):
                    out[key] = {name: u for name, u in usages.items() if u is not None}
        return out
