"""The workload controllers (replication controller, replicaset, deployment) against a real
API server. No kubelet runs here, so the tests play its part: they write pod status (Running,
a pod IP, Ready=True) through pods/{name}/status, as a kubelet would."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from minikube_py.api import meta
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import (
    DEPLOYMENTS,
    EVENTS,
    PODS,
    REPLICASETS,
    REPLICATION_CONTROLLERS,
)
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.deployment import DeploymentController
from minikube_py.controllers.options import ControllerOptions
from minikube_py.controllers.replicaset import ReplicaSetController
from minikube_py.controllers.replication import ReplicationManager
from tests.apiserver.conftest import start_api
from tests.polling import eventually  # noqa: F401 - re-exported to other suites

Obj = dict[str, Any]
NS = "default"




class Cluster:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def pods(self, selector: str = "") -> list[Obj]:
        listed = await self.client.list(PODS, NS, label_selector=selector)
        return listed["items"]

    async def active_pods(self, selector: str = "") -> list[Obj]:
        return [p for p in await self.pods(selector)
                if not p["metadata"].get("deletionTimestamp")
                and p["status"].get("phase") not in ("Succeeded", "Failed")]

    async def set_ready(self, pod: Obj, ready: bool = True, restarts: int = 0) -> Obj:
        """What a kubelet reports for a started pod: Running, a pod IP, Ready."""
        fresh = await self.client.get(PODS, pod["metadata"]["name"], NS)
        now = meta.now_rfc3339()
        fresh["status"] = {
            **fresh["status"], "phase": "Running", "podIP": "10.1.0.7",
            "podIPs": [{"ip": "10.1.0.7"}], "startTime": now,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                            "lastTransitionTime": now, "lastProbeTime": None}],
            "containerStatuses": [{"name": "c", "ready": ready, "restartCount": restarts,
                                   "image": "nginx", "imageID": "", "started": True,
                                   "state": {"running": {"startedAt": now}}}],
        }
        return await self.client.update_status(PODS, fresh)

    async def ready_all(self, selector: str = "") -> None:
        for pod in await self.active_pods(selector):
            if not any(c.get("type") == "Ready" and c.get("status") == "True"
                       for c in pod["status"].get("conditions") or ()):
                await self.set_ready(pod)

    async def events(self, reason: str) -> list[Obj]:
        listed = await self.client.list(EVENTS, NS, field_selector=f"reason={reason}")
        return listed["items"]


@contextlib.asynccontextmanager
async def running_controllers(tmp_path: Path, *kinds: type) -> AsyncIterator[Cluster]:
    """A real API server with the controllers of `kinds` running against it (as their
    manager would: one shared informer factory), torn down in reverse."""
    _, runner, store, session = await start_api(tmp_path)
    client = Client(InProcessTransport(runner.app), field_manager="test")
    factory = InformerFactory(client)
    ctx = ControllerContext(client, factory, ControllerOptions())
    controllers = [kind(ctx) for kind in kinds]
    factory.start()
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        yield Cluster(client)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await factory.stop()
        await ctx.close()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.fixture
async def cluster(tmp_path: Path):
    async with running_controllers(tmp_path, ReplicationManager, ReplicaSetController,
                                   DeploymentController) as c:
        yield c


def template(labels: dict[str, str], image: str = "nginx:1.19") -> Obj:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": image}],
                     "terminationGracePeriodSeconds": 0}}


def rc(name: str, replicas: int, **labels: str) -> Obj:
    labels = labels or {"app": name}
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": labels, "template": template(labels)}}


# ---------------------------------------------------------------------------------------------
# ReplicationController


async def test_rc_creates_pods_with_owner_references_and_replaces_deleted(cluster: Cluster):
    created = await cluster.client.create(REPLICATION_CONTROLLERS, rc("web", 3), NS)
    uid = created["metadata"]["uid"]
    pods = await wait_pods(cluster, "app=web", 3)
    for pod in pods:
        assert pod["metadata"]["generateName"] == "web-"
        assert pod["metadata"]["name"].startswith("web-")
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "v1", "kind": "ReplicationController", "name": "web", "uid": uid,
            "controller": True, "blockOwnerDeletion": True}]
    victim = pods[0]["metadata"]["name"]
    await cluster.client.delete(PODS, victim, NS)
    replaced = await wait_pods(cluster, "app=web", 3, without=victim)
    assert victim not in {p["metadata"]["name"] for p in replaced}
    wanted = {f"Created pod: {p['metadata']['name']}" for p in replaced}

    async def all_recorded() -> list[Obj] | None:
        """events are written in the background by the recorder"""
        events = await cluster.events("SuccessfulCreate")
        return events if wanted <= {e["message"] for e in events} else None
    events = await eventually(all_recorded)
    assert events[0]["source"]["component"] == "replication-controller"
    assert events[0]["involvedObject"]["kind"] == "ReplicationController"
    assert len(await cluster.pods("app=web")) == 3  # no double creation while the cache lagged


async def test_rc_status_fields(cluster: Cluster):
    await cluster.client.create(REPLICATION_CONTROLLERS, rc("api", 2), NS)
    pods = await wait_pods(cluster, "app=api", 2)

    async def status(expected: Obj) -> Obj | None:
        got = await cluster.client.get(REPLICATION_CONTROLLERS, "api", NS)
        st = got["status"]
        return got if all(st.get(k) == v for k, v in expected.items()) else None

    got = await eventually(lambda: status({"replicas": 2, "fullyLabeledReplicas": 2,
                                           "observedGeneration": 1}))
    assert got["status"].get("readyReplicas", 0) == 0
    await cluster.set_ready(pods[0])
    await eventually(lambda: status({"readyReplicas": 1, "availableReplicas": 1}))
    # an owned pod that loses a template-only label still matches the selector but is not
    # fully labeled
    await cluster.client.patch(REPLICATION_CONTROLLERS, "api",
                               {"spec": {"template": {"metadata": {"labels": {
                                   "app": "api", "tier": "be"}}}}}, NS)
    await eventually(lambda: status({"fullyLabeledReplicas": 0, "replicas": 2,
                                     "observedGeneration": 2}))


async def test_rc_scale_down_deletes_not_ready_pods_first(cluster: Cluster):
    await cluster.client.create(REPLICATION_CONTROLLERS, rc("db", 4), NS)
    pods = await wait_pods(cluster, "app=db", 4)
    ready = {p["metadata"]["name"] for p in pods[:2]}
    for pod in pods[:2]:
        await cluster.set_ready(pod)
    await eventually(lambda: _rc_status(cluster, "db", "readyReplicas", 2))
    await cluster.client.patch(REPLICATION_CONTROLLERS, "db", {"spec": {"replicas": 2}}, NS)
    left = await wait_pods(cluster, "app=db", 2, settle=True)
    assert {p["metadata"]["name"] for p in left} == ready
    deleted = {e["message"] for e in await cluster.events("SuccessfulDelete")}
    assert deleted == {f"Deleted pod: {p['metadata']['name']}" for p in pods[2:]}


async def test_rc_adopts_matching_orphan_and_releases_non_matching(cluster: Cluster):
    orphan = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "stray", "labels": {"app": "cache"}},
              "spec": {"containers": [{"name": "c", "image": "redis"}]}}
    await cluster.client.create(PODS, orphan, NS)
    created = await cluster.client.create(REPLICATION_CONTROLLERS, rc("cache", 2), NS)
    pods = await wait_pods(cluster, "app=cache", 2, settle=True)
    names = {p["metadata"]["name"] for p in pods}
    assert "stray" in names  # adopted, so only one new pod was created
    stray = await cluster.client.get(PODS, "stray", NS)
    assert stray["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    # relabel an owned pod: the RC releases it and makes a replacement
    other = next(n for n in names if n != "stray")
    await cluster.client.patch(PODS, other, {"metadata": {"labels": {"app": "debug"}}}, NS)

    async def released() -> bool:
        pod = await cluster.client.get(PODS, other, NS)
        return not pod["metadata"].get("ownerReferences")

    await eventually(released)
    after = await wait_pods(cluster, "app=cache", 2, settle=True)
    assert other not in {p["metadata"]["name"] for p in after}


# ---------------------------------------------------------------------------------------------
# ReplicaSet


async def test_replicaset_with_match_expressions(cluster: Cluster):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "front"},
          "spec": {"replicas": 2,
                   "selector": {"matchExpressions": [
                       {"key": "tier", "operator": "In", "values": ["frontend", "edge"]},
                       {"key": "canary", "operator": "DoesNotExist"}]},
                   "template": template({"tier": "frontend"})}}
    created = await cluster.client.create(REPLICASETS, rs, NS)
    pods = await wait_pods(cluster, "tier=frontend", 2)
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in pods)
    # a canary pod does not match (DoesNotExist) and is not adopted
    canary = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "canary", "labels": {"tier": "frontend", "canary": "y"}},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    await cluster.client.create(PODS, canary, NS)
    for pod in pods:
        await cluster.set_ready(pod)

    async def done() -> Obj | None:
        got = await cluster.client.get(REPLICASETS, "front", NS)
        st = got["status"]
        return got if st.get("availableReplicas") == 2 and st.get("replicas") == 2 else None

    await eventually(done)
    assert not (await cluster.client.get(PODS, "canary", NS))["metadata"].get("ownerReferences")
    assert created["metadata"]["uid"]
    assert len(await cluster.active_pods("tier=frontend")) == 3


async def test_replicaset_min_ready_seconds_counts_available_later(cluster: Cluster):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "slow"},
          "spec": {"replicas": 2, "minReadySeconds": 1,
                   "selector": {"matchLabels": {"app": "slow"}},
                   "template": template({"app": "slow"})}}
    await cluster.client.create(REPLICASETS, rs, NS)
    pods = await wait_pods(cluster, "app=slow", 2)
    # condition times have whole seconds: start at the top of one so that "ready for
    # more than 1 s" is a whole second away
    await asyncio.sleep(1.01 - time.time() % 1)
    for pod in pods:
        await cluster.set_ready(pod)

    async def status() -> Obj:
        return (await cluster.client.get(REPLICASETS, "slow", NS))["status"]

    async def ready_not_available() -> bool:
        st = await status()
        return st.get("readyReplicas") == 2 and st.get("availableReplicas", 0) == 0

    await eventually(ready_not_available)
    # nothing changes any more; the controller must come back by itself once the pods
    # have been ready for longer than minReadySeconds
    await eventually(lambda: _field_is(status(), "availableReplicas", 2), timeout=4)


async def _field_is(status: Awaitable[Obj], field: str, value: int) -> bool:
    return (await status).get(field) == value


# ---------------------------------------------------------------------------------------------
# Deployment

HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


def deployment(name: str, replicas: int, image: str = "nginx:1.19", *,
               strategy: Obj | None = None, **spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": template(labels, image),
                     **({"strategy": strategy} if strategy else {}), **spec}}


def rollout_done(d: Obj) -> bool:
    """`kubectl rollout status`'s test (DeploymentStatusViewer)."""
    st = d.get("status") or {}
    if d["metadata"]["generation"] > st.get("observedGeneration", 0):
        return False
    updated = st.get("updatedReplicas", 0)
    return (updated >= d["spec"]["replicas"] and st.get("replicas", 0) <= updated
            and st.get("availableReplicas", 0) >= updated)


