"""One simulated container: its state machine and its ContainerStatus.

Kubernetes piece: the container half of pkg/kubelet — the runtime's container states
(kubecontainer.ContainerState created/running/exited), the restart rules of
kuberuntime_manager.computePodActions (restartPolicy Always / OnFailure / Never), the
CrashLoopBackOff back-off (kubelet.go backOff: 10 s doubling to MaxContainerBackOff 300 s,
keyed per container), and convertToAPIContainerStatuses (v1.20 field shapes: state,
lastState, ready, restartCount, image, imageID, containerID, started).

Readiness (prober/prober_manager.go UpdatePodStatus): an app container is ready while running
once its readiness probe has passed (`probe_ready`; no probe: at once); an init container
(not a restartable one) is ready once it terminated with 0.

Restart counting follows upstream: every run is a new container instance numbered by
`restartCount`; a dead instance's terminated state becomes `lastState` once the container is
back-off-waiting or running again. The first exit restarts at once; each exit after that waits
base * 2^(n-1), capped (IsInBackOffSince / backOff.Next).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..api import meta
from .command import Behaviour
from .logs import ContainerLog

Obj = dict[str, Any]

WAITING, RUNNING, TERMINATED = "waiting", "running", "terminated"
CONTAINER_CREATING = "ContainerCreating"
POD_INITIALIZING = "PodInitializing"
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
KILLED_EXIT_CODE = 137  # SIGKILL at the end of the grace period


def image_ref(image: str) -> str:
    """status.image as the docker runtime reports it: a tag is added when none is given."""
    last = image.rsplit("/", 1)[-1]
    return image if ":" in last or "@" in image else f"{image}:latest"


def image_id(image: str) -> str:
    """A deterministic `docker-pullable://repo@sha256:...` for the image."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)
    if ":" in last[-1]:
        repo = repo.rsplit(":", 1)[0]
    digest = hashlib.sha256(image_ref(image).encode()).hexdigest()
    return f"docker-pullable://{repo}@sha256:{digest}"


def pull_policy(container: Obj) -> str:
    """spec's imagePullPolicy, defaulted as the API server does (Always for :latest)."""
    policy = container.get("imagePullPolicy")
    if policy:
        return policy
    return "Always" if image_ref(container.get("image") or "").endswith(":latest") else \
        "IfNotPresent"


def should_restart(restart_policy: str, exit_code: int) -> bool:
    return restart_policy == "Always" or (restart_policy == "OnFailure" and exit_code != 0)


def backoff_delay(exits: int, base: float, cap: float) -> float:
    """Seconds to wait before restarting after the `exits`-th exit (1-based)."""
    if exits <= 1:
        return 0.0
    return min(base * (2 ** (exits - 2)), cap)


def go_duration(seconds: float) -> str:
    """time.Duration.String() for whole seconds and above (`10s`, `1m20s`, `5m0s`), and
    milliseconds below a second (`200ms`, `1.5ms`)."""
    if seconds < 1:
        ms = round(seconds * 1000, 6)
        text = f"{ms:.6f}".rstrip("0").rstrip(".")
        return f"{text}ms"
    whole = int(seconds)
    frac = seconds - whole
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    sec = f"{s + frac:.9f}".rstrip("0").rstrip(".") if frac else str(s)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


