"""A pool of simulated kubelets: many nodes on one event loop, one pod watch, one HTTP server.

Kubernetes piece: what N copies of cmd/kubelet would be — each with its pod reflector
(`spec.nodeName=<node>`), its status manager and its node-status loop — folded into one
process so 5000 nodes and 50,000 pods cost one watch and a few tasks:

- ONE pod informer for the whole pool: `spec.nodeName=<name>` with one node, else
  `spec.nodeName!=` (every bound pod), its events dispatched by spec.nodeName to that node's
  pod workers (pods of nodes this pool does not simulate are ignored);
- bounded writers instead of a goroutine per pod/node: node writes (registration, heartbeats)
  and pod writes (status, final deletes) each go through a deduplicating work queue drained
  by a few tasks, so a burst never exceeds the API server's in-flight limit for long (429s
  are retried by the client); heartbeats have their own writers so pod traffic cannot make a
  node look dead. Events are best effort through a bounded queue (dropped when full, as
  upstream's broadcaster drops);
- ONE heartbeat ticker: each node's next heartbeat is spread over the period (golden-ratio
  phases), so 5000 nodes at 10 s make 500 small requests a second, evenly — in lease mode
  (the default) PUTs of ~300-byte Leases, in status mode PATCHes of the Node's conditions;
- ONE node cache in lease mode (the shared node informer, else one watch of the pool's
  nodes): each kubelet compares its Node there instead of GETting it (upstream
  tryUpdateNodeStatus reads the Node every --node-status-update-frequency);
- every simulated step is a timer (timers.py), never a task.
"""

from __future__ import annotations

import asyncio
import heapq
import socket
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

from ..api import meta
from ..client import Client
from ..client.cache import FilteredInformer, Informer, InformerFactory
from ..client.record import EventRecorder
from ..client.resources import NODES, PODS
from ..client.workqueue import WorkQueue
from .config import KubeletConfig
from .kubelet import Kubelet
from .node_lease import STATUS_MODE
from .pod_status import generate
from .podworker import pod_key
from .reads import ClusterReads, shared_informers
from .server import Serving, build_app
from .token_manager import TokenManager
from .usage import NodeUsage, measure

log = structlog.get_logger(component="kubelet")

Obj = dict[str, Any]
_GOLDEN = 0.6180339887498949

__all__ = ["Kubelet", "KubeletPool", "pod_cidr_for"]


def pod_cidr_for(index: int) -> str:
    """The podCIDR of the pool's `index`-th node: 10.244.0.0/24, 10.244.1.0/24, ...,
    10.245.0.0/24 after 256 nodes; past 10.255.255.0/24 (3072 nodes) on from 10.1.0.0/24 (10.0/16
    holds the service range), which leaves room for 65,280 nodes."""
    block = 244 + index // 256
    if block > 255:
        block -= 255
    return f"10.{block}.{index % 256}.0/24"


