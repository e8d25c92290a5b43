"""The metrics API's objects and requests: metrics-server's pkg/api (node.go, pod.go) over the
scrape storage.

`MetricsServer.refresh` scrapes every Node's kubelet (concurrently, each bounded by a
timeout) when the last scrape is older than the metric resolution — on demand instead of
metrics-server's fixed ticker, so an idle cluster scrapes nothing; two requests in one
resolution share a scrape. Objects are built as metrics-server builds them: `timestamp` is
when the last point was read, `window` the span the rate covers, usage in nanocores and
KiB, labels copied from the Node or Pod, `creationTimestamp` now. A pod that is not running,
or was not measured yet, is absent (404 `podmetrics.metrics.k8s.io "x" not found`), as upstream.
"""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import aiohttp
import structlog
from aiohttp import web

from ...api import errors, meta, quantity
from ...api.labels import parse_label_selector
from .. import kubelet_client
from . import scrape, storage

if TYPE_CHECKING:
    from ...registry.generic import Registry
    from ..options import APIServerOptions

log = structlog.get_logger(component="metrics-server")

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
Obj = dict[str, Any]


def cpu_quantity(cores: float) -> str:
    """Nanocores, as metrics-server reports them (`1234567n`)."""
    return quantity.format_quantity(Fraction(round(cores * 1e9), 10**9), quantity.DECIMAL_SI)


def memory_quantity(size: float) -> str:
    """KiB, as metrics-server reports them (`10240Ki`)."""
    return f"{int(size) // 1024}Ki"


def go_duration(seconds: float) -> str:
    """A window as Go prints a Duration with metrics-server's precision (`15.012s`, `1m0s`)."""
    ms = round(seconds * 1000)
    minutes, rest = divmod(ms, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{secs}" if minutes else secs


def node_metrics(node: Obj, usage: storage.Usage) -> Obj:
    md = node["metadata"]
    return {"kind": "NodeMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": md["name"], "creationTimestamp": meta.now_rfc3339(),
                         "labels": dict(md.get("labels") or {})},
            "timestamp": meta.rfc3339(usage.timestamp), "window": go_duration(usage.window),
            "usage": {"cpu": cpu_quantity(usage.cpu), "memory": memory_quantity(usage.memory)}}


def pod_metrics(pod: Obj, containers: dict[str, storage.Usage]) -> Obj:
    md = pod["metadata"]
    first = min(containers.values(), key=lambda u: u.timestamp)
    order = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    names = sorted(containers, key=lambda n: order.index(n) if n in order else len(order))
    return {"kind": "PodMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": md["name"], "namespace": md.get("namespace", ""),
                         "creationTimestamp": meta.now_rfc3339(),
                         "labels": dict(md.get("labels") or {})},
            "timestamp": meta.rfc3339(first.timestamp), "window": go_duration(first.window),
            "containers": [{"name": n, "usage": {"cpu": cpu_quantity(containers[n].cpu),
                                                 "memory": memory_quantity(containers[n].memory)}}
                           for n in names]}


class MetricsServer:
    """The scraper and the storage; the node and pod registries give names and labels."""

    def __init__(self, nodes: Registry, pods: Registry, options: APIServerOptions) -> None:
        self.nodes, self.pods, self.options = nodes, pods, options
        self.resolution = options.metric_resolution
        self.storage = storage.Storage()
        self._scraped = 0.0
        self._lock = asyncio.Lock()

    async def refresh(self) -> list[Obj]:
        """The Nodes, scraping their kubelets first if the last scrape is too old."""
        nodes = await self._list(self.nodes, "")
        if time.monotonic() - self._scraped < self.resolution:
            return nodes
        async with self._lock:
            if time.monotonic() - self._scraped >= self.resolution:
                await self._scrape(nodes)
                self._scraped = time.monotonic()
        return nodes

    async def _scrape(self, nodes: list[Obj]) -> None:
        async with kubelet_client.session(self.options) as session:
            async def one(node: Obj) -> None:
                name = node["metadata"]["name"]
                try:
                    text = await scrape.scrape(session, node, self.options)
                    points = scrape.parse(text, time.time())
                except (aiohttp.ClientError, TimeoutError, RuntimeError, ValueError,
                        errors.StatusError) as exc:  # that node has no metrics this time
                    log.info("failed to scrape node", node=name,
                             error=str(exc) or type(exc).__name__)
                    return
                self.storage.store(name, points)

            await asyncio.gather(*(one(n) for n in nodes))
        self.storage.forget({n["metadata"]["name"] for n in nodes})

    @staticmethod
    async def _list(registry: Registry, namespace: str) -> list[Obj]:
        return (await registry.list(namespace or None)).decoded()

    async def node_items(self, selector: str) -> list[Obj]:
        match = parse_label_selector(selector)
        out = []
        for node in await self.refresh():
            usage = self.storage.node(node["metadata"]["name"])
            if usage is not None and match.matches(node["metadata"].get("labels") or {}):
                out.append(node_metrics(node, usage))
        return sorted(out, key=lambda o: o["metadata"]["name"])

    async def pod_items(self, namespace: str, selector: str) -> list[Obj]:
        match = parse_label_selector(selector)
        await self.refresh()
        measured = self.storage.pods()
        out = []
        for pod in await self._list(self.pods, namespace):
            md = pod["metadata"]
            containers = measured.get((md.get("namespace", ""), md["name"]))
            if containers is not None and match.matches(md.get("labels") or {}):
                out.append(pod_metrics(pod, containers))
        return sorted(out, key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))


async def handle(server: MetricsServer, request: web.Request, resource: str, namespace: str,
                 name: str, verb: str) -> Obj:
    """The body of a get or list of `nodes` or `pods` in metrics.k8s.io/v1beta1."""
    selector = request.query.get("labelSelector", "")
    if verb not in ("get", "list"):
        raise errors.method_not_allowed()
    if resource == "nodes":
        items = await server.node_items("" if name else selector)
        kind = "NodeMetrics"
    else:
        items = await server.pod_items(namespace, "" if name else selector)
        kind = "PodMetrics"
    if name:
        for item in items:
            if item["metadata"]["name"] == name:
                return item
        raise errors.not_found(resource, name, GROUP)
    return {"kind": f"{kind}List", "apiVersion": API_VERSION, "metadata": {}, "items": items}
