"""PersistentVolumes and claims end to end against a real API server: the claim binder
(persistentvolume-binder) matches and binds, releases and reclaims; the simulated kubelet
keeps a pod ContainerCreating with FailedMount until its volumes can be "mounted"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client, HTTPTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import (
    CONFIGMAPS,
    EVENTS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
)
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.options import ControllerOptions
from minikube_py.controllers.persistentvolume import PersistentVolumeController
from minikube_py.kubelet import KubeletConfig, KubeletPool
from tests.apiserver.conftest import start_api

Obj = dict[str, Any]
FAST = KubeletConfig(node_status_update_frequency=0.2, image_pull_seconds=0.02,
                     container_start_seconds=0.01, max_termination_grace_seconds=0.05)


def pv(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), *,
       labels: dict | None = None, policy: str | None = None, **spec: Any) -> Obj:
    body: Obj = {"capacity": {"storage": size}, "accessModes": list(modes),
                 "hostPath": {"path": f"/mnt/{name}"}, **spec}
    if policy:
        body["persistentVolumeReclaimPolicy"] = policy
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}}, "spec": body}


def pvc(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",),
        **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"resources": {"requests": {"storage": size}}, "accessModes": list(modes),
                     **spec}}


class Cluster:
    def __init__(self, client: Client, binder: PersistentVolumeController) -> None:
        self.client = client
        self.binder = binder

    async def until(self, read: Callable[[], Any], check: Callable[[Any], bool],
                    timeout: float = 5.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await read()
            except StatusError as exc:
                value = exc
            if not isinstance(value, StatusError) and check(value):
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"condition never held; last: {value!r}")
            await asyncio.sleep(0.02)

    async def claim(self, name: str, phase: str = "Bound") -> Obj:
        return await self.until(lambda: self.client.get(PERSISTENT_VOLUME_CLAIMS, name,
                                                        "default"),
                                lambda c: c["status"].get("phase") == phase)

    async def volume(self, name: str, phase: str) -> Obj:
        return await self.until(lambda: self.client.get(PERSISTENT_VOLUMES, name),
                                lambda v: v["status"].get("phase") == phase)

    async def pod(self, name: str, volumes: list[Obj]) -> Obj:
        """A pod on node n-0 (bound by spec.nodeName, no scheduler) mounting `volumes`."""
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": "n-0", "volumes": volumes,
                         "containers": [{"name": "web", "image": "nginx", "volumeMounts": [
                             {"name": v["name"], "mountPath": f"/{v['name']}"}
                             for v in volumes]}]}}
        return await self.client.create(PODS, body)

    async def pod_phase(self, name: str, phase: str, timeout: float = 5.0) -> Obj:
        return await self.until(lambda: self.client.get(PODS, name, "default"),
                                lambda p: p["status"].get("phase") == phase, timeout)

    async def gone(self, resource: Any, name: str) -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                await self.client.get(resource, name, "default" if resource.namespaced else None)
            except StatusError as exc:
                assert exc.code == 404
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"{name} was not deleted")

    async def events(self, name: str, reason: str) -> list[Obj]:
        """Events about `name` with `reason`, waiting (a while) for at least one."""
        async def read() -> list[Obj]:
            items = (await self.client.list(
                EVENTS, "default", field_selector=f"involvedObject.name={name}"))["items"]
            return [e for e in items if e["reason"] == reason]
        return await self.until(read, bool)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    pool = KubeletPool(client, port=-1)
    pool.add_node("n-0", FAST)
    ctx = ControllerContext(client, InformerFactory(client),
                            ControllerOptions(pvclaimbinder_sync_period=1.0))
    binder = PersistentVolumeController(ctx)
    ctx.informers.start()
    task = asyncio.create_task(binder.run())
    await pool.start()
    try:
        await pool.wait_ready(5)
        await ctx.informers.wait_for_sync(5)
        yield Cluster(client, binder)
        assert not task.done(), task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await ctx.informers.stop()
        await ctx.close()
        await pool.stop()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_claim_binds_the_smallest_fitting_volume_and_its_pod_runs(cluster: Cluster) -> None:
    c = cluster.client
    for volume in (pv("small", "500Mi", labels={"tier": "db"}),
                   pv("fit", "2Gi", labels={"tier": "db"}),
                   pv("big", "10Gi", labels={"tier": "db"}),
                   pv("web", "1Gi", labels={"tier": "web"}),
                   pv("shared", "1Gi", ("ReadWriteMany",), labels={"tier": "db"}),
                   pv("gold", "1Gi", labels={"tier": "db"}, storageClassName="gold")):
        created = await c.create(PERSISTENT_VOLUMES, volume)
        assert created["status"] == {"phase": "Pending"}
    for name in ("small", "fit", "big", "web", "shared", "gold"):
        await cluster.volume(name, "Available")
    await c.create(PERSISTENT_VOLUME_CLAIMS,
                   pvc("data", "1Gi", selector={"matchLabels": {"tier": "db"}}))
    claim = await cluster.claim("data")
    assert claim["spec"]["volumeName"] == "fit"
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                               "capacity": {"storage": "2Gi"}}
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                                "pv.kubernetes.io/bound-by-controller": "yes"}
    volume = await cluster.volume("fit", "Bound")
    ref = volume["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
        "PersistentVolumeClaim", "default", "data", claim["metadata"]["uid"])
    assert ref["apiVersion"] == "v1" and ref["resourceVersion"]
    assert volume["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    # access modes and class pick their own volumes
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("many", "1Gi", ("ReadWriteMany",)))
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("golden", "1Gi", storageClassName="gold"))
    assert (await cluster.claim("many"))["spec"]["volumeName"] == "shared"
    assert (await cluster.claim("golden"))["spec"]["volumeName"] == "gold"
    for name in ("small", "big", "web"):
        assert (await c.get(PERSISTENT_VOLUMES, name))["status"]["phase"] == "Available"
    # the pod using the claim runs
    await cluster.pod("db", [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    pod = await cluster.pod_phase("db", "Running")
    assert pod["status"]["podIP"]


async def test_pod_waits_for_an_unbound_claim_then_runs(cluster: Cluster) -> None:
    c = cluster.client
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("data", "1Gi"))
    event = (await cluster.events("data", "FailedBinding"))[0]
    assert (event["type"], event["message"]) == (
        "Normal", "no persistent volumes available for this claim and no storage class is set")
    assert event["source"]["component"] == "persistentvolume-controller"
    await cluster.pod("db", [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    mount = (await cluster.events("db", "FailedMount"))[0]
    assert mount["type"] == "Warning"
    assert mount["message"] == (
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], "
        "failed to process volumes=[data]: error processing PVC default/data: PVC is not bound")
    pod = await c.get(PODS, "db", "default")
    assert pod["status"]["phase"] == "Pending" and "podIP" not in pod["status"]
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ContainerCreating"
    # a volume appears: the claim binds, the kubelet mounts, the pod runs
    await c.create(PERSISTENT_VOLUMES, pv("late", "5Gi"))
    assert (await cluster.claim("data"))["spec"]["volumeName"] == "late"
    await cluster.pod_phase("db", "Running")


async def test_missing_config_map_blocks_the_pod_unless_optional(cluster: Cluster) -> None:
    c = cluster.client
    await cluster.pod("opt", [{"name": "cfg", "configMap": {"name": "nope", "optional": True}}])
    await cluster.pod_phase("opt", "Running")
    await cluster.pod("app", [{"name": "cfg", "configMap": {"name": "app-config"}},
                              {"name": "creds", "secret": {"secretName": "app-secret",
                                                           "optional": True}}])
    messages = {e["message"] for e in await cluster.events("app", "FailedMount")}
    assert 'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found' \
        in messages
    assert (await c.get(PODS, "app", "default"))["status"]["phase"] == "Pending"
    await c.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "app-config", "namespace": "default"},
                                "data": {"k": "v"}})
    await cluster.pod_phase("app", "Running")


async def test_deleted_claim_releases_then_retains_or_deletes(cluster: Cluster) -> None:
    c = cluster.client
    await c.create(PERSISTENT_VOLUMES, pv("keep", "1Gi", policy="Retain"))
    await c.create(PERSISTENT_VOLUMES, pv("drop", "1Gi", ("ReadWriteMany",), policy="Delete"))
    await c.create(PERSISTENT_VOLUMES, pv("recycle", "1Gi", ("ReadOnlyMany",),
                                          policy="Recycle"))
    for name in ("keep", "drop", "recycle"):
        await cluster.volume(name, "Available")
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("a", "1Gi"))
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("b", "1Gi", ("ReadWriteMany",)))
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("r", "1Gi", ("ReadOnlyMany",)))
    assert (await cluster.claim("a"))["spec"]["volumeName"] == "keep"
    assert (await cluster.claim("b"))["spec"]["volumeName"] == "drop"
    assert (await cluster.claim("r"))["spec"]["volumeName"] == "recycle"
    for name in ("a", "b", "r"):
        await c.delete(PERSISTENT_VOLUME_CLAIMS, name, "default")
    kept = await cluster.volume("keep", "Released")
    assert kept["spec"]["claimRef"]["name"] == "a"  # Retain: stays Released, still claimed
    await cluster.gone(PERSISTENT_VOLUMES, "drop")  # Delete: the PV object goes
    failed = await cluster.volume("recycle", "Failed")  # no recycler, as upstream
    assert failed["status"]["message"] == "No recycler plugin found for the volume!"
    event = (await cluster.events("recycle", "VolumeFailedRecycle"))[0]
    assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "PersistentVolume"
    await asyncio.sleep(0.3)
    assert (await c.get(PERSISTENT_VOLUMES, "keep"))["status"]["phase"] == "Released"


async def test_pre_bound_claim_and_volume(cluster: Cluster) -> None:
    c = cluster.client
    await c.create(PERSISTENT_VOLUMES, pv("small", "1Gi"))
    await c.create(PERSISTENT_VOLUMES, pv("named", "8Gi"))
    await c.create(PERSISTENT_VOLUMES, pv("reserved", "1Gi", claimRef={
        "namespace": "default", "name": "owner"}))
    await cluster.volume("reserved", "Available")
    # the claim names its volume: it gets it although "small" fits better
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("picky", "1Gi", volumeName="named"))
    picky = await cluster.claim("picky")
    assert picky["spec"]["volumeName"] == "named"
    assert picky["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    # the reserved volume is not given to another claim, only to its owner
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("other", "1Gi"))
    assert (await cluster.claim("other"))["spec"]["volumeName"] == "small"
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("owner", "1Gi"))
    owner = await cluster.claim("owner")
    assert owner["spec"]["volumeName"] == "reserved"
    reserved = await cluster.volume("reserved", "Bound")
    assert reserved["spec"]["claimRef"]["uid"] == owner["metadata"]["uid"]
    assert "pv.kubernetes.io/bound-by-controller" not in (
        reserved["metadata"].get("annotations") or {})
    # naming a volume that does not fit: VolumeMismatch, the claim stays Pending
    await c.create(PERSISTENT_VOLUMES, pv("tiny", "100Mi"))
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("greedy", "1Gi", volumeName="tiny"))
    event = (await cluster.events("greedy", "VolumeMismatch"))[0]
    assert event["message"] == 'Cannot bind to requested volume "tiny": requested PV is too small'
    assert (await c.get(PERSISTENT_VOLUME_CLAIMS, "greedy", "default"))["status"]["phase"] \
        == "Pending"


async def test_invalid_volumes_and_claims_are_refused_with_422(cluster: Cluster) -> None:
    c = cluster.client
    with pytest.raises(StatusError) as err:
        await c.create(PERSISTENT_VOLUMES, {"apiVersion": "v1", "kind": "PersistentVolume",
                                            "metadata": {"name": "bad"},
                                            "spec": {"accessModes": ["ReadWriteSometimes"]}})
    assert err.value.code == 422 and err.value.reason == "Invalid"
    fields = {cause["field"] for cause in err.value.details["causes"]}
    assert fields == {"spec.accessModes", "spec.capacity", "spec"}
    with pytest.raises(StatusError) as err:
        await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("bad", "-1Gi", ()))
    assert err.value.code == 422
    assert err.value.message == (
        'PersistentVolumeClaim "bad" is invalid: [spec.accessModes: Required value: at least 1 '
        'access mode is required, spec.resources[storage]: Invalid value: "-1Gi": must be '
        'greater than zero]')
    # a claim's spec is immutable once created
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("fixed", "1Gi"))
    claim = await c.get(PERSISTENT_VOLUME_CLAIMS, "fixed", "default")
    claim["spec"]["accessModes"] = ["ReadWriteMany"]
    with pytest.raises(StatusError) as err:
        await c.update(PERSISTENT_VOLUME_CLAIMS, claim)
    assert err.value.code == 422 and "spec is immutable after creation" in err.value.message
