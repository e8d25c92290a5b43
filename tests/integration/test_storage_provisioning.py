"""Dynamic provisioning end to end against a real API server and real components: the
storage addon's default class, the DefaultStorageClass admission plugin, the claim binder
handing claims to the simulated CSI driver's provisioner, WaitForFirstConsumer through the
scheduler's volume binding, reclaim Delete, the kubelets' CSINodes and the VolumeAttachment
lifecycle (attach/detach controller + the driver's attacher)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.cli import storage_addon
from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import (
    CSI_NODES,
    EVENTS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
)
from minikube_py.controllers.attachdetach_util import attachment_name
from minikube_py.controllers.manager import ControllerManager
from minikube_py.controllers.options import ControllerOptions
from minikube_py.kubelet import KubeletConfig, KubeletPool
from minikube_py.scheduler.factory import from_provider
from minikube_py.scheduler.scheduler import Scheduler
from tests.apiserver.conftest import start_api
from tests.polling import eventually

Obj = dict[str, Any]
DRIVER = "hostpath.csi.minikube-py.io"
FAST = KubeletConfig(node_status_update_frequency=0.2, image_pull_seconds=0.02,
                     container_start_seconds=0.01, max_termination_grace_seconds=0.05)
CONTROLLERS = ("persistentvolume-binder", "csi-hostpath-provisioner", "csi-hostpath-attacher",
               "attachdetach")


def pvc(name: str, size: str = "1Gi", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"resources": {"requests": {"storage": size}},
                     "accessModes": ["ReadWriteOnce"], **spec}}


def pod(name: str, claim: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
                     "containers": [{"name": "c", "image": "nginx", "volumeMounts": [
                         {"name": "data", "mountPath": "/data"}]}]}}


class Cluster:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def until(self, read: Callable[[], Any], check: Callable[[Any], bool],
                    timeout: float = 8.0) -> Any:
        """`read()` once `check` holds for it (a read that fails with a Status is retried)."""
        async def attempt() -> Any:
            try:
                value = await read()
            except StatusError:
                return None
            return value if check(value) else None
        return await eventually(attempt, timeout, f"{read!r} to satisfy {check!r}")

    async def claim(self, name: str, check: Callable[[Obj], bool]) -> Obj:
        return await self.until(
            lambda: self.client.get(PERSISTENT_VOLUME_CLAIMS, name, "default"), check)

    async def events(self, name: str, reason: str) -> list[Obj]:
        async def read() -> list[Obj]:
            items = (await self.client.list(
                EVENTS, "default", field_selector=f"involvedObject.name={name}"))["items"]
            return [e for e in items if e["reason"] == reason]
        return await eventually(read, 8.0, f"a {reason} event about {name}")

    async def gone(self, resource: Any, name: str, namespace: str | None = None) -> None:
        async def deleted() -> bool:
            try:
                await self.client.get(resource, name, namespace)
            except StatusError as exc:
                return exc.code == 404
            return False
        await eventually(deleted, 8.0, f"{resource.plural}/{name} deleted")


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    api, runner, store, session = await start_api(
        tmp_path, admission_control=("NamespaceLifecycle", "DefaultStorageClass"))
    client = Client(HTTPTransport(api.url))
    await storage_addon.install(client)
    pool = KubeletPool(client, port=-1)
    pool.add_node("n-0", FAST)
    pool.add_node("n-1", FAST)
    manager = ControllerManager(client, ControllerOptions(controllers=CONTROLLERS,
                                                          pvclaimbinder_sync_period=1.0))
    scheduler = Scheduler(client, from_provider("DefaultProvider"))
    tasks = [asyncio.create_task(manager.run()), asyncio.create_task(scheduler.run())]
    await pool.start()
    try:
        await pool.wait_ready(5)
        yield Cluster(client)
        assert not any(t.done() for t in tasks), tasks
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await pool.stop()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_default_class_provisions_immediately_and_deletes_on_release(
        cluster: Cluster) -> None:
    c = cluster.client
    standard = await c.get(STORAGE_CLASSES, "standard")
    assert standard["metadata"]["annotations"] == {
        "storageclass.kubernetes.io/is-default-class": "true"}
    assert (standard["provisioner"], standard["reclaimPolicy"],
            standard["volumeBindingMode"]) == (DRIVER, "Delete", "Immediate")
    created = await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("data", "3Gi"))
    assert created["spec"]["storageClassName"] == "standard"  # DefaultStorageClass
    uid = created["metadata"]["uid"]
    claim = await cluster.claim("data", lambda c: c["status"].get("phase") == "Bound")
    assert claim["spec"]["volumeName"] == f"pvc-{uid}"
    notes = claim["metadata"]["annotations"]
    assert notes["volume.kubernetes.io/storage-provisioner"] == DRIVER
    assert notes["volume.beta.kubernetes.io/storage-provisioner"] == DRIVER
    assert claim["status"]["capacity"] == {"storage": "3Gi"}
    pv = await c.get(PERSISTENT_VOLUMES, f"pvc-{uid}")
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == DRIVER
    spec = pv["spec"]
    assert (spec["storageClassName"], spec["persistentVolumeReclaimPolicy"],
            spec["capacity"], spec["accessModes"]) == (
        "standard", "Delete", {"storage": "3Gi"}, ["ReadWriteOnce"])
    assert spec["csi"]["driver"] == DRIVER and "nodeAffinity" not in spec  # Immediate
    external = (await cluster.events("data", "ExternalProvisioning"))[0]
    assert external["source"]["component"] == "persistentvolume-controller"
    assert external["message"] == (
        f"Waiting for a volume to be created either by the external provisioner '{DRIVER}' or "
        "manually by the system administrator. If volume creation is delayed, please verify "
        "that the provisioner is running and correctly registered.")
    done = (await cluster.events("data", "ProvisioningSucceeded"))[0]
    assert done["message"] == f"Successfully provisioned volume pvc-{uid}"
    assert done["source"]["component"] == DRIVER
    # reclaim Delete: the claim goes, the volume is Released and its provisioner deletes it
    await c.delete(PERSISTENT_VOLUME_CLAIMS, "data", "default")
    await cluster.gone(PERSISTENT_VOLUMES, f"pvc-{uid}")


async def test_explicit_empty_class_and_missing_class(cluster: Cluster) -> None:
    c = cluster.client
    created = await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("static", storageClassName=""))
    assert created["spec"]["storageClassName"] == ""  # "" means no class: kept
    event = (await cluster.events("static", "FailedBinding"))[0]
    assert event["message"] == ("no persistent volumes available for this claim and no "
                                "storage class is set")
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("gold", storageClassName="gold"))
    failed = (await cluster.events("gold", "ProvisioningFailed"))[0]
    assert (failed["type"], failed["message"]) == (
        "Warning", 'storageclass.storage.k8s.io "gold" not found')
    # the class appears: the claim is provisioned
    await c.create(STORAGE_CLASSES, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                     "metadata": {"name": "gold"}, "provisioner": DRIVER,
                                     "reclaimPolicy": "Retain"})
    claim = await cluster.claim("gold", lambda c: c["status"].get("phase") == "Bound")
    pv = await c.get(PERSISTENT_VOLUMES, claim["spec"]["volumeName"])
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert (await c.get(PERSISTENT_VOLUME_CLAIMS, "static", "default"))["status"]["phase"] == \
        "Pending"


async def test_wait_for_first_consumer_provisions_on_the_pods_node_and_attaches(
        cluster: Cluster) -> None:
    c = cluster.client
    await c.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
        "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer"})
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("logs", storageClassName="local"))
    event = (await cluster.events("logs", "WaitForFirstConsumer"))[0]
    assert (event["type"], event["message"]) == (
        "Normal", "waiting for first consumer to be created before binding")
    await asyncio.sleep(0.3)
    claim = await c.get(PERSISTENT_VOLUME_CLAIMS, "logs", "default")
    assert claim["status"]["phase"] == "Pending" and not claim["spec"].get("volumeName")
    assert not (await c.list(PERSISTENT_VOLUMES))["items"]
    # the first consumer: the scheduler picks its node and writes it into the claim
    await c.create(PODS, pod("writer", "logs"))
    running = await cluster.until(lambda: c.get(PODS, "writer", "default"),
                                  lambda p: p["status"].get("phase") == "Running")
    node = running["spec"]["nodeName"]
    claim = await cluster.claim("logs", lambda c: c["status"].get("phase") == "Bound")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    pv = await c.get(PERSISTENT_VOLUMES, claim["spec"]["volumeName"])
    assert pv["spec"]["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                              "values": [node]}]}]}}
    # attach: a VolumeAttachment named as upstream names it, attached by the driver
    name = attachment_name(pv["spec"]["csi"]["volumeHandle"], DRIVER, node)
    va = await cluster.until(lambda: c.get(VOLUME_ATTACHMENTS, name),
                             lambda v: (v.get("status") or {}).get("attached") is True)
    assert va["spec"] == {"attacher": DRIVER, "nodeName": node,
                          "source": {"persistentVolumeName": pv["metadata"]["name"]}}
    attached = await cluster.until(
        lambda: c.get(NODES, node), lambda n: n["status"].get("volumesAttached"))
    assert attached["status"]["volumesAttached"] == [{
        "name": f"kubernetes.io/csi/{DRIVER}^{pv['spec']['csi']['volumeHandle']}",
        "devicePath": ""}]
    # detach: no pod on the node uses the volume any more
    await c.delete(PODS, "writer", "default", grace_period_seconds=0)
    await cluster.gone(VOLUME_ATTACHMENTS, name)
    await cluster.until(lambda: c.get(NODES, node),
                        lambda n: not n["status"].get("volumesAttached"))


async def test_every_node_publishes_its_csinode(cluster: Cluster) -> None:
    c = cluster.client
    for name in ("n-0", "n-1"):
        csinode = await cluster.until(lambda name=name: c.get(CSI_NODES, name), bool)
        node = await c.get(NODES, name)
        assert csinode["metadata"]["ownerReferences"] == [{
            "apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}]
        assert csinode["spec"]["drivers"] == [{
            "name": DRIVER, "nodeID": name, "topologyKeys": ["kubernetes.io/hostname"],
            "allocatable": {"count": 256}}]


def local_pv(name: str, node: str, size: str) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "local-disks", "local": {"path": "/mnt/disk"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In",
                          "values": [node]}]}]}}}}


async def test_local_volumes_bind_where_the_scheduler_places_the_pod(cluster: Cluster) -> None:
    c = cluster.client
    await c.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "local-disks"}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer"})
    await c.create(PERSISTENT_VOLUMES, local_pv("small-on-0", "n-0", "1Gi"))
    await c.create(PERSISTENT_VOLUMES, local_pv("big-on-1", "n-1", "10Gi"))
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("db", "5Gi", storageClassName="local-disks"))
    await cluster.events("db", "WaitForFirstConsumer")
    await c.create(PODS, pod("db", "db"))
    running = await cluster.until(lambda: c.get(PODS, "db", "default"),
                                  lambda p: p["status"].get("phase") == "Running")
    assert running["spec"]["nodeName"] == "n-1"  # the only node with a volume that fits
    claim = await cluster.claim("db", lambda c: c["status"].get("phase") == "Bound")
    assert claim["spec"]["volumeName"] == "big-on-1"
    volume = await c.get(PERSISTENT_VOLUMES, "big-on-1")
    assert volume["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert (await c.get(PERSISTENT_VOLUMES, "small-on-0"))["status"]["phase"] == "Available"
    # no volume big enough anywhere and nothing to provision: the pod stays Pending
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("huge", "1Ti", storageClassName="local-disks"))
    await c.create(PODS, pod("huge", "huge"))
    failed = (await cluster.events("huge", "FailedScheduling"))[0]
    assert "node(s) didn't find available persistent volumes to bind" in failed["message"]


async def test_an_immediate_claim_of_an_in_tree_provisioner_fails_as_upstream(
        cluster: Cluster) -> None:
    c = cluster.client
    await c.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "manual"},
        "provisioner": "kubernetes.io/no-provisioner"})
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("manual", storageClassName="manual"))
    failed = (await cluster.events("manual", "ProvisioningFailed"))[0]
    assert failed["message"] == "no volume plugin matched name: kubernetes.io/no-provisioner"
    claim = await c.get(PERSISTENT_VOLUME_CLAIMS, "manual", "default")
    assert "volume.kubernetes.io/storage-provisioner" not in (
        claim["metadata"].get("annotations") or {})


async def test_a_default_class_created_later_is_assigned_retroactively(cluster: Cluster) -> None:
    c = cluster.client
    await c.delete(STORAGE_CLASSES, "standard")
    await cluster.gone(STORAGE_CLASSES, "standard")
    created = await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("early"))
    assert "storageClassName" not in created["spec"]  # no default class to admit it with
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("classless", storageClassName=""))
    await cluster.events("early", "FailedBinding")
    await c.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fresh", "annotations": {
            "storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": DRIVER})
    claim = await cluster.claim("early", lambda c: c["status"].get("phase") == "Bound")
    assert claim["spec"]["storageClassName"] == "fresh"
    await asyncio.sleep(0.3)  # "" means no class: never given one
    kept = await c.get(PERSISTENT_VOLUME_CLAIMS, "classless", "default")
    assert kept["spec"]["storageClassName"] == "" and kept["status"]["phase"] == "Pending"


async def test_the_kubelet_mounts_a_csi_volume_only_once_it_is_attached(cluster: Cluster) -> None:
    """A driver nobody attaches for: its VolumeAttachment stays unattached and the pod waits
    (FailedMount, "unattached volumes"); once the attachment is marked attached (what its
    attacher would do) the node lists the volume and the pod runs."""
    c = cluster.client
    driver = "ext.csi.example.com"
    await c.create(PERSISTENT_VOLUMES, {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "ext-pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "csi": {"driver": driver, "volumeHandle": "h-ext"}}})
    await c.create(PERSISTENT_VOLUME_CLAIMS, pvc("ext", storageClassName=""))
    await cluster.claim("ext", lambda c: c["status"].get("phase") == "Bound")
    body = pod("ext", "ext")
    body["spec"]["nodeName"] = "n-0"
    await c.create(PODS, body)
    name = attachment_name("h-ext", driver, "n-0")
    va = await cluster.until(lambda: c.get(VOLUME_ATTACHMENTS, name), bool)
    assert not (va.get("status") or {}).get("attached")
    waiting = (await cluster.events("ext", "FailedMount"))[0]
    assert waiting["message"] == (
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached "
        "volumes=[data], failed to process volumes=[]: timed out waiting for the condition")
    assert (await c.get(PODS, "ext", "default"))["status"]["phase"] == "Pending"
    await c.patch(VOLUME_ATTACHMENTS, name, {"status": {"attached": True}},
                  subresource="status")
    await cluster.until(lambda: c.get(PODS, "ext", "default"),
                        lambda p: p["status"].get("phase") == "Running")
