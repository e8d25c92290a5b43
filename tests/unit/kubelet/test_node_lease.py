"""The kubelet's node Lease (upstream lease controller newLease + setNodeOwnerFunc) and the
status check of lease mode (write when the Node differs from what the kubelet would post)."""

from __future__ import annotations

from minikube_py.api import meta
from minikube_py.cli.component_settings import KUBELET
from minikube_py.kubelet import KubeletConfig
from minikube_py.kubelet.node_lease import (
    DEFAULT_LEASE_DURATION_SECONDS,
    HEARTBEAT_MODES,
    LEASE_MODE,
    renewed_lease,
    status_differs,
)
from minikube_py.kubelet.node_status import conditions


def test_a_new_lease_is_owned_by_its_node() -> None:
    lease = renewed_lease(None, "n-1", "uid-1", 40, 1_700_000_000.5)
    assert lease == {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "n-1", "namespace": "kube-node-lease",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n-1",
                                          "uid": "uid-1"}]},
        "spec": {"holderIdentity": "n-1", "leaseDurationSeconds": 40,
                 "renewTime": "2023-11-14T22:13:20.500000Z"}}


def test_renewal_keeps_the_base_and_its_owner() -> None:
    base = renewed_lease(None, "n-1", None, 40, 1_700_000_000.0)
    assert "ownerReferences" not in base["metadata"]  # the Node's uid was not known yet
    base["metadata"]["resourceVersion"] = "7"
    base["spec"]["leaseTransitions"] = 2
    renewed = renewed_lease(base, "n-1", "uid-1", 40, 1_700_000_010.0)
    assert renewed["metadata"]["resourceVersion"] == "7"  # the PUT is a compare-and-swap
    assert renewed["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert renewed["spec"]["leaseTransitions"] == 2
    assert meta.parse_rfc3339(renewed["spec"]["renewTime"]) == 1_700_000_010.0
    assert base["spec"]["renewTime"] == "2023-11-14T22:13:20.000000Z"  # not mutated
    other = {"apiVersion": "v1", "kind": "Node", "name": "n-1", "uid": "old"}
    base["metadata"]["ownerReferences"] = [other]
    assert renewed_lease(base, "n-1", "uid-1", 40, 1.0)["metadata"]["ownerReferences"] == [
        other]


def test_status_differs_only_on_condition_status_or_reason() -> None:
    healthy = {"status": {"conditions": conditions("2024-01-01T00:00:00Z")}}
    assert not status_differs(healthy)
    later = {"status": {"conditions": conditions("2024-01-01T01:00:00Z")}}
    assert not status_differs(later)  # heartbeat times do not count
    unknown = {"status": {"conditions": [dict(c, status="Unknown", reason="NodeStatusUnknown")
                                         if c["type"] == "Ready" else c
                                         for c in healthy["status"]["conditions"]]}}
    assert status_differs(unknown)
    assert status_differs({"status": {}})
    assert not status_differs(None)


def test_cli_defaults_match_the_kubelet() -> None:
    """component_settings spells these out (it must not import the kubelet package)."""
    settings = {s.name: s for s in KUBELET}
    assert settings["node-heartbeat-mode"].default == LEASE_MODE == KubeletConfig().heartbeat_mode
    assert settings["node-heartbeat-mode"].choices == HEARTBEAT_MODES
    assert settings["node-lease-duration-seconds"].default == DEFAULT_LEASE_DURATION_SECONDS
    assert KubeletConfig().node_lease_duration_seconds == DEFAULT_LEASE_DURATION_SECONDS
    renew = KubeletConfig().node_lease_renew_interval
    assert settings["node-lease-renew-interval"].default == renew
    assert settings["node-status-report-frequency"].default == 300.0
