"""One simulated node: it registers its Node, posts heartbeats, and writes its pods' status.

Kubernetes piece: pkg/kubelet/kubelet.go's Kubelet as the API sees it — registerWithAPIServer
(POST the Node; on AlreadyExists take the existing one over),
updateNodeStatus every --node-status-update-frequency (v1.20 PATCHes nodes/{name}/status with
a strategic merge patch of the conditions; registration happens once per kubelet run, so a
Node deleted later stays deleted — its heartbeats fail with NotFound — until the kubelet
restarts, which `start_node` stands for), the node lease controller of 1.17+
(--node-heartbeat-mode=lease, the default: the Lease kube-node-lease/<node> is renewed every
--node-lease-renew-interval with a PUT of the Lease written last, and the status is written
only when the Node in the pool's node cache differs from what the kubelet would post, or every
--node-status-report-frequency; node_lease.py), and pkg/kubelet/status's manager (syncPod: write the
pod's status when it differs from the API server's, then, for a pod whose containers are gone
after a graceful deletion, DELETE it with grace 0 and a uid precondition).

The lifecycle decisions live in podworker.py; this class is the node's I/O, run by the pool's
bounded writer tasks — never a task of its own.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

import structlog

from ..api import meta
from ..api.errors import StatusError
from ..client.cache import strip_managed_fields
from ..client.record import EventRecorder
from ..client.resources import CSI_NODES, LEASES, NODES, PODS
from ..trace import KUBELET, TRACE
from .config import KubeletConfig
from .containers import Container
from .csi import csi_node_object
from .environment import load_sandbox
from .ipam import PodIPAllocator
from .node_lease import NODE_LEASE_NAMESPACE, STATUS_MODE, renewed_lease, status_differs
from .node_status import (
    heartbeat_patch,
    node_object,
    node_status,
    take_over,
    transitions,
)
from .pod_status import PodRecord, generate
from .podworker import PodWorkers, rv_of
from .shell_fs import Sandbox
from .timers import Timers
from .usage import Meter
from .volumes import VolumeReader

if TYPE_CHECKING:
    from .pool import KubeletPool

log = structlog.get_logger(component="kubelet")

Obj = dict[str, Any]
MAX_STATUS_CONFLICTS = 5
#: upstream lease controller maxUpdateRetries
MAX_LEASE_RETRIES = 5


class Kubelet:
    def __init__(self, pool: KubeletPool, name: str, config: KubeletConfig,
                 pod_cidr: str | None) -> None:
        self.pool = pool
        self.name = name
        self.config = config
        self.pod_cidr = pod_cidr
        self.boot_id = str(uuid.uuid4())
        self.timers = Timers()
        #: the simulated usage counters (usage.py) and when this node came up
        self.meter = Meter()
        self.started_at = time.time()
        #: the API as this node (system:node:<name> in-process; the pool's client otherwise)
        self.client = pool.client_for(name)
        #: ConfigMaps, Secrets and Services its pods name (the shared caches, else GETs)
        self.reads = pool.reads_for(self.client)
        self.workers = PodWorkers(self._node_object(), config, host_ip=pool.node_ip,
                                  pod_cidr=pod_cidr, timers=self.timers, hooks=self,
                                  volumes=VolumeReader(self.reads), sandboxes=self.sandbox)
        self.recorder = EventRecorder(self.client, "kubelet", name)
        self.registered = False
        #: the Node was deleted after registration: heartbeats fail until a restart
        self.node_deleted = False
        self.running = True
        self.conditions: list[Obj] = []  # as last posted
        self.last_heartbeat = ""
        self.heartbeats = 0  # node status posts
        #: the node lease as written last (upstream latestLease: renewals PUT it, no GET)
        self.lease: Obj | None = None
        self.lease_renewals = 0
        # when (loop clock) the next lease renewal / status check is due, the last status post
        self._lease_due = 0.0
        self._status_check_due = 0.0
        self._status_posted_at = 0.0
        self.status_writes = 0  # pod status PUTs (the status manager's writes)
        self._started_event_sent = False
        #: set once registered and a Ready status is posted; cleared by stop()
        self.ready_event = asyncio.Event()

    @property
    def ready(self) -> bool:
        return self.ready_event.is_set()

    def _node_object(self) -> Obj:
        return node_object(self.name, self.config, node_ip=self.pool.node_ip,
                           port=max(self.pool.port, 0), boot_id=self.boot_id,
                           pod_cidr=self.pod_cidr, now=meta.now_rfc3339())

    # -- hooks the pod workers call ----------------------------------------------------------
    def dirty(self, key: str) -> None:
        if self.running:
            self.pool.pod_dirty(key)

    def event(self, pod: Obj, event_type: str, reason: str, message: str) -> None:
        if self.config.record_events:
            md = pod.get("metadata") or {}
            ref = {"kind": "Pod", "apiVersion": "v1",
                   "metadata": {"name": md.get("name", ""), "namespace": md.get("namespace", ""),
                                "uid": md.get("uid", ""),
                                "resourceVersion": md.get("resourceVersion", "")}}
            self.pool.emit(self.recorder, ref, event_type, reason, message)

    async def sandbox(self, record: PodRecord, container: Container) -> Sandbox:
        """What a container's command sees (env, files), read through the API server."""
        config = self.config
        return await load_sandbox(
            self.reads, record.pod, container.spec, pod_ip=record.ip or "",
            host_ip=self.pool.node_ip,
            allocatable={"cpu": config.cpu, "memory": config.memory,
                         "ephemeral-storage": config.ephemeral_storage},
            tokens=self.pool.tokens)

    def _node_event(self, reason: str, message: str) -> None:
        if self.config.record_events:
            ref = {"kind": "Node", "apiVersion": "v1",
                   "metadata": {"name": self.name, "uid": self.name}}
            self.pool.emit(self.recorder, ref, "Normal", reason, message)

    # -- node registration and status ------------------------------------------------------
    @property
    def beat_period(self) -> float:
        """How often the pool calls sync_node: every status update in status mode; in lease
        mode often enough for both the lease renewal and the status check."""
        config = self.config
        if config.heartbeat_mode == STATUS_MODE:
            return config.node_status_update_frequency
        return min(config.node_status_update_frequency, config.node_lease_renew_interval)

    async def sync_node(self) -> None:
        """Register if not registered yet, else heartbeat: post the status (status mode), or
        renew the lease and post the status only when due (lease mode)."""
        if not self.running:
            return
        if not self.registered:
            await self.register()
            return
        if self.config.heartbeat_mode == STATUS_MODE:
            await self.post_status_heartbeat()
            return
        now = time.monotonic()
        slack = self.beat_period / 2  # a beat a little early still counts
        if now >= self._lease_due and not self.node_deleted:
            self._lease_due = now + self.config.node_lease_renew_interval - slack
            await self.renew_lease()
        if now >= self._status_check_due:
            self._status_check_due = now + self.config.node_status_update_frequency - slack
            await self._check_status(now)

    async def _check_status(self, now: float) -> None:
        """tryUpdateNodeStatus in lease mode, against the pool's node cache instead of a GET:
        write when the Node differs from what we would post (or is missing from a synced
        cache: the write tells whether it was deleted) or the report frequency has passed."""
        synced, node = self.pool.cached_node(self.name)
        missing = synced and node is None
        if self.node_deleted and (missing or not synced):
            return  # still gone: registration happens once per kubelet run
        if node is not None and status_differs(node):
            await self.post_status_heartbeat((node.get("status") or {}).get("conditions") or [])
        elif missing or now - self._status_posted_at >= self.config.node_status_report_frequency:
            await self.post_status_heartbeat()

    async def renew_lease(self) -> None:
        """The node lease controller's sync: PUT the Lease written last with a new renewTime;
        on a conflict read it again, on NotFound create it (ensureLease)."""
        config = self.config
        uid = ((self.workers.info.node or {}).get("metadata") or {}).get("uid")
        client = self.client
        for _ in range(MAX_LEASE_RETRIES):
            if self.lease is None:
                self.lease = await client.get_or_none(LEASES, self.name, NODE_LEASE_NAMESPACE)
            lease = renewed_lease(self.lease, self.name, uid, config.node_lease_duration_seconds,
                                  time.time())
            try:
                if self.lease is None:
                    self.lease = await client.create(LEASES, lease, NODE_LEASE_NAMESPACE)
                else:
                    self.lease = await client.update(LEASES, lease)
            except StatusError as exc:
                if exc.code not in (404, 409):
                    raise
                self.lease = None  # re-read it (conflict) or create it again (deleted)
                continue
            self.lease_renewals += 1
            return
        raise StatusError(409, "Conflict", f"node lease {self.name}: kept conflicting")

    async def post_status_heartbeat(self, seen: list[Obj] | None = None) -> None:
        """PATCH the conditions with a fresh lastHeartbeatTime (updateNodeStatus). `seen`:
        the conditions the Node has in the API server when they differ from ours (a
        transition back to healthy then moves lastTransitionTime and records NodeReady)."""
        now = meta.now_rfc3339()
        patch = heartbeat_patch(now, self.conditions if seen is None else seen)
        try:
            node = await self.client.patch(NODES, self.name, patch, patch_type="strategic",
                                                subresource="status")
        except StatusError as exc:
            if exc.code != 404:
                raise
            # registerWithAPIServer ran once; updateNodeStatus now fails with NotFound
            if not self.node_deleted:
                log.warning("node was deleted; it is registered again when its kubelet "
                            "restarts (minikube-py node stop/start)", node=self.name)
            self.node_deleted = True
            self.ready_event.clear()
            return
        self.node_deleted = False
        for reason in transitions(seen) if seen is not None else ():
            self._node_event(reason, f"Node {self.name} status is now: {reason}")
        self._posted(node, patch["status"]["conditions"], now)

    def _posted(self, node: Obj, conditions: list[Obj], now: str) -> None:
        self._status_posted_at = time.monotonic()
        self.conditions = conditions
        self.last_heartbeat = now
        self.heartbeats += 1
        self.workers.info.node = node  # admission sees the node's current labels

    async def register(self) -> None:
        """tryRegisterWithAPIServer: create the Node, or take the existing one over."""
        client = self.client
        wanted = self._node_object()
        now = wanted["status"]["conditions"][0]["lastHeartbeatTime"]
        if not self._started_event_sent:
            self._started_event_sent = True
            self._node_event("Starting", "Starting kubelet.")
        try:
            node = await client.create(NODES, wanted)
            previous: list[Obj] = []
            conditions = wanted["status"]["conditions"]
        except StatusError as exc:
            if exc.code != 409:
                raise
            existing = await client.get(NODES, self.name)
            update = take_over(existing, wanted)
            if update is not None:
                existing = await client.update(NODES, update)
            self._adopt_cidr(existing)
            previous = (existing.get("status") or {}).get("conditions") or []
            status = node_status(self.name, self.config, self.pool.node_ip, self.pool.port,
                                 self.boot_id, now, previous)
            node = await client.patch(NODES, self.name, {"status": status},
                                      patch_type="strategic", subresource="status")
            conditions = status["conditions"]
        for reason in transitions(previous):
            self._node_event(reason, f"Node {self.name} status is now: {reason}")
        self.registered = True
        self.node_deleted = False
        self._posted(node, conditions, now)
        self._mark_ready()
        log.debug("node registered", node=self.name)

    async def publish_csi_node(self) -> None:
        """Register the simulated CSI node plugin: create this node's CSINode (csi.py), owned
        by the Node as registered; an existing one (a restart) is kept. The pool calls it
        after registration, off the registration path."""
        node = self.workers.info.node
        try:
            await self.client.create(CSI_NODES, csi_node_object(node))
        except StatusError as exc:
            if exc.code != 409:
                raise

    def _adopt_cidr(self, existing: Obj) -> None:
        """The API server's spec.podCIDR wins (the kubelet reads it from its Node), as long as
        no pod has an address yet."""
        cidr = (existing.get("spec") or {}).get("podCIDR")
        workers = self.workers
        if cidr and cidr != self.pod_cidr and (workers.ipam is None or not workers.ipam.in_use):
            self.pod_cidr = cidr
            workers.ipam = PodIPAllocator(cidr)

    async def post_ready(self) -> None:
        """A full status with fresh conditions, judged against the Node as the API server has
        it now (the node controller may have marked it NotReady/Unknown meanwhile)."""
        client = self.client
        try:
            existing = await client.get(NODES, self.name)
        except StatusError as exc:
            if exc.code != 404:
                raise
            self.registered = False
            await self.register()
            return
        previous = (existing.get("status") or {}).get("conditions") or []
        now = meta.now_rfc3339()
        status = node_status(self.name, self.config, self.pool.node_ip, self.pool.port,
                             self.boot_id, now, previous)
        node = await client.patch(NODES, self.name, {"status": status}, patch_type="strategic",
                                  subresource="status")
        for reason in transitions(previous):
            self._node_event(reason, f"Node {self.name} status is now: {reason}")
        self.registered = True
        self._posted(node, status["conditions"], now)
        self._mark_ready()

    def _mark_ready(self) -> None:
        if self.running:
            self.ready_event.set()

    # -- pod status (the status manager's syncPod) -----------------------------------------
    async def sync_pod(self, key: str) -> None:
        if not self.running:
            return
        client = self.client
        for _ in range(MAX_STATUS_CONFLICTS):
            record = self.workers.records.get(key)
            if record is None:
                return
            status = generate(record, self.pool.node_ip, meta.now_rfc3339())
            if status != record.pod.get("status"):
                self.status_writes += 1
                try:
                    written = await client.update_status(PODS, {**record.pod, "status": status})
                except StatusError as exc:
                    if exc.code == 404:
                        return  # deleted: the watch will tell the workers
                    if exc.code != 409:
                        raise
                    fresh = await self._reread(key)
                    if fresh is None:
                        return
                    continue
                if rv_of(written) >= rv_of(record.pod):
                    record.pod = strip_managed_fields(written)
                if TRACE.active:
                    md = record.pod["metadata"]
                    TRACE.emit(KUBELET, f"kubelet/{self.name}", "pods", md.get("namespace", ""),
                               md.get("name", ""), record.uid,
                               (self.name, status.get("phase"), _waiting_reason(status),
                                status.get("podIP")))
                log.debug("pod status written", node=self.name, pod=key,
                          phase=status.get("phase"), reason=_waiting_reason(status),
                          pod_ip=status.get("podIP"), resource_version=rv_of(written))
            if record.killed:
                md = record.pod["metadata"]
                try:
                    await client.delete(PODS, md["name"], md["namespace"], grace_period_seconds=0,
                                        preconditions={"uid": record.uid})
                except StatusError as exc:
                    if exc.code not in (404, 409):
                        raise
            return
        raise StatusError(409, "Conflict", f"pod {key}: status kept conflicting")

    async def _reread(self, key: str) -> Obj | None:
        """After a 409: the newest pod (None if it is gone or was replaced)."""
        namespace, _, name = key.partition("/")
        fresh = await self.client.get_or_none(PODS, name, namespace)
        if fresh is None:
            return None
        record = self.workers.records.get(key)
        if record is None or fresh["metadata"].get("uid") != record.uid:
            return None
        record.pod = fresh
        return fresh

    # -- failure toggle --------------------------------------------------------------------
    def stop(self) -> None:
        """Heartbeats stop and pods are left alone (but remembered)."""
        self.running = False
        self.ready_event.clear()
        self.timers.pause()
        self.workers.active = False

    async def start(self) -> None:
        self.running = True
        await self.post_ready()
        self.timers.resume()
        self.workers.resync()

    def shutdown(self) -> None:
        self.timers.clear()
        self.recorder.close()

    def summary(self) -> Obj:
        records = self.workers.records
        return {"name": self.name, "state": "running" if self.running else "stopped",
                "registered": self.registered, "ready": self.ready,
                "nodeDeleted": self.node_deleted,
                "podCIDR": self.pod_cidr, "pods": len(records),
                "activePods": len(self.workers.info.pods),
                "lastHeartbeatTime": self.last_heartbeat or None,
                "heartbeats": self.heartbeats, "heartbeatMode": self.config.heartbeat_mode,
                "leaseRenewals": self.lease_renewals, "statusWrites": self.status_writes,
                "pendingSteps": len(self.timers)}


def _waiting_reason(status: Obj) -> str | None:
    """The first container's waiting reason (ContainerCreating, CrashLoopBackOff, ...)."""
    for container in status.get("containerStatuses") or ():
        waiting = (container.get("state") or {}).get("waiting")
        if waiting:
            return waiting.get("reason")
    return None
