"""The admission plugins' shared informers and listers (admission/listers.py) on a real server:
what a pod create reads from memory, and upstream's live fallbacks for what the cache has not
seen yet."""

from __future__ import annotations

from pathlib import Path

from minikube_py.apiserver.admission.listers import (
    LIVE_TTL,
    NamespacedLister,
    namespace_phase,
)
from minikube_py.apiserver.admission.priority import DefaultClassIndex
from tests.apiserver.conftest import pod, start_api
from tests.polling import eventually


def limit_range() -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}}


def _namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _priority_class(name: str, value: int, default: bool) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "globalDefault": default}


async def _started(tmp_path: Path, **options):
    api, runner, store, session = await start_api(tmp_path, **options)

    async def close() -> None:
        await session.close()
        await runner.cleanup()
        await store.close()

    return api, close


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_namespaced_lister_live_lookup_on_empty_then_cache(tmp_path: Path) -> None:
    """An empty cache reads live once per TTL; an informer event drops the live entry."""
    api, close = await _started(tmp_path)
    try:
        registry = api.server.registries["", "v1", "limitranges"]
        informers = api.server.admission.informers
        informer = informers.informer(registry)
        clock = Clock()
        lister = NamespacedLister(informer, registry, clock=clock)
        await informers.start()  # the new lister's informer is shared and already started
        assert informer.synced
        assert await lister.list("default") == []
        # written behind the informer's back: the remembered live answer stands for the TTL
        await informer.stop()
        await registry.create("default", limit_range())
        assert await lister.list("default") == []
        clock.now += LIVE_TTL + 1
        assert [lr["metadata"]["name"] for lr in await lister.list("default")] == ["limits"]
    finally:
        await close()


async def test_namespaced_lister_follows_the_informer(tmp_path: Path) -> None:
    api, close = await _started(tmp_path)
    try:
        registry = api.server.registries["", "v1", "limitranges"]
        informers = api.server.admission.informers
        lister = NamespacedLister(informers.informer(registry), registry, clock=Clock())
        assert await lister.list("default") == []  # remembered as empty for the TTL
        assert (await api.post("/api/v1/namespaces/default/limitranges", limit_range()))[0] == 201

        async def seen() -> bool:
            return [lr["metadata"]["name"] for lr in await lister.list("default")] == ["limits"]

        await eventually(seen, message="the lister sees the new LimitRange")
        status, _ = await api.delete("/api/v1/namespaces/default/limitranges/limits")
        assert status == 200

        async def gone() -> bool:
            return await lister.list("default") == []

        await eventually(gone, message="the lister drops the deleted LimitRange")
    finally:
        await close()


