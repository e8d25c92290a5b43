"""The pods of one node: admission, then pull / create / start, exits, restarts, deadlines and
graceful termination — as timers, with no process behind them.

Kubernetes piece: pkg/kubelet's pod lifecycle — HandlePodAdditions/Updates/Removes (kubelet.go),
the predicate admit handler, podWorkers + syncPod, kuberuntime_manager (SyncPod: sandbox,
init containers one at a time, then the app containers; computePodActions' restart rules),
the image puller's events, the active-deadline handler, and killPod for graceful deletion.

What the worker decides it announces through `Hooks`: `dirty(key)` (the pod's status should be
re-computed and written — the status manager coalesces many into one write) and `event(...)`
(an Event, best effort). It never does API I/O itself, so every decision is made on the loop,
synchronously, in the order the informer delivered the pods.

Event reasons and messages are upstream's: Pulling `Pulling image "nginx"`, Pulled
`Successfully pulled image "nginx" in 200ms` (or `Container image "nginx" already present on
machine`), Created `Created container web`, Started `Started container web`, Killing
`Stopping container web`, BackOff `Back-off restarting failed container` (Warning),
DeadlineExceeded, the admission failure (`OutOfcpu`, Warning), and FailedMount while the objects
behind a pod's volumes are missing or its claims unbound (volumes.py: the containers wait as
ContainerCreating until every volume "mounts").
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from ..api import meta
from ..scheduler.nodeinfo import NodeInfo
from .admission import admit
from .command import behaviour
from .config import KubeletConfig
from .containers import (
    KILLED_EXIT_CODE,
    RUNNING,
    TERMINATED,
    WAITING,
    Container,
    backoff_delay,
    go_duration,
    pull_policy,
    should_restart,
)
from .ipam import PodIPAllocator
from .pod_status import DEADLINE_MESSAGE, DEADLINE_REASON, PodRecord, phase, waiting_reason
from .timers import Timers
from .volumes import Mounter, VolumeReader, volume_refs

Obj = dict[str, Any]
NORMAL, WARNING = "Normal", "Warning"


class Hooks(Protocol):
    def dirty(self, key: str) -> None: ...
    def event(self, pod: Obj, event_type: str, reason: str, message: str) -> None: ...


def pod_key(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def rv_of(obj: Obj) -> int:
    """metadata.resourceVersion as an int (0 when absent), to keep the newest copy."""
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class PodWorkers:
    def __init__(self, node: Obj, config: KubeletConfig, *, host_ip: str, pod_cidr: str | None,
                 timers: Timers, hooks: Hooks, volumes: VolumeReader | None = None) -> None:
        """`volumes`: how to read the objects behind the pods' volumes (kubelet/volumes.py);
        without it volumes are not checked and pods start at once."""
        self.config = config
        self.host_ip = host_ip
        self.timers = timers
        self.hooks = hooks
        self.records: dict[str, PodRecord] = {}
        self.info = NodeInfo(node=node)  # the node and its admitted active pods
        self.ipam = PodIPAllocator(pod_cidr) if pod_cidr else None
        self.images: set[str] = set()  # images "present on the machine"
        self.active = True
        self.mounter = Mounter(volumes, timers, hooks.event) if volumes is not None else None

    # -- what the informer tells us -------------------------------------------------------
    def seen(self, pod: Obj) -> None:
        """A pod bound to this node was added or changed."""
        key = pod_key(pod)
        uid = (pod.get("metadata") or {}).get("uid", "")
        record = self.records.get(key)
        if record is not None and record.uid != uid:
            self.forget(key)  # deleted and re-created under the same name
            record = None
        if record is None:
            record = self.records[key] = PodRecord(key, uid, pod)
            if self.active:
                self._handle(record)
            return
        if rv_of(pod) >= rv_of(record.pod):
            record.pod = pod
        if not self.active:
            return
        if not record.handled:
            self._handle(record)
        elif record.pod["metadata"].get("deletionTimestamp") and not record.terminating:
            self._terminate(record)
        self.hooks.dirty(key)  # a readiness gate may have changed, or our write came back

    def gone(self, pod: Obj) -> None:
        """The pod was deleted from the API server."""
        key = pod_key(pod)
        record = self.records.get(key)
        if record is not None and record.uid == (pod.get("metadata") or {}).get("uid", ""):
            self.forget(key)

    def forget(self, key: str) -> None:
        record = self.records.pop(key, None)
        if record is None:
            return
        for step in (record.step, record.deadline, *(c.step for c in record.init + record.app)):
            self.timers.cancel(step)
        self._unmount_wait(record)
        self._release(record)
        if record.ip and self.ipam is not None:
            self.ipam.release(record.ip)

    # -- resume after stop_node ------------------------------------------------------------
    def resync(self) -> None:
        self.active = True
        for key, record in list(self.records.items()):
            if not record.handled:
                self._handle(record)
            elif record.pod["metadata"].get("deletionTimestamp") and not record.terminating:
                self._terminate(record)
            self.hooks.dirty(key)

    # -- admission and adoption --------------------------------------------------------------
    def _handle(self, record: PodRecord) -> None:
        record.handled = True
        pod = record.pod
        md, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        annotations = md.get("annotations") or {}
        record.init = [Container(c.get("name", ""), c.get("image") or "",
                                 behaviour(c, annotations, init=True), pull_policy(c), True)
                       for c in spec.get("initContainers") or ()]
        record.app = [Container(c.get("name", ""), c.get("image") or "",
                                behaviour(c, annotations), pull_policy(c))
                      for c in spec.get("containers") or ()]
        if _terminal(pod):
            self._adopt(record, spec, status, running=False)
            return
        if status.get("phase") == "Running" and status.get("containerStatuses"):
            self._adopt(record, spec, status, running=True)
        else:
            rejection = admit(pod, self.info)
            record.start_time = time.time()
            if rejection is not None:
                record.rejection = rejection
                self.hooks.event(pod, WARNING, rejection.reason, rejection.message)
                self.hooks.dirty(record.key)
                return
            self._admit(record)
            waiting_reason(record)
            self.hooks.dirty(record.key)
            self._mount_then_advance(record)
        self._arm_deadline(record)
        if md.get("deletionTimestamp"):
            self._terminate(record)

    def _admit(self, record: PodRecord) -> None:
        self.info.add_pod(record.pod)
        record.admitted = True
        if (record.pod.get("spec") or {}).get("hostNetwork"):
            record.ip = self.host_ip
        elif self.ipam is not None and record.ip is None:
            record.ip = self.ipam.allocate()

    def _release(self, record: PodRecord) -> None:
        if record.admitted:
            self.info.remove_pod(record.pod)
            record.admitted = False

    def _adopt(self, record: PodRecord, spec: Obj, status: Obj, *, running: bool) -> None:
        """A pod an earlier kubelet run already started (the cluster resumed from disk): keep
        its containers, IP and start time instead of starting it again."""
        by_name = {s.get("name"): s for s in (status.get("containerStatuses") or []) +
                   (status.get("initContainerStatuses") or []) if isinstance(s, dict)}
        for group in (record.init, record.app):
            for i, c in enumerate(group):
                found = by_name.get(c.name)
                if found is not None and (found.get("state") or {}).keys() & {"running",
                                                                              "terminated"}:
                    group[i] = Container.adopt({"name": c.name, "image": c.image,
                                                "imagePullPolicy": c.policy}, found,
                                               c.behaviour, init=c.init)
        try:
            record.start_time = meta.parse_rfc3339(status["startTime"]) \
                if status.get("startTime") else time.time()
        except ValueError:
            record.start_time = time.time()
        ip = status.get("podIP")
        record.sandbox = bool(ip)
        if not running:
            record.ip = ip
            return
        self.info.add_pod(record.pod)
        record.admitted = True
        if ip and ((record.pod.get("spec") or {}).get("hostNetwork") or self.ipam is None
                   or self.ipam.reserve(ip)):
            record.ip = ip
        else:
            record.ip = None
            self._admit_ip(record)
        self.images.update(c.image for c in record.init + record.app)
        now = time.time()
        for c in record.app:
            if c.state == RUNNING and c.behaviour.seconds is not None:
                c.step = self.timers.later(c.started_at + c.behaviour.seconds - now,
                                           self._exited, record, c)
            elif c.state == TERMINATED and should_restart(record.restart_policy, c.exit_code):
                self._restart(record, c)
        self._advance(record)
        self.hooks.dirty(record.key)

    def _admit_ip(self, record: PodRecord) -> None:
        if self.ipam is not None:
            record.ip = self.ipam.allocate()

    def _arm_deadline(self, record: PodRecord) -> None:
        deadline = (record.pod.get("spec") or {}).get("activeDeadlineSeconds")
        if isinstance(deadline, int) and not isinstance(deadline, bool) and record.admitted:
            record.deadline = self.timers.later(record.start_time + deadline - time.time(),
                                                self._deadline, record)

    # -- volumes: mounted before any container starts (WaitForAttachAndMount) ----------------
    def _mount_then_advance(self, record: PodRecord) -> None:
        if self.mounter is None or not volume_refs(record.pod):
            self._advance(record)
            return
        self.mounter.mount(record.key, lambda: record.pod, lambda: self._mounted(record))

    def _mounted(self, record: PodRecord) -> None:
        if self.records.get(record.key) is record and not record.terminating \
                and record.admitted:
            self._advance(record)

    def _unmount_wait(self, record: PodRecord) -> None:
        if self.mounter is not None:
            self.mounter.cancel(record.key)

    # -- starting containers, one at a time --------------------------------------------------
    def _advance(self, record: PodRecord) -> None:
        """Start the next container that never ran: init containers first, each only once the
        previous one succeeded; then the app containers in order."""
        if record.terminating or record.step is not None:
            return
        for c in record.init:
            if c.succeeded:
                continue
            if c.state == WAITING and not c.ever_ran:
                self._pull(record, c)
            return  # an init container is running or restarting: wait for it
        for c in record.app:
            if c.state == WAITING and not c.ever_ran and c.step is None:
                self._pull(record, c)
                return

    def _pull(self, record: PodRecord, c: Container) -> None:
        record.sandbox = True
        if c.policy != "Always" and c.image in self.images:
            self.hooks.event(record.pod, NORMAL, "Pulled",
                             f'Container image "{c.image}" already present on machine')
            self._create(record, c)
            return
        self.hooks.event(record.pod, NORMAL, "Pulling", f'Pulling image "{c.image}"')
        step = self.timers.later(self.config.image_pull_seconds, self._pulled, record, c,
                                 time.monotonic())
        self._own(record, c, step)

    def _own(self, record: PodRecord, c: Container, step: Any) -> None:
        c.step = step
        if not c.ever_ran:
            record.step = step  # the start-up chain waits for this container

    def _pulled(self, record: PodRecord, c: Container, began: float) -> None:
        self.images.add(c.image)
        took = go_duration(time.monotonic() - began)
        self.hooks.event(record.pod, NORMAL, "Pulled",
                         f'Successfully pulled image "{c.image}" in {took}')
        self._create(record, c)

    def _create(self, record: PodRecord, c: Container) -> None:
        self.hooks.event(record.pod, NORMAL, "Created", f"Created container {c.name}")
        step = self.timers.later(self.config.container_start_seconds, self._started, record, c)
        self._own(record, c, step)

    def _started(self, record: PodRecord, c: Container) -> None:
        first = not c.ever_ran
        c.step = None
        if first:
            record.step = None
        c.start(time.time(), record.uid)
        self.hooks.event(record.pod, NORMAL, "Started", f"Started container {c.name}")
        self.hooks.dirty(record.key)
        if c.behaviour.seconds is not None:
            c.step = self.timers.later(c.behaviour.seconds, self._exited, record, c)
        if first and not c.init:
            self._advance(record)

    # -- exits, restarts, the end of the pod ---------------------------------------------
    def _exited(self, record: PodRecord, c: Container) -> None:
        c.step = None
        c.finish(time.time(), c.behaviour.exit_code)
        self.hooks.dirty(record.key)
        policy = record.restart_policy
        if c.init and c.exit_code == 0:
            self._advance(record)
        elif should_restart(policy, c.exit_code):
            self._restart(record, c)
        elif c.init or phase(record) in ("Succeeded", "Failed"):
            self._finish(record)

    def _restart(self, record: PodRecord, c: Container) -> None:
        delay = backoff_delay(c.exits, self.config.restart_backoff_seconds,
                              self.config.restart_backoff_max_seconds)
        if delay <= 0:
            self._pull(record, c)
            return
        c.back_off(delay, record.ref)
        self.hooks.event(record.pod, WARNING, "BackOff", "Back-off restarting failed container")
        self.hooks.dirty(record.key)
        c.step = self.timers.later(delay, self._pull, record, c)

    def _finish(self, record: PodRecord) -> None:
        """The pod reached Succeeded or Failed: it no longer counts against the node."""
        self.timers.cancel(record.deadline)
        record.deadline = None
        self._unmount_wait(record)
        self._release(record)
        if record.ip and self.ipam is not None and record.ip != self.host_ip:
            self.ipam.release(record.ip)  # status keeps showing it, as upstream

    def _stop_containers(self, record: PodRecord, exit_code: int) -> None:
        now = time.time()
        self.timers.cancel(record.step)
        record.step = None
        for c in record.init + record.app:
            self.timers.cancel(c.step)
            c.step = None
            if c.state == RUNNING:
                c.finish(now, exit_code, "Error" if exit_code else "Completed")

    def _deadline(self, record: PodRecord) -> None:
        record.deadline = None
        if record.terminating or phase(record) in ("Succeeded", "Failed"):
            return
        self.hooks.event(record.pod, NORMAL, DEADLINE_REASON, DEADLINE_MESSAGE)
        self._stop_containers(record, KILLED_EXIT_CODE)
        record.failure = (DEADLINE_REASON, DEADLINE_MESSAGE)
        self._finish(record)
        self.hooks.dirty(record.key)

    # -- graceful deletion -----------------------------------------------------------------
    def _terminate(self, record: PodRecord) -> None:
        """deletionTimestamp seen: stop the containers within the grace period, then the
        status manager writes the final status and deletes the pod (grace 0, uid precondition)."""
        record.terminating = True
        self.timers.cancel(record.step)
        record.step = None
        self._unmount_wait(record)
        running = [c for c in record.init + record.app if c.state == RUNNING]
        for c in record.init + record.app:
            self.timers.cancel(c.step)
            c.step = None
        for c in running:
            self.hooks.event(record.pod, NORMAL, "Killing", f"Stopping container {c.name}")
        grace = float(record.pod["metadata"].get("deletionGracePeriodSeconds") or 0)
        if self.config.max_termination_grace_seconds is not None:
            grace = min(grace, self.config.max_termination_grace_seconds)
        record.step = self.timers.later(grace if running else 0.0, self._killed, record)

    def _killed(self, record: PodRecord) -> None:
        record.step = None
        self._stop_containers(record, KILLED_EXIT_CODE)
        self.timers.cancel(record.deadline)
        record.deadline = None
        record.killed = True
        self._finish(record)
        self.hooks.dirty(record.key)

    # -- logs ------------------------------------------------------------------------------
    def log_span(self, key: str, container: str,
                 previous: bool) -> tuple[float, float | None] | None:
        """(started, finished or None while running) of a container's current instance, or
        of the one before it with `previous`; None when there is none."""
        record = self.records.get(key)
        if record is None:
            return None
        for c in record.init + record.app:
            if c.name != container:
                continue
            if previous:
                return c.previous_span
            if c.state == RUNNING:
                return c.started_at, None
            if c.state == TERMINATED:
                return c.started_at, c.finished_at
            return c.dead_span
        return None
