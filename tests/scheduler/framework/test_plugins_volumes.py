"""VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits over the handle's informers.

The handle's shared informer factory is the real one, never started: its caches are filled
with the PersistentVolumes, claims and StorageClasses of each case (what a synced informer
would hold), so the plugins read them exactly as in the scheduler.
"""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.client.cache.factory import InformerFactory
from minikube_py.client.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState
from minikube_py.scheduler.framework.plugins import registry
from minikube_py.scheduler.framework.plugins.volumebinding import VolumeBinding
from minikube_py.scheduler.framework.plugins.volumerestrictions import (
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from minikube_py.scheduler.nodetable import NodeTable

from .plugin_helpers import node, pod, run_filter, table

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


class Handle:
    """The two things these plugins use from upstream's framework.Handle: the informer
    factory and the snapshot's NodeInfos."""

    def __init__(self, nodes: NodeTable, objects: list[tuple[Any, Obj]]) -> None:
        self.informers = InformerFactory(None)
        for resource, obj in objects:
            self.informers.informer(resource).indexer.add(obj)
        self.client = None
        self._nodes = nodes

    def node_info(self, name: str):
        row = self._nodes.row_of.get(name)
        return None if row is None else self._nodes.infos[row]

    def snapshot(self) -> NodeTable:
        return self._nodes


def claim(name: str, cls: str = "", volume: str = "", modes: list[str] | None = None) -> Obj:
    spec: Obj = {"accessModes": modes or ["ReadWriteOnce"], "storageClassName": cls,
                 "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def pv(name: str, *, labels: dict | None = None, host: str = "", cls: str = "", **source: Any) -> Obj:
    spec: Obj = {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": cls, **source}
    if host:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOST, "operator": "In", "values": [host]}]}]}}
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec,
            "status": {"phase": "Available"}}


def sc(name: str, mode: str, provisioner: str = "kubernetes.io/no-provisioner") -> Obj:
    return {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}


def with_claims(*names: str, name: str = "p") -> Obj:
    return pod(name, spec={"volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}}
                                       for i, n in enumerate(names)]})


NODES = [node("n-a", labels={ZONE: "a"}), node("n-b", labels={ZONE: "b"})]


def test_volume_binding_prefilter_rejects_unusable_claims():
    nodes = table(NODES)
    handle = Handle(nodes, [(PERSISTENT_VOLUME_CLAIMS, claim("now", "fast")),
                            (STORAGE_CLASSES, sc("fast", "Immediate"))])
    plugin = registry.in_tree_registry()["VolumeBinding"]({}, handle)
    assert isinstance(plugin, VolumeBinding)
    assert run_filter(plugin, pod(), nodes) == {}  # no claims: Skip
    status = run_filter(plugin, with_claims("now"), nodes)[""]
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("pod has unbound immediate PersistentVolumeClaims",)
    missing = run_filter(plugin, with_claims("ghost"), nodes)[""]
    assert missing.reasons == ('persistentvolumeclaim "ghost" not found',)


