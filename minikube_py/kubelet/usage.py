"""The simulated resource usage of containers, pods and nodes: what cAdvisor would measure.

Kubernetes pieces: the kubelet's resource-metrics source (pkg/kubelet/metrics/collectors/
resource_metrics.go over cAdvisor / the CRI stats provider) and the summary API
(k8s.io/kubelet/pkg/apis/stats/v1alpha1). A simulated container burns no CPU, so its usage is
a documented model instead — pure, deterministic, testable without a clock:

- **CPU** (cores): 10 % of the container's cpu request (5m without one), times a slow wave
  `1 + 0.1·sin(2π(t/60 s + phase))` whose phase comes from the pod's uid, so replicas of one
  Deployment differ a little and a graph of `kubectl top` moves;
- **memory** (working-set bytes): 50 % of the memory request (8 MiB without one), times
  `1 + 0.05·sin(...)` of the same wave;
- **the override**: the pod annotations `usage.minikube-py.dev/cpu: "450m"` and
  `usage.minikube-py.dev/memory: "300Mi"` set every container of the pod to exactly that (no
  wave), so a test can make a Deployment busy (`kubectl annotate pod ... --overwrite`) and idle
  again by removing them;
- **a node** uses a fixed system overhead (50m, 256 MiB) plus its pods.

cAdvisor reports CPU as a cumulative counter (core-seconds since the container started) and
consumers (metrics-server, the summary API's `usageNanoCores`) derive a rate from two reads.
`cpu_seconds` integrates the model exactly between two instants; `Meter` keeps one counter
per container (and per node) that only grows, even when the override changes mid-way.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from ..api import quantity
from ..api.meta import parse_rfc3339

Obj = dict[str, Any]

CPU_ANNOTATION = "usage.minikube-py.dev/cpu"
MEMORY_ANNOTATION = "usage.minikube-py.dev/memory"
#: share of the request a container uses by default
CPU_SHARE = 0.10
MEMORY_SHARE = 0.50
#: usage of a container without requests
DEFAULT_CPU = 0.005  # cores (5m)
DEFAULT_MEMORY = 8 << 20
#: what a node uses besides its pods (the OS, the kubelet itself)
NODE_CPU = 0.050
NODE_MEMORY = 256 << 20
WAVE_PERIOD = 60.0
CPU_WAVE = 0.10
MEMORY_WAVE = 0.05


@dataclass(frozen=True)
class Model:
    """One container's usage: `cpu` cores with a relative `wave` amplitude, `memory` bytes
    with `memory_wave`, and the wave's `phase` (0..1)."""

    cpu: float
    memory: float
    phase: float = 0.0
    wave: float = 0.0
    memory_wave: float = 0.0

    def cpu_at(self, t: float) -> float:
        """Cores used at unix time `t`."""
        return self.cpu * (1 + self.wave * math.sin(2 * math.pi * (t / WAVE_PERIOD + self.phase)))

    def memory_at(self, t: float) -> int:
        return int(self.memory * (1 + self.memory_wave
                                  * math.sin(2 * math.pi * (t / WAVE_PERIOD + self.phase))))

    def cpu_seconds(self, t0: float, t1: float) -> float:
        """Core-seconds used from `t0` to `t1`: the exact integral of `cpu_at`."""
        if t1 <= t0:
            return 0.0
        k = 2 * math.pi / WAVE_PERIOD
        c0 = math.cos(k * t0 + 2 * math.pi * self.phase)
        c1 = math.cos(k * t1 + 2 * math.pi * self.phase)
        return self.cpu * ((t1 - t0) - self.wave / k * (c1 - c0))


