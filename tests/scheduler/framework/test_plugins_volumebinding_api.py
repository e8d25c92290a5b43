"""VolumeBinding's Reserve and PreBind against a real API server over HTTP.

A WaitForFirstConsumer claim gets its volume pre-bound (a local PV on the chosen node) or its
node selected (a provisioning class) by PreBind, through the handle's client; the plugin reads
the claims, volumes and classes from a real, started informer factory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.cache.factory import InformerFactory
from minikube_py.client.resources import (
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from minikube_py.scheduler.framework.interface import CycleState
from minikube_py.scheduler.framework.plugins import registry
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import NodeTable, build
from tests.apiserver.conftest import start_api

from .plugin_helpers import node, pod, run_filter

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"


class Handle:
    """The parts of framework.Handle VolumeBinding uses: client, informers, node_info."""

    def __init__(self, client: Client, informers: InformerFactory, nodes: NodeTable) -> None:
        self.client, self.informers, self._nodes = client, informers, nodes

    def node_info(self, name: str) -> NodeInfo | None:
        row = self._nodes.row_of.get(name)
        return None if row is None else self._nodes.infos[row]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    api, runner, store, session = await start_api(tmp_path)
    c = Client(HTTPTransport(api.url))
    try:
        yield c
    finally:
        await c.close()
        await session.close()
        await runner.cleanup()
        await store.close()


def claim(name: str, cls: str) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


async def test_prebind_pre_binds_a_local_volume_and_selects_a_node(client: Client) -> None:
    await client.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    await client.create(STORAGE_CLASSES, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "dyn"},
        "provisioner": "example.com/dyn", "volumeBindingMode": "WaitForFirstConsumer"})
    await client.create(PERSISTENT_VOLUMES, {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "disk-a"},
        "spec": {"storageClassName": "local", "capacity": {"storage": "5Gi"},
                 "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/a"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": HOST, "operator": "In", "values": ["n-a"]}]}]}}}})
    disk = await client.get(PERSISTENT_VOLUMES, "disk-a")
    disk["status"] = {"phase": "Available"}  # what the volume binder marks a new PV
    await client.update_status(PERSISTENT_VOLUMES, disk)
    await client.create(PERSISTENT_VOLUME_CLAIMS, claim("data", "local"), "default")
    await client.create(PERSISTENT_VOLUME_CLAIMS, claim("scratch", "dyn"), "default")
    for name in ("n-a", "n-b"):
        await client.create(NODES, node(name))
    informers = InformerFactory(client)
    nodes = build([NodeInfo(node=n) for n in (await client.list(NODES))["items"]])
    plugin = registry.in_tree_registry()["VolumeBinding"]({}, Handle(client, informers, nodes))
    informers.start()
    try:
        await informers.wait_for_sync(10)
        raw = pod("web", spec={"volumes": [
            {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "s", "persistentVolumeClaim": {"claimName": "scratch"}}]})
        statuses = run_filter(plugin, raw, nodes)
        assert set(statuses) == {"n-b"}  # only n-a has a volume for "data"
        state = CycleState()
        assert plugin.reserve(state, raw, "n-a") is None
        assert await plugin.pre_bind(state, raw, "n-a") is None
        volume = await client.get(PERSISTENT_VOLUMES, "disk-a")
        assert volume["spec"]["claimRef"]["name"] == "data"
        assert volume["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
        scratch = await client.get(PERSISTENT_VOLUME_CLAIMS, "scratch", "default")
        assert scratch["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n-a"
    finally:
        await informers.stop()