async def test_limit_ranger_applies_a_limit_range_created_a_moment_ago(tmp_path: Path) -> None:
    api, close = await _started(tmp_path, admission_control=("NamespaceLifecycle", "LimitRanger"))
    try:
        assert (await api.post("/api/v1/namespaces", _namespace("team")))[0] == 201
        assert (await api.post("/api/v1/namespaces/team/pods", pod("before")))[0] == 201
        assert (await api.post("/api/v1/namespaces/team/limitranges", limit_range()))[0] == 201
        status, created = await api.post("/api/v1/namespaces/team/pods", pod("after"))
        assert status == 201, created
        assert created["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "500m"}
    finally:
        await close()


async def test_namespace_lifecycle_new_and_deleted_namespaces(tmp_path: Path) -> None:
    """A namespace created a moment ago is found (live read on a cache miss); one being
    deleted refuses new content with upstream's 403; one that is gone answers 404."""
    api, close = await _started(tmp_path)
    try:
        for i in range(5):
            assert (await api.post("/api/v1/namespaces", _namespace(f"fresh-{i}")))[0] == 201
            status, body = await api.post(f"/api/v1/namespaces/fresh-{i}/configmaps", {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
            assert status == 201, body
        status, _ = await api.delete("/api/v1/namespaces/fresh-0")
        assert status == 200
        status, body = await api.post("/api/v1/namespaces/fresh-0/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}})
        assert status == 403, body
        assert body["message"] == ('configmaps "d" is forbidden: unable to create new content '
                                   "in namespace fresh-0 because it is being terminated")
        assert body["details"]["causes"][0]["reason"] == "NamespaceTerminating"
        status, body = await api.post("/api/v1/namespaces/nowhere/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}})
        assert status == 404 and body["message"] == 'namespaces "nowhere" not found'
    finally:
        await close()


async def test_namespace_lifecycle_deleted_namespace_read_live_while_cache_says_active(
        tmp_path: Path) -> None:
    """upstream forceLiveLookupCache: after a DELETE through this server, a create in that
    namespace reads it live for FORCE_LIVE_TTL even when the cache still says Active."""
    api, close = await _started(tmp_path)
    try:
        assert (await api.post("/api/v1/namespaces", _namespace("going")))[0] == 201
        informers = api.server.admission.informers
        namespaces = api.server.registries["", "v1", "namespaces"]
        cached_ns = informers.informer(namespaces, namespace_phase)

        async def cached() -> bool:
            return cached_ns.by_name("", "going") is not None

        await eventually(cached, message="the namespace informer has the namespace")
        await informers.stop()  # the cache now keeps saying Active
        assert (await api.delete("/api/v1/namespaces/going"))[0] == 200
        assert cached_ns.by_name("", "going") == {"status": {"phase": "Active"}}
        status, body = await api.post("/api/v1/namespaces/going/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}})
        assert status == 403 and "being terminated" in body["message"], body
    finally:
        await close()


async def test_default_priority_class_index(tmp_path: Path) -> None:
    """The global default is kept from the informer's events: the lowest-valued globalDefault
    class, none once it is deleted; pods get it without listing every class."""
    api, close = await _started(tmp_path, admission_control=("NamespaceLifecycle", "Priority"))
    try:
        registry = api.server.registries["scheduling.k8s.io", "v1", "priorityclasses"]
        index = DefaultClassIndex(api.server.admission.informers.informer(registry))
        assert index.best() is None  # the system classes are not globalDefault
        # two defaults can only exist when written around admission (upstream picks the lowest)
        await registry.create("", _priority_class("high", 100, True))
        await registry.create("", _priority_class("low", 10, True))

        async def lowest() -> bool:
            best = index.best()
            return best is not None and best["metadata"]["name"] == "low"

        await eventually(lowest, message="the index names the lowest-valued default")
        status, created = await api.post("/api/v1/namespaces/default/pods", pod("p"))
        assert status == 201, created
        assert created["spec"]["priorityClassName"] == "low"
        assert created["spec"]["priority"] == 10
        await registry.delete("", "low")
        await registry.delete("", "high")

        async def none_left() -> bool:
            return index.best() is None

        await eventually(none_left, message="no default once both are deleted")
        status, created = await api.post("/api/v1/namespaces/default/pods", pod("q"))
        assert status == 201 and created["spec"]["priority"] == 0
        assert "priorityClassName" not in created["spec"]
    finally:
        await close()


async def test_priority_class_created_a_moment_ago_is_found(tmp_path: Path) -> None:
    api, close = await _started(tmp_path, admission_control=("NamespaceLifecycle", "Priority"))
    try:
        for i in range(5):
            status, _ = await api.post("/apis/scheduling.k8s.io/v1/priorityclasses",
                                       _priority_class(f"pc-{i}", 1000 + i, False))
            assert status == 201
            body = pod(f"p{i}")
            body["spec"]["priorityClassName"] = f"pc-{i}"
            status, created = await api.post("/api/v1/namespaces/default/pods", body)
            assert status == 201, created
            assert created["spec"]["priority"] == 1000 + i
    finally:
        await close()


async def test_resource_quota_usage_stays_exact_on_a_stale_cache(tmp_path: Path) -> None:
    """Quota admission reads quotas from the cache but writes usage with a compare-and-swap on
    the resourceVersion it read: a stale cached quota costs a conflict and a live re-read,
    never a wrong usage (upstream's quota evaluator does the same)."""
    api, close = await _started(tmp_path, admission_control=("NamespaceLifecycle",
                                                              "ResourceQuota"))
    try:
        assert (await api.post("/api/v1/namespaces", _namespace("team")))[0] == 201
        quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                 "spec": {"hard": {"pods": "2"}}}
        assert (await api.post("/api/v1/namespaces/team/resourcequotas", quota))[0] == 201
        path = "/api/v1/namespaces/team/pods"
        assert (await api.post(path, pod("a")))[0] == 201
        informers = api.server.admission.informers
        quotas = informers.informer(api.server.registries["", "v1", "resourcequotas"])

        async def charged() -> bool:
            cached = quotas.by_name("team", "q")
            return cached is not None and cached["status"]["used"] == {"pods": "1"}

        await eventually(charged, message="the cache has the quota charged for pod a")
        await informers.stop()  # from now on the cached quota only gets staler
        assert (await api.post(path, pod("b")))[0] == 201
        assert quotas.by_name("team", "q")["status"]["used"] == {"pods": "1"}  # stale
        status, body = await api.post(path, pod("c"))
        assert status == 403, body
        assert body["message"] == ('pods "c" is forbidden: exceeded quota: q, requested: '
                                   "pods=1, used: pods=2, limited: pods=2")
        _, stored = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert stored["status"]["used"] == {"pods": "2"}
    finally:
        await close()