def is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in pod["status"].get("conditions") or ())


async def drive_rollout(cluster: Cluster, name: str,
                        sample: Callable[[list[Obj]], None] = lambda pods: None,
                        timeout: float = 10.0) -> Obj:
    """Play the kubelets (every new pod becomes Ready) until `kubectl rollout status`
    would say the rollout is complete; `sample` sees the active pods at every step."""
    deadline = time.monotonic() + timeout
    while True:
        pods = await cluster.active_pods(f"app={name}")
        sample(pods)
        for pod in pods:
            if not is_ready(pod):
                try:
                    await cluster.set_ready(pod)
                except Exception:  # deleted meanwhile
                    pass
        d = await cluster.client.get(DEPLOYMENTS, name, NS)
        if rollout_done(d):
            return d
        if time.monotonic() > deadline:
            raise AssertionError(f"rollout of {name} did not complete: {d['status']}")
        await asyncio.sleep(0.02)


async def owned_replica_sets(cluster: Cluster, name: str) -> list[Obj]:
    listed = await cluster.client.list(REPLICASETS, NS, label_selector=f"app={name}")
    return sorted(listed["items"], key=lambda rs: int(rs["metadata"]["annotations"][REVISION]))


def condition(d: Obj, ctype: str) -> Obj:
    return next(c for c in d["status"]["conditions"] if c["type"] == ctype)


