"""api/quota.py against upstream's quota evaluators (pkg/quota/v1/evaluator/core) and
ValidateResourceQuota: the names a ResourceQuota may limit and what each object costs."""

from __future__ import annotations

from fractions import Fraction

import pytest

from minikube_py.api import quota as qu
from minikube_py.api.validation.quota import validate_resource_quota


def _quota(hard: dict) -> dict:
    return {"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard}}


@pytest.mark.parametrize("name", [
    "resourcequotas", "count/resourcequotas", "pods", "count/pods", "services.loadbalancers",
    "count/deployments.apps", "count/widgets.example.com", "requests.ephemeral-storage",
    "limits.ephemeral-storage", "hugepages-2Mi", "requests.hugepages-2Mi",
    "requests.example.com/dongle", "gold.storageclass.storage.k8s.io/persistentvolumeclaims",
    "gold.storageclass.storage.k8s.io/requests.storage",
])
def test_upstream_quota_names_are_valid(name: str) -> None:
    errs: list = []
    validate_resource_quota(_quota({name: "1"}), errs)
    assert errs == []


@pytest.mark.parametrize("name", ["quotas", "bogus", "storage"])
def test_non_quota_names_are_refused(name: str) -> None:
    errs: list = []
    validate_resource_quota(_quota({name: "1"}), errs)
    assert errs and errs[-1].detail == "must be a standard resource for quota"


@pytest.mark.parametrize("name,tracked", [
    ("resourcequotas", ("", "resourcequotas")),
    ("count/resourcequotas", ("", "resourcequotas")),
    ("requests.ephemeral-storage", ("", "pods")),
    ("hugepages-2Mi", ("", "pods")),
    ("requests.example.com/dongle", ("", "pods")),
    ("gold.storageclass.storage.k8s.io/requests.storage", ("", "persistentvolumeclaims")),
    ("requests.storage", ("", "persistentvolumeclaims")),
    ("example.com/dongle", None),
])
def test_tracked_resource(name: str, tracked: tuple | None) -> None:
    assert qu.tracked_resource(name) == tracked


def test_a_quota_counts_as_a_resourcequota() -> None:
    assert qu.usage("", "resourcequotas", _quota({})) == {
        "resourcequotas": 1, "count/resourcequotas": 1}


def test_pod_usage_covers_ephemeral_storage_hugepages_and_extended_resources() -> None:
    pod = {"spec": {"containers": [{"name": "a", "resources": {
        "requests": {"cpu": "1", "ephemeral-storage": "1Gi", "hugepages-2Mi": "4Mi",
                     "example.com/dongle": "2"},
        "limits": {"ephemeral-storage": "2Gi", "hugepages-2Mi": "4Mi",
                   "example.com/dongle": "2"}}}]}}
    u = qu.usage("", "pods", pod)
    assert u["requests.ephemeral-storage"] == u["ephemeral-storage"] == 2**30
    assert u["limits.ephemeral-storage"] == 2 * 2**30
    assert u["hugepages-2Mi"] == u["requests.hugepages-2Mi"] == 4 * 2**20
    assert u["requests.example.com/dongle"] == 2 and "example.com/dongle" not in u


def test_finished_pods_still_count_as_stored_pods() -> None:
    pod = {"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed"}}
    assert qu.usage("", "pods", pod) == {"count/pods": Fraction(1)}


def test_claims_count_per_storage_class() -> None:
    claim = {"spec": {"storageClassName": "gold",
                      "resources": {"requests": {"storage": "1Gi"}}}}
    u = qu.usage("", "persistentvolumeclaims", claim)
    assert u["gold.storageclass.storage.k8s.io/persistentvolumeclaims"] == 1
    assert u["gold.storageclass.storage.k8s.io/requests.storage"] == 2**30
    assert "gold.storageclass.storage.k8s.io/requests.storage" not in qu.usage(
        "", "persistentvolumeclaims", {"spec": {}})


def test_missing_requests_names_the_quota_name_and_init_containers() -> None:
    pod = {"spec": {"containers": [{"name": "b"}],
                    "initContainers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}}
    assert qu.missing_requests(pod, {"cpu": "1", "limits.cpu": "1"}) == (
        "must specify cpu for: a,b; limits.cpu for: b")
    assert qu.missing_requests(pod, {"requests.ephemeral-storage": "1"}) is None
