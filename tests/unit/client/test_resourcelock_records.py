"""The leader-election record as upstream writes it: the annotation JSON of client-go's
resourcelock (LeaderElectionRecord's json tags, metav1.Time in seconds, zero time null) and
the Lease spec of LeaderElectionRecordToLeaseSpec (MicroTime), both ways."""

from __future__ import annotations

import pytest

from minikube_py.api import meta
from minikube_py.client.resourcelock import (
    LeaderElectionRecord,
    lease_spec_to_record,
    new_lock,
    record_from_json,
    record_to_json,
    record_to_lease_spec,
)

#: an Endpoints annotation as a 1.13 kube-scheduler wrote it (json.Marshal of the struct)
UPSTREAM_ANNOTATION = (
    '{"holderIdentity":"master-1_0d4c8b4e-14b5-11e9-a2b3-42010a800002",'
    '"leaseDurationSeconds":15,"acquireTime":"2019-01-10T08:07:08Z",'
    '"renewTime":"2019-01-10T09:02:26Z","leaderTransitions":3}')
#: what release() leaves behind (an empty holder, a 1 s lease)
RELEASED = ('{"holderIdentity":"","leaseDurationSeconds":1,"acquireTime":"2019-01-10T09:02:30Z",'
            '"renewTime":"2019-01-10T09:02:30Z","leaderTransitions":3}')
#: a zero-valued record (upstream's tests create the lock from LeaderElectionRecord{})
ZERO = ('{"holderIdentity":"","leaseDurationSeconds":0,"acquireTime":null,"renewTime":null,'
        '"leaderTransitions":0}')


@pytest.mark.parametrize("raw", [UPSTREAM_ANNOTATION, RELEASED, ZERO])
def test_annotation_records_round_trip_byte_for_byte(raw: str) -> None:
    assert record_to_json(record_from_json(raw)).decode() == raw


def test_annotation_record_fields() -> None:
    record = record_from_json(UPSTREAM_ANNOTATION)
    assert record.holder_identity.startswith("master-1_")
    assert record.lease_duration_seconds == 15 and record.leader_transitions == 3
    assert record.acquire_time == meta.parse_rfc3339("2019-01-10T08:07:08Z")
    assert record.renew_time == meta.parse_rfc3339("2019-01-10T09:02:26Z")


def test_newer_fields_are_ignored_and_garbage_is_refused() -> None:
    record = record_from_json('{"holderIdentity":"a","leaseDurationSeconds":15,'
                              '"acquireTime":null,"renewTime":null,"leaderTransitions":0,'
                              '"strategy":"","preferredHolder":""}')
    assert record == LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15)
    with pytest.raises(ValueError):
        record_from_json("not json")
    with pytest.raises(ValueError):
        record_from_json("[]")


def test_lease_spec_form() -> None:
    when = 1_700_000_000.25
    record = LeaderElectionRecord("node-a", 15, when, when + 1.5, 2)
    spec = record_to_lease_spec(record)
    assert spec == {"holderIdentity": "node-a", "leaseDurationSeconds": 15,
                    "acquireTime": "2023-11-14T22:13:20.250000Z",
                    "renewTime": "2023-11-14T22:13:21.750000Z", "leaseTransitions": 2}
    assert lease_spec_to_record(spec) == record
    # a Lease as kube-controller-manager 1.31 writes it (kubectl get lease -o json)
    upstream = {"acquireTime": "2024-08-20T09:15:42.718283Z",
                "holderIdentity": "cp-1_7e0c1d55-0c3f-4c2e-9a1a-1f0f2f3e4d5c",
                "leaseDurationSeconds": 15, "leaseTransitions": 0,
                "renewTime": "2024-08-20T10:01:12.204417Z"}
    parsed = lease_spec_to_record(upstream)
    assert parsed.holder_identity.startswith("cp-1_") and parsed.lease_duration_seconds == 15
    assert record_to_lease_spec(parsed) == upstream
    assert lease_spec_to_record({}) == LeaderElectionRecord()


def test_unknown_lock_type_is_refused() -> None:
    with pytest.raises(ValueError, match="Invalid lock-type lease"):
        new_lock("lease", None, "kube-system", "x", "me")  # type: ignore[arg-type]
