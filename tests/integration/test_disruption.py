"""PodDisruptionBudgets end to end inside one process: a real API server (HTTP for the
eviction calls, the in-process client for the controller), the disruption controller, and pods
whose status the test writes as a kubelet would (Running + Ready).

Covers the controller's status (integer and percentage budgets resolved through the
ReplicaSet's and the Deployment's scale), the eviction subresource's answers (201, 429 with
upstream's message and DisruptionBudget cause, dry run, 500 for two budgets, pending and
unready pods) and the budget's disruptedPods bookkeeping.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from minikube_py.api.meta import rfc3339
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import (
    DEPLOYMENTS,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICASETS,
)
from minikube_py.controllers.disruption import DisruptionController
from tests.apiserver.conftest import API, start_api
from tests.apiserver.test_crd_serving import WIDGETS, crd
from tests.apiserver.test_crds import CRDS, established
from tests.integration.test_cluster_controllers import eventually, get_or_none, running

Obj = dict[str, Any]
NS = "default"
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[API, Client]]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(InProcessTransport(runner.app))
    try:
        async with running(client, DisruptionController):
            yield api, client
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def replica_set(client: Client, name: str, replicas: int,
                      owner: Obj | None = None) -> Obj:
    md: Obj = {"name": name, "namespace": NS}
    if owner is not None:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment",
                                  "name": owner["metadata"]["name"],
                                  "uid": owner["metadata"]["uid"], "controller": True}]
    return await client.create(REPLICASETS, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": md,
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": TEMPLATE}})


async def ready_pod(client: Client, name: str, owner: Obj | None, *, ready: bool = True,
                    phase: str = "Running", labels: Obj | None = None) -> Obj:
    md: Obj = {"name": name, "namespace": NS, "labels": labels or {"app": "web"}}
    if owner is not None:
        md["ownerReferences"] = [{"apiVersion": owner.get("apiVersion", "apps/v1"),
                                  "kind": owner["kind"],
                                  "name": owner["metadata"]["name"],
                                  "uid": owner["metadata"]["uid"], "controller": True}]
    pod = await client.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": md,
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}],
                                              "terminationGracePeriodSeconds": 0}})
    pod["status"] = dict(pod.get("status") or {}, phase=phase, conditions=[
        {"type": "Ready", "status": "True" if ready else "False"}])
    return await client.update_status(PODS, pod)


async def budget(client: Client, name: str, **spec: Any) -> Obj:
    return await client.create(POD_DISRUPTION_BUDGETS, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})


async def status_of(client: Client, name: str, **expected: Any) -> Obj:
    async def check() -> Obj | None:
        """the budget's status reaches the expected counts"""
        pdb = await client.get(POD_DISRUPTION_BUDGETS, name, NS)
        status = pdb.get("status") or {}
        ok = all(status.get(k) == v for k, v in expected.items())
        return pdb if ok and status.get("observedGeneration") == pdb["metadata"]["generation"] \
            else None
    return await eventually(check, timeout=5)


def evict(api: API, pod: str, **extra: Any):
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": NS}, **extra}
    return api.post(f"/api/v1/namespaces/{NS}/pods/{pod}/eviction", body)


