"""A pod's status as the kubelet reports it, computed from the simulated runtime's state.

Kubernetes piece: pkg/kubelet/kubelet_pods.go generateAPIPodStatus + getPhase, and
pkg/kubelet/status (generate.go: GeneratePodInitializedCondition, GenerateContainersReady-
Condition, GeneratePodReadyCondition with readiness gates; status_manager.go: lastTransitionTime
kept while a condition's status is unchanged, conditions the kubelet does not own kept as the
API server has them). Pure: (record, the pod as last seen, the time) -> status dict; the pool
writes it only when it differs from what the API server holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api import meta
from .admission import Rejection
from .containers import RUNNING, TERMINATED, WAITING, Container

Obj = dict[str, Any]

#: the pod conditions the kubelet reports, in its order (PodScheduled is always True: "when
#: kubelet sees the pod, PodScheduled condition must be true")
KUBELET_CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")
DEADLINE_REASON = "DeadlineExceeded"
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"


@dataclass(slots=True)
class PodRecord:
    """What the kubelet knows about one pod it runs (its pod worker's state)."""

    key: str                         # namespace/name
    uid: str
    pod: Obj                         # the newest object seen (informer or a write's answer)
    init: list[Container] = field(default_factory=list)
    app: list[Container] = field(default_factory=list)
    handled: bool = False            # the kubelet has acted on it (admitted, rejected, adopted)
    admitted: bool = False           # passed admission, counts against the node
    rejection: Rejection | None = None
    failure: tuple[str, str] | None = None  # (reason, message) e.g. DeadlineExceeded
    ip: str | None = None
    start_time: float = 0.0
    sandbox: bool = False            # the sandbox exists: podIP is reported
    terminating: bool = False        # deletionTimestamp seen, containers being stopped
    killed: bool = False             # containers stopped for deletion: DELETE when written
    step: Any = field(default=None, repr=False)      # pod-level pending step
    deadline: Any = field(default=None, repr=False)  # activeDeadlineSeconds step
    deadline_seconds: int | None = None  # the activeDeadlineSeconds it was armed for

    @property
    def restart_policy(self) -> str:
        return (self.pod.get("spec") or {}).get("restartPolicy") or "Always"

    @property
    def initialized(self) -> bool:
        return all(c.succeeded for c in self.init)

    @property
    def ref(self) -> str:
        """format.Pod: `name_namespace(uid)`."""
        ns, _, name = self.key.partition("/")
        return f"{name}_{ns}({self.uid})"


def phase(record: PodRecord) -> str:
    """getPhase over the simulated containers. A pod failed by the kubelet (deadline) turns
    Failed once its containers have stopped (1.27+: no terminal phase while any runs)."""
    if record.rejection is not None:
        return "Failed"
    if record.failure is not None and not any(c.state == RUNNING
                                              for c in record.init + record.app):
        return "Failed"
    policy = record.restart_policy
    for c in record.init:
        if c.state == TERMINATED and c.exit_code != 0 and policy == "Never":
            return "Failed"
    if not record.initialized:
        return "Pending"
    running = waiting = stopped = succeeded = 0
    for c in record.app:
        if c.state == RUNNING:
            running += 1
        elif c.state == TERMINATED:
            stopped += 1
            succeeded += c.exit_code == 0
        elif c.last_terminated is not None:
            stopped += 1  # back-off waiting after a run counts as stopped upstream
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def _names(containers: list[Container]) -> str:
    return "[" + " ".join(c.name for c in containers) + "]"


def kubelet_conditions(record: PodRecord, pod_phase: str, others: dict[str, Obj]) -> list[Obj]:
    """Initialized, Ready, ContainersReady as upstream generates them (without times)."""
    completed = pod_phase == "Succeeded"
    incomplete = [c for c in record.init if not c.succeeded]
    if completed:
        initialized: Obj = {"status": "True", "reason": "PodCompleted"}
    elif incomplete:
        initialized = {"status": "False", "reason": "ContainersNotInitialized",
                       "message": f"containers with incomplete status: {_names(incomplete)}"}
    else:
        initialized = {"status": "True"}
    unready = [c for c in record.app if not c.ready]
    if completed:
        containers_ready: Obj = {"status": "False", "reason": "PodCompleted"}
    elif unready:
        containers_ready = {"status": "False", "reason": "ContainersNotReady",
                            "message": f"containers with unready status: {_names(unready)}"}
    else:
        containers_ready = {"status": "True"}
    ready = dict(containers_ready)
    if ready["status"] == "True":
        messages = []
        for gate in (record.pod.get("spec") or {}).get("readinessGates") or ():
            kind = (gate or {}).get("conditionType", "")
            held = others.get(kind)
            if held is None:
                messages.append(f'corresponding condition of pod readiness gate "{kind}" does '
                                f"not exist.")
            elif held.get("status") != "True":
                messages.append(f'the status of pod readiness gate "{kind}" is not "True", but '
                                f'{held.get("status")}')
        if messages:
            ready = {"status": "False", "reason": "ReadinessGatesNotReady",
                     "message": ", ".join(messages)}
    return [{"type": "Initialized", **initialized}, {"type": "Ready", **ready},
            {"type": "ContainersReady", **containers_ready},
            {"type": "PodScheduled", "status": "True"}]


def _with_times(fresh: list[Obj], old: dict[str, Obj], now: str) -> list[Obj]:
    out = []
    for cond in fresh:
        before = old.get(cond["type"])
        same = before is not None and before.get("status") == cond["status"]
        out.append({"type": cond["type"], "status": cond["status"], "lastProbeTime": None,
                    "lastTransitionTime": (before.get("lastTransitionTime") if same else None)
                    or now,
                    **{k: cond[k] for k in ("reason", "message") if k in cond}})
    return out


def generate(record: PodRecord, host_ip: str, now: str) -> Obj:
    """The status to report for `record`, merged over the pod's current status."""
    pod = record.pod
    old = pod.get("status") or {}
    old_conditions = {c.get("type"): c for c in old.get("conditions") or ()
                      if isinstance(c, dict)}
    others = {k: c for k, c in old_conditions.items() if k not in KUBELET_CONDITIONS}
    status: Obj = {}
    pod_phase = phase(record)
    status["phase"] = pod_phase
    if record.rejection is not None:
        status["reason"] = record.rejection.reason
        status["message"] = "Pod " + record.rejection.message
        # rejectPod reports no conditions; the API server's are merged in below
        conditions: list[Obj] = [old_conditions[k] for k in KUBELET_CONDITIONS
                                 if k in old_conditions]
    else:
        if record.failure is not None:
            status["reason"], status["message"] = record.failure
        conditions = _with_times(kubelet_conditions(record, pod_phase, others), old_conditions,
                                 now)
    status["conditions"] = conditions + list(others.values())
    if record.rejection is None:
        status["hostIP"] = host_ip
        if record.sandbox and record.ip:
            status["podIP"] = record.ip
            status["podIPs"] = [{"ip": record.ip}]
    if record.start_time:
        status["startTime"] = meta.rfc3339(record.start_time)
    if record.rejection is None:
        if record.init:
            status["initContainerStatuses"] = [c.status() for c in record.init]
        status["containerStatuses"] = [c.status() for c in record.app]
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    return status


def waiting_reason(record: PodRecord) -> None:
    """Before any container runs, containers wait as ContainerCreating, or PodInitializing
    when the pod has init containers (convertToAPIContainerStatuses' default state)."""
    reason = "PodInitializing" if record.init else "ContainerCreating"
    for c in record.init + record.app:
        if c.state == WAITING and not c.ever_ran:
            c.reason = reason
