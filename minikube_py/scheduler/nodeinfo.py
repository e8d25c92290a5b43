"""NodeInfo: what the scheduler knows about one node, kept incrementally.

Kubernetes piece: plugin/pkg/scheduler/schedulercache/node_info.go (v1.5; in v1.0 the same
sums were recomputed from a pod lister on every decision). The node object plus running sums
of what its pods request — milli-CPU, memory bytes, pod count, host ports, and the images
present — so a predicate is a comparison, not a loop over pods. The scheduler cache adds and
removes pods (assumed or observed) and the sums follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..api.quantity import milli_value, value
from .algorithm.predicates_volumes import pod_disks

Obj = dict[str, Any]

#: upstream's defaults for a container that requests nothing, used by the priorities only
#: (priorityutil.DefaultMilliCpuRequest / DefaultMemoryRequest): 0.1 core and 200 MB
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass
class Resources:
    milli_cpu: int = 0
    memory: int = 0

    def add(self, other: Resources) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory

    def sub(self, other: Resources) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory


def _quantity(resources: dict[str, Any] | None, name: str, milli: bool) -> int:
    raw = (resources or {}).get(name)
    if raw is None:
        return 0
    if isinstance(raw, str):
        return _parsed(raw, milli)
    try:
        return milli_value(raw) if milli else value(raw)
    except (ValueError, TypeError):
        return 0


@lru_cache(maxsize=4096)
def _parsed(raw: str, milli: bool) -> int:
    """Quantity strings repeat across pods ("100m", "128Mi"): parse each once."""
    try:
        return milli_value(raw) if milli else value(raw)
    except (ValueError, TypeError):
        return 0


def pod_requests(pod: Obj) -> Resources:
    """Sum of container requests; init containers count as the max of themselves
    (upstream GetResourceRequest)."""
    spec = pod.get("spec") or {}
    total = Resources()
    for c in spec.get("containers") or []:
        req = (c.get("resources") or {}).get("requests")
        total.milli_cpu += _quantity(req, "cpu", True)
        total.memory += _quantity(req, "memory", False)
    for c in spec.get("initContainers") or []:
        req = (c.get("resources") or {}).get("requests")
        total.milli_cpu = max(total.milli_cpu, _quantity(req, "cpu", True))
        total.memory = max(total.memory, _quantity(req, "memory", False))
    _add_overhead(total, spec)
    return total


def _add_overhead(total: Resources, spec: Obj) -> None:
    """The pod's RuntimeClass overhead counts on top of its containers (upstream PodRequests
    adds spec.overhead since PodOverhead went GA in 1.24)."""
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        total.milli_cpu += _quantity(overhead, "cpu", True)
        total.memory += _quantity(overhead, "memory", False)


def pod_nonzero_requests(pod: Obj) -> Resources:
    """Requests with upstream's defaults for containers that ask for nothing, so priorities
    spread zero-request pods (priorityutil.GetNonzeroRequests)."""
    total = Resources()
    for c in (pod.get("spec") or {}).get("containers") or []:
        req = (c.get("resources") or {}).get("requests")
        cpu = _quantity(req, "cpu", True)
        mem = _quantity(req, "memory", False)
        total.milli_cpu += cpu if "cpu" in (req or {}) else DEFAULT_MILLI_CPU_REQUEST
        total.memory += mem if "memory" in (req or {}) else DEFAULT_MEMORY_REQUEST
    _add_overhead(total, pod.get("spec") or {})
    return total


def pod_host_ports(pod: Obj) -> list[int]:
    ports = []
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            host_port = p.get("hostPort")
            if host_port:
                ports.append(int(host_port))
    return ports


def pod_key(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


@dataclass(frozen=True, slots=True)
class PodFootprint:
    """What one pod adds to a node's sums, parsed once: removing a pod (or preemption adding
    a victim back) reuses it instead of re-reading the pod's containers."""

    requests: Resources
    nonzero: Resources
    ports: tuple[int, ...]
    disk: bool

    @classmethod
    def of(cls, pod: Obj) -> PodFootprint:
        return cls(pod_requests(pod), pod_nonzero_requests(pod), tuple(pod_host_ports(pod)),
                   bool(pod_disks(pod)))