def phase_of(uid: str) -> float:
    """A stable phase in [0, 1) from a pod's uid."""
    digest = hashlib.blake2b(uid.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 2 ** 32


def _amount(text: Any) -> float | None:
    try:
        return float(quantity.parse_quantity(str(text)))
    except (ValueError, ZeroDivisionError):
        return None


def container_model(pod: Obj, container: Obj) -> Model:
    """The model of one container of `pod` (annotations override requests)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    requests = (container.get("resources") or {}).get("requests") or {}
    phase = phase_of((pod.get("metadata") or {}).get("uid") or "")
    cpu_override = _amount(annotations[CPU_ANNOTATION]) if CPU_ANNOTATION in annotations else None
    mem_override = _amount(annotations[MEMORY_ANNOTATION]) \
        if MEMORY_ANNOTATION in annotations else None
    if cpu_override is not None:
        cpu, wave = max(cpu_override, 0.0), 0.0
    else:
        request = _amount(requests["cpu"]) if "cpu" in requests else None
        cpu, wave = (request * CPU_SHARE if request else DEFAULT_CPU), CPU_WAVE
    if mem_override is not None:
        memory, memory_wave = max(mem_override, 0.0), 0.0
    else:
        request = _amount(requests["memory"]) if "memory" in requests else None
        memory, memory_wave = (request * MEMORY_SHARE if request else DEFAULT_MEMORY), MEMORY_WAVE
    return Model(cpu=cpu, memory=memory, phase=phase, wave=wave, memory_wave=memory_wave)


NODE_MODEL = Model(cpu=NODE_CPU, memory=NODE_MEMORY)


def running_containers(pod: Obj) -> list[tuple[Obj, float]]:
    """(container spec, start unix time) of each running container of a pod, as its status
    reports it."""
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
    out = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        running = (status.get("state") or {}).get("running")
        spec = specs.get(status.get("name"))
        if running is None or spec is None:
            continue
        try:
            out.append((spec, parse_rfc3339(running.get("startedAt") or "")))
        except ValueError:
            continue
    return out


@dataclass
class Sample:
    """One container's (or a node's) reading: cumulative core-seconds, cores now, bytes."""

    cpu_seconds: float
    cpu_cores: float
    memory: int
    start: float


@dataclass
class Meter:
    """One kubelet's cumulative CPU counters: per key, (last time, total core-seconds), and
    `retired`, what the containers that are gone used (so the node's counter never drops)."""

    counters: dict[str, tuple[float, float]] = field(default_factory=dict)
    retired: float = 0.0

    def read(self, key: str, model: Model, start: float, now: float) -> Sample:
        last, total = self.counters.get(key, (start, 0.0))
        total += model.cpu_seconds(max(last, start), now)
        self.counters[key] = (max(now, last), total)
        return Sample(total, model.cpu_at(now), model.memory_at(now), start)

    def forget(self, keep: set[str]) -> None:
        """Drop the counters of containers that are gone."""
        for key in [k for k in self.counters if k not in keep]:
            self.retired += self.counters.pop(key)[1]


@dataclass
class PodUsage:
    namespace: str
    name: str
    uid: str
    start: float
    containers: dict[str, Sample]


@dataclass
class NodeUsage:
    node: Sample
    pods: list[PodUsage]


def measure(meter: Meter, node_name: str, node_start: float, pods: list[Obj],
            now: float) -> NodeUsage:
    """Read every running container of `pods` and the node at `now`."""
    out: list[PodUsage] = []
    seen: set[str] = set()
    node_cpu_rate = NODE_MODEL.cpu_at(now)
    node_memory = NODE_MODEL.memory_at(now)
    for pod in pods:
        md = pod.get("metadata") or {}
        containers: dict[str, Sample] = {}
        for spec, started in running_containers(pod):
            key = f"{md.get('uid')}/{spec.get('name')}"
            seen.add(key)
            sample = meter.read(key, container_model(pod, spec), started, now)
            containers[spec["name"]] = sample
            node_cpu_rate += sample.cpu_cores
            node_memory += sample.memory
        if containers:
            start = min(s.start for s in containers.values())
            out.append(PodUsage(md.get("namespace", ""), md.get("name", ""), md.get("uid", ""),
                                start, containers))
    # the node's counter: its own overhead plus everything its containers ever used
    key = f"node/{node_name}"
    seen.add(key)
    node = meter.read(key, NODE_MODEL, node_start, now)
    meter.forget(seen)
    node_total = node.cpu_seconds + meter.retired + sum(
        s.cpu_seconds for p in out for s in p.containers.values())
    return NodeUsage(Sample(node_total, node_cpu_rate, node_memory, node_start), out)