async def test_min_available_budget_status_and_evictions(cluster) -> None:
    api, client = cluster
    rs = await replica_set(client, "web", 3)
    for i in range(3):
        await ready_pod(client, f"web-{i}", rs)
    await budget(client, "web-pdb", minAvailable=2)
    pdb = await status_of(client, "web-pdb", currentHealthy=3, desiredHealthy=2,
                          disruptionsAllowed=1, expectedPods=3)
    [cond] = pdb["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "DisruptionAllowed", "True", "SufficientPods")

    # a dry run spends nothing and deletes nothing
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/web-0/eviction?dryRun=All",
                                {"apiVersion": "policy/v1", "kind": "Eviction",
                                 "metadata": {"name": "web-0"}})
    assert code == 201, body
    assert await get_or_none(client, PODS, "web-0", NS) is not None
    assert (await client.get(POD_DISRUPTION_BUDGETS, "web-pdb", NS))["status"][
        "disruptionsAllowed"] == 1

    code, body = await evict(api, "web-0")
    assert (code, body["status"]) == (201, "Success"), body
    assert await get_or_none(client, PODS, "web-0", NS) is None
    # the eviction recorded the pod; the controller drops the entry once the pod is gone
    pdb = await status_of(client, "web-pdb", currentHealthy=2, disruptionsAllowed=0,
                          disruptedPods=None)
    [cond] = pdb["status"]["conditions"]
    assert (cond["status"], cond["reason"]) == ("False", "InsufficientPods")

    code, body = await evict(api, "web-1")
    assert code == 429, body
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [{
        "reason": "DisruptionBudget",
        "message": "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"}]
    assert await get_or_none(client, PODS, "web-1", NS) is not None

    # a pod that is not running yet (Pending) is never protected
    await ready_pod(client, "web-3", rs, ready=False, phase="Pending")
    code, body = await evict(api, "web-3")
    assert code == 201, body
    # an unready running pod: IfHealthyBudget lets it go while the budget is met...
    await ready_pod(client, "web-4", rs, ready=False)
    code, body = await evict(api, "web-4")
    assert code == 201, body
    # ...and refuses once it is not (web-1 turns unready: 1 healthy of the 2 needed)
    pod = await client.get(PODS, "web-1", NS)
    pod["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    await client.update_status(PODS, pod)
    await status_of(client, "web-pdb", currentHealthy=1, disruptionsAllowed=0)
    await ready_pod(client, "web-5", rs, ready=False)
    code, body = await evict(api, "web-5")
    assert code == 429, body
    assert body["details"]["causes"][0]["message"] == (
        "The disruption budget web-pdb needs 2 healthy pods and has 1 currently")
    # ...AlwaysAllow lets it go without spending budget
    pdb = await client.get(POD_DISRUPTION_BUDGETS, "web-pdb", NS)
    pdb["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    await client.update(POD_DISRUPTION_BUDGETS, pdb)
    await status_of(client, "web-pdb", disruptionsAllowed=0)
    code, body = await evict(api, "web-5")
    assert code == 201, body
    # the unhealthy pods' evictions spent nothing
    assert (await client.get(POD_DISRUPTION_BUDGETS, "web-pdb", NS))["status"].get(
        "disruptedPods") is None


async def test_percentages_use_the_controllers_scale(cluster) -> None:
    _api, client = cluster
    deployment = await client.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                 "template": TEMPLATE}})
    rs = await replica_set(client, "web-abc", 4, owner=deployment)
    for i in range(3):  # one of the four replicas is missing
        await ready_pod(client, f"web-{i}", rs)
    await budget(client, "half", maxUnavailable="50%")
    # expected 4 (the Deployment's replicas), maxUnavailable ceil(2) -> desiredHealthy 2
    await status_of(client, "half", expectedPods=4, desiredHealthy=2, currentHealthy=3,
                    disruptionsAllowed=1)
    await client.delete(POD_DISRUPTION_BUDGETS, "half", NS)
    await budget(client, "most", minAvailable="75%")
    await status_of(client, "most", expectedPods=4, desiredHealthy=3, currentHealthy=3,
                    disruptionsAllowed=0)


async def test_two_budgets_are_a_500(cluster) -> None:
    api, client = cluster
    rs = await replica_set(client, "web", 1)
    await ready_pod(client, "web-0", rs)
    await budget(client, "one", maxUnavailable=1)
    await budget(client, "two", maxUnavailable=1)
    code, body = await evict(api, "web-0")
    assert code == 500
    assert body["message"] == ("This pod has more than one PodDisruptionBudget, which the "
                               "eviction subresource does not support.")
    assert await get_or_none(client, PODS, "web-0", NS) is not None


