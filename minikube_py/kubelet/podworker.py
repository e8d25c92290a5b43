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
DeadlineExceeded, the admission failure (`OutOfcpu`, Warning), FailedMount while the objects
behind a pod's volumes are missing or its claims unbound (volumes.py: the containers wait as
ContainerCreating until every volume "mounts"), Failed `Error: ...` (Warning) for a container
whose config cannot be made (CreateContainerConfigError: a bad subPathExpr), and
FailedPostStartHook / FailedPreStopHook (Warning).

Containers run their command through the simulated shell (process.py) when it understands it;
a container's log is what it wrote, its exit status the shell's. Servers run until stopped.
Deletion (killPod, kuberuntime killContainer): each running container gets its preStop hook,
then SIGTERM; a container that ends on TERM (a server, a shell script) ends at once (143), one
that ignores it (`sleep` as PID 1) is killed when the grace period runs out (137); once every
container has stopped the status manager writes the final status and deletes the pod.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from ..api import meta
from ..scheduler.nodeinfo import NodeInfo
from . import probes
from . import sandbox as sandboxes
from .admission import admit
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
from .logs import ContainerLog, LogSpan
from .pod_status import DEADLINE_MESSAGE, DEADLINE_REASON, PodRecord, phase, waiting_reason
from .process import TERM_EXIT_CODE, TERM_EXIT_SECONDS, Process, plan, understood
from .shell_fs import Sandbox
from .timers import Timers
from .volumes import Mounter, VolumeReader, volume_refs

log = structlog.get_logger(component="kubelet")

