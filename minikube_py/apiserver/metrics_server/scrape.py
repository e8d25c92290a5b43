"""Reading one kubelet's `/metrics/resource`: metrics-server's pkg/scraper/client/resource
(decode.go: the STABLE metric names, samples with their millisecond timestamps).

`parse` is pure: the Prometheus text in, a `NodePoints` out. `scrape` is the one outbound call
(bounded by a timeout), through the API server's kubelet client (its TLS identity and the
node's address), with `?node=` for a simulated pool that serves several nodes from one port.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from .. import kubelet_client
from ..options import APIServerOptions

SCRAPE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Point:
    """A cumulative CPU reading (core-seconds), the working set (bytes), when it was read
    (unix seconds) and when the container started (0 for a node: not needed)."""

    cpu_seconds: float
    memory: float
    timestamp: float
    start: float = 0.0


@dataclass
class NodePoints:
    node: Point | None = None
    #: (namespace, pod) -> container -> point
    pods: dict[tuple[str, str], dict[str, Point]] = field(default_factory=dict)


def parse(text: str, now: float) -> NodePoints:
    """The kubelet's exposition as points (samples without a timestamp are stamped `now`)."""
    cpu: dict[tuple[str, str, str], tuple[float, float]] = {}
    memory: dict[tuple[str, str, str], float] = {}
    start: dict[tuple[str, str, str], float] = {}
    out = NodePoints()
    node_cpu: tuple[float, float] | None = None
    node_memory: float | None = None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            key = (labels.get("namespace", ""), labels.get("pod", ""), labels.get("container", ""))
            stamp = float(sample.timestamp) if sample.timestamp is not None else now
            if sample.name == "container_cpu_usage_seconds_total":
                cpu[key] = (sample.value, stamp)
            elif sample.name == "container_memory_working_set_bytes":
                memory[key] = sample.value
            elif sample.name == "container_start_time_seconds":
                start[key] = sample.value
            elif sample.name == "node_cpu_usage_seconds_total":
                node_cpu = (sample.value, stamp)
            elif sample.name == "node_memory_working_set_bytes":
                node_memory = sample.value
    for key, (value, stamp) in cpu.items():
        if key in memory:
            out.pods.setdefault(key[:2], {})[key[2]] = Point(value, memory[key], stamp,
                                                              start.get(key, 0.0))
    if node_cpu is not None and node_memory is not None:
        out.node = Point(node_cpu[0], node_memory, node_cpu[1])
    return out


async def scrape(session: aiohttp.ClientSession, node: dict[str, Any],
                 options: APIServerOptions) -> str:
    """GET the node's `/metrics/resource` (raises on any failure; the caller logs it)."""
    url = kubelet_client.base_url(node, options) + "/metrics/resource"
    params = {"node": node["metadata"]["name"]}
    async with session.get(url, params=params,
                           timeout=aiohttp.ClientTimeout(total=SCRAPE_TIMEOUT)) as resp:
        body = await resp.text()
        if resp.status != 200:
            raise RuntimeError(f"GET {url}: HTTP {resp.status}: {body[:200]}")
        return body
