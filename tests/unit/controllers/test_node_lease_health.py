"""The node lifecycle controller's lease half of tryUpdateNodeHealth: a Lease seen for the
first time or renewed later moves the probe timestamp; an unchanged one does not; a status
heartbeat change keeps what was learnt from the lease; a node that never posted a status but
renews its lease counts as alive."""

from __future__ import annotations

from minikube_py.api import meta
from minikube_py.controllers.node_health import (
    NodeHealth,
    observe,
    observe_lease,
    stale,
)

CREATED = "2024-01-01T00:00:00Z"
T0 = meta.parse_rfc3339("2024-01-01T00:01:00Z")


def node(beat: str | None = None) -> dict:
    conditions = [] if beat is None else [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": beat,
         "lastTransitionTime": CREATED}]
    return {"metadata": {"name": "n", "creationTimestamp": CREATED},
            "status": {"conditions": conditions}}


def lease(renew: str | None) -> dict:
    spec = {"holderIdentity": "n", "leaseDurationSeconds": 40}
    if renew is not None:
        spec["renewTime"] = renew
    return {"metadata": {"name": "n", "namespace": "kube-node-lease"}, "spec": spec}


def test_a_renewed_lease_is_a_heartbeat_and_an_unchanged_one_is_not() -> None:
    health = observe(None, node("2024-01-01T00:00:10Z"), T0)
    health = observe_lease(health, lease("2024-01-01T00:00:59.000001Z"), T0)
    assert health.lease_seen and health.probe_timestamp == T0
    # the status heartbeat is unchanged for 100 s, the lease keeps being renewed
    later = T0 + 100
    health = observe(health, node("2024-01-01T00:00:10Z"), later)
    assert health.probe_timestamp == T0
    health = observe_lease(health, lease("2024-01-01T00:02:39.5Z"), later)
    assert health.probe_timestamp == later and not stale(health, 40, later + 1)
    # the lease stops: nothing moves; stale after the grace period
    health = observe_lease(observe(health, node("2024-01-01T00:00:10Z"), later + 50),
                           lease("2024-01-01T00:02:39.5Z"), later + 50)
    assert health.probe_timestamp == later and stale(health, 40, later + 50)


def test_no_lease_falls_back_to_the_status_heartbeat() -> None:
    health = observe_lease(observe(None, node("2024-01-01T00:00:10Z"), T0), None, T0)
    assert not health.lease_seen
    health = observe_lease(observe(health, node("2024-01-01T00:00:20Z"), T0 + 10), None,
                           T0 + 10)
    assert health.probe_timestamp == T0 + 10


def test_a_status_change_keeps_the_lease_it_saw() -> None:
    health = observe_lease(observe(None, node("2024-01-01T00:00:10Z"), T0),
                           lease("2024-01-01T00:00:59.000001Z"), T0)
    health = observe(health, node("2024-01-01T00:00:20Z"), T0 + 5)
    assert health.lease_renew_time == meta.parse_rfc3339("2024-01-01T00:00:59.000001Z")
    # the same lease again is no heartbeat
    assert observe_lease(health, lease("2024-01-01T00:00:59.000001Z"), T0 + 30) == health


def test_a_node_that_never_posted_status_but_renews_is_alive() -> None:
    health = observe(None, node(), T0)  # no Ready condition: judged from its creation
    assert health.probe_timestamp == meta.parse_rfc3339(CREATED)
    health = observe_lease(health, lease("2024-01-01T00:00:59.000001Z"), T0)
    assert health.probe_timestamp == T0
    # the next pass keeps our times instead of going back to the creation time
    again = observe(health, node(), T0 + 5)
    assert again.probe_timestamp == T0
    assert isinstance(again, NodeHealth)