@dataclass(slots=True)
class Container:
    name: str
    image: str
    behaviour: Behaviour
    policy: str = "IfNotPresent"
    init: bool = False
    state: str = WAITING
    reason: str = CONTAINER_CREATING
    message: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0
    exit_code: int = 0
    restart_count: int = 0
    container_id: str = ""
    ever_ran: bool = False
    exits: int = 0
    #: terminated state of the latest dead instance (lastState once waiting/running again)
    dead: Obj | None = None
    last_terminated: Obj | None = None
    #: (started, finished) of the instance lastState describes (for `logs --previous`)
    previous_span: tuple[float, float] | None = None
    dead_span: tuple[float, float] | None = None
    #: the pending simulated step (a pool Step), if any
    step: Any = field(default=None, repr=False)
    #: the command the simulated shell runs (process.py), None: `behaviour` decides
    argv: tuple[str, ...] | None = None
    #: the running instance's process.Process, when the shell runs it
    process: Any = field(default=None, repr=False)
    #: what the current / dead / previous instance wrote (None: a server's generated log)
    log: ContainerLog | None = field(default=None, repr=False)
    dead_log: ContainerLog | None = field(default=None, repr=False)
    previous_log: ContainerLog | None = field(default=None, repr=False)
    #: the readiness probe has passed for this instance (True: no probe)
    probe_ready: bool = True
    #: the termination message of the latest exit
    term_message: str = ""
    #: the container's spec (hooks, probes, terminationMessagePath, volumeMounts)
    spec: Obj = field(default_factory=dict, repr=False)
    #: the pending readiness probe, the running lifecycle hook (a Process) or its sleep
    probe_step: Any = field(default=None, repr=False)
    hook: Any = field(default=None, repr=False)
    hook_step: Any = field(default=None, repr=False)

    @property
    def ready(self) -> bool:
        if self.init:
            return self.succeeded
        return self.state == RUNNING and self.probe_ready

    @property
    def succeeded(self) -> bool:
        return self.state == TERMINATED and self.exit_code == 0

    def start(self, now: float, uid: str) -> None:
        """A new instance runs (`Started`)."""
        if self.ever_ran:
            self.restart_count += 1
        if self.dead is not None:
            self.last_terminated, self.previous_span = self.dead, self.dead_span
            self.previous_log = self.dead_log
        self.state, self.reason, self.message = RUNNING, "", ""
        self.started_at = now
        self.ever_ran = True
        self.term_message = ""
        self.log = ContainerLog() if self.argv is not None else None
        self.container_id = "containerd://" + hashlib.sha256(
            f"{uid}/{self.name}/{self.restart_count}".encode()).hexdigest()

    def finish(self, now: float, exit_code: int, reason: str | None = None,
               message: str = "") -> None:
        """The instance exited (or was killed)."""
        if self.process is not None:
            self.process.stop()
            self.process = None
        self.state = TERMINATED
        self.exit_code = exit_code
        self.reason = reason or ("Completed" if exit_code == 0 else "Error")
        self.term_message = message
        self.finished_at = now
        self.exits += 1
        self.dead = self.terminated_state()
        self.dead_span = (self.started_at, now)
        self.dead_log = self.log
        if self.log is not None:
            self.log.notify()  # a follower ends now

    def back_off(self, delay: float, pod_ref: str) -> None:
        """Waiting in CrashLoopBackOff; the dead instance becomes lastState."""
        self.last_terminated, self.previous_span = self.dead, self.dead_span
        self.previous_log = self.dead_log
        self.state, self.reason = WAITING, CRASH_LOOP_BACK_OFF
        self.message = (f"back-off {go_duration(delay)} restarting failed "
                        f"container={self.name} pod={pod_ref}")

    def terminated_state(self) -> Obj:
        out: Obj = {"exitCode": self.exit_code, "reason": self.reason}
        if self.term_message:
            out["message"] = self.term_message
        return {**out, "startedAt": meta.rfc3339(self.started_at),
                "finishedAt": meta.rfc3339(self.finished_at),
                "containerID": self.container_id}

    def status(self) -> Obj:
        """The v1 ContainerStatus."""
        if self.state == RUNNING:
            state: Obj = {"running": {"startedAt": meta.rfc3339(self.started_at)}}
        elif self.state == TERMINATED:
            state = {"terminated": self.terminated_state()}
        else:
            waiting = {"reason": self.reason}
            if self.message:
                waiting["message"] = self.message
            state = {"waiting": waiting}
        out: Obj = {"name": self.name, "state": state,
                    "lastState": {"terminated": self.last_terminated}
                    if self.last_terminated else {},
                    "ready": self.ready, "restartCount": self.restart_count,
                    "image": image_ref(self.image),
                    "imageID": image_id(self.image) if self.ever_ran else "",
                    "started": self.state == RUNNING}
        if self.container_id and self.ever_ran:
            out["containerID"] = self.container_id
        return out

    @classmethod
    def adopt(cls, spec: Obj, status: Obj, behaviour: Behaviour, *, init: bool) -> Container:
        """A container already reported by an earlier kubelet run: keep its instance."""
        c = cls(spec.get("name", ""), spec.get("image") or "", behaviour, pull_policy(spec), init)
        state = status.get("state") or {}
        c.restart_count = int(status.get("restartCount") or 0)
        c.container_id = status.get("containerID") or ""
        c.last_terminated = (status.get("lastState") or {}).get("terminated")
        c.ever_ran = True
        if "running" in state:
            c.state, c.reason = RUNNING, ""
            c.started_at = _epoch(state["running"].get("startedAt"))
        elif "terminated" in state:
            t = state["terminated"]
            c.state = TERMINATED
            c.exit_code = int(t.get("exitCode") or 0)
            c.reason = t.get("reason") or ("Completed" if c.exit_code == 0 else "Error")
            c.started_at = _epoch(t.get("startedAt"))
            c.finished_at = _epoch(t.get("finishedAt"))
            c.dead, c.dead_span = c.terminated_state(), (c.started_at, c.finished_at)
            c.exits = 1
        return c


def _epoch(text: str | None) -> float:
    try:
        return meta.parse_rfc3339(text) if text else 0.0
    except ValueError:
        return 0.0