async def set_image(cluster: Cluster, name: str, image: str) -> None:
    await cluster.client.patch(DEPLOYMENTS, name, {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": image}]}}}}, NS, patch_type="strategic")


async def test_deployment_creates_replica_set_and_pods(cluster: Cluster):
    created = await cluster.client.create(DEPLOYMENTS, deployment("web", 3), NS)
    d = await drive_rollout(cluster, "web")
    [rs] = await owned_replica_sets(cluster, "web")
    h = rs["metadata"]["labels"][HASH]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH: h}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", HASH: h}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    ann = rs["metadata"]["annotations"]
    assert ann[REVISION] == "1"
    assert ann["deployment.kubernetes.io/desired-replicas"] == "3"
    assert ann["deployment.kubernetes.io/max-replicas"] == "4"  # 25% of 3 rounds up to 1
    pods = await cluster.active_pods("app=web")
    assert len(pods) == 3 and all(p["metadata"]["labels"][HASH] == h for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["name"] == rs["metadata"]["name"]
               for p in pods)
    st = d["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"],
            st["availableReplicas"]) == (3, 3, 3, 3)
    assert d["metadata"]["annotations"][REVISION] == "1"

    async def settled() -> Obj | None:
        got = await cluster.client.get(DEPLOYMENTS, "web", NS)
        progressing = condition(got, "Progressing")
        return got if progressing["reason"] == "NewReplicaSetAvailable" else None

    d = await eventually(settled)
    assert condition(d, "Available")["status"] == "True"
    assert condition(d, "Available")["reason"] == "MinimumReplicasAvailable"
    assert condition(d, "Progressing")["message"] == \
        f'ReplicaSet "web-{h}" has successfully progressed.'
    assert d["status"].get("unavailableReplicas", 0) == 0
    messages = {e["message"] for e in await cluster.events("ScalingReplicaSet")}
    assert f"Scaled up replica set web-{h} to 3" in messages


