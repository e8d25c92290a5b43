"""Custom resources through the clients' own CRD machinery (issue 16), against
`minikube-py start` through the kubeconfig it wrote (HTTPS + token):

- lightkube: `create_namespaced_resource`/`create_global_resource` classes — create, get,
  list, merge patch, server-side apply (`client.apply`), watch, the Status subresource,
  delete — and `(async_)load_in_cluster_generic_resources`, which lists CRDs through
  apiextensions and makes a class per version;
- the official `kubernetes` client: ApiextensionsV1Api (create, read, list, patch, read
  status, delete a CRD), CustomObjectsApi on cluster-scoped objects, `*_status` reads and
  patches, label selectors, `kubernetes.watch.Watch` on custom objects, and
  `kubernetes.utils.create_from_yaml` with a CRD and its object in one file;
- kubernetes_asyncio's CustomObjectsApi and kr8s (`new_class`, an `APIObject` subclass):
  create, get, list, watch, delete.

Each test makes its own CRD (a group per test), so tests never see each other's kinds.
Also the parts other helpers built, through these clients: the scale subresource of a custom
resource (lightkube), additionalPrinterColumns and `kubectl explain` (kubectl 1.31), and
`kubectl get crd`'s NAME / CREATED AT columns (upstream's default table convertor).
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    cluster,
    deadline,
    kubeconfig,
    kubeconfig_env,
    namespace,
    send,
)
from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, condition


def crd_manifest(group: str, kind: str, *, scope: str = "Namespaced") -> dict[str, Any]:
    """A CRD with a schema, the status subresource and a short name (kopf's walkthrough
    style: spec and status keep unknown fields, except `spec.size`, which is typed)."""
    plural = kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope,
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                           "shortNames": [kind.lower()[:3]]},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True,
                                            "properties": {"size": {"type": "integer"}}},
                                   "status": {"type": "object",
                                              "x-kubernetes-preserve-unknown-fields": True}}}}}]},
    }


def established(cluster: ClusterProcesses, name: str) -> bool:
    return condition(cluster.get(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"), "Established") == "True"


def make_crd(cluster: ClusterProcesses, kind: str, *, scope: str = "Namespaced") -> str:
    """Create (fixture-side, on the insecure port) a CRD in a fresh group; its group."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = crd_manifest(group, kind, scope=scope)
    send(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    cluster.wait(lambda: established(cluster, crd["metadata"]["name"]), CALL_TIMEOUT,
                 f"{crd['metadata']['name']} Established")
    return group


# -- lightkube -----------------------------------------------------------------------------

lightkube = pytest.importorskip(
    "lightkube", reason="lightkube is not installed: pip install -e '.[test]'")
from lightkube import AsyncClient, Client, KubeConfig
from lightkube.generic_resource import (
    async_load_in_cluster_generic_resources,
    create_global_resource,
    create_namespaced_resource,
    get_generic_resource,
    load_in_cluster_generic_resources,
)
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.types import PatchType


@pytest.fixture
def lk(kubeconfig: Path, namespace: str):
    with Client(KubeConfig.from_file(kubeconfig), namespace=namespace,
                field_manager="my-manager") as client:
        yield client


def test_lightkube_namespaced_generic_resource(cluster: ClusterProcesses, lk: Client,
                                               namespace: str):
    group = make_crd(cluster, "Claim")
    Claim = create_namespaced_resource(group, "v1", "Claim", "claims")
    created = lk.create(Claim(metadata=ObjectMeta(name="one", labels={"app": "x"}),
                              spec={"size": 1}))
    assert created.metadata.uid and created.spec == {"size": 1}
    assert created.apiVersion == f"{group}/v1" and created.kind == "Claim"
    lk.create(Claim(metadata=ObjectMeta(name="two"), spec={"size": 2}))
    assert lk.get(Claim, "one").spec["size"] == 1
    assert [c.metadata.name for c in lk.list(Claim)] == ["one", "two"]
    assert [c.metadata.name for c in lk.list(Claim, labels={"app": "x"})] == ["one"]

    patched = lk.patch(Claim, "one", {"spec": {"size": 3}}, patch_type=PatchType.MERGE)
    assert patched.spec == {"size": 3}
    applied = lk.apply(Claim(metadata=ObjectMeta(name="three"), spec={"size": 4, "x": "y"}))
    assert applied.spec == {"size": 4, "x": "y"}
    assert any(m.manager == "my-manager" and m.operation == "Apply"
               for m in applied.metadata.managedFields)
    reapplied = lk.apply(Claim(metadata=ObjectMeta(name="three"), spec={"size": 5}))
    assert reapplied.spec == {"size": 5}  # the key it no longer applies is gone

    status = lk.patch(Claim.Status, "one", {"status": {"phase": "Bound"}, "spec": {"size": 9}},
                      patch_type=PatchType.MERGE)
    assert status.status == {"phase": "Bound"} and status.spec == {"size": 3}
    current = lk.get(Claim, "one")
    current["status"] = {"phase": "Lost"}  # a Generic is a dict under its attributes
    current["spec"] = {"size": 8}
    replaced = lk.replace(current)  # a PUT on the main resource keeps the old status
    assert replaced.status == {"phase": "Bound"} and replaced.spec == {"size": 8}
    on_status = lk.replace(Claim.Status(
        metadata=ObjectMeta(name="one", resourceVersion=replaced.metadata.resourceVersion),
        spec={"size": 1}, status={"phase": "Lost"}), "one")
    assert on_status.status == {"phase": "Lost"} and on_status.spec == {"size": 8}

    events: list[tuple[str, str]] = []
    rv = on_status.metadata.resourceVersion  # the newest write: the watch starts after it
    watcher = threading.Thread(target=lambda: events.extend(
        (t, o.metadata.name) for t, o in _take(lk.watch(Claim, resource_version=rv), 2)))
    watcher.start()
    lk.patch(Claim, "two", {"spec": {"size": 7}}, patch_type=PatchType.MERGE)
    lk.delete(Claim, "two")
    watcher.join(CALL_TIMEOUT)
    assert events == [("MODIFIED", "two"), ("DELETED", "two")]
    lk.delete(Claim, "one")
    assert sorted(c.metadata.name for c in lk.list(Claim)) == ["three"]


def _take(iterator, n: int) -> list:
    out = []
    for item in iterator:
        out.append(item)
        if len(out) == n:
            break
    return out


def test_lightkube_global_resource_and_loading_crds(cluster: ClusterProcesses, lk: Client):
    group = make_crd(cluster, "Realm", scope="Cluster")
    Realm = create_global_resource(group, "v1", "Realm", "realms")
    lk.create(Realm(metadata=ObjectMeta(name="north"), spec={"size": 1}))
    got = lk.get(Realm, "north")
    assert got.metadata.namespace is None and got.spec == {"size": 1}

    load_in_cluster_generic_resources(lk)  # lists CRDs through apiextensions.k8s.io/v1
    loaded = get_generic_resource(f"{group}/v1", "Realm")
    assert loaded is not None
    assert [r.metadata.name for r in lk.list(loaded)] == ["north"]
    lk.delete(Realm, "north")
    assert list(lk.list(Realm)) == []


async def test_lightkube_async_load_in_cluster_generic_resources(
        cluster: ClusterProcesses, kubeconfig: Path, namespace: str):
    group = make_crd(cluster, "Ticket")
    async with AsyncClient(KubeConfig.from_file(kubeconfig), namespace=namespace) as client:
        await async_load_in_cluster_generic_resources(client)
        Ticket = get_generic_resource(f"{group}/v1", "Ticket")
        assert Ticket is not None
        await client.create(Ticket(metadata=ObjectMeta(name="t1"), spec={"size": 1}))
        assert [t.metadata.name async for t in client.list(Ticket)] == ["t1"]
        await client.delete(Ticket, "t1")


# -- the official kubernetes client ----------------------------------------------------------

kubernetes = pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import config as k8s_config
from kubernetes import utils as k8s_utils
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ResourceNotFoundError


@pytest.fixture
def api(kubeconfig: Path):
    with k8s_config.new_client_from_config(str(kubeconfig)) as client:
        yield client


def test_official_client_crd_lifecycle(api, cluster: ClusterProcesses):
    ext = kubernetes.client.ApiextensionsV1Api(api)
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    name = f"widgets.{group}"
    created = ext.create_custom_resource_definition(crd_manifest(group, "Widget"))
    assert created.metadata.name == name and created.spec.names.short_names == ["wid"]
    crd = cluster.wait(lambda: _established(ext.read_custom_resource_definition_status(name)),
                       CALL_TIMEOUT, "Established through read_..._status")
    assert crd.status.accepted_names.plural == "widgets"
    assert {c.type for c in crd.status.conditions} >= {"NamesAccepted", "Established"}
    assert name in {c.metadata.name for c in ext.list_custom_resource_definition().items}
    patched = ext.patch_custom_resource_definition(
        name, {"metadata": {"labels": {"owner": "me"}}})
    assert patched.metadata.labels == {"owner": "me"}
    listed = ext.list_custom_resource_definition(label_selector="owner=me").items
    assert [c.metadata.name for c in listed] == [name]
    ext.delete_custom_resource_definition(name)
    cluster.wait(lambda: name not in {c.metadata.name
                                      for c in ext.list_custom_resource_definition().items},
                 CALL_TIMEOUT, "the CRD gone")


def _established(crd: Any) -> Any:
    return crd if any(c.type == "Established" and c.status == "True"
                      for c in crd.status.conditions or ()) else None


def test_official_client_cluster_scoped_objects_status_and_selectors(api, cluster: ClusterProcesses):
    group = make_crd(cluster, "Zone", scope="Cluster")
    objects = kubernetes.client.CustomObjectsApi(api)
    args = (group, "v1", "zones")
    for i, tier in enumerate(("gold", "silver", "gold")):
        objects.create_cluster_custom_object(*args, {
            "apiVersion": f"{group}/v1", "kind": "Zone",
            "metadata": {"name": f"z{i}", "labels": {"tier": tier}}, "spec": {"size": i}})
    assert objects.get_cluster_custom_object(*args, "z1")["spec"] == {"size": 1}
    gold = objects.list_cluster_custom_object(*args, label_selector="tier=gold")["items"]
    assert [z["metadata"]["name"] for z in gold] == ["z0", "z2"]
    assert objects.list_cluster_custom_object(*args, label_selector="tier!=gold")["items"][0][
        "metadata"]["name"] == "z1"
    status = objects.patch_cluster_custom_object_status(*args, "z1", {"status": {"up": True}})
    assert status["status"] == {"up": True}
    assert objects.get_cluster_custom_object_status(*args, "z1")["status"] == {"up": True}
    objects.delete_cluster_custom_object(*args, "z1")
    with pytest.raises(ApiException) as err:
        objects.get_cluster_custom_object(*args, "z1")
    assert err.value.status == 404


def test_official_client_namespaced_status_and_watch(api, cluster: ClusterProcesses,
                                                     namespace: str):
    group = make_crd(cluster, "Job")
    objects = kubernetes.client.CustomObjectsApi(api)
    args = (group, "v1", namespace, "jobs")
    objects.create_namespaced_custom_object(*args, {
        "apiVersion": f"{group}/v1", "kind": "Job", "metadata": {"name": "j1"},
        "spec": {"size": 1}})
    got = objects.get_namespaced_custom_object_status(*args, "j1")
    assert got["metadata"]["name"] == "j1" and "status" not in got
    patched = objects.patch_namespaced_custom_object_status(
        *args, "j1", {"status": {"done": 1}, "spec": {"size": 5}})
    assert patched["status"] == {"done": 1} and patched["spec"] == {"size": 1}
    with pytest.raises(ApiException) as err:  # the schema types spec.size
        objects.patch_namespaced_custom_object(*args, "j1", {"spec": {"size": "big"}})
    assert err.value.status == 422

    rv = objects.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []
    w = k8s_watch.Watch()
    done = threading.Event()

    def watch() -> None:
        for event in w.stream(objects.list_namespaced_custom_object, *args,
                              resource_version=rv, timeout_seconds=CALL_TIMEOUT):
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if event["type"] == "DELETED":
                w.stop()
        done.set()

    thread = threading.Thread(target=watch)
    thread.start()
    objects.create_namespaced_custom_object(*args, {
        "apiVersion": f"{group}/v1", "kind": "Job", "metadata": {"name": "j2"}})
    objects.patch_namespaced_custom_object(*args, "j2", {"spec": {"size": 2}})
    objects.delete_namespaced_custom_object(*args, "j2")
    assert done.wait(CALL_TIMEOUT)
    thread.join(CALL_TIMEOUT)
    assert seen == [("ADDED", "j2"), ("MODIFIED", "j2"), ("DELETED", "j2")]


def test_official_client_create_from_yaml_crd_and_object(api, cluster: ClusterProcesses,
                                                         namespace: str, tmp_path: Path):
    """`create_from_yaml(..., apply=True)` goes through the DynamicClient (server-side apply;
    the typed path has no class for a custom kind). The object right after its CRD can find
    the resource not served yet, as on any cluster: the user waits for Established."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = crd_manifest(group, "Crew")
    obj = {"apiVersion": f"{group}/v1", "kind": "Crew",
           "metadata": {"name": "c1", "namespace": namespace}, "spec": {"size": 3}}
    path = tmp_path / "crew.yaml"
    path.write_text(yaml.safe_dump_all([crd, obj]))
    try:
        k8s_utils.create_from_yaml(api, str(path), apply=True, namespace=namespace)
    except (k8s_utils.FailToCreateError, ResourceNotFoundError):
        # the object came before its CRD was served (not seen here: the CRD controller serves
        # it before discovery is asked again, but clusters differ): wait, then apply again
        cluster.wait(lambda: established(cluster, crd["metadata"]["name"]), CALL_TIMEOUT,
                     "Established")
        k8s_utils.create_from_yaml(api, str(path), apply=True, namespace=namespace)
    got = kubernetes.client.CustomObjectsApi(api).get_namespaced_custom_object(
        group, "v1", namespace, "crews", "c1")
    assert got["spec"] == {"size": 3}


# -- kubernetes_asyncio and kr8s ---------------------------------------------------------------

async def test_kubernetes_asyncio_custom_objects(cluster: ClusterProcesses, kubeconfig: Path,
                                                 namespace: str):
    kasync = pytest.importorskip(
        "kubernetes_asyncio", reason="kubernetes_asyncio is not installed: pip install -e '.[test]'")
    from kubernetes_asyncio import config as async_config
    from kubernetes_asyncio import watch as async_watch

    group = make_crd(cluster, "Task")
    async with await async_config.new_client_from_config(str(kubeconfig)) as client:
        objects = kasync.client.CustomObjectsApi(client)
        args = (group, "v1", namespace, "tasks")
        rv = (await objects.list_namespaced_custom_object(*args))["metadata"]["resourceVersion"]
        w = async_watch.Watch()
        seen: list[tuple[str, str]] = []

        async def watch() -> None:
            async for event in w.stream(objects.list_namespaced_custom_object, *args,
                                        resource_version=rv, timeout_seconds=CALL_TIMEOUT):
                seen.append((event["type"], event["object"]["metadata"]["name"]))
                if event["type"] == "DELETED":
                    w.stop()

        watching = asyncio.create_task(watch())
        await objects.create_namespaced_custom_object(*args, {
            "apiVersion": f"{group}/v1", "kind": "Task", "metadata": {"name": "a"},
            "spec": {"size": 1}})
        got = await objects.get_namespaced_custom_object(*args, "a")
        assert got["spec"] == {"size": 1}
        listed = await objects.list_namespaced_custom_object(*args)
        assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
        await objects.delete_namespaced_custom_object(*args, "a")
        await asyncio.wait_for(watching, CALL_TIMEOUT)
        assert seen == [("ADDED", "a"), ("DELETED", "a")]


@pytest.mark.usefixtures("kubeconfig_env")
def test_kr8s_new_class_and_subclass(cluster: ClusterProcesses, namespace: str):
    pytest.importorskip("kr8s", reason="kr8s is not installed: pip install -e '.[test]'")
    import kr8s
    from kr8s.objects import APIObject, new_class

    group = make_crd(cluster, "Robot")
    Robot = new_class(kind="Robot", version=f"{group}/v1", namespaced=True, asyncio=False)
    robot = Robot({"metadata": {"name": "r1", "labels": {"app": "bot"}}, "spec": {"size": 1}},
                  namespace=namespace)
    robot.create()
    assert robot.metadata.uid
    got = Robot.get("r1", namespace=namespace)
    assert got.spec["size"] == 1
    robot.patch({"spec": {"size": 2}})
    assert Robot.get("r1", namespace=namespace).spec["size"] == 2

    class Droid(APIObject):  # kr8s's documented way: a subclass per custom kind
        version = f"{group}/v1"
        endpoint = "robots"
        kind = "Robot"
        plural = "robots"
        singular = "robot"
        namespaced = True

    listed = kr8s.get("robots." + group, namespace=namespace)
    assert [r.name for r in listed] == ["r1"]
    assert [r.name for r in kr8s.get(f"robots.{group}", namespace=namespace,
                                      label_selector={"app": "bot"})] == ["r1"]
    events: list[tuple[str, str]] = []

    def watch() -> None:
        for kind, obj in kr8s.watch(f"robots.{group}", namespace=namespace):
            events.append((kind, obj.name))
            if kind == "DELETED":
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    cluster.wait(lambda: events, CALL_TIMEOUT, "the watch's initial ADDED")
    assert Droid.get("r1", namespace=namespace).spec["size"] == 2
    got.delete()
    thread.join(CALL_TIMEOUT)
    assert events[0] == ("ADDED", "r1") and events[-1] == ("DELETED", "r1")


@pytest.mark.usefixtures("kubeconfig_env")
async def test_kr8s_asyncio_new_class(cluster: ClusterProcesses, namespace: str):
    pytest.importorskip("kr8s", reason="kr8s is not installed: pip install -e '.[test]'")
    import kr8s.asyncio
    from kr8s.asyncio.objects import new_class

    group = make_crd(cluster, "Rover")
    Rover = new_class(kind="Rover", version=f"{group}/v1", namespaced=True)
    rover = await Rover({"metadata": {"name": "r1"}, "spec": {"size": 1}}, namespace=namespace)
    await rover.create()
    got = await Rover.get("r1", namespace=namespace)
    assert got.spec["size"] == 1 and got.metadata.uid == rover.metadata.uid
    listed = [r.name async for r in kr8s.asyncio.get(f"rovers.{group}", namespace=namespace)]
    assert listed == ["r1"]
    await got.delete()
    assert not await got.exists()


# -- scale, printer columns, explain (other helpers' parts of issue 16) ------------------------

def kubectl_out(kubeconfig: Path, *args: str) -> str:
    done = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], check=False,
                          text=True, capture_output=True, timeout=CALL_TIMEOUT,
                          env={**os.environ, "HOME": str(kubeconfig.parent)})
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}{done.stdout}"
    return done.stdout


def test_lightkube_scale_subresource_of_a_custom_resource(cluster: ClusterProcesses,
                                                          lk: Client):
    from lightkube.models.autoscaling_v1 import ScaleSpec

    crd = crd_manifest(f"t{uuid.uuid4().hex[:8]}.example.com", "Pool")
    group = crd["spec"]["group"]
    version = crd["spec"]["versions"][0]
    version["subresources"]["scale"] = {"specReplicasPath": ".spec.replicas",
                                        "statusReplicasPath": ".status.replicas"}
    send(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    cluster.wait(lambda: established(cluster, crd["metadata"]["name"]), CALL_TIMEOUT,
                 "Established")
    Pool = create_namespaced_resource(group, "v1", "Pool", "pools")
    lk.create(Pool(metadata=ObjectMeta(name="p"), spec={"replicas": 1}))
    scale = lk.get(Pool.Scale, "p")
    assert scale.spec.replicas == 1
    scale.spec = ScaleSpec(replicas=3)
    lk.replace(scale, "p")
    assert lk.get(Pool, "p").spec["replicas"] == 3


def test_kubectl_prints_custom_columns(cluster: ClusterProcesses, kubeconfig: Path):
    crd = crd_manifest(f"t{uuid.uuid4().hex[:8]}.example.com", "Disk", scope="Cluster")
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]
    send(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    cluster.wait(lambda: established(cluster, crd["metadata"]["name"]), CALL_TIMEOUT,
                 "Established")
    send(cluster, "POST", f"/apis/{crd['spec']['group']}/v1/disks",
         {"apiVersion": f"{crd['spec']['group']}/v1", "kind": "Disk",
          "metadata": {"name": "d"}, "spec": {"size": 7}})
    out = kubectl_out(kubeconfig, "get", f"disks.{crd['spec']['group']}").split()
    assert out[:2] == ["NAME", "SIZE"] and out[2:4] == ["d", "7"]


def test_kubectl_get_crd_prints_created_at(cluster: ClusterProcesses, kubeconfig: Path):
    group = make_crd(cluster, "Tape")
    assert kubectl_out(kubeconfig, "get", "crd", f"tapes.{group}").split()[:3] == [
        "NAME", "CREATED", "AT"]


def test_kubectl_explains_a_custom_resource(cluster: ClusterProcesses, kubeconfig: Path):
    group = make_crd(cluster, "Gadget")
    out = kubectl_out(kubeconfig, "explain", f"gadgets.{group}.spec")
    assert "size" in out and "<integer>" in out
