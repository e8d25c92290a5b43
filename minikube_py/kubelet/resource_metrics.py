"""The kubelet's resource-metrics endpoints: `/metrics/resource` and `/stats/summary`.

Kubernetes pieces: pkg/kubelet/metrics/collectors/resource_metrics.go (the STABLE metrics
`container_cpu_usage_seconds_total`, `container_memory_working_set_bytes`,
`container_start_time_seconds`, `pod_*`, `node_*`, `resource_scrape_error`, each sample
stamped with the time it was measured, in milliseconds) — what metrics-server scrapes — and
the summary API's JSON (k8s.io/kubelet/pkg/apis/stats/v1alpha1 Summary: `node` and `pods`,
each with `cpu.usageNanoCores`/`usageCoreNanoSeconds` and `memory.workingSetBytes`).
Pure renderers over `usage.NodeUsage`; the readings come from usage.py's model.
"""

from __future__ import annotations

from typing import Any

from ..api.meta import rfc3339
from .usage import NodeUsage, Sample

_HELP = (
    ("container_cpu_usage_seconds_total", "counter",
     "Cumulative cpu time consumed by the container in core-seconds"),
    ("container_memory_working_set_bytes", "gauge",
     "Current working set of the container in bytes"),
    ("container_start_time_seconds", "gauge",
     "Start time of the container since unix epoch in seconds"),
    ("node_cpu_usage_seconds_total", "counter",
     "Cumulative cpu time consumed by the node in core-seconds"),
    ("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes"),
    ("pod_cpu_usage_seconds_total", "counter",
     "Cumulative cpu time consumed by the pod in core-seconds"),
    ("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes"),
    ("resource_scrape_error", "gauge",
     "1 if there was an error while getting container metrics, 0 otherwise"),
)


def _labels(**labels: str) -> str:
    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return "{" + ",".join(f'{k}="{esc(v)}"' for k, v in labels.items()) + "}"


def prometheus_text(usage: NodeUsage, now: float) -> str:
    """The `/metrics/resource` exposition (text format 0.0.4), sorted as the Go client does;
    values in the shortest form that reads back exactly (Go's strconv 'g', -1), so a rate
    taken between two samples carries no printing error."""
    ts = round(now * 1000)
    rows: dict[str, list[str]] = {name: [] for name, _, _ in _HELP}
    for pod in sorted(usage.pods, key=lambda p: (p.namespace, p.name)):
        pod_labels = _labels(namespace=pod.namespace, pod=pod.name)
        for cname in sorted(pod.containers):
            s = pod.containers[cname]
            labels = _labels(container=cname, namespace=pod.namespace, pod=pod.name)
            rows["container_cpu_usage_seconds_total"].append(f"{labels} {s.cpu_seconds!r} {ts}")
            rows["container_memory_working_set_bytes"].append(f"{labels} {s.memory} {ts}")
            rows["container_start_time_seconds"].append(f"{labels} {s.start!r}")
        cpu = sum(s.cpu_seconds for s in pod.containers.values())
        memory = sum(s.memory for s in pod.containers.values())
        rows["pod_cpu_usage_seconds_total"].append(f"{pod_labels} {cpu!r} {ts}")
        rows["pod_memory_working_set_bytes"].append(f"{pod_labels} {memory} {ts}")
    rows["node_cpu_usage_seconds_total"].append(f" {usage.node.cpu_seconds!r} {ts}")
    rows["node_memory_working_set_bytes"].append(f" {usage.node.memory} {ts}")
    rows["resource_scrape_error"].append(" 0")
    out = []
    for name, kind, text in _HELP:
        out.append(f"# HELP {name} [STABLE] {text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(f"{name}{row}" for row in rows[name])
    return "\n".join(out) + "\n"


def _cpu(s: Sample, when: str) -> dict[str, Any]:
    return {"time": when, "usageNanoCores": int(s.cpu_cores * 1e9),
            "usageCoreNanoSeconds": int(s.cpu_seconds * 1e9)}


def _memory(s: Sample, when: str, capacity: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"time": when, "usageBytes": s.memory, "workingSetBytes": s.memory,
                           "rssBytes": s.memory, "pageFaults": 0, "majorPageFaults": 0}
    if capacity is not None:
        out["availableBytes"] = max(capacity - s.memory, 0)
    return out


def summary(node_name: str, usage: NodeUsage, now: float, memory_capacity: int) -> dict[str, Any]:
    """The `/stats/summary` document (cpu and memory only: no filesystem or network here)."""
    when = rfc3339(now)
    pods = []
    for pod in sorted(usage.pods, key=lambda p: (p.namespace, p.name)):
        containers = [{"name": name, "startTime": rfc3339(s.start), "cpu": _cpu(s, when),
                       "memory": _memory(s, when)} for name, s in sorted(pod.containers.items())]
        total = Sample(sum(s.cpu_seconds for s in pod.containers.values()),
                       sum(s.cpu_cores for s in pod.containers.values()),
                       sum(s.memory for s in pod.containers.values()), pod.start)
        pods.append({"podRef": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                     "startTime": rfc3339(pod.start), "containers": containers,
                     "cpu": _cpu(total, when), "memory": _memory(total, when)})
    return {"node": {"nodeName": node_name, "systemContainers": [],
                     "startTime": rfc3339(usage.node.start), "cpu": _cpu(usage.node, when),
                     "memory": _memory(usage.node, when, memory_capacity)},
            "pods": pods}