class KubeletPool:
    def __init__(self, client: Client, *, address: str = "127.0.0.1", port: int = 10250,
                 node_ip: str = "127.0.0.1", node_writers: int = 8, pod_writers: int = 16,
                 event_writers: int = 4, event_queue_size: int = 10_000,
                 log_interval: float = 1.0, informers: InformerFactory | None = None,
                 serving: Serving | None = None,
                 node_clients: Callable[[str], Client] | None = None,
                 sock: socket.socket | None = None) -> None:
        """`informers`: the process's shared informers (all-in-one): the pool then views the
        shared pod informer, filtered to its nodes, instead of opening its own watch.
        `serving`: TLS and authentication of the HTTP server (server.Serving; default: plain
        HTTP, open). `node_clients`: node name -> a client acting as that node (the
        all-in-one's in-process identities, system:node:<name>); default: `client` for all.
        `sock`: a socket already bound and listening (`start` binds every port first), served
        instead of binding address:port."""
        self.client = client
        self._node_clients = node_clients
        #: service-account tokens of projected volumes, one cache for the pool's pods, each
        #: asked for as the node the pod runs on (the Node authorizer checks the binding)
        self.tokens = TokenManager(client, client_for=self.client_for)
        self._shared = informers
        #: the shared informers every node's ClusterReads reads (made on first use)
        self._read_informers: dict | None = None
        self.address = address
        self.port = port
        self._sock = sock
        self.node_ip = node_ip
        self.serving = serving or Serving()
        self.kubelets: dict[str, Kubelet] = {}
        self._owner: dict[str, Kubelet] = {}  # pod key -> the kubelet running it
        self._node_writers = node_writers
        self._pod_writers = pod_writers
        self._event_writers = event_writers
        self._log_interval = log_interval
        self._node_queue = WorkQueue(base_delay=0.2, max_delay=30.0)
        self._pod_queue = WorkQueue(base_delay=0.05, max_delay=30.0)
        #: nodes whose CSINode is to be published (one writer: registrations come first)
        self._csi_queue = WorkQueue(base_delay=0.2, max_delay=30.0)
        self._events: asyncio.Queue[tuple] = asyncio.Queue(maxsize=event_queue_size)
        self.events_dropped = 0
        self._beats: list[tuple[float, int, str]] = []  # (due, seq, node) heap
        self._beat_seq = 0
        self._beat_wake = asyncio.Event()
        self._scheduled: set[str] = set()
        self._tasks: list[asyncio.Task] = []
        self._informer: Informer | FilteredInformer | None = None
        #: the nodes as the API server has them (lease mode's status check); owned when not
        #: the shared informer
        self._nodes: Informer | None = None
        self._own_nodes = False
        self._selector = ""
        self._runner: web.AppRunner | None = None
        self._started = False

    def client_for(self, node_name: str) -> Client:
        """The client node `node_name`'s requests go through (upstream: each kubelet has its
        own credentials, `system:node:<name>`)."""
        return self.client if self._node_clients is None else self._node_clients(node_name)

    def reads_for(self, client: Client) -> ClusterReads:
        """What a node reads besides its pods, as `client`: through the shared informers when
        the pool has them (reads.py), else GETs."""
        if self._shared is not None and self._read_informers is None:
            self._read_informers = shared_informers(self._shared)
        return ClusterReads(client, self._read_informers)

    # -- building the pool -------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{self.serving.scheme}://{self.address}:{self.port}"

    def add_node(self, name: str, config: KubeletConfig, *,
                 pod_cidr: str | None = None) -> Kubelet:
        if name in self.kubelets:
            raise ValueError(f"node {name!r} is already in the pool")
        kubelet = Kubelet(self, name, config, pod_cidr or pod_cidr_for(len(self.kubelets)))
        self.kubelets[name] = kubelet
        if self._started:
            self._node_queue.add(name)
            if self._nodes is None:
                self._start_node_cache()
            if self._shared is None and self._selector != self._wanted_selector():
                asyncio.get_running_loop().create_task(self._restart_watch())
        return kubelet

    def add_nodes(self, prefix: str, count: int, config: KubeletConfig) -> list[Kubelet]:
        return [self.add_node(f"{prefix}-{i}", config) for i in range(count)]

    def kubelet(self, name: str) -> Kubelet:
        try:
            return self.kubelets[name]
        except KeyError:
            raise KeyError(f"no simulated node {name!r}") from None

    # -- running -----------------------------------------------------------------------------
    async def start(self) -> None:
        """Serve HTTP (port 0: a free port; -1: none), register every node, watch pods."""
        if self._started:
            return
        if self.port != -1:
            self._runner = web.AppRunner(build_app(self, log_interval=self._log_interval,
                                                   auth=self.serving.auth), access_log=None)
            await self._runner.setup()
            site = (web.SockSite(self._runner, self._sock, ssl_context=self.serving.ssl_context)
                    if self._sock is not None else
                    web.TCPSite(self._runner, self.address, self.port,
                                ssl_context=self.serving.ssl_context))
            await site.start()
            self.port = self._runner.addresses[0][1]
        self._started = True
        loop = asyncio.get_running_loop()
        spawn = loop.create_task
        self._tasks += [spawn(self._node_worker(), name=f"kubelet-node-writer-{i}")
                        for i in range(self._node_writers)]
        self._tasks += [spawn(self._pod_worker(), name=f"kubelet-pod-writer-{i}")
                        for i in range(self._pod_writers)]
        self._tasks += [spawn(self._event_worker(), name=f"kubelet-event-writer-{i}")
                        for i in range(self._event_writers)]
        self._tasks.append(spawn(self._heartbeats(), name="kubelet-heartbeats"))
        self._tasks.append(spawn(self._csi_worker(), name="kubelet-csi-node-writer"))
        for name in self.kubelets:
            self._node_queue.add(name)
        self._start_watch()
        self._start_node_cache()
        log.info("kubelet pool started", nodes=len(self.kubelets), port=self.port,
                 selector=self._selector, scheme=self.serving.scheme,
                 authentication="required" if self.serving.secured else
                 "none: anyone who can reach the port may use it")

    def _wanted_selector(self) -> str:
        if len(self.kubelets) == 1:
            return f"spec.nodeName={next(iter(self.kubelets))}"
        return "spec.nodeName!="

    def _start_watch(self) -> None:
        if self._shared is not None:
            self._selector = "(shared pod informer, filtered to this pool's nodes)"
            informer: Informer | FilteredInformer = FilteredInformer(
                self._shared.informer(PODS), self._on_our_node)
        else:
            self._selector = self._wanted_selector()
            informer = Informer(self.client, PODS, field_selector=self._selector)
        informer.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                   on_delete=self._pod_deleted)
        informer.start()
        self._informer = informer

    def _start_node_cache(self) -> None:
        """The node cache lease-mode kubelets read; none when every node posts full status."""
        if all(k.config.heartbeat_mode == STATUS_MODE for k in self.kubelets.values()):
            return
        if self._shared is not None:
            self._nodes = self._shared.informer(NODES)
            return
        self._nodes = Informer(self.client, NODES)
        self._nodes.start()
        self._own_nodes = True

    def cached_node(self, name: str) -> tuple[bool, Obj | None]:
        """(whether the node cache has listed, node `name` in it)."""
        nodes = self._nodes
        if nodes is None or not nodes.has_synced:
            return False, None
        return True, nodes.indexer.get(name)

    def _on_our_node(self, pod: Obj) -> bool:
        return ((pod.get("spec") or {}).get("nodeName") or "") in self.kubelets

    async def _restart_watch(self) -> None:
        old, self._informer = self._informer, None
        if old is not None:
            await old.stop()
        self._start_watch()

    async def wait_ready(self, timeout: float) -> None:
        """Every node registered and a Ready status posted (raises TimeoutError)."""
        await asyncio.wait_for(asyncio.gather(*(k.ready_event.wait()
                                                for k in self.kubelets.values())), timeout)

    async def wait_synced(self, timeout: float | None = None) -> None:
        """The pod watch has listed once."""
        if self._informer is not None:
            await self._informer.wait_for_sync(timeout)

    async def stop(self) -> None:
        """Timers off, watch closed, writers stopped, server closed."""
        self._started = False
        if self._informer is not None:
            await self._informer.stop()
            self._informer = None
        if self._nodes is not None and self._own_nodes:
            await self._nodes.stop()
        self._nodes, self._own_nodes = None, False
        for kubelet in self.kubelets.values():
            kubelet.shutdown()
        self._node_queue.shutdown()
        self._pod_queue.shutdown()
        self._csi_queue.shutdown()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        log.info("kubelet pool stopped", nodes=len(self.kubelets))

    # -- the failure toggle ------------------------------------------------------------------
    async def stop_node(self, name: str) -> None:
        """Stop heartbeats and pod handling for `name` (its pods are remembered)."""
        self.kubelet(name).stop()
        log.info("node stopped", node=name)

    async def start_node(self, name: str) -> None:
        """Post Ready again and re-sync the node's pods."""
        kubelet = self.kubelet(name)
        if kubelet.running and kubelet.ready:
            return
        await kubelet.start()
        self._schedule_beat(name)
        log.info("node started", node=name)

    # -- the pod watch, dispatched by node ------------------------------------------------
    def _pod_added(self, pod: Obj) -> None:
        kubelet = self.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
        if kubelet is None:
            return
        key = pod_key(pod)
        previous = self._owner.get(key)
        if previous is not None and previous is not kubelet:
            previous.workers.forget(key)  # deleted and re-created on another node
        self._owner[key] = kubelet
        kubelet.workers.seen(pod)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        self._pod_added(new)

    def _pod_deleted(self, pod: Obj) -> None:
        key = pod_key(pod)
        kubelet = self._owner.get(key)
        if kubelet is None:
            return
        kubelet.workers.gone(pod)
        if key not in kubelet.workers.records:
            self._owner.pop(key, None)

    # -- what the HTTP server reads ----------------------------------------------------------
    def log_span(self, namespace: str, pod: str, container: str,
                 previous: bool) -> tuple[float, float | None] | None:
        key = f"{namespace}/{pod}"
        kubelet = self._owner.get(key)
        return None if kubelet is None else kubelet.workers.log_span(key, container, previous)

    def pods(self, node: str | None = None) -> list[Obj]:
        """The pods the kubelets run, each with the status the kubelet would report."""
        now = meta.now_rfc3339()
        kubelets = [self.kubelets[node]] if node else list(self.kubelets.values())
        out = []
        for kubelet in kubelets:
            for record in kubelet.workers.records.values():
                out.append({**record.pod, "status": generate(record, self.node_ip, now)
                            if record.handled else record.pod.get("status") or {}})
        return out

    def usage(self, node: str, now: float) -> NodeUsage:
        """What node `node` and its running containers use at `now` (usage.py's model)."""
        kubelet = self.kubelets[node]
        return measure(kubelet.meter, node, kubelet.started_at, self.pods(node), now)

    # -- writers -----------------------------------------------------------------------------
    def pod_dirty(self, key: str) -> None:
        self._pod_queue.add(key)

    def emit(self, recorder: EventRecorder, ref: Obj, event_type: str, reason: str,
             message: str) -> None:
        try:
            self._events.put_nowait((recorder, ref, event_type, reason, message))
        except asyncio.QueueFull:
            self.events_dropped += 1

    async def _pod_worker(self) -> None:
        queue = self._pod_queue
        while True:
            key = await queue.get()
            try:
                kubelet = self._owner.get(key)
                if kubelet is not None:
                    await kubelet.sync_pod(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried with backoff
                log.warning("pod status write failed, will retry", pod=key, error=str(exc))
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
            finally:
                queue.done(key)

    async def _node_worker(self) -> None:
        queue = self._node_queue
        while True:
            name = await queue.get()
            kubelet = self.kubelets.get(name)
            try:
                if kubelet is not None:
                    was_registered = kubelet.registered
                    await kubelet.sync_node()
                    if not was_registered and kubelet.registered:
                        self._schedule_beat(name)
                        self._csi_queue.add(name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - registration retried, heartbeats re-tick
                log.warning("node status write failed", node=name, error=str(exc))
                if kubelet is not None and not kubelet.registered:
                    queue.add_rate_limited(name)
            else:
                queue.forget(name)
            finally:
                queue.done(name)

    async def _csi_worker(self) -> None:
        """Publish registered nodes' CSINodes (kubelet.publish_csi_node, upstream's CSI plugin
        registration after the kubelet started): one writer, so at 5000 nodes the node
        registrations keep most of the loop; a failure is retried with backoff."""
        queue = self._csi_queue
        while True:
            name = await queue.get()
            kubelet = self.kubelets.get(name)
            try:
                if kubelet is not None and kubelet.running:
                    await kubelet.publish_csi_node()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried with backoff
                log.warning("CSINode not published", node=name, error=str(exc))
                queue.add_rate_limited(name)
            else:
                queue.forget(name)
            finally:
                queue.done(name)

    async def _event_worker(self) -> None:
        while True:
            recorder, ref, event_type, reason, message = await self._events.get()
            await recorder.record(ref, event_type, reason, message)

    # -- heartbeats ----------------------------------------------------------------------------
    def _schedule_beat(self, name: str, after: float | None = None) -> None:
        """Queue `name`'s next heartbeat; its phase in the period is fixed by its order."""
        if name in self._scheduled:
            return
        kubelet = self.kubelets[name]
        period = kubelet.beat_period
        if after is None:
            self._beat_seq += 1
            after = period * max((self._beat_seq * _GOLDEN) % 1.0, 0.05)
        self._scheduled.add(name)
        heapq.heappush(self._beats, (asyncio.get_running_loop().time() + after, id(kubelet),
                                     name))
        self._beat_wake.set()

    async def _heartbeats(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            while self._beats and self._beats[0][0] <= now:
                due, _, name = heapq.heappop(self._beats)
                self._scheduled.discard(name)
                kubelet = self.kubelets.get(name)
                if kubelet is None or not kubelet.running:
                    continue  # start_node schedules it again
                self._node_queue.add(name)
                period = kubelet.beat_period
                self._schedule_beat(name, max(due + period - now, period / 2))
            self._beat_wake.clear()
            if self._beats:
                period = self.kubelets[self._beats[0][2]].beat_period \
                    if self._beats[0][2] in self.kubelets else 1.0
                delay = max(self._beats[0][0] - loop.time(), min(0.02, period / 4))
                try:
                    await asyncio.wait_for(self._beat_wake.wait(), delay)
                except asyncio.TimeoutError:
                    pass
            else:
                await self._beat_wake.wait()
