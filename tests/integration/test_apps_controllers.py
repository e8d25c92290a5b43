"""The daemonset and statefulset controllers (and the garbage collector) against a real API
server. No scheduler or kubelet runs here: nodes are created through the API and the tests
play the kubelet, writing pod status (Running, Ready) through pods/{name}/status — so each
step of a rollout happens only when the test allows it."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from minikube_py.client.resources import (
    CONTROLLER_REVISIONS,
    DAEMONSETS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
    STATEFULSETS,
)
from minikube_py.controllers.daemonset import DaemonSetsController
from minikube_py.controllers.garbagecollector import GarbageCollector
from minikube_py.controllers.statefulset import StatefulSetController
from tests.integration.test_workload_controllers import (
    Cluster,
    eventually,
    running_controllers,
)

Obj = dict[str, Any]
NS = "default"


@pytest.fixture
async def cluster(tmp_path: Path):
    async with running_controllers(tmp_path, DaemonSetsController, StatefulSetController,
                                   GarbageCollector) as c:
        yield c


async def add_node(c: Cluster, name: str, labels: dict[str, str] | None = None,
                   taints: list[Obj] | None = None) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "labels": labels or {}}, "spec": {}}
    if taints:
        body["spec"]["taints"] = taints
    return await c.client.create(NODES, body)


def ds_body(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "v1"}],
                                           "terminationGracePeriodSeconds": 0}},
                     **spec}}


def sts_body(name: str, replicas: int = 2, **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "replicas": replicas,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "v1"}],
                                           "terminationGracePeriodSeconds": 0}},
                     **spec}}


def node_of(pod: Obj) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return terms[0]["matchFields"][0]["values"][0]


async def pods_by_node(c: Cluster, app: str) -> dict[str, list[Obj]]:
    grouped: dict[str, list[Obj]] = {}
    for pod in await c.active_pods(f"app={app}"):
        grouped.setdefault(node_of(pod), []).append(pod)
    return grouped


async def set_image(c: Cluster, resource: Any, name: str, image: str) -> None:
    obj = await c.client.get(resource, name, NS)
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
    await c.client.update(resource, obj)


# ---------------------------------------------------------------------------------------------
# DaemonSets


async def test_daemon_pods_follow_node_selection_taints_and_new_nodes(cluster: Cluster) -> None:
    c = cluster
    await add_node(c, "a", {"disk": "ssd"})
    await add_node(c, "b", {"disk": "hdd"})
    await add_node(c, "c", {"disk": "ssd"}, taints=[{"key": "dedicated", "value": "x",
                                                    "effect": "NoSchedule"}])
    await add_node(c, "d", {"disk": "ssd"}, taints=[{"key": "node.kubernetes.io/unschedulable",
                                                    "effect": "NoSchedule"}])
    body = ds_body("sel")
    body["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    await c.client.create(DAEMONSETS, body, NS)
    # b fails the selector, c's taint is not tolerated; d's cordon is tolerated automatically
    await eventually(lambda: _nodes_are(c, "sel", {"a", "d"}), message="pods on a and d")
    await add_node(c, "e", {"disk": "ssd"})
    await eventually(lambda: _nodes_are(c, "sel", {"a", "d", "e"}), message="a pod on new e")
    # relabelling a node away from the selector removes its pod
    node = await c.client.get(NODES, "a")
    node["metadata"]["labels"]["disk"] = "hdd"
    await c.client.update(NODES, node)
    await eventually(lambda: _nodes_are(c, "sel", {"d", "e"}), message="a's pod deleted")

    async def counted() -> Obj | None:
        ds = await c.client.get(DAEMONSETS, "sel", NS)
        status = ds["status"]
        # a's terminating pod counts as misscheduled until it is gone (as upstream, which
        # skips only pods both deleted and terminal)
        return status if (status.get("desiredNumberScheduled"), status.get(
            "currentNumberScheduled"), status.get("numberMisscheduled")) == (2, 2, 0) else None

    status = await eventually(counted, message="status counts")
    assert status["numberReady"] == 0
    assert status["observedGeneration"] == 1
    for pod in await c.active_pods("app=sel"):
        labels = pod["metadata"]["labels"]
        assert labels["pod-template-generation"] == "1" and labels["controller-revision-hash"]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"


async def _nodes_are(c: Cluster, app: str, nodes: set[str]) -> bool:
    grouped = await pods_by_node(c, app)
    return set(grouped) == nodes and all(len(p) == 1 for p in grouped.values())


async def test_rolling_update_respects_max_unavailable_and_on_delete(cluster: Cluster) -> None:
    c = cluster
    for name in ("n1", "n2", "n3", "n4"):
        await add_node(c, name)
    await c.client.create(DAEMONSETS, ds_body("ru", updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}), NS)
    await eventually(lambda: _nodes_are(c, "ru", {"n1", "n2", "n3", "n4"}))
    await c.ready_all("app=ru")
    await set_image(c, DAEMONSETS, "ru", "v2")

    async def old_pods_left() -> int:
        return sum(1 for p in await c.active_pods("app=ru")
                   if p["spec"]["containers"][0]["image"] == "v1")

    await eventually(lambda: _eq(old_pods_left(), 2), message="two old pods replaced at once")
    await asyncio.sleep(0.3)  # nothing more happens while the new pods are not ready
    assert await old_pods_left() == 2
    await c.ready_all("app=ru")
    await eventually(lambda: _eq(old_pods_left(), 0), message="the rest once ready")

    async def done() -> bool:
        await c.ready_all("app=ru")  # the kubelet's part, for pods created meanwhile too
        status = (await c.client.get(DAEMONSETS, "ru", NS))["status"]
        return status.get("updatedNumberScheduled") == 4 and status.get("numberAvailable") == 4

    await eventually(done, message="all updated and available")
    revisions = (await c.client.list(CONTROLLER_REVISIONS, NS))["items"]
    assert sorted(r["revision"] for r in revisions) == [1, 2]

    # OnDelete: a template change replaces nothing until a pod is deleted by hand
    ds = await c.client.get(DAEMONSETS, "ru", NS)
    ds["spec"]["updateStrategy"] = {"type": "OnDelete"}
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "v3"
    await c.client.update(DAEMONSETS, ds)
    await asyncio.sleep(0.3)
    assert {p["spec"]["containers"][0]["image"] for p in await c.active_pods("app=ru")} == {"v2"}
    victim = (await c.active_pods("app=ru"))[0]
    await c.client.delete(PODS, victim["metadata"]["name"], NS)

    async def replaced() -> bool:
        images = sorted(p["spec"]["containers"][0]["image"] for p in await c.active_pods("app=ru"))
        return images == ["v2", "v2", "v2", "v3"]

    await eventually(replaced, message="only the deleted pod comes back new")


async def test_surge_starts_the_new_pod_before_the_old_one_goes(cluster: Cluster) -> None:
    c = cluster
    await add_node(c, "s1")
    await c.client.create(DAEMONSETS, ds_body("surge", updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}), NS)
    await eventually(lambda: _nodes_are(c, "surge", {"s1"}))
    await c.ready_all("app=surge")
    await set_image(c, DAEMONSETS, "surge", "v2")

    async def two_pods() -> list[Obj] | None:
        pods = await c.active_pods("app=surge")
        return pods if len(pods) == 2 else None

    pods = await eventually(two_pods, message="a surge pod next to the old one")
    assert sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["v1", "v2"]
    await c.ready_all("app=surge")

    async def only_new() -> bool:
        pods = await c.active_pods("app=surge")
        return [p["spec"]["containers"][0]["image"] for p in pods] == ["v2"]

    await eventually(only_new, message="the old pod deleted once the new one is available")


async def test_deleting_a_daemon_set_collects_its_pods_and_revisions(cluster: Cluster) -> None:
    c = cluster
    await add_node(c, "g1")
    await c.client.create(DAEMONSETS, ds_body("gc"), NS)
    await eventually(lambda: _nodes_are(c, "gc", {"g1"}))
    await c.client.delete(DAEMONSETS, "gc", NS)

    async def gone() -> bool:
        revisions = (await c.client.list(CONTROLLER_REVISIONS, NS))["items"]
        return not await c.pods("app=gc") and not revisions

    await eventually(gone, timeout=10, message="pods and revisions collected")


async def _eq(value: Any, expected: Any) -> bool:
    return (await value) == expected


# ---------------------------------------------------------------------------------------------
# StatefulSets


async def _names(c: Cluster, app: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in await c.active_pods(f"app={app}"))


async def test_ordered_ready_creates_one_at_a_time_and_scales_down_in_reverse(
        cluster: Cluster) -> None:
    c = cluster
    await c.client.create(STATEFULSETS, sts_body("web", 3), NS)
    await eventually(lambda: _eq(_names(c, "web"), ["web-0"]))
    await asyncio.sleep(0.2)
    assert await _names(c, "web") == ["web-0"]  # web-1 waits for web-0 to be Ready
    await c.ready_all("app=web")
    await eventually(lambda: _eq(_names(c, "web"), ["web-0", "web-1"]))
    await c.ready_all("app=web")
    await eventually(lambda: _eq(_names(c, "web"), ["web-0", "web-1", "web-2"]))
    await c.ready_all("app=web")
    pod = next(p for p in await c.active_pods("app=web") if p["metadata"]["name"] == "web-1")
    assert pod["spec"]["hostname"] == "web-1" and pod["spec"]["subdomain"] == "web"
    assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    sts = await c.client.get(STATEFULSETS, "web", NS)
    sts["spec"]["replicas"] = 1
    await c.client.update(STATEFULSETS, sts)
    await eventually(lambda: _eq(_names(c, "web"), ["web-0"]), message="scaled down to web-0")

    async def status() -> Obj | None:
        s = (await c.client.get(STATEFULSETS, "web", NS))["status"]
        return s if s.get("replicas") == 1 and s.get("readyReplicas") == 1 else None

    assert (await eventually(status))["currentRevision"].startswith("web-")


async def test_parallel_creates_all_and_partition_limits_the_update(cluster: Cluster) -> None:
    c = cluster
    await c.client.create(STATEFULSETS, sts_body(
        "par", 3, podManagementPolicy="Parallel",
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}), NS)
    await eventually(lambda: _eq(_names(c, "par"), ["par-0", "par-1", "par-2"]),
                     message="all three at once")
    await c.ready_all("app=par")
    await set_image(c, STATEFULSETS, "par", "v2")

    async def images() -> dict[str, str]:
        await c.ready_all("app=par")
        return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
                for p in await c.active_pods("app=par")}

    await eventually(lambda: _eq(images(), {"par-0": "v1", "par-1": "v2", "par-2": "v2"}),
                     message="ordinals >= partition updated, highest first")
    await asyncio.sleep(0.2)
    assert (await images())["par-0"] == "v1"
    sts = await c.client.get(STATEFULSETS, "par", NS)
    assert sts["status"]["updatedReplicas"] == 2 and sts["status"]["currentReplicas"] == 1


async def test_claims_are_created_per_ordinal_and_owned_per_retention_policy(
        cluster: Cluster) -> None:
    c = cluster
    body = sts_body("db", 1, persistentVolumeClaimRetentionPolicy={
        "whenDeleted": "Delete", "whenScaled": "Retain"})
    body["spec"]["volumeClaimTemplates"] = [{
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    created = await c.client.create(STATEFULSETS, body, NS)

    async def claim() -> Obj | None:
        return await c.client.get_or_none(PERSISTENT_VOLUME_CLAIMS, "data-db-0", NS)

    pvc = await eventually(claim, message="claim data-db-0")
    assert pvc["metadata"]["labels"] == {"app": "db"}
    assert [(r["kind"], r["uid"]) for r in pvc["metadata"]["ownerReferences"]] == [
        ("StatefulSet", created["metadata"]["uid"])]
    # the pod is created right after its claims (CreateStatefulPod): wait for it as well
    pod = (await eventually(lambda: c.active_pods("app=db"), message="pod db-0"))[0]
    assert pod["spec"]["volumes"] == [{"name": "data",
                                       "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    await c.client.delete(STATEFULSETS, "db", NS)
    await eventually(lambda: _eq(claim(), None), timeout=10,
                     message="the claim collected with its StatefulSet (WhenDeleted=Delete)")


async def test_on_delete_and_rollback_to_an_earlier_revision(cluster: Cluster) -> None:
    c = cluster
    await c.client.create(STATEFULSETS, sts_body("od", 1, updateStrategy={"type": "OnDelete"}),
                          NS)
    await eventually(lambda: _eq(_names(c, "od"), ["od-0"]))
    await c.ready_all("app=od")
    first = copy.deepcopy(await c.client.get(STATEFULSETS, "od", NS))
    await set_image(c, STATEFULSETS, "od", "v2")
    await asyncio.sleep(0.3)
    pod = (await c.active_pods("app=od"))[0]
    assert pod["spec"]["containers"][0]["image"] == "v1"  # OnDelete: untouched
    await c.client.delete(PODS, "od-0", NS)

    async def image() -> str | None:
        pods = await c.active_pods("app=od")
        return pods[0]["spec"]["containers"][0]["image"] if pods else None

    await eventually(lambda: _eq(image(), "v2"), message="recreated at the update revision")
    # back to the first template: the old revision is reused and renumbered, not duplicated
    sts = await c.client.get(STATEFULSETS, "od", NS)
    sts["spec"]["template"] = first["spec"]["template"]
    await c.client.update(STATEFULSETS, sts)

    async def revisions() -> list[int]:
        items = (await c.client.list(CONTROLLER_REVISIONS, NS))["items"]
        return sorted(r["revision"] for r in items if r["metadata"]["name"].startswith("od-"))

    await eventually(lambda: _eq(revisions(), [2, 3]), message="revision 1 renumbered to 3")


async def test_a_failed_daemon_pod_is_replaced_with_an_event(cluster: Cluster) -> None:
    c = cluster
    await add_node(c, "f1")
    await c.client.create(DAEMONSETS, ds_body("fail"), NS)
    await eventually(lambda: _nodes_are(c, "fail", {"f1"}))
    victim = (await c.active_pods("app=fail"))[0]
    victim["status"]["phase"] = "Failed"
    await c.client.update_status(PODS, victim)

    async def replaced() -> bool:
        names = [p["metadata"]["name"] for p in await c.pods("app=fail")]
        return names != [victim["metadata"]["name"]] and len(names) == 1

    await eventually(replaced, message="the failed pod deleted and a new one created")
    events = await eventually(lambda: c.events("FailedDaemonPod"), message="the event")
    assert events[0]["message"] == (f"Found failed daemon pod {NS}/{victim['metadata']['name']} "
                                    "on node f1, will try to kill it")


async def test_an_adopted_pod_gets_its_identity_labels_and_claims(cluster: Cluster) -> None:
    c = cluster
    orphan = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "lab-0", "labels": {"app": "lab"}},
              "spec": {"containers": [{"name": "c", "image": "v1"}],
                       "terminationGracePeriodSeconds": 0}}
    await c.client.create(PODS, orphan, NS)
    body = sts_body("lab", 1, updateStrategy={"type": "OnDelete"})
    body["spec"]["volumeClaimTemplates"] = [{
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    await c.client.create(STATEFULSETS, body, NS)

    async def adopted() -> Obj | None:
        pod = await c.client.get(PODS, "lab-0", NS)
        refs = pod["metadata"].get("ownerReferences") or []
        return pod if refs and refs[0]["kind"] == "StatefulSet" else None

    pod = await eventually(adopted, message="the orphan adopted")
    await c.set_ready(pod)

    async def labelled() -> bool:
        labels = (await c.client.get(PODS, "lab-0", NS))["metadata"]["labels"]
        return (labels.get("statefulset.kubernetes.io/pod-name"),
                labels.get("apps.kubernetes.io/pod-index")) == ("lab-0", "0")

    await eventually(labelled, message="identity labels on the adopted pod")
    assert await c.client.get_or_none(PERSISTENT_VOLUME_CLAIMS, "data-lab-0", NS) is not None
    assert (await c.client.get(PODS, "lab-0", NS))["metadata"]["uid"] == pod["metadata"]["uid"]
