"""The pod status the kubelet reports: getPhase, the conditions, readiness gates, merging."""

from __future__ import annotations

import pytest

from minikube_py.kubelet.admission import Rejection
from minikube_py.kubelet.command import Behaviour
from minikube_py.kubelet.containers import Container
from minikube_py.kubelet.pod_status import PodRecord, generate, phase, waiting_reason

NOW = "2026-01-01T00:00:10Z"
EARLIER = "2026-01-01T00:00:00Z"


def record(*states: tuple[str, int], policy: str = "Always", init: tuple = (),
           gates: tuple[str, ...] = (), conditions: list | None = None) -> PodRecord:
    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
           "spec": {"restartPolicy": policy,
                    "readinessGates": [{"conditionType": g} for g in gates]},
           "status": {"phase": "Pending", "qosClass": "BestEffort",
                      "conditions": conditions or []}}
    rec = PodRecord("default/p", "u1", pod, start_time=1.0, ip="10.244.0.2", sandbox=True)
    rec.app = [_container(f"c{i}", state, code) for i, (state, code) in enumerate(states)]
    rec.init = [_container(f"i{i}", state, code, init=True) for i, (state, code) in
                enumerate(init)]
    return rec


def _container(name: str, state: str, code: int, *, init: bool = False) -> Container:
    c = Container(name, "busybox", Behaviour(None), init=init)
    if state in ("running", "terminated", "backoff"):
        c.start(1.0, "u1")
    if state in ("terminated", "backoff"):
        c.finish(2.0, code)
    if state == "backoff":
        c.back_off(10.0, "p_default(u1)")
    return c


@pytest.mark.parametrize(("states", "policy", "expected"), [
    ((("waiting", 0),), "Always", "Pending"),
    ((("running", 0),), "Always", "Running"),
    ((("running", 0), ("waiting", 0)), "Always", "Pending"),
    ((("running", 0), ("terminated", 0)), "Never", "Running"),
    ((("terminated", 0),), "Never", "Succeeded"),
    ((("terminated", 1),), "Never", "Failed"),
    ((("terminated", 0), ("terminated", 1)), "Never", "Failed"),
    ((("terminated", 0),), "OnFailure", "Succeeded"),
    ((("terminated", 1),), "OnFailure", "Running"),
    ((("terminated", 0),), "Always", "Running"),
    ((("backoff", 1),), "Always", "Running"),
])
def test_phase(states: tuple, policy: str, expected: str) -> None:
    assert phase(record(*states, policy=policy)) == expected


def test_phase_with_init_containers() -> None:
    assert phase(record(("waiting", 0), init=(("running", 0),))) == "Pending"
    assert phase(record(("running", 0), init=(("terminated", 0),))) == "Running"
    assert phase(record(("waiting", 0), init=(("terminated", 1),), policy="Never")) == "Failed"
    assert phase(record(("waiting", 0), init=(("backoff", 1),))) == "Pending"


def conditions_of(status: dict) -> dict:
    return {c["type"]: c for c in status["conditions"]}


def test_pending_status() -> None:
    rec = record(("waiting", 0), ("waiting", 0))
    waiting_reason(rec)
    status = generate(rec, "10.0.0.1", NOW)
    assert status["phase"] == "Pending" and status["hostIP"] == "10.0.0.1"
    assert status["qosClass"] == "BestEffort"
    conds = conditions_of(status)
    assert [c["type"] for c in status["conditions"]] == [
        "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert conds["Ready"] == {"type": "Ready", "status": "False", "lastProbeTime": None,
                              "lastTransitionTime": NOW, "reason": "ContainersNotReady",
                              "message": "containers with unready status: [c0 c1]"}
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}


def test_init_containers_make_containers_wait_as_pod_initializing() -> None:
    rec = record(("waiting", 0), init=(("waiting", 0),))
    waiting_reason(rec)
    status = generate(rec, "10.0.0.1", NOW)
    assert status["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    initialized = conditions_of(status)["Initialized"]
    assert (initialized["status"], initialized["reason"], initialized["message"]) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [i0]")


def test_running_keeps_transition_times_and_foreign_conditions() -> None:
    old = [{"type": "Ready", "status": "True", "lastTransitionTime": EARLIER},
           {"type": "PodScheduled", "status": "True", "lastTransitionTime": EARLIER},
           {"type": "example.com/gate", "status": "True", "lastTransitionTime": EARLIER}]
    rec = record(("running", 0), conditions=old, gates=("example.com/gate",))
    status = generate(rec, "10.0.0.1", NOW)
    conds = conditions_of(status)
    assert status["phase"] == "Running"
    assert status["podIP"] == "10.244.0.2" and status["podIPs"] == [{"ip": "10.244.0.2"}]
    assert conds["Ready"]["status"] == "True"
    assert conds["Ready"]["lastTransitionTime"] == EARLIER  # unchanged status: time kept
    assert conds["Initialized"]["lastTransitionTime"] == NOW
    assert conds["example.com/gate"] == old[2]
    assert [c["type"] for c in status["conditions"]][-1] == "example.com/gate"


@pytest.mark.parametrize(("held", "message"), [
    (None, 'corresponding condition of pod readiness gate "g" does not exist.'),
    ("False", 'the status of pod readiness gate "g" is not "True", but False'),
])
def test_readiness_gates(held: str | None, message: str) -> None:
    old = [{"type": "g", "status": held}] if held else []
    rec = record(("running", 0), gates=("g",), conditions=old)
    conds = conditions_of(generate(rec, "10.0.0.1", NOW))
    assert conds["ContainersReady"]["status"] == "True"
    assert (conds["Ready"]["status"], conds["Ready"]["reason"], conds["Ready"]["message"]) == (
        "False", "ReadinessGatesNotReady", message)


def test_succeeded_pod_conditions() -> None:
    conds = conditions_of(generate(record(("terminated", 0), policy="Never"), "h", NOW))
    assert (conds["Ready"]["status"], conds["Ready"]["reason"]) == ("False", "PodCompleted")
    assert (conds["Initialized"]["status"], conds["Initialized"]["reason"]) == (
        "True", "PodCompleted")


def test_rejected_pod() -> None:
    rec = record(("waiting", 0), conditions=[{"type": "PodScheduled", "status": "True"}])
    rec.rejection = Rejection("OutOfcpu", "Node didn't have enough resource: cpu, ...")
    status = generate(rec, "10.0.0.1", NOW)
    assert status["phase"] == "Failed" and status["reason"] == "OutOfcpu"
    assert status["message"] == "Pod Node didn't have enough resource: cpu, ..."
    assert status["conditions"] == [{"type": "PodScheduled", "status": "True"}]
    assert "containerStatuses" not in status and "hostIP" not in status
    assert status["startTime"]


def test_deadline_failure() -> None:
    rec = record(("terminated", 137))
    rec.failure = ("DeadlineExceeded", "Pod was active on the node longer than the specified "
                                       "deadline")
    status = generate(rec, "h", NOW)
    assert (status["phase"], status["reason"]) == ("Failed", "DeadlineExceeded")