async def test_rolling_update_respects_surge_and_availability(cluster: Cluster):
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await cluster.client.create(DEPLOYMENTS, deployment("app", 3, strategy=strategy), NS)
    await drive_rollout(cluster, "app")
    [first] = await owned_replica_sets(cluster, "app")
    await set_image(cluster, "app", "nginx:1.20")
    seen: list[tuple[int, int]] = []

    def sample(pods: list[Obj]) -> None:
        seen.append((len(pods), sum(1 for p in pods if is_ready(p))))
        assert len(pods) <= 4, f"more than replicas+maxSurge pods: {len(pods)}"
        assert sum(1 for p in pods if is_ready(p)) >= 3, "fewer than replicas available"

    d = await drive_rollout(cluster, "app", sample)
    assert any(total == 4 for total, _ in seen)  # the surge pod was used
    old, new = await owned_replica_sets(cluster, "app")
    assert old["metadata"]["uid"] == first["metadata"]["uid"]
    assert old["spec"]["replicas"] == 0
    assert new["spec"]["replicas"] == 3
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.20"
    assert new["metadata"]["annotations"][REVISION] == "2"
    assert old["metadata"]["annotations"][REVISION] == "1"
    assert d["metadata"]["annotations"][REVISION] == "2"
    pods = await cluster.active_pods("app=app")
    assert {p["metadata"]["labels"][HASH] for p in pods} == {new["metadata"]["labels"][HASH]}

    async def settled() -> Obj | None:
        got = await cluster.client.get(DEPLOYMENTS, "app", NS)
        return got if condition(got, "Progressing")["reason"] == "NewReplicaSetAvailable" \
            else None

    d = await eventually(settled)
    assert condition(d, "Available")["status"] == "True"
    assert d["status"]["updatedReplicas"] == 3 and d["status"]["replicas"] == 3
    messages = {e["message"] for e in await cluster.events("ScalingReplicaSet")}
    old_name, new_name = old["metadata"]["name"], new["metadata"]["name"]
    assert f"Scaled up replica set {new_name} to 1" in messages
    assert f"Scaled down replica set {old_name} to 2" in messages
    assert f"Scaled down replica set {old_name} to 0" in messages


async def test_rollback_by_patching_the_old_template(cluster: Cluster):
    """What `kubectl rollout undo` does (client-side since kubectl 1.19): copy the previous
    ReplicaSet's template, minus the hash label, back into the Deployment."""
    await cluster.client.create(DEPLOYMENTS, deployment("undo", 2), NS)
    await drive_rollout(cluster, "undo")
    await set_image(cluster, "undo", "nginx:1.20")
    await drive_rollout(cluster, "undo")
    first, second = await owned_replica_sets(cluster, "undo")
    previous = first["spec"]["template"]
    previous["metadata"]["labels"].pop(HASH)
    await cluster.client.patch(DEPLOYMENTS, "undo",
                               [{"op": "replace", "path": "/spec/template", "value": previous}],
                               NS, patch_type="json")
    d = await drive_rollout(cluster, "undo")
    rss = await owned_replica_sets(cluster, "undo")
    assert [rs["metadata"]["name"] for rs in rss] == [second["metadata"]["name"],
                                                      first["metadata"]["name"]]
    back = rss[-1]
    assert back["metadata"]["annotations"][REVISION] == "3"
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert back["spec"]["replicas"] == 2 and rss[0]["spec"]["replicas"] == 0
    assert d["metadata"]["annotations"][REVISION] == "3"