async def test_eviction_body_checks(cluster) -> None:
    api, client = cluster
    await ready_pod(client, "lonely", None, labels={"app": "other"})
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/lonely/eviction",
                                {"apiVersion": "policy/v1", "kind": "Eviction",
                                 "metadata": {"name": "someone-else"}})
    assert (code, body["message"]) == (400, "name in URL does not match name in Eviction object")
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/lonely/eviction?dryRun=All",
                                {"apiVersion": "policy/v1beta1", "kind": "Eviction",
                                 "metadata": {"name": "lonely"},
                                 "deleteOptions": {"dryRun": ["Nope"]}})
    assert code == 400, body
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/missing/eviction",
                                {"apiVersion": "policy/v1", "kind": "Eviction",
                                 "metadata": {"name": "missing"}})
    assert code == 404, body
    # the Eviction's deleteOptions are checked as any DeleteOptions: nothing is deleted
    for options, expected in (({"propagationPolicy": "Bogus"}, 422), ({"preconditions": "x"}, 400),
                              ({"gracePeriodSeconds": "soon"}, 400)):
        code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/lonely/eviction",
                                    {"apiVersion": "policy/v1", "kind": "Eviction",
                                     "metadata": {"name": "lonely"}, "deleteOptions": options})
        assert code == expected, body
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/lonely/eviction?dryRun=All",
                                {"apiVersion": "policy/v1", "kind": "Eviction",
                                 "metadata": {"name": "lonely"},
                                 "deleteOptions": {"dryRun": ["All"], "gracePeriodSeconds": 0}})
    assert code == 201, body
    assert await get_or_none(client, PODS, "lonely", NS) is not None
    # a v1beta1 body is accepted; no budget covers the pod, so it is deleted
    code, body = await api.post(f"/api/v1/namespaces/{NS}/pods/lonely/eviction",
                                {"apiVersion": "policy/v1beta1", "kind": "Eviction",
                                 "metadata": {"name": "lonely"},
                                 "deleteOptions": {"gracePeriodSeconds": 0}})
    assert code == 201, body
    assert await get_or_none(client, PODS, "lonely", NS) is None


async def test_evicted_pod_is_marked_disruption_target(cluster) -> None:
    """A pod on a node is deleted gracefully: until its kubelet confirms, it shows the
    DisruptionTarget condition the eviction set before deleting it."""
    api, client = cluster
    pod = await client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound", "namespace": NS},
        "spec": {"nodeName": "node-x", "terminationGracePeriodSeconds": 30,
                 "containers": [{"name": "c", "image": "nginx"}]}})
    pod["status"] = dict(pod.get("status") or {}, phase="Running",
                         conditions=[{"type": "Ready", "status": "True"}])
    await client.update_status(PODS, pod)
    code, body = await evict(api, "bound")
    assert code == 201, body
    pod = await client.get(PODS, "bound", NS)
    assert pod["metadata"]["deletionTimestamp"]
    target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert [(c["status"], c["reason"], c["message"]) for c in target] == [
        ("True", "EvictionByEvictionAPI", "Eviction API: evicting")]


async def test_any_scale_subresource_gives_the_expected_count(cluster) -> None:
    """A custom resource with a scale subresource controls the pods: the controller finds its
    resource through discovery and reads `/scale` (upstream getScaleController)."""
    api, client = cluster
    code, body = await api.post(CRDS, crd())
    assert code == 201, body
    await established(api)
    code, widget = await api.post(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                            "metadata": {"name": "w"},
                                            "spec": {"replicas": 4}})
    assert code == 201, widget
    owner = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": widget["metadata"]}
    for i in range(4):
        await ready_pod(client, f"w-{i}", owner)
    await budget(client, "quarter", maxUnavailable="25%")
    await status_of(client, "quarter", expectedPods=4, desiredHealthy=3, currentHealthy=4,
                    disruptionsAllowed=1)
    code, _ = await api.patch(f"{WIDGETS}/w/scale", {"spec": {"replicas": 8}})
    assert code == 200
    # the scale is read again on the next sync (a pod event)
    await ready_pod(client, "w-4", owner)
    await status_of(client, "quarter", expectedPods=8, desiredHealthy=6, currentHealthy=5,
                    disruptionsAllowed=0)


async def test_stale_disruption_target_is_withdrawn(cluster) -> None:
    """A pod an eviction marked DisruptionTarget more than two minutes ago that is still not
    terminating gets the condition set False (upstream's stale pod disruption clean-up); a
    fresh mark is left alone."""
    _api, client = cluster
    for name, age in (("stale", 180), ("fresh", 10)):
        pod = await ready_pod(client, name, None, labels={"app": "other"})
        pod["status"]["conditions"].append({
            "type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting",
            "lastTransitionTime": rfc3339(time.time() - age)})
        await client.update_status(PODS, pod)

    def target(pod: Obj) -> str:
        return next(c["status"] for c in pod["status"]["conditions"]
                    if c["type"] == "DisruptionTarget")

    async def withdrawn() -> bool:
        """the stale pod's DisruptionTarget is False"""
        return target(await client.get(PODS, "stale", NS)) == "False"
    await eventually(withdrawn)
    assert target(await client.get(PODS, "fresh", NS)) == "True"
