"""One simulated container: restart counting, back-off, and its ContainerStatus."""

from __future__ import annotations

import pytest

from minikube_py.kubelet.command import Behaviour
from minikube_py.kubelet.containers import (
    Container,
    backoff_delay,
    go_duration,
    image_id,
    image_ref,
    pull_policy,
    should_restart,
)


def test_backoff_is_immediate_then_doubles_to_the_cap() -> None:
    assert [backoff_delay(n, 10, 300) for n in range(1, 9)] == [0, 10, 20, 40, 80, 160, 300, 300]


@pytest.mark.parametrize(("policy", "code", "restart"), [
    ("Always", 0, True), ("Always", 1, True), ("OnFailure", 0, False), ("OnFailure", 2, True),
    ("Never", 0, False), ("Never", 1, False),
])
def test_should_restart(policy: str, code: int, restart: bool) -> None:
    assert should_restart(policy, code) is restart


@pytest.mark.parametrize(("seconds", "text"), [
    (10, "10s"), (80, "1m20s"), (300, "5m0s"), (3725, "1h2m5s"), (0.2, "200ms"),
    (0.2001234, "200.1234ms"), (1.5, "1.5s"),
])
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_images() -> None:
    assert image_ref("nginx") == "nginx:latest"
    assert image_ref("nginx:1.19") == "nginx:1.19"
    assert image_ref("localhost:5000/app") == "localhost:5000/app:latest"
    assert image_id("nginx:1.19").startswith("docker-pullable://nginx@sha256:")
    assert image_id("nginx") == image_id("nginx:latest")  # deterministic, tag-normalised
    assert image_id("nginx:1.19") != image_id("nginx:1.20")
    assert pull_policy({"image": "nginx"}) == "Always"
    assert pull_policy({"image": "nginx:1.19"}) == "IfNotPresent"
    assert pull_policy({"image": "nginx", "imagePullPolicy": "Never"}) == "Never"


def test_restart_counting_follows_container_instances() -> None:
    c = Container("web", "busybox", Behaviour(1.0, 1))
    waiting = c.status()
    assert waiting["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert waiting["imageID"] == "" and "containerID" not in waiting
    c.start(1000.0, "uid-1")
    running = c.status()
    assert running["state"] == {"running": {"startedAt": "1970-01-01T00:16:40Z"}}
    assert running["ready"] and running["started"] and running["restartCount"] == 0
    first_id = running["containerID"]
    c.finish(1001.0, 1)
    dead = c.status()["state"]["terminated"]
    assert (dead["exitCode"], dead["reason"], dead["containerID"]) == (1, "Error", first_id)
    c.start(1001.0, "uid-1")  # first exit: restarted at once
    again = c.status()
    assert again["restartCount"] == 1 and again["containerID"] != first_id
    assert again["lastState"]["terminated"]["finishedAt"] == "1970-01-01T00:16:41Z"
    c.finish(1002.0, 1)
    c.back_off(10.0, "web_default(uid-1)")
    backing = c.status()
    assert backing["state"] == {"waiting": {
        "reason": "CrashLoopBackOff",
        "message": "back-off 10s restarting failed container=web pod=web_default(uid-1)"}}
    assert backing["restartCount"] == 1 and not backing["ready"]
    assert backing["lastState"]["terminated"]["finishedAt"] == "1970-01-01T00:16:42Z"
    assert c.previous_span == (1001.0, 1002.0)
    c.start(1012.0, "uid-1")
    assert c.status()["restartCount"] == 2


def test_adopt_keeps_the_running_instance() -> None:
    status = {"name": "web", "restartCount": 2, "containerID": "containerd://abc",
              "state": {"running": {"startedAt": "2020-01-01T00:00:00Z"}},
              "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    c = Container.adopt({"name": "web", "image": "nginx"}, status, Behaviour(None), init=False)
    out = c.status()
    assert out["state"] == status["state"] and out["restartCount"] == 2
    assert out["containerID"] == "containerd://abc"
    assert out["lastState"] == status["lastState"]