def test_volume_binding_wait_for_first_consumer_filter_and_reserve():
    nodes = table(NODES)
    handle = Handle(nodes, [(PERSISTENT_VOLUME_CLAIMS, claim("data", "local")),
                            (STORAGE_CLASSES, sc("local", "WaitForFirstConsumer")),
                            (PERSISTENT_VOLUMES, pv("disk-a", host="n-a", cls="local"))])
    plugin = registry.in_tree_registry()["VolumeBinding"]({}, handle)
    raw = with_claims("data")
    statuses = run_filter(plugin, raw, nodes)
    assert set(statuses) == {"n-b"}
    assert statuses["n-b"].reasons == ("node(s) didn't find available persistent volumes to bind",)
    assert statuses["n-b"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    state = CycleState()
    assert plugin.reserve(state, raw, "n-a") is None
    writes = state.read("ReserveVolumeBinding")
    assert [(w.kind, w.name) for w in writes] == [("volume", "disk-a")]
    assert writes[0].body["spec"]["claimRef"]["name"] == "data"
    plugin.unreserve(state, raw, "n-a")
    assert state.get("ReserveVolumeBinding") is None


def test_volume_zone():
    nodes = table(NODES + [node("n-none")])
    handle = Handle(nodes, [(PERSISTENT_VOLUME_CLAIMS, claim("data", volume="zoned")),
                            (PERSISTENT_VOLUMES, pv("zoned", labels={ZONE: "a"}))])
    plugin = registry.in_tree_registry()["VolumeZone"]({}, handle)
    statuses = run_filter(plugin, with_claims("data"), nodes)
    assert set(statuses) == {"n-b"}  # a node without zone labels fits any volume
    assert statuses["n-b"].reasons == ("node(s) had no available volume zone",)
    assert statuses["n-b"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def gce(pd: str) -> dict:
    return {"name": "d", "gcePersistentDisk": {"pdName": pd}}


def test_volume_restrictions_disk_conflict_and_read_write_once_pod():
    holder = pod("holder", spec={"volumes": [gce("disk-1")]})
    nodes = table(NODES, {"n-a": [holder]})
    plugin = registry.in_tree_registry()["VolumeRestrictions"]({}, Handle(nodes, []))
    assert isinstance(plugin, VolumeRestrictions)
    statuses = run_filter(plugin, pod("again", spec={"volumes": [gce("disk-1")]}), nodes)
    assert set(statuses) == {"n-a"} and statuses["n-a"].reasons == ("node(s) had no available disk",)
    assert run_filter(plugin, pod("plain"), nodes) == {}
    rwop = claim("solo", volume="v1", modes=["ReadWriteOncePod"])
    user = with_claims("solo", name="first")
    nodes = table(NODES, {"n-b": [user]})
    plugin = registry.in_tree_registry()["VolumeRestrictions"]({}, Handle(nodes, [
        (PERSISTENT_VOLUME_CLAIMS, rwop), (PERSISTENT_VOLUMES, pv("v1"))]))
    second = with_claims("solo", name="second")
    statuses = run_filter(plugin, second, nodes)
    assert set(statuses) == {"n-a", "n-b"}  # the claim is in use: no node until it is freed
    assert statuses["n-a"].code is Code.UNSCHEDULABLE  # preemption may evict its user
    assert statuses["n-a"].reasons == (ERR_REASON_RWOP_CONFLICT,)
    # RemovePod of the user (preemption's what-if) frees the claim
    state = CycleState()
    meta = PodMeta.of(second)
    plugin.pre_filter(state, meta, nodes)
    trial = state.clone()
    info = nodes.infos[nodes.row_of["n-b"]]
    plugin.remove_pod(trial, meta, next(iter(info.pods.values())), info)
    assert plugin.filter(trial, meta, nodes, nodes.everywhere()) == []
    assert plugin.filter(state, meta, nodes, nodes.everywhere()) != []
    assert ERR_REASON_RWOP_CONFLICT.startswith("node has pod using PersistentVolumeClaim")


def test_node_volume_limits(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KUBE_MAX_PD_VOLS", "2")
    ebs = [{"name": f"e{i}", "awsElasticBlockStore": {"volumeID": f"vol-{i}"}} for i in range(3)]
    nodes = table(NODES, {"n-a": [pod("two", spec={"volumes": ebs[:2]})]})
    plugin = registry.in_tree_registry()["NodeVolumeLimits"]({}, Handle(nodes, []))
    statuses = run_filter(plugin, pod("third", spec={"volumes": ebs[2:]}), nodes)
    assert set(statuses) == {"n-a"}
    assert statuses["n-a"].reasons == ("node(s) exceed max volume count",)
    # a volume already attached there does not count twice
    assert run_filter(plugin, pod("same", spec={"volumes": ebs[:1]}), nodes) == {}