async def test_recreate_stops_old_pods_before_starting_new(cluster: Cluster):
    await cluster.client.create(DEPLOYMENTS, deployment("batch", 2,
                                                        strategy={"type": "Recreate"}), NS)
    await drive_rollout(cluster, "batch")
    [old] = await owned_replica_sets(cluster, "batch")
    old_hash = old["metadata"]["labels"][HASH]
    await set_image(cluster, "batch", "nginx:1.20")

    def sample(pods: list[Obj]) -> None:
        hashes = {p["metadata"]["labels"][HASH] for p in pods}
        assert not (old_hash in hashes and len(hashes) > 1), "old and new pods together"

    await drive_rollout(cluster, "batch", sample)
    old, new = await owned_replica_sets(cluster, "batch")
    assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == 2
    pods = await cluster.active_pods("app=batch")
    assert {p["metadata"]["labels"][HASH] for p in pods} == {new["metadata"]["labels"][HASH]}


async def test_revision_history_limit_deletes_oldest_replica_sets(cluster: Cluster):
    await cluster.client.create(DEPLOYMENTS, deployment("hist", 1, revisionHistoryLimit=1), NS)
    await drive_rollout(cluster, "hist")
    for version in ("1.20", "1.21", "1.22"):
        await set_image(cluster, "hist", f"nginx:{version}")
        await drive_rollout(cluster, "hist")

    async def trimmed() -> list[Obj] | None:
        rss = await owned_replica_sets(cluster, "hist")
        return rss if len(rss) == 2 else None

    rss = await eventually(trimmed)
    assert [rs["metadata"]["annotations"][REVISION] for rs in rss] == ["3", "4"]
    assert rss[1]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.22"


async def test_scaling_paused_and_progress_deadline(cluster: Cluster):
    await cluster.client.create(DEPLOYMENTS, deployment("sc", 2), NS)
    await drive_rollout(cluster, "sc")
    await cluster.client.patch(DEPLOYMENTS, "sc", {"spec": {"replicas": 4}}, NS)
    await drive_rollout(cluster, "sc")
    [rs] = await owned_replica_sets(cluster, "sc")
    assert rs["spec"]["replicas"] == 4
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "4"
    # paused: a template change makes no new ReplicaSet
    await cluster.client.patch(DEPLOYMENTS, "sc", {"spec": {"paused": True}}, NS)
    await set_image(cluster, "sc", "nginx:1.20")

    async def paused() -> Obj | None:
        got = await cluster.client.get(DEPLOYMENTS, "sc", NS)
        cond = condition(got, "Progressing")
        return got if cond["reason"] == "DeploymentPaused" else None

    d = await eventually(paused)
    assert condition(d, "Progressing")["status"] == "Unknown"
    await asyncio.sleep(0.1)
    assert len(await owned_replica_sets(cluster, "sc")) == 1
    # resumed with a 1 s deadline and pods that never become ready: the rollout times out
    await cluster.client.patch(DEPLOYMENTS, "sc", {"spec": {"paused": False,
                                                             "progressDeadlineSeconds": 1}}, NS)

    async def timed_out() -> Obj | None:
        got = await cluster.client.get(DEPLOYMENTS, "sc", NS)
        cond = condition(got, "Progressing")
        return got if cond["reason"] == "ProgressDeadlineExceeded" else None

    d = await eventually(timed_out, timeout=6)
    cond = condition(d, "Progressing")
    assert cond["status"] == "False"
    assert cond["message"].endswith("has timed out progressing.")
    assert len(await owned_replica_sets(cluster, "sc")) == 2


# ---------------------------------------------------------------------------------------------
# helpers


async def wait_pods(cluster: Cluster, selector: str, n: int, *, without: str = "",
                    settle: bool = False, timeout: float = 5.0) -> list[Obj]:
    """Wait until exactly `n` active pods match `selector` (none named `without`); with
    `settle`, check again after a pause so a count passing through `n` does not pass."""

    async def check() -> list[Obj] | None:
        pods = await cluster.active_pods(selector)
        if len(pods) != n or any(p["metadata"]["name"] == without for p in pods):
            return None
        return pods

    pods = await eventually(check, timeout, f"{n} pods matching {selector!r}")
    if settle:
        await asyncio.sleep(0.15)
        pods = await eventually(check, timeout, f"{n} pods matching {selector!r}")
    return pods


async def _rc_status(cluster: Cluster, name: str, field: str, value: int) -> bool:
    got = await cluster.client.get(REPLICATION_CONTROLLERS, name, NS)
    return got["status"].get(field) == value
