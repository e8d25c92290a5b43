"""The RequestInfo resolver's verbs, as upstream's RequestInfoFactory resolves them — what the
authorizers see, so a wrong verb is a wrong authorization decision."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.requestinfo import resolve

POD = "/api/v1/namespaces/default/pods/web"
PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize("method,path,watch,verb", [
    # items
    ("GET", POD, False, "get"),
    ("HEAD", POD, False, "get"),
    ("PUT", POD, False, "update"),
    ("PATCH", POD, False, "patch"),
    ("DELETE", POD, False, "delete"),
    ("POST", POD, False, "create"),
    ("OPTIONS", POD, False, ""),
    ("TRACE", POD, False, ""),
    ("GET", POD, True, "watch"),  # ours: a watch of one object
    # collections
    ("GET", PODS, False, "list"),
    ("HEAD", PODS, False, "list"),
    ("GET", PODS, True, "watch"),
    ("GET", "/api/v1/watch/namespaces/default/pods", False, "watch"),
    ("POST", PODS, False, "create"),
    ("DELETE", PODS, False, "deletecollection"),
    ("PUT", PODS, False, "update"),
    ("PATCH", PODS, False, "patch"),
    ("OPTIONS", PODS, False, ""),
])
def test_verbs_by_method(method: str, path: str, watch: bool, verb: str) -> None:
    assert resolve(method, path, watch).verb == verb


@pytest.mark.parametrize("path,resource,name", [
    (f"{POD}/proxy/some/path", "pods", "web"),
    (f"{POD}:8080/proxy/", "pods", "web:8080"),
    ("/api/v1/namespaces/default/services/web/proxy/x", "services", "web"),
    ("/api/v1/nodes/node-1/proxy/metrics", "nodes", "node-1"),
])
@pytest.mark.parametrize("method,verb", [
    ("GET", "get"), ("HEAD", "get"), ("POST", "create"), ("PUT", "update"), ("PATCH", "patch"),
    ("DELETE", "delete"), ("OPTIONS", ""),
])
def test_proxy_is_authorized_by_the_proxied_method(path: str, resource: str, name: str,
                                                   method: str, verb: str) -> None:
    """upstream: a connect subresource has no verb of its own; `?watch=true` is the proxied
    server's query, not a watch."""
    for watch in (False, True):
        info = resolve(method, path, watch)
        assert (info.verb, info.resource, info.name, info.subresource) == (
            verb, resource, name, "proxy")


@pytest.mark.parametrize("sub", ["exec", "attach", "portforward"])
def test_websocket_upgrade_is_get_spdy_is_create(sub: str) -> None:
    assert resolve("GET", f"{POD}/{sub}", False).verb == "get"
    assert resolve("GET", f"{POD}/{sub}", True).verb == "get"
    assert resolve("POST", f"{POD}/{sub}", False).verb == "create"


def test_non_resource_paths_keep_the_method() -> None:
    for method in ("GET", "HEAD", "OPTIONS", "POST"):
        info = resolve(method, "/metrics", False)
        assert (info.is_resource, info.verb) == (False, method.lower())
