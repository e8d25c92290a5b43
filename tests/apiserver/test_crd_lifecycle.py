"""Custom resources and the rest of the control plane (issue 16): object-count quota
(`count/widgets.example.com`) in admission and in the resourcequota controller,
NamespaceLifecycle, the namespace controller emptying a namespace of custom resources, and the
garbage collector following ownerReferences to and from custom resources — all with a real
API server and the real controllers; the CRD is created after the controllers start, so they
must learn of it from discovery as upstream's do."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client
from minikube_py.client.resources import (
    CONFIGMAPS,
    DEPLOYMENTS,
    NAMESPACES,
    RESOURCE_QUOTAS,
    Resource,
)
from minikube_py.controllers.garbagecollector import GarbageCollector
from minikube_py.controllers.namespace import NamespaceController
from minikube_py.controllers.resourcequota import ResourceQuotaController
from tests.apiserver.test_crds import widget_crd
from tests.integration.test_cluster_controllers import (
    api_client,
    eventually,
    get_or_none,
    owner_ref,
    running,
)

CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", False,
                "CustomResourceDefinition")
WIDGETS = Resource("example.com", "v1", "widgets", True, "Widget")


class QuickGC(GarbageCollector):
    """Resyncs discovery every 0.2 s instead of 30 s: the CRD comes after the collector."""

    discovery_period = 0.2


@pytest.fixture
async def client(tmp_path: Path):
    async with api_client(tmp_path, admission_control=("NamespaceLifecycle",
                                                        "ResourceQuota")) as c:
        yield c


async def _make_crd(client: Client) -> None:
    await client.create(CRDS, widget_crd())

    async def served() -> bool:
        """the widgets resource answers"""
        try:
            await client.list(WIDGETS, "default")
        except StatusError:
            return False
        return True
    await eventually(served)


def _widget(name: str, namespace: str = "default", owner: dict | None = None) -> dict:
    md: dict = {"name": name, "namespace": namespace}
    if owner is not None:
        md["ownerReferences"] = [owner_ref(owner)]
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md, "spec": {"size": 1}}


async def test_object_count_quota_on_custom_resources(client: Client) -> None:
    await _make_crd(client)
    await client.create(RESOURCE_QUOTAS, {
        "metadata": {"name": "q", "namespace": "default"},
        "spec": {"hard": {"count/widgets.example.com": "2"}}})
    await client.create(WIDGETS, _widget("a"))
    await client.create(WIDGETS, _widget("b"))
    with pytest.raises(StatusError) as err:
        await client.create(WIDGETS, _widget("c"))
    assert err.value.code == 403
    assert 'widgets.example.com "c" is forbidden: exceeded quota: q, requested: ' \
           "count/widgets.example.com=1, used: count/widgets.example.com=2, limited: " \
           "count/widgets.example.com=2" in str(err.value)
    quota = await client.get(RESOURCE_QUOTAS, "q", "default")
    assert quota["status"]["used"] == {"count/widgets.example.com": "2"}
    await client.delete(WIDGETS, "a", "default")
    quota = await client.get(RESOURCE_QUOTAS, "q", "default")
    assert quota["status"]["used"] == {"count/widgets.example.com": "1"}
    await client.create(WIDGETS, _widget("c"))


async def test_quota_controller_counts_custom_resources(client: Client) -> None:
    async with running(client, ResourceQuotaController):
        await _make_crd(client)  # after the controller started
        for name in ("a", "b", "c"):
            await client.create(WIDGETS, _widget(name))
        await client.create(RESOURCE_QUOTAS, {
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"count/widgets.example.com": "10"}}})

        async def counted() -> bool:
            """the controller wrote count/widgets.example.com=3"""
            quota = await client.get(RESOURCE_QUOTAS, "q", "default")
            return (quota.get("status") or {}).get("used") == {"count/widgets.example.com": "3"}
        await eventually(counted)


async def test_namespace_lifecycle_guards_custom_resources(client: Client) -> None:
    await _make_crd(client)
    with pytest.raises(StatusError) as err:
        await client.create(WIDGETS, _widget("w", namespace="missing"))
    assert err.value.code == 404 and 'namespaces "missing" not found' in str(err.value)
    await client.create(NAMESPACES, {"metadata": {"name": "closing"}})
    await client.create(WIDGETS, _widget("w", namespace="closing"))
    await client.delete(NAMESPACES, "closing")  # Terminating: no controller empties it here
    with pytest.raises(StatusError) as err:
        await client.create(WIDGETS, _widget("w2", namespace="closing"))
    assert err.value.code == 403
    assert "unable to create new content in namespace closing because it is being " \
           "terminated" in str(err.value)


async def test_namespace_controller_deletes_custom_resources(client: Client) -> None:
    async with running(client, NamespaceController):
        await _make_crd(client)
        await client.create(NAMESPACES, {"metadata": {"name": "team"}})
        for name in ("a", "b"):
            await client.create(WIDGETS, _widget(name, namespace="team"))
        await client.delete(NAMESPACES, "team")

        async def emptied() -> bool:
            """the namespace and its widgets are gone"""
            return (await get_or_none(client, NAMESPACES, "team") is None
                    and not (await client.list(WIDGETS, "team")).get("items"))
        await eventually(emptied, timeout=10)


async def test_gc_follows_owner_references_to_and_from_custom_resources(client: Client) -> None:
    async with running(client, QuickGC):
        await _make_crd(client)
        owner = await client.create(WIDGETS, _widget("owner"))
        await client.create(CONFIGMAPS, {"metadata": {
            "name": "owned-by-widget", "namespace": "default",
            "ownerReferences": [owner_ref(owner)]}})
        deployment = await client.create(DEPLOYMENTS, {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
        await client.create(WIDGETS, _widget("owned-by-deployment", owner=deployment))
        await asyncio.sleep(0.5)  # let the collector see the new resource and its objects

        await client.delete(WIDGETS, "owner", "default")

        async def config_map_collected() -> bool:
            """the config map owned by the deleted widget is gone"""
            return await get_or_none(client, CONFIGMAPS, "owned-by-widget", "default") is None
        await eventually(config_map_collected, timeout=10)

        await client.delete(DEPLOYMENTS, "web", "default")

        async def widget_collected() -> bool:
            """the widget owned by the deleted deployment is gone"""
            return await get_or_none(client, WIDGETS, "owned-by-deployment", "default") is None
        await eventually(widget_collected, timeout=10)


async def test_gc_foreground_deletion_of_a_custom_resource(client: Client) -> None:
    async with running(client, QuickGC):
        await _make_crd(client)
        owner = await client.create(WIDGETS, _widget("owner"))
        await client.create(WIDGETS, _widget("child", owner=owner))
        await asyncio.sleep(0.5)
        deleting = await client.delete(WIDGETS, "owner", "default",
                                       propagation_policy="Foreground")
        assert deleting["metadata"]["finalizers"] == ["foregroundDeletion"]

        async def both_gone() -> bool:
            """child deleted first, then the owner's finalizer removed"""
            return (await get_or_none(client, WIDGETS, "child", "default") is None
                    and await get_or_none(client, WIDGETS, "owner", "default") is None)
        await eventually(both_gone, timeout=10)