Obj = dict[str, Any]
NORMAL, WARNING = "Normal", "Warning"
CREATE_CONFIG_ERROR = "CreateContainerConfigError"
TERMINATION_LOG = "/dev/termination-log"
MAX_TERMINATION_MESSAGE = 4096  # upstream MaxContainerTerminationMessageLength
#: (record, container) -> the container's Sandbox, read through the API (environment.py)
SandboxLoader = Callable[[PodRecord, Container], Awaitable[Sandbox]]


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
                 timers: Timers, hooks: Hooks, volumes: VolumeReader | None = None,
                 sandboxes: SandboxLoader | None = None) -> None:
        """`volumes`: how to read the objects behind the pods' volumes (kubelet/volumes.py);
        without it volumes are not checked and pods start at once. `sandboxes`: how to read
        what a container's command sees (environment.py); without it a command sees only
        what its pod spec says (no ConfigMap, Secret or service-link values)."""
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
        self.sandboxes = sandboxes
        self._loading: set[asyncio.Task] = set()

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
        elif _deadline_of(record.pod) != record.deadline_seconds:
            self._arm_deadline(record)  # activeDeadlineSeconds is mutable (Jobs set it)
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
        for c in record.init + record.app:
            if c.process is not None:
                c.process.stop()
                c.process = None
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
        record.init = [_container(c, annotations, init=True)
                       for c in spec.get("initContainers") or ()]
        record.app = [_container(c, annotations, init=False)
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
                    group[i].argv, group[i].spec = c.argv, c.spec
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
            if c.state == RUNNING and c.argv is not None:
                c.log = ContainerLog()
                self._launch(record, c)  # the process state is gone: run the command again
            elif c.state == RUNNING and c.behaviour.seconds is not None:
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
        """pkg/kubelet/active_deadline.go: the pod fails once it has been active (since
        status.startTime) longer than spec.activeDeadlineSeconds — re-armed when it changes."""
        self.timers.cancel(record.deadline)
        record.deadline = None
        deadline = record.deadline_seconds = _deadline_of(record.pod)
        if deadline is not None and record.admitted and not record.terminating \
                and record.failure is None:
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
            if c.state == WAITING and not c.ever_ran and c.reason != CREATE_CONFIG_ERROR:
                self._pull(record, c)
            return  # an init container is running or restarting: wait for it
        for c in record.app:
            if c.state == WAITING and not c.ever_ran and c.step is None \
                    and c.reason != CREATE_CONFIG_ERROR:
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
        if self.config.image_pull_seconds <= 0:  # an instant pull: no simulated time passes
            self._pulled(record, c, time.monotonic())
            return
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
        error = sandboxes.config_error(record.pod, c.spec)
        if error is not None:
            # generateContainerConfig failed: the container waits, the next one starts
            c.step = None
            if record.step is not None and not c.ever_ran:
                record.step = None
            c.state, c.reason, c.message = WAITING, CREATE_CONFIG_ERROR, error
            self.hooks.event(record.pod, WARNING, "Failed", f"Error: {error}")
            self.hooks.dirty(record.key)
            if not c.init:
                self._advance(record)
            return
        self.hooks.event(record.pod, NORMAL, "Created", f"Created container {c.name}")
        if self.config.container_start_seconds <= 0:  # an instant start, as an instant pull
            self._started(record, c)
            return
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
        self._launch(record, c)
        self._arm_readiness(record, c)
        post_start = ((c.spec.get("lifecycle") or {}).get("postStart"))
        if post_start and c.state == RUNNING:
            self._hook(record, c, "PostStart", post_start, self._post_started)
        if first and not c.init:
            self._advance(record)

    # -- the container's process ---------------------------------------------------------
    def _launch(self, record: PodRecord, c: Container) -> None:
        """Run what the container runs: its command through the shell, or a timed exit."""
        if c.argv is None:
            if c.behaviour.seconds is not None:
                c.step = self.timers.later(c.behaviour.seconds, self._exited, record, c)
            return
        instance = c.container_id
        if self.sandboxes is None:
            self._run(record, c, instance, self._spec_sandbox(record, c))
            return
        task = asyncio.get_running_loop().create_task(self._load_and_run(record, c, instance))
        self._loading.add(task)
        task.add_done_callback(self._loading.discard)

    def _spec_sandbox(self, record: PodRecord, c: Container) -> Sandbox:
        return sandboxes.build(record.pod, c.spec, configmaps={}, secrets={}, services=[],
                               pod_ip=record.ip or "", host_ip=self.host_ip)

    async def _load_and_run(self, record: PodRecord, c: Container, instance: str) -> None:
        assert self.sandboxes is not None
        try:
            box = await self.sandboxes(record, c)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the API is unreachable: what the spec says
            log.warning("reading a container's environment failed", pod=record.key,
                        container=c.name, error=str(exc))
            box = self._spec_sandbox(record, c)
        self._run(record, c, instance, box)

    def _current(self, record: PodRecord, c: Container, instance: str) -> bool:
        return self.records.get(record.key) is record and c.state == RUNNING and \
            c.container_id == instance

    def _run(self, record: PodRecord, c: Container, instance: str, box: Sandbox) -> None:
        if not self._current(record, c, instance) or c.argv is None or c.log is None:
            return
        process = Process(c.argv, box, self.timers, c.log,
                          lambda code: self._exited(record, c, code, instance),
                          stdin_open=bool(c.spec.get("stdin")))
        c.process = process
        process.start()

    def _termination_message(self, c: Container, code: int) -> str:
        """kuberuntime getTerminationMessage: the end of the file at terminationMessagePath,
        or with FallbackToLogsOnError and an error exit, the end of the log."""
        path = c.spec.get("terminationMessagePath") or TERMINATION_LOG
        text = ""
        if c.process is not None:
            data = _file(c.process.sandbox, path)
            if data:
                text = data[-MAX_TERMINATION_MESSAGE:].decode(errors="replace")
        if not text and code != 0 and c.log is not None and \
                c.spec.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            text = c.log.tail_text()
        return text

    # -- readiness and lifecycle hooks -------------------------------------------------------
    def _arm_readiness(self, record: PodRecord, c: Container) -> None:
        probe = c.spec.get("readinessProbe")
        if c.init or not isinstance(probe, dict) or c.state != RUNNING:
            return
        c.probe_ready = False
        timing = probes.timing(probe)
        c.probe_step = self.timers.later(timing.initial_delay, self._probe, record, c,
                                         c.container_id, 0)

    def _probe(self, record: PodRecord, c: Container, instance: str, successes: int) -> None:
        c.probe_step = None
        if not self._current(record, c, instance):
            return
        probe = c.spec.get("readinessProbe") or {}
        timing = probes.timing(probe)
        successes = successes + 1 if self._check(record, c, probe) is None else 0
        if successes >= timing.success_threshold:
            c.probe_ready = True
            self.hooks.dirty(record.key)
            return
        c.probe_step = self.timers.later(timing.period, self._probe, record, c, instance,
                                         successes)

    def _check(self, record: PodRecord, c: Container, handler: Obj) -> str | None:
        """One probe or httpGet/tcpSocket hook against the pod: None, or why it failed."""
        argv = probes.exec_argv(handler)
        if argv is not None:
            return self._exec_check(record, c, argv)
        if "httpGet" in handler or "tcpSocket" in handler:
            running = {x.name for x in record.app if x.state == RUNNING}
            return probes.network_error(record.pod, c.spec, handler, running, record.ip or "")
        return None

    def _exec_check(self, record: PodRecord, c: Container, argv: list[str]) -> str | None:
        """An exec probe: the shell runs it at once (its sleeps do not wait)."""
        if not understood(argv):
            return None  # a program of the image: assume it succeeds
        box = c.process.sandbox if c.process is not None else self._spec_sandbox(record, c)
        out = ContainerLog()
        codes: list[int] = []
        Process(argv, box, self.timers, out, codes.append).run_to_end()
        code = codes[0] if codes else 0
        return None if code == 0 else f"command '{' '.join(argv)}' exited with {code}"

    def _hook(self, record: PodRecord, c: Container, kind: str, handler: Obj,
              then: Callable[[PodRecord, Container, str | None], None]) -> None:
        """Run a lifecycle handler; `then(record, c, error)` once it ended (timers pass for an
        exec hook's sleeps and a sleep handler)."""
        instance = c.container_id
        argv = probes.exec_argv(handler)
        seconds = probes.sleep_seconds(handler)
        if argv is not None and understood(argv):
            out = ContainerLog()

            def done(code: int) -> None:
                c.hook = None
                error = None if code == 0 else probes.exec_hook_error(
                    argv, c.name, record.ref, code, out.tail_text().strip())
                if self.records.get(record.key) is record and c.container_id == instance:
                    then(record, c, error)

            box = c.process.sandbox if c.process is not None else \
                self._spec_sandbox(record, c)
            c.hook = Process(argv, box, self.timers, out, done)
            c.hook.start()
            return
        if seconds is not None:
            c.hook_step = self.timers.later(seconds, then, record, c, None)
            return
        error = None
        if "httpGet" in handler or "tcpSocket" in handler:
            problem = self._check(record, c, handler)
            if problem is not None:
                error = probes.http_hook_error(handler, c.name, record.ref, problem)
        then(record, c, error)

    def _post_started(self, record: PodRecord, c: Container, error: str | None) -> None:
        """A failed postStart hook kills the container (FailedPostStartHook); it then
        restarts as its pod's restartPolicy says."""
        if error is None or c.state != RUNNING:
            return
        self.hooks.event(record.pod, WARNING, "FailedPostStartHook", error)
        self.hooks.event(record.pod, NORMAL, "Killing", "FailedPostStartHook")
        self._exited(record, c, KILLED_EXIT_CODE, None, reason="Error")

    # -- exits, restarts, the end of the pod ---------------------------------------------
    def _exited(self, record: PodRecord, c: Container, code: int | None = None,
                instance: str | None = None, reason: str | None = None) -> None:
        if instance is not None and c.container_id != instance:
            return
        if c.state != RUNNING:
            return
        c.step = None
        self._stop_helpers(c)
        code = c.behaviour.exit_code if code is None else code
        c.finish(time.time(), code, reason, self._termination_message(c, code))
        self.hooks.dirty(record.key)
        if record.terminating or record.failure is not None:
            self._maybe_all_stopped(record)
            return
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

    def _stop_helpers(self, c: Container) -> None:
        """The instance is ending: its probe and hook stop with it."""
        for step in (c.probe_step, c.hook_step):
            self.timers.cancel(step)
        c.probe_step = c.hook_step = None
        if c.hook is not None:
            c.hook.stop()
            c.hook = None

    def _stop_containers(self, record: PodRecord, exit_code: int) -> None:
        """SIGKILL: whatever still runs ends now."""
        now = time.time()
        self.timers.cancel(record.step)
        record.step = None
        for c in record.init + record.app:
            self.timers.cancel(c.step)
            c.step = None
            if c.state == RUNNING:
                self._stop_helpers(c)
                c.finish(now, exit_code, "Error" if exit_code else "Completed")

    def _deadline(self, record: PodRecord) -> None:
        """The pod failed at once; its containers are stopped as for a deletion, with the
        pod's terminationGracePeriodSeconds."""
        record.deadline = None
        if record.terminating or phase(record) in ("Succeeded", "Failed"):
            return
        self.hooks.event(record.pod, NORMAL, DEADLINE_REASON, DEADLINE_MESSAGE)
        record.failure = (DEADLINE_REASON, DEADLINE_MESSAGE)
        grace = (record.pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        self._kill(record, float(grace) if isinstance(grace, (int, float)) else 30.0)
        self.hooks.dirty(record.key)

    # -- graceful deletion -----------------------------------------------------------------
    def _terminate(self, record: PodRecord) -> None:
        """deletionTimestamp seen: stop the containers within the grace period, then the
        status manager writes the final status and deletes the pod (grace 0, uid precondition)."""
        record.terminating = True
        self.timers.cancel(record.deadline)
        record.deadline = None
        self._unmount_wait(record)
        self._kill(record, float(record.pod["metadata"].get("deletionGracePeriodSeconds") or 0))

    def _kill(self, record: PodRecord, grace: float) -> None:
        """killPod: nothing new starts; each running container gets its preStop hook, then
        SIGTERM; SIGKILL for what still runs when `grace` runs out."""
        self.timers.cancel(record.step)
        record.step = None
        if self.config.max_termination_grace_seconds is not None:
            grace = min(grace, self.config.max_termination_grace_seconds)
        running = [c for c in record.init + record.app if c.state == RUNNING]
        for c in record.init + record.app:
            self.timers.cancel(c.step)
            c.step = None
        record.step = self.timers.later(grace if running else 0.0, self._killed, record)
        for c in running:
            self.hooks.event(record.pod, NORMAL, "Killing", f"Stopping container {c.name}")
            self._stop_helpers(c)
            pre_stop = (c.spec.get("lifecycle") or {}).get("preStop")
            if pre_stop:
                self._hook(record, c, "PreStop", pre_stop, self._pre_stopped)
            else:
                self._sigterm(record, c)
        self._maybe_all_stopped(record)

    def _pre_stopped(self, record: PodRecord, c: Container, error: str | None) -> None:
        if error is not None:
            self.hooks.event(record.pod, WARNING, "FailedPreStopHook", error)
        if c.state == RUNNING:
            self._sigterm(record, c)

    def _sigterm(self, record: PodRecord, c: Container) -> None:
        if c.process is not None:
            c.process.terminate()  # ends now (the exit comes back through _exited) or not
            return
        if c.argv is not None:
            return  # its environment is still loading: the process never ran, TERM is lost
        # a server (or a timed exit): it shuts down on TERM
        c.step = self.timers.later(TERM_EXIT_SECONDS, self._exited, record, c, TERM_EXIT_CODE,
                                   c.container_id)

    def _maybe_all_stopped(self, record: PodRecord) -> None:
        """Every container stopped before the grace period ended: finish now."""
        if any(c.state == RUNNING for c in record.init + record.app):
            return
        if record.terminating or record.failure is not None:
            self.timers.cancel(record.step)
            record.step = self.timers.later(0.0, self._killed, record)

    def _killed(self, record: PodRecord) -> None:
        record.step = None
        self._stop_containers(record, KILLED_EXIT_CODE)
        self.timers.cancel(record.deadline)
        record.deadline = None
        record.killed = record.terminating
        self._finish(record)
        self.hooks.dirty(record.key)

    # -- logs ------------------------------------------------------------------------------
    def log_span(self, key: str, container: str, previous: bool) -> LogSpan | None:
        """(started, finished or None while running, what it wrote) of a container's current
        instance, or of the one before it with `previous`; None when there is none."""
        record = self.records.get(key)
        if record is None:
            return None
        for c in record.init + record.app:
            if c.name != container:
                continue
            if previous:
                return LogSpan(*c.previous_span, c.previous_log) if c.previous_span else None
            if c.state == RUNNING:
                return LogSpan(c.started_at, None, c.log)
            if c.state == TERMINATED:
                return LogSpan(c.started_at, c.finished_at, c.log)
            return LogSpan(*c.dead_span, c.dead_log) if c.dead_span else None
        return None


def _container(spec: Obj, annotations: dict, *, init: bool) -> Container:
    what = plan(spec, annotations, init=init)
    return Container(spec.get("name", ""), spec.get("image") or "", what.behaviour,
                     pull_policy(spec), init, argv=what.argv, spec=spec)


def _deadline_of(pod: Obj) -> int | None:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return deadline if isinstance(deadline, int) and not isinstance(deadline, bool) else None


def _file(box: Sandbox, path: str) -> bytes | None:
    """A file of the container's picture (None: absent)."""
    files = getattr(box, "files", None)
    return files.get(path) if isinstance(files, dict) else None
