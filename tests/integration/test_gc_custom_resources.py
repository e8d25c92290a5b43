"""The garbage collector and custom resources, with a real API server: an owner of a kind a
CRD defines (kopf's `kopf.adopt` makes exactly such children) takes its dependents with it,
and a dependent owned by a custom resource made after the collector started is collected too
— upstream watches every deletable resource discovery lists (GarbageCollector.Sync). A
deleted CRD's monitor stops."""

# ruff: noqa: F811 -- the `client` fixture is imported and named as a parameter
from __future__ import annotations

from typing import Any

from minikube_py.client import Client
from minikube_py.client.resources import CONFIGMAPS, PERSISTENT_VOLUME_CLAIMS, Resource
from minikube_py.controllers.garbagecollector import GarbageCollector
from tests.integration.test_cluster_controllers import (
    _absent,
    client,  # noqa: F401  (the fixture)
    eventually,
    owner_ref,
    running,
)

NS = "default"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", False,
                "CustomResourceDefinition")
EVCS = Resource("kopf.dev", "v1", "ephemeralvolumeclaims", True, "EphemeralVolumeClaim")
CRD = {
    "metadata": {"name": "ephemeralvolumeclaims.kopf.dev"},
    "spec": {"group": "kopf.dev", "scope": "Namespaced",
             "names": {"kind": "EphemeralVolumeClaim", "plural": "ephemeralvolumeclaims",
                       "singular": "ephemeralvolumeclaim"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


async def _served(client: Client) -> bool:
    """the CRD is Established"""
    crd = await client.get(CRDS, CRD["metadata"]["name"])
    return any(c["type"] == "Established" and c["status"] == "True"
               for c in (crd.get("status") or {}).get("conditions") or ())


async def _children(client: Client, owner: dict[str, Any]) -> None:
    """A PVC and a ConfigMap owned by `owner` (what kopf.adopt writes)."""
    ref = owner_ref(owner)
    await client.create(PERSISTENT_VOLUME_CLAIMS, {
        "metadata": {"name": "my-claim", "namespace": NS, "ownerReferences": [ref]},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1G"}}}})
    await client.create(CONFIGMAPS, {
        "metadata": {"name": "my-claim", "namespace": NS, "ownerReferences": [ref]}})


async def _collected(client: Client) -> bool:
    return (await _absent(client, PERSISTENT_VOLUME_CLAIMS, "my-claim", NS)
            and await _absent(client, CONFIGMAPS, "my-claim", NS))


async def test_dependents_of_a_deleted_custom_resource_are_collected(client: Client) -> None:
    """The CRD exists before the collector starts: its first discovery sync watches it."""
    await client.create(CRDS, CRD)
    await eventually(lambda: _served(client), timeout=10)
    async with running(client, GarbageCollector) as (gc,):
        owner = await client.create(EVCS, {"metadata": {"name": "my-claim", "namespace": NS}})
        await _children(client, owner)

        async def watched() -> bool:
            """the collector watches the custom resource and the claims"""
            return {EVCS, PERSISTENT_VOLUME_CLAIMS} <= set(gc.monitors)
        await eventually(watched, timeout=10)
        await client.delete(EVCS, "my-claim", NS)

        async def collected() -> bool:
            """the PVC and the ConfigMap went with their owner"""
            return await _collected(client)
        await eventually(collected, timeout=10)

        await client.delete(CRDS, CRD["metadata"]["name"])
        await eventually(lambda: _true(EVCS not in gc.monitors), timeout=5)


async def test_a_kind_created_after_the_collector_started_is_watched_at_once(client: Client) -> None:
    """The CRD is made while the collector runs: the first dependent naming an owner of the
    new kind makes it read discovery again then, not at the 30 s periodic sync."""
    async with running(client, GarbageCollector) as (gc,):
        await eventually(lambda: _true(PERSISTENT_VOLUME_CLAIMS in gc.monitors), timeout=10)
        await client.create(CRDS, CRD)
        await eventually(lambda: _served(client), timeout=10)
        owner = await client.create(EVCS, {"metadata": {"name": "my-claim", "namespace": NS}})
        await _children(client, owner)
        await eventually(lambda: _true(EVCS in gc.monitors), timeout=5)
        await client.delete(EVCS, "my-claim", NS)

        async def collected() -> bool:
            """the PVC and the ConfigMap went with their owner"""
            return await _collected(client)
        await eventually(collected, timeout=10)


async def _true(value: bool) -> bool:
    return value
