"""Discovery as the namespace controller, the garbage collector and quota read it: the
aggregated form (two requests) and the per-group-version fallback."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from minikube_py.client import Client
from minikube_py.client.http import HTTPTransport
from minikube_py.client.resources import DEPLOYMENTS, NAMESPACES, PODS
from minikube_py.controllers.discovery import (
    preferred_from_aggregated,
    server_preferred_resources,
)
from minikube_py.testing import Cluster
from minikube_py.trace import REQUEST, TRACE

AGGREGATED = {"kind": "APIGroupDiscoveryList", "items": [
    {"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": [
        {"resource": "pods", "scope": "Namespaced", "verbs": ["delete", "list"],
         "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
         "subresources": [{"subresource": "status", "verbs": ["get"]}]},
        {"resource": "nodes", "scope": "Cluster", "verbs": ["list"],
         "responseKind": {"kind": "Node"}}]}]},
    {"metadata": {"name": "apps"}, "versions": [
        {"version": "v1", "freshness": "Current", "resources": [
            {"resource": "deployments", "scope": "Namespaced", "verbs": ["list"],
             "responseKind": {"kind": "Deployment"}}]},
        {"version": "v1beta1", "resources": [
            {"resource": "olddeployments", "scope": "Namespaced", "verbs": ["list"],
             "responseKind": {"kind": "Deployment"}}]}]},
    {"metadata": {"name": "metrics.k8s.io"}, "versions": [
        {"version": "v1beta1", "freshness": "Stale"}]}]}


def test_aggregated_gives_the_preferred_versions_resources_and_the_stale_versions() -> None:
    resources, stale = preferred_from_aggregated(AGGREGATED)
    assert resources[0].resource == PODS
    assert [(r.resource.group, r.resource.version, r.resource.plural, r.resource.namespaced,
             r.resource.kind) for r in resources] == [
        ("", "v1", "pods", True, "Pod"), ("", "v1", "nodes", False, "Node"),
        ("apps", "v1", "deployments", True, "Deployment")]  # not v1beta1: not preferred
    assert resources[2].resource == DEPLOYMENTS
    assert resources[0].verbs == {"delete", "list"}
    assert stale == ["metrics.k8s.io/v1beta1"]


@pytest.fixture
async def legacy_server() -> AsyncIterator[TestServer]:
    """A server without aggregated discovery (an API server before 1.26, or one behind a
    proxy that drops the media type): every document in the plain form."""
    documents = {
        "/api": {"kind": "APIVersions", "versions": ["v1"]},
        "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
            {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["list"]}]},
        "/apis": {"kind": "APIGroupList", "groups": [
            {"name": "apps", "preferredVersion": {"groupVersion": "apps/v1"}}]},
        "/apis/apps/v1": {"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
            {"name": "deployments", "namespaced": True, "kind": "Deployment",
             "verbs": ["list"]}]}}

    async def document(request: web.Request) -> web.Response:
        return web.json_response(documents[request.path])

    app = web.Application()
    for path in documents:
        app.router.add_get(path, document)
    server = TestServer(app)
    await server.start_server()
    yield server
    await server.close()


async def test_a_server_without_aggregated_discovery_is_read_per_group_version(
        legacy_server: TestServer) -> None:
    client = Client(HTTPTransport(str(legacy_server.make_url(""))))
    try:
        found = await server_preferred_resources(client)
    finally:
        await client.close()
    assert [r.resource for r in found] == [PODS, DEPLOYMENTS]


def test_a_namespace_deletion_reads_discovery_in_two_requests() -> None:
    with Cluster(nodes=0) as c:
        name = c.create_namespace()["metadata"]["name"]
        with c.trace_recording() as since:
            c.delete_namespace(name)
            c.wait_for(NAMESPACES, name, "deleted")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:  # the controller's requests come back first
                records = [r for r in TRACE.since(since)[0] if r.kind == REQUEST
                           and r.component.endswith("/namespace-controller")]
                if any(r.detail[2] == "finalize" for r in records):
                    break
                time.sleep(0.01)
    discovery = [r.detail[1] for r in records if r.detail[0] == "get" and not r.resource]
    assert discovery == ["/api", "/apis"]
    assert any(r.detail[0] == "deletecollection" and r.resource == "configmaps"
               for r in records)