@dataclass
class NodeInfo:
    node: Obj | None = None
    pods: dict[str, Obj] = field(default_factory=dict)  # pod key -> pod
    requested: Resources = field(default_factory=Resources)
    nonzero_requested: Resources = field(default_factory=Resources)
    used_ports: dict[int, int] = field(default_factory=dict)  # host port -> pods using it
    disk_pods: int = 0  # pods with a GCE PD / EBS / RBD / iSCSI volume (NoDiskConflict)
    #: bumped on every change, so callers can cache per-node derived values
    generation: int = 0
    #: per-node answers derived from its pods (priorities' counts), dropped when pods change
    memo: dict = field(default_factory=dict, repr=False, compare=False)
    _allocatable: tuple | None = field(default=None, repr=False, compare=False)
    #: (node object, NodeFacts) of the last compute_facts: copies share it (preemption's
    #: scratch tables do not re-read the node objects)
    facts_memo: tuple | None = field(default=None, repr=False, compare=False)
    #: pod key -> what the pod adds to the sums, so removing it does not re-parse its spec
    footprints: dict[str, PodFootprint] = field(default_factory=dict, repr=False,
                                                compare=False)

    @property
    def name(self) -> str:
        return ((self.node or {}).get("metadata") or {}).get("name", "")

    def allocatable(self) -> tuple[Resources, int]:
        """(cpu/memory, max pods) the node offers: status.allocatable, else capacity. Parsed
        once per node object (quantities are exact fractions: parsing them on every decision
        for every node was most of a decision's time)."""
        node = self.node
        cached = self._allocatable
        if cached is not None and cached[0] is node:
            return cached[1]
        status = (node or {}).get("status") or {}
        alloc = status.get("allocatable") or status.get("capacity") or {}
        result = (Resources(_quantity(alloc, "cpu", True), _quantity(alloc, "memory", False)),
                  _quantity(alloc, "pods", False))
        self._allocatable = (node, result)
        return result

    def clone(self) -> NodeInfo:
        """A copy whose pods can be added and removed without touching this one (upstream
        NodeInfo.Snapshot): preemption's dry run removes victims from copies. The sums and the
        pods' footprints are copied, not recomputed from the pods."""
        return NodeInfo(node=self.node, pods=dict(self.pods),
                        requested=Resources(self.requested.milli_cpu, self.requested.memory),
                        nonzero_requested=Resources(self.nonzero_requested.milli_cpu,
                                                    self.nonzero_requested.memory),
                        used_ports=dict(self.used_ports), disk_pods=self.disk_pods,
                        generation=self.generation, _allocatable=self._allocatable,
                        facts_memo=self.facts_memo, footprints=dict(self.footprints))

    def clone_without(self, keys: set[str]) -> NodeInfo:
        """A copy without the pods under `keys`, built from the pods kept (preemption's
        dry run drops most of a full node's pods: re-adding the few kept is cheaper than
        removing the many)."""
        copy = NodeInfo(node=self.node, generation=self.generation,
                        _allocatable=self._allocatable, facts_memo=self.facts_memo)
        for key, pod in self.pods.items():
            if key not in keys:
                copy.add_pod(pod, self.footprints.get(key))
        return copy

    def add_pod(self, pod: Obj, footprint: PodFootprint | None = None) -> None:
        """`footprint`: the pod's, when the caller has it (a pod removed and added back)."""
        key = pod_key(pod)
        if key in self.pods:
            self.remove_pod(self.pods[key])
        fp = footprint if footprint is not None else PodFootprint.of(pod)
        self.pods[key] = pod
        self.footprints[key] = fp
        self.requested.add(fp.requests)
        self.nonzero_requested.add(fp.nonzero)
        for port in fp.ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1
        if fp.disk:
            self.disk_pods += 1
        self.generation += 1
        self.memo.clear()

    def remove_pod(self, pod: Obj) -> PodFootprint | None:
        """Returns the removed pod's footprint (None: it was not here)."""
        key = pod_key(pod)
        current = self.pods.pop(key, None)
        if current is None:
            return None
        fp = self.footprints.pop(key, None) or PodFootprint.of(current)
        self.requested.sub(fp.requests)
        self.nonzero_requested.sub(fp.nonzero)
        for port in fp.ports:
            left = self.used_ports.get(port, 0) - 1
            if left > 0:
                self.used_ports[port] = left
            else:
                self.used_ports.pop(port, None)
        if fp.disk:
            self.disk_pods -= 1
        self.generation += 1
        self.memo.clear()
        return fp
