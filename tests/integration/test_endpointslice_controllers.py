"""The EndpointSlice and EndpointSliceMirroring controllers end to end inside one process: a
real API server with `Node,RBAC` authorization, each controller acting as its kube-system
service account (so it can do only what upstream's system:controller:* role allows), pods
whose status the test writes as a kubelet would.

Covers: pods becoming Ready -> endpoints in slices packed by --max-endpoints-per-slice, named
target ports, zone from the node, owner reference and labels; a pod deleted -> the slice
updated; a terminating pod's conditions; an empty Service's placeholder slice; a slice deleted
by someone else is put back; mirroring of a selector-less Service's Endpoints and its
skip-mirror label.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY, generate_latest

from minikube_py.api import meta
from minikube_py.apiserver.authn import identities
from minikube_py.cli.start import InProcessClients
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import (
    ENDPOINT_SLICES,
    ENDPOINTS,
    EVENTS,
    NODES,
    PODS,
    SERVICES,
)
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.endpointslice import EndpointSliceController
from minikube_py.controllers.endpointslice_metrics import endpointslice_metrics
from minikube_py.controllers.endpointslicemirroring import (
    EndpointSliceMirroringController,
)
from minikube_py.controllers.options import ControllerOptions
from tests.apiserver.conftest import start_api
from tests.polling import eventually

Obj = dict[str, Any]
NS = "default"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Client]:
    _api, runner, store, session = await start_api(tmp_path, authorization_mode="Node,RBAC")
    admin = Client(InProcessTransport(runner.app))
    accounts = InProcessClients(runner.app, "kube-controller-manager",
                                functools.partial(identities.service_account_user,
                                                  "kube-system"))
    ctx = ControllerContext(admin, InformerFactory(admin),
                            ControllerOptions(max_endpoints_per_slice=2), clients=accounts)
    controllers = [EndpointSliceController(ctx), EndpointSliceMirroringController(ctx)]
    ctx.informers.start()
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        await ctx.informers.wait_for_sync(5)
        yield admin
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await ctx.informers.stop()
        await ctx.close()
        await accounts.close()
        await admin.close()
        await session.close()
        await runner.cleanup()
        await store.close()
        stopped = [r for r in results if not isinstance(r, asyncio.CancelledError)]
        assert not stopped, f"controller stopped: {stopped!r}"


async def slices_of(client: Client, service: str) -> list[Obj]:
    listed = await client.list(ENDPOINT_SLICES, NS,
                               label_selector=f"kubernetes.io/service-name={service}")
    return listed["items"]


def addresses(slices: list[Obj], **conditions: bool) -> set[str]:
    return {a for s in slices for e in s.get("endpoints") or ()
            if all(e["conditions"].get(k) == v for k, v in conditions.items())
            for a in e["addresses"]}


async def ready_pod(client: Client, i: int, *, ready: bool = True) -> Obj:
    pod = await client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"web-{i}", "namespace": NS, "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx", "ports": [
            {"name": "http", "containerPort": 8080}]}]}})
    pod["status"] = {**pod["status"], "phase": "Running", "podIP": f"10.1.0.{i}",
                     "podIPs": [{"ip": f"10.1.0.{i}"}],
                     "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                     "lastTransitionTime": meta.now_rfc3339()}]}
    return await client.update_status(PODS, pod)


async def setup_service(client: Client) -> Obj:
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n1", "labels": {"topology.kubernetes.io/zone": "zone-a"}}})
    return await client.create(SERVICES, {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": NS, "labels": {"tier": "front"}},
        "spec": {"selector": {"app": "web"},
                 "ports": [{"name": "web", "port": 80, "targetPort": "http"}]}})


async def test_pods_become_endpoints_in_packed_slices(cluster: Client) -> None:
    client = cluster
    service = await setup_service(client)
    [placeholder] = await eventually(lambda: slices_of(client, "web"),
                                     message="the empty service's placeholder slice")
    assert placeholder.get("endpoints") in (None, []) and "ports" not in placeholder
    for i in range(1, 6):
        await ready_pod(client, i)

    async def five_ready() -> list[Obj] | None:
        slices = await slices_of(client, "web")
        return slices if len(addresses(slices, ready=True)) == 5 else None

    slices = await eventually(five_ready, message="five ready endpoints")
    assert sorted(len(s["endpoints"]) for s in slices) == [1, 2, 2]  # max 2 per slice
    assert placeholder["metadata"]["name"] in {s["metadata"]["name"] for s in slices}  # reused
    first = slices[0]
    assert first["metadata"]["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                           MANAGED_BY: "endpointslice-controller.k8s.io"}
    assert first["metadata"]["generateName"] == "web-"
    assert first["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Service", "name": "web",
        "uid": service["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert first["ports"] == [{"name": "web", "protocol": "TCP", "port": 8080}]
    endpoint = first["endpoints"][0]
    assert endpoint["zone"] == "zone-a" and endpoint["nodeName"] == "n1"
    assert endpoint["targetRef"]["kind"] == "Pod"
    # the pods' Ready transitions are the trigger of the last write (a second in the past)
    assert any(s["metadata"].get("annotations", {}).get(TRIGGER) for s in slices)

    # a pod deleted at once: its endpoint leaves its slice
    await client.delete(PODS, "web-1", NS, grace_period_seconds=0)
    await eventually(lambda: _has(client, lambda s: addresses(s) == {
        f"10.1.0.{i}" for i in range(2, 6)}), message="web-1 gone from the slices")
    # a graceful delete of a bound pod leaves it terminating: not ready, still serving
    await client.delete(PODS, "web-2", NS, grace_period_seconds=30)
    await eventually(lambda: _has(client, lambda s: addresses(
        s, ready=False, serving=True, terminating=True) == {"10.1.0.2"}),
        message="web-2 terminating")
    # a not-ready pod is listed not ready and not serving
    await ready_pod(client, 7, ready=False)
    await eventually(lambda: _has(client, lambda s: addresses(
        s, ready=False, serving=False, terminating=False) == {"10.1.0.7"}),
        message="web-7 not ready")
    # upstream's gauges (summed over every service this process synced): this one wants 5
    # endpoints (web-2..5, web-7), ideally in 3 slices of 2
    slices = await slices_of(client, "web")
    assert endpointslice_metrics().service("default/web") == (5, len(slices), 3)
    exposed = generate_latest(REGISTRY).decode()
    assert "\nendpoint_slice_controller_desired_endpoint_slices " in exposed


async def _has(client: Client, check) -> bool:
    return check(await slices_of(client, "web"))


async def test_deleted_slice_is_recreated(cluster: Client) -> None:
    client = cluster
    await setup_service(client)
    await ready_pod(client, 1)
    [slice_] = await eventually(lambda: _ready_slices(client), message="one endpoint")
    await client.delete(ENDPOINT_SLICES, slice_["metadata"]["name"], NS)
    [again] = await eventually(lambda: _ready_slices(client, exclude=slice_["metadata"]["name"]),
                               message="the slice put back")
    assert addresses([again]) == {"10.1.0.1"}


async def _ready_slices(client: Client, exclude: str = "") -> list[Obj] | None:
    slices = [s for s in await slices_of(client, "web") if s["metadata"]["name"] != exclude]
    return slices if addresses(slices, ready=True) == {"10.1.0.1"} else None


async def test_mirroring_selectorless_service(cluster: Client) -> None:
    client = cluster
    await client.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                   "metadata": {"name": "ext", "namespace": NS},
                                   "spec": {"ports": [{"port": 5432}]}})
    endpoints = await client.create(ENDPOINTS, {
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "ext", "namespace": NS, "labels": {"db": "pg"}},
        "subsets": [{"addresses": [{"ip": "192.0.2.10"}],
                     "notReadyAddresses": [{"ip": "192.0.2.11"}],
                     "ports": [{"port": 5432}]}]})

    async def mirrored() -> list[Obj] | None:
        slices = await slices_of(client, "ext")
        return slices if addresses(slices) == {"192.0.2.10", "192.0.2.11"} else None

    [slice_] = await eventually(mirrored, message="the mirrored slice")
    labels = slice_["metadata"]["labels"]
    assert labels[MANAGED_BY] == "endpointslicemirroring-controller.k8s.io"
    assert labels["db"] == "pg"
    assert slice_["metadata"]["ownerReferences"][0]["uid"] == endpoints["metadata"]["uid"]
    assert addresses([slice_], ready=False) == {"192.0.2.11"}
    assert slice_["ports"] == [{"name": "", "protocol": "TCP", "port": 5432}]
    # the skip-mirror label removes the mirrored slices
    endpoints = await client.get(ENDPOINTS, "ext", NS)
    endpoints["metadata"]["labels"]["endpointslice.kubernetes.io/skip-mirror"] = "true"
    await client.update(ENDPOINTS, endpoints)

    async def gone() -> bool:
        return not await slices_of(client, "ext")

    await eventually(gone, message="mirrored slices deleted on skip-mirror")


async def zoned_node(client: Client, name: str, zone: str, cpu: str) -> None:
    node = await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "labels": {"topology.kubernetes.io/zone": zone}}})
    node["status"] = {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}]}
    await client.update_status(NODES, node)


async def test_topology_hints_with_topology_mode_auto(cluster: Client) -> None:
    client = cluster
    await zoned_node(client, "n1", "zone-a", "2")
    await zoned_node(client, "n2", "zone-b", "2")
    await client.create(SERVICES, {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": NS,
                     "annotations": {"service.kubernetes.io/topology-mode": "Auto"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    for i, node in ((1, "n1"), (2, "n2")):
        pod = await client.create(PODS, {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-{i}", "namespace": NS, "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}})
        pod["status"] = {**pod["status"], "phase": "Running", "podIP": f"10.1.0.{i}",
                         "conditions": [{"type": "Ready", "status": "True"}]}
        await client.update_status(PODS, pod)

    async def hinted() -> dict | None:
        endpoints = [e for s in await slices_of(client, "web") for e in s.get("endpoints") or ()]
        hints = {e["addresses"][0]: [z["name"] for z in e.get("hints", {}).get("forZones", [])]
                 for e in endpoints}
        return hints if len(hints) == 2 and all(hints.values()) else None

    assert await eventually(hinted, message="zone hints") == {"10.1.0.1": ["zone-a"],
                                                              "10.1.0.2": ["zone-b"]}
    # the annotation removed: hints go
    service = await client.get(SERVICES, "web", NS)
    service["metadata"]["annotations"] = {}
    await client.update(SERVICES, service)

    async def unhinted() -> bool:
        slices = await slices_of(client, "web")
        return bool(slices) and all("hints" not in e for s in slices
                                    for e in s.get("endpoints") or ())

    await eventually(unhinted, message="hints removed")

    # events on the Service, upstream's words (with one ready endpoint for two zones at first,
    # hints were refused as "Insufficient number of endpoints (1 endpoints, 2 zones)")
    wanted = {("TopologyAwareHintsEnabled",
               "Topology Aware Hints has been enabled, addressType: IPv4"),
              ("TopologyAwareHintsDisabled",
               "Topology Aware Hints has been disabled, addressType: IPv4")}

    async def reasons() -> bool:
        listed = (await client.list(EVENTS, NS))["items"]
        return wanted <= {(e["reason"], e["message"]) for e in listed
                          if e["involvedObject"].get("name") == "web"}

    await eventually(reasons, message="the topology events")
