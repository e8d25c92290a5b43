"""Simulated containers that behave like containers, against a real API server: commands the
shell runs (logs, exit codes, files from volumes), SIGTERM on deletion, readiness probes,
deadlines, subPathExpr, termination messages and lifecycle hooks."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from minikube_py.client.resources import CONFIGMAPS, PODS
from tests.integration.test_kubelet import (  # noqa: F401 - `cluster` is a fixture
    FAST,
    Cluster,
    cluster,
    condition,
    container,
    phase_is,
)

LOG = "/api/v1/namespaces/default/pods/{}/log"


def uncapped(cluster: Cluster, node: str = "n-0") -> None:
    """The pods' own grace periods, not the fast test cap."""
    workers = cluster.pool.kubelet(node).workers
    workers.config = dataclasses.replace(FAST, max_termination_grace_seconds=None)


def busybox(*command: str, **extra) -> list[dict]:
    return [{"name": "web", "image": "busybox", "command": list(command), **extra}]


async def test_a_command_runs_to_completion_and_its_output_is_the_log(cluster: Cluster) -> None:
    await cluster.pod("hi", containers=busybox("echo", "hi"), restartPolicy="Never")
    done = await cluster.until("hi", phase_is("Succeeded"))
    assert container(done)["state"]["terminated"]["exitCode"] == 0
    assert await cluster.api.get(LOG.format("hi")) == (200, "hi\n")
    code, text = await cluster.api.get(LOG.format("hi") + "?timestamps=true")
    assert code == 200 and text.endswith("Z hi\n") and text[:4].isdigit()

    await cluster.client.create(CONFIGMAPS, {"metadata": {"name": "cfg", "namespace": "default"},
                                             "data": {"greeting": "hello from a configmap"}})
    await cluster.pod("reader", restartPolicy="Never",
                      volumes=[{"name": "c", "configMap": {"name": "cfg"}}],
                      containers=busybox("sh", "-c", "cat /etc/cfg/greeting; echo; "
                                         "printenv MODE; exit 4",
                                         env=[{"name": "MODE", "value": "test"}],
                                         volumeMounts=[{"name": "c", "mountPath": "/etc/cfg"}]))
    failed = await cluster.until("reader", phase_is("Failed"))
    assert container(failed)["state"]["terminated"]["exitCode"] == 4
    assert await cluster.api.get(LOG.format("reader")) == (200, "hello from a configmap\ntest\n")


async def test_deletion_sends_sigterm(cluster: Cluster) -> None:
    uncapped(cluster)
    await cluster.pod("web")  # a server: ends on TERM within about a second
    await cluster.until("web", phase_is("Running"))
    started = time.monotonic()
    await cluster.client.delete(PODS, "web", "default")  # grace 30 s
    await cluster.gone("web", timeout=5)
    assert time.monotonic() - started < 2.5

    await cluster.pod("stubborn", containers=busybox("sleep", "3600"),
                      terminationGracePeriodSeconds=2)  # PID 1 sleep ignores TERM
    await cluster.until("stubborn", phase_is("Running"))
    started = time.monotonic()
    await cluster.client.delete(PODS, "stubborn", "default")
    await asyncio.sleep(1.2)
    assert (await cluster.get("stubborn"))["metadata"]["deletionTimestamp"]
    await cluster.gone("stubborn", timeout=5)
    assert 1.9 <= time.monotonic() - started < 4

    # a script that traps TERM ends after its current `sleep 1` (a script without a trap
    # ignores TERM as PID 1, like the bare sleep above)
    await cluster.pod("script", containers=busybox(
        "sh", "-c", "trap 'echo bye; exit 0' TERM; while true; do sleep 1; done"),
        terminationGracePeriodSeconds=30)
    await cluster.until("script", phase_is("Running"))
    await cluster.client.delete(PODS, "script", "default")
    await cluster.gone("script", timeout=3)


async def test_completed_init_containers_are_ready(cluster: Cluster) -> None:
    await cluster.pod("init", initContainers=[{"name": "setup", "image": "busybox",
                                               "command": ["echo", "setup"]}])
    running = await cluster.until("init", phase_is("Running"))
    setup = running["status"]["initContainerStatuses"][0]
    assert setup["state"]["terminated"]["reason"] == "Completed"
    assert setup["ready"] is True
    span = cluster.pool.log_span("default", "init", "setup", False)
    assert span is not None and span.recorded is not None
    assert span.recorded.render(0, False) == b"setup\n"


