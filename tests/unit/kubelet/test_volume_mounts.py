"""The kubelet's volume "mounting", pure half: which volumes need an API object, why one cannot
be mounted (upstream's populator and SetUp messages), and the FailedMount events."""

from __future__ import annotations

from minikube_py.kubelet.volumes import (
    CLAIM,
    CONFIG_MAP,
    SECRET,
    MountProblem,
    VolumeRef,
    attached_problem,
    claim_problem,
    mount_events,
    retry_delay,
    source_problem,
    volume_refs,
)


def test_volume_refs() -> None:
    pod = {"spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "claim-1"}},
        {"name": "cfg", "configMap": {"name": "app", "optional": True}},
        {"name": "creds", "secret": {"secretName": "s"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "all", "projected": {"sources": [{"configMap": {"name": "p"}},
                                                  {"secret": {"name": "q", "optional": True}},
                                                  {"downwardAPI": {}}]}},
    ]}}
    assert volume_refs(pod) == [
        VolumeRef("data", CLAIM, "claim-1", False), VolumeRef("cfg", CONFIG_MAP, "app", True),
        VolumeRef("creds", SECRET, "s", False), VolumeRef("all", CONFIG_MAP, "p", False),
        VolumeRef("all", SECRET, "q", True)]
    assert volume_refs({"spec": {}}) == []


def claim(phase: str = "Bound", volume: str = "pv1", **meta: str) -> dict:
    return {"metadata": {"name": "data", "namespace": "ns", "uid": "u1", **meta},
            "spec": {"volumeName": volume}, "status": {"phase": phase}}


def test_claim_problems() -> None:
    bound_pv = {"spec": {"claimRef": {"name": "data", "namespace": "ns", "uid": "u1"}}}
    prefix = "error processing PVC ns/data: "
    assert claim_problem("ns", "data", claim(), bound_pv) is None
    assert claim_problem("ns", "data", None, None) == (
        prefix + 'failed to fetch PVC from API server: persistentvolumeclaims "data" not found')
    assert claim_problem("ns", "data", claim("Pending", ""), None) == prefix + "PVC is not bound"
    assert claim_problem("ns", "data", claim(deletionTimestamp="t"), bound_pv) == (
        prefix + "PVC is being deleted")
    assert claim_problem("ns", "data", claim(volume=""), None) == (
        prefix + "PVC has empty pvc.Spec.VolumeName")
    assert claim_problem("ns", "data", claim(), None) == (
        prefix + 'failed to fetch PV pv1 from API server: persistentvolumes "pv1" not found')
    assert claim_problem("ns", "data", claim(), {"spec": {}}) == (
        prefix + "found PV object pv1 but it has a nil pv.Spec.ClaimRef indicating it is not "
        "yet bound to the claim")
    assert claim_problem("ns", "data", claim(), {"spec": {"claimRef": {"uid": "u2"}}}) == (
        prefix + "found PV object pv1 but its pv.Spec.ClaimRef.UID u2 does not point to "
        "claim.UID u1")


def test_source_problems() -> None:
    assert source_problem(VolumeRef("cfg", CONFIG_MAP, "app", False), None) == (
        'MountVolume.SetUp failed for volume "cfg" : configmap "app" not found')
    assert source_problem(VolumeRef("s", SECRET, "creds", False), None) == (
        'MountVolume.SetUp failed for volume "s" : secret "creds" not found')
    assert source_problem(VolumeRef("s", SECRET, "creds", True), None) is None
    assert source_problem(VolumeRef("s", SECRET, "creds", False), {"data": {}}) is None


def test_mount_events() -> None:
    setup = MountProblem("cfg", 'MountVolume.SetUp failed for volume "cfg" : configmap "a" '
                                "not found", False)
    claim_a = MountProblem("data", "error processing PVC ns/data: PVC is not bound", True)
    claim_b = MountProblem("logs", "error processing PVC ns/logs: PVC is not bound", True)
    assert mount_events([setup]) == [setup.message]
    assert mount_events([setup, claim_a, claim_b]) == [
        setup.message,
        "Unable to attach or mount volumes: unmounted volumes=[cfg data logs], unattached "
        "volumes=[], failed to process volumes=[data logs]: error processing PVC ns/data: PVC "
        "is not bound; error processing PVC ns/logs: PVC is not bound"]
    assert mount_events([]) == []


def test_a_csi_volume_waits_until_its_node_lists_it_attached() -> None:
    csi = {"spec": {"csi": {"driver": "d.example.com", "volumeHandle": "h1"}}}
    attached = {"status": {"volumesAttached": [
        {"name": "kubernetes.io/csi/d.example.com^h1", "devicePath": ""}]}}
    waiting = attached_problem("data", csi, {"status": {}}, True)
    assert waiting == MountProblem(
        "data", 'Volume not attached according to node status for volume '
        '"kubernetes.io/csi/d.example.com^h1"', False, True)
    assert attached_problem("data", csi, attached, True) is None
    assert attached_problem("data", csi, {}, False) is None  # attachRequired: false
    assert attached_problem("data", {"spec": {"hostPath": {"path": "/x"}}}, {}, True) is None
    assert mount_events([waiting]) == [
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached "
        "volumes=[data], failed to process volumes=[]: timed out waiting for the condition"]
    claim = MountProblem("logs", "error processing PVC ns/logs: PVC is not bound", True)
    assert mount_events([waiting, claim]) == [
        "Unable to attach or mount volumes: unmounted volumes=[data logs], unattached "
        "volumes=[data], failed to process volumes=[logs]: error processing PVC ns/logs: PVC "
        "is not bound"]


def test_retry_delay_doubles_to_a_cap() -> None:
    assert [retry_delay(n) for n in range(5)] == [0.3, 0.6, 1.2, 2.0, 2.0]
