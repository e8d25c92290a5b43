"""The namespace controller's waiting estimates and discovery parsing."""

from __future__ import annotations

from minikube_py.client.resources import DEPLOYMENTS, PODS
from minikube_py.controllers.discovery import parse_resource_list, with_verbs
from minikube_py.controllers.namespace import estimate_graceful_termination, requeue_delay


def test_estimate_is_the_longest_remaining_grace_period_of_running_pods():
    pods = [{"metadata": {"deletionGracePeriodSeconds": 10},
             "spec": {"terminationGracePeriodSeconds": 30}},
            {"metadata": {}, "spec": {"terminationGracePeriodSeconds": 20}},
            {"metadata": {"deletionGracePeriodSeconds": 90}, "spec": {},
             "status": {"phase": "Succeeded"}}]
    assert estimate_graceful_termination(pods) == 20
    assert estimate_graceful_termination([]) == 0
    assert requeue_delay(30) == 16  # upstream: estimate/2 + 1 seconds


CORE = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
    {"name": "pods", "namespaced": True, "kind": "Pod",
     "verbs": ["create", "delete", "deletecollection", "get", "list"]},
    {"name": "pods/status", "namespaced": True, "kind": "Pod", "verbs": ["get", "update"]},
    {"name": "bindings", "namespaced": True, "kind": "Binding", "verbs": ["create"]},
    {"name": "nodes", "namespaced": False, "kind": "Node", "verbs": ["delete", "list"]}]}
APPS = {"groupVersion": "apps/v1", "resources": [
    {"name": "deployments", "namespaced": True, "kind": "Deployment",
     "verbs": ["delete", "list"]}]}


def test_parse_resource_list_and_filter_by_verbs():
    found = parse_resource_list(CORE) + parse_resource_list(APPS)
    assert [r.resource.plural for r in found] == ["pods", "bindings", "nodes", "deployments"]
    assert found[0].resource == PODS and found[3].resource == DEPLOYMENTS
    deletable = with_verbs(found, "list", "delete", namespaced=True)
    assert [r.resource for r in deletable] == [PODS, DEPLOYMENTS]
    assert [r.resource.plural for r in with_verbs(found, "list", "delete")] == [
        "pods", "nodes", "deployments"]