async def test_readiness_waits_for_the_probe(cluster: Cluster) -> None:
    ports = [{"containerPort": 80, "name": "http"}]
    await cluster.pod("probed", containers=[{
        "name": "web", "image": "nginx", "ports": ports,
        "readinessProbe": {"httpGet": {"path": "/", "port": "http"},
                           "initialDelaySeconds": 1, "periodSeconds": 1}}])
    await cluster.until("probed", phase_is("Running"))
    early = await cluster.get("probed")
    assert container(early)["ready"] is False
    assert condition(early, "Ready")["status"] == "False"
    ready = await cluster.until("probed", lambda p: container(p)["ready"], timeout=4)
    assert condition(ready, "Ready")["status"] == "True"
    # a probe of a port nobody declares never succeeds
    await cluster.pod("refused", containers=[{
        "name": "web", "image": "nginx",
        "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}])
    await cluster.until("refused", phase_is("Running"))
    await asyncio.sleep(1.2)
    assert container(await cluster.get("refused"))["ready"] is False


async def test_active_deadline_set_on_a_running_pod(cluster: Cluster) -> None:
    await cluster.pod("late")
    await cluster.until("late", phase_is("Running"))
    await cluster.client.patch(PODS, "late", {"spec": {"activeDeadlineSeconds": 1}}, "default",
                               patch_type="strategic")
    failed = await cluster.until("late", phase_is("Failed"), timeout=4)
    assert failed["status"]["reason"] == "DeadlineExceeded"
    assert "terminated" in container(failed)["state"]


async def test_a_bad_subpath_expr_blocks_the_container(cluster: Cluster) -> None:
    await cluster.pod("subpath", volumes=[{"name": "data", "emptyDir": {}}], containers=[{
        "name": "web", "image": "nginx",
        "env": [{"name": "DIR", "value": "../escape"}],
        "volumeMounts": [{"name": "data", "mountPath": "/data", "subPathExpr": "$(DIR)"}]}])
    pending = await cluster.until("subpath", lambda p: bool(
        p["status"].get("containerStatuses")) and (container(p)["state"].get("waiting") or {})
        .get("reason") == "CreateContainerConfigError")
    assert pending["status"]["phase"] == "Pending"
    message = "unable to provision SubPath `../escape`: must not contain '..'"
    assert container(pending)["state"]["waiting"]["message"] == message
    assert ("Warning", "Failed", f"Error: {message}") in await cluster.events("subpath")


async def test_termination_messages(cluster: Cluster) -> None:
    await cluster.pod("msg", restartPolicy="Never", containers=busybox(
        "sh", "-c", "echo done > /dev/termination-log; exit 0"))
    done = await cluster.until("msg", phase_is("Succeeded"))
    assert container(done)["state"]["terminated"]["message"] == "done\n"
    await cluster.pod("fallback", restartPolicy="Never", containers=busybox(
        "sh", "-c", "echo starting; echo it broke; exit 2",
        terminationMessagePolicy="FallbackToLogsOnError"))
    failed = await cluster.until("fallback", phase_is("Failed"))
    assert container(failed)["state"]["terminated"]["message"] == "starting\nit broke\n"


async def test_lifecycle_hooks(cluster: Cluster) -> None:
    await cluster.pod("poststart", restartPolicy="Never", containers=[{
        "name": "web", "image": "nginx",
        "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "exit 3"]}}}}])
    failed = await cluster.until("poststart", phase_is("Failed"))
    assert container(failed)["state"]["terminated"]["exitCode"] == 137
    events = await cluster.events("poststart")
    hook = [m for t, r, m in events if r == "FailedPostStartHook"]
    assert hook and hook[0].startswith("Exec lifecycle hook ([sh -c exit 3]) for Container "
                                       '"web" in Pod "poststart_default(')
    assert "exited with 3" in hook[0]

    uncapped(cluster)
    await cluster.pod("prestop", terminationGracePeriodSeconds=30, containers=[{
        "name": "web", "image": "nginx",
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}}}])
    await cluster.until("prestop", phase_is("Running"))
    started = time.monotonic()
    await cluster.client.delete(PODS, "prestop", "default")
    await cluster.gone("prestop", timeout=5)
    assert 1.0 <= time.monotonic() - started < 3.5  # the hook's second, then TERM
