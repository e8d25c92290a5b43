"""Resource metrics and the HPA in-process, over real sockets: a secured kubelet pool (its
/metrics/resource and /stats/summary behind the kubelet's authn/authz), the API server's
built-in metrics-server scraping it with the kubelet-client certificate, and the HPA
controller scaling a custom resource through its scale subresource."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from minikube_py.api.quantity import parse_quantity
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import (
    EVENTS,
    HORIZONTALPODAUTOSCALERS,
    PODS,
    Resource,
)
from minikube_py.controllers.base import ControllerContext
from minikube_py.controllers.hpa import HorizontalController
from minikube_py.controllers.options import ControllerOptions
from minikube_py.kubelet.usage import CPU_ANNOTATION, MEMORY_ANNOTATION
from tests import polling
from tests.apiserver.test_crd_serving import crd
from tests.apiserver.test_crds import CRDS, established
from tests.apiserver.test_rbac import TOKENS, binding
from tests.apiserver.test_rbac import eventually as rbac_eventually
from tests.apiserver.test_secure import serve
from tests.integration.test_kubelet_auth import (  # noqa: F401 (fixtures)
    ADMIN,
    ALICE,
    Certs,
    Cluster,
    certs,
    cluster_factory,
    kubelet_client_options,
    secured,
)

METRICS = "/apis/metrics.k8s.io/v1beta1"
REPO = Path(__file__).resolve().parents[2]
WIDGETS = Resource("example.com", "v1", "widgets", True, "Widget")


@pytest.fixture
async def cluster(cluster_factory, certs: Certs) -> AsyncIterator[Cluster]:  # noqa: F811
    yield await cluster_factory(secured(certs), enable_metrics_server=True,
                                metric_resolution=0.0, **kubelet_client_options(certs))


async def busy_pod(cluster: Cluster, name: str, cpu: str = "300m", *,
                   labels: dict | None = None, request: str = "100m") -> None:
    await cluster.client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": name},
                     "annotations": {CPU_ANNOTATION: cpu, MEMORY_ANNOTATION: "50Mi"}},
        "spec": {"nodeName": "n-0", "containers": [
            {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": request}}}]}})
    for _ in range(500):
        pod = await cluster.client.get(PODS, name, "default")
        if any((c.get("state") or {}).get("running")
               for c in (pod.get("status") or {}).get("containerStatuses") or []):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"pod {name} never ran")


#: metrics are scraped at --metric-resolution: a longer, slower poll than elsewhere
eventually = functools.partial(polling.eventually, timeout=10.0, interval=0.05)


async def test_the_kubelet_resource_endpoints_need_nodes_metrics_and_stats(
        cluster: Cluster) -> None:
    await busy_pod(cluster, "web")
    status, text = await cluster.call("GET", "/metrics/resource", token=ALICE)
    assert status == 403 and "subresource=metrics" in text, text
    status, text = await cluster.call("GET", "/stats/summary", token=ALICE)
    assert status == 403 and "subresource=stats" in text, text
    status, text = await cluster.call("GET", "/metrics/resource", token=ADMIN)
    assert status == 200, text
    assert 'container_cpu_usage_seconds_total{container="main",namespace="default",pod="web"}' \
        in text
    status, text = await cluster.call("GET", "/stats/summary?node=n-0", token=ADMIN)
    assert status == 200 and '"usageNanoCores":300000000' in text.replace(" ", ""), text
    status, text = await cluster.call("GET", "/stats/summary?node=nope", token=ADMIN)
    assert status == 404


async def test_the_metrics_api_serves_pods_and_nodes_from_the_kubelet(cluster: Cluster) -> None:
    await busy_pod(cluster, "web", "300m", labels={"app": "web"})
    await busy_pod(cluster, "db", "50m", labels={"app": "db"})
    api = cluster.api

    async def pods() -> Any:
        status, body = await api.get(f"{METRICS}/namespaces/default/pods")
        assert status == 200, body
        return body if len(body["items"]) == 2 else None

    body = await eventually(pods)
    assert body["kind"] == "PodMetricsList"
    by_name = {item["metadata"]["name"]: item for item in body["items"]}
    (container,) = by_name["web"]["containers"]
    assert container["name"] == "main" and container["usage"]["memory"] == "51200Ki"
    # nanocores, a rate of two float counters (printed to the nanosecond) over a short
    # window: 300m give or take a microcore
    assert abs(parse_quantity(container["usage"]["cpu"]) - Fraction(3, 10)) <= Fraction(1, 10**6)
    assert by_name["web"]["metadata"]["labels"] == {"app": "web"}
    status, body = await api.get(f"{METRICS}/namespaces/default/pods?labelSelector=app%3Ddb")
    assert [i["metadata"]["name"] for i in body["items"]] == ["db"]
    status, body = await api.get(f"{METRICS}/namespaces/default/pods/db")
    assert status == 200 and body["kind"] == "PodMetrics"
    status, body = await api.get(f"{METRICS}/namespaces/default/pods/nope")
    assert status == 404 and body["message"] == 'pods.metrics.k8s.io "nope" not found'
    status, body = await api.get(f"{METRICS}/pods")  # every namespace
    assert len(body["items"]) == 2

    async def node() -> Any:
        status, body = await api.get(f"{METRICS}/nodes/n-0")
        return body if status == 200 else None

    node_metrics = await eventually(node)
    assert node_metrics["kind"] == "NodeMetrics"
    # the two pods (300m + 50m) and the node's own 50m
    assert abs(parse_quantity(node_metrics["usage"]["cpu"]) - Fraction(4, 10)) \
        <= Fraction(1, 10**6)
    status, body = await api.post(f"{METRICS}/namespaces/default/pods", {})
    assert status == 405
    # metrics-server has no protobuf: JSON when the client also takes it, else 406
    proto = "application/vnd.kubernetes.protobuf"
    status, body = await api.call("GET", f"{METRICS}/nodes",
                                  headers={"Accept": f"{proto}, application/json"})
    assert status == 200 and body["kind"] == "NodeMetricsList"
    async with api.session.get(api.url + f"{METRICS}/nodes", headers={"Accept": proto}) as resp:
        assert resp.status == 406
    status, body = await api.call("GET", f"{METRICS}/nodes", headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert status == 200 and body["kind"] == "Table" and body["rows"][0]["cells"][0] == "n-0"
    # discovery and the Local APIService, as metrics-server's registration
    status, body = await api.get(METRICS)
    assert {r["name"] for r in body["resources"]} == {"nodes", "pods"}
    status, body = await api.get("/apis/apiregistration.k8s.io/v1/apiservices/"
                                 "v1beta1.metrics.k8s.io")
    assert status == 200 and "service" not in body["spec"], body


async def test_without_the_flag_the_metrics_api_is_not_served(cluster_factory,  # noqa: F811
                                                              certs: Certs) -> None:  # noqa: F811
    plain = await cluster_factory(secured(certs), **kubelet_client_options(certs))
    status, _ = await plain.api.get(f"{METRICS}/nodes")
    assert status == 404


async def test_the_hpa_scales_a_custom_resource_through_its_scale_subresource(
        cluster: Cluster) -> None:
    api, client = cluster.api, cluster.client
    status, body = await api.post(CRDS, crd())
    assert status == 201, body
    await established(api)
    await client.create(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                  "metadata": {"name": "w", "namespace": "default"},
                                  "spec": {"replicas": 1}})
    widget = await client.get(WIDGETS, "w", "default")
    widget["status"] = {"replicas": 1, "selector": "app=w"}
    await client.update(WIDGETS, widget, subresource="status")
    await busy_pod(cluster, "w-0", "200m", labels={"app": "w"})  # 200 % of its request
    await client.create(HORIZONTALPODAUTOSCALERS, {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "example.com/v1", "kind": "Widget",
                                    "name": "w"},
                 "minReplicas": 1, "maxReplicas": 10, "metrics": [
                     {"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}]}})
    ctx = ControllerContext(client, InformerFactory(client), ControllerOptions(
        horizontal_pod_autoscaler_sync_period=0.2))
    controller = HorizontalController(ctx)
    ctx.informers.start()
    task = asyncio.create_task(controller.run())
    try:
        async def scaled() -> Any:
            w = await client.get(WIDGETS, "w", "default")
            return w if w["spec"]["replicas"] != 1 else None

        w = await eventually(scaled)
        assert w["spec"]["replicas"] == 4  # ratio 200/50 on one pod, within 1+4

        async def reported() -> Any:
            hpa = await client.get(HORIZONTALPODAUTOSCALERS, "w", "default")
            status = hpa.get("status") or {}
            return status if status.get("desiredReplicas") == 4 and \
                status.get("lastScaleTime") else None

        status = await eventually(reported)
        conditions = {c["type"]: c for c in status["conditions"]}
        assert conditions["AbleToScale"]["reason"] in ("SucceededRescale", "ReadyForNewScale")
        assert conditions["ScalingActive"]["reason"] == "ValidMetricFound"
        assert conditions["ScalingActive"]["message"] == (
            "the HPA was able to successfully calculate a replica count from cpu resource "
            "utilization (percentage of request)")
        assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 200

        async def event() -> Any:
            events = (await client.list(EVENTS, "default"))["items"]
            return [e for e in events if e["reason"] == "SuccessfulRescale"]

        rescale = (await eventually(event))[0]
        assert rescale["message"] == ("New size: 4; reason: cpu resource utilization "
                                      "(percentage of request) above target")
        assert rescale["source"]["component"] == "horizontal-pod-autoscaler"
        # the v1 view of the same object
        v1 = await client.get(Resource("autoscaling", "v1", "horizontalpodautoscalers", True,
                                       "HorizontalPodAutoscaler"), "w", "default")
        assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
        assert v1["status"]["currentCPUUtilizationPercentage"] == 200
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await ctx.close()
        await ctx.informers.stop()


async def test_a_missing_target_is_failed_get_scale(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(HORIZONTALPODAUTOSCALERS, {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "ghost", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "ghost"}, "maxReplicas": 3}})
    ctx = ControllerContext(client, InformerFactory(client), ControllerOptions(
        horizontal_pod_autoscaler_sync_period=0.2))
    controller = HorizontalController(ctx)
    ctx.informers.start()
    task = asyncio.create_task(controller.run())
    try:
        async def failed() -> Any:
            hpa = await client.get(HORIZONTALPODAUTOSCALERS, "ghost", "default")
            return [c for c in (hpa.get("status") or {}).get("conditions") or []
                    if c["reason"] == "FailedGetScale"]

        condition = (await eventually(failed))[0]
        assert condition["type"] == "AbleToScale" and condition["status"] == "False"
        assert condition["message"].startswith(
            "the HPA controller was unable to get the target's current scale: ")
        assert 'deployments.apps "ghost" not found' in condition["message"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await ctx.close()
        await ctx.informers.stop()


async def test_view_may_read_metrics_once_metrics_servers_reader_role_is_applied(
        tmp_path) -> None:
    """With RBAC, configs/metrics-reader.yaml (metrics-server's aggregated reader role)
    aggregates into view: a viewer of a namespace may `kubectl top` it, others not."""
    reader = yaml.safe_load((REPO / "configs" / "metrics-reader.yaml").read_text())
    secure, close = await serve(tmp_path, TOKENS, authorization_mode="RBAC",
                                authorization_policy_file=None, enable_metrics_server=True)
    try:
        status, body = await secure.call(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            "admin-token", binding("alice-view", "ClusterRole", "view",
                                   [{"kind": "User", "name": "alice"}]))
        assert status == 201, body
        path = f"{METRICS}/namespaces/default/pods"
        status, body = await secure.call("GET", path, "alice-token")
        assert status == 403 and body["message"] == (
            'pods.metrics.k8s.io is forbidden: User "alice" cannot list resource "pods" in API '
            'group "metrics.k8s.io" in the namespace "default"')
        status, body = await secure.call(
            "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "admin-token", reader)
        assert status == 201, body

        async def allowed() -> bool:
            return (await secure.call("GET", path, "alice-token"))[0] == 200

        assert await rbac_eventually(allowed)
        status, view = await secure.call(
            "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view", "admin-token")
        assert reader["rules"][0] in view["rules"]
        assert (await secure.call("GET", path, "bob-token"))[0] == 403
    finally:
        await close()
