"""The claim binder's pure half: upstream's matching (index.go findByClaim + FindMatchingVolume)
and the edits a binding makes (claimRef, annotations, statuses, release)."""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.controllers.persistentvolume_util import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    bind_claim_to_volume,
    bind_volume_to_claim,
    check_volume_satisfy_claim,
    claim_with_status,
    find_best_match,
    is_volume_bound_to_claim,
    is_volume_released,
    unbind_volume,
    volume_with_phase,
)

Obj = dict[str, Any]


def pv(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), *,
       phase: str = "Available", labels: dict | None = None, cls: str | None = None,
       claim_ref: Obj | None = None, annotations: dict | None = None, **spec: Any) -> Obj:
    body: Obj = {"capacity": {"storage": size}, "accessModes": list(modes),
                 "hostPath": {"path": f"/data/{name}"}, **spec}
    if cls is not None:
        body["storageClassName"] = cls
    if claim_ref is not None:
        body["claimRef"] = claim_ref
    return {"metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "5",
                         "labels": labels or {}, "annotations": annotations or {}},
            "spec": body, "status": {"phase": phase}}


def pvc(name: str = "data", size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), *,
        selector: Obj | None = None, cls: str | None = None, annotations: dict | None = None,
        **spec: Any) -> Obj:
    body: Obj = {"resources": {"requests": {"storage": size}}, "accessModes": list(modes),
                 **spec}
    if selector is not None:
        body["selector"] = selector
    if cls is not None:
        body["storageClassName"] = cls
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "resourceVersion": "7", "annotations": annotations or {}},
            "spec": body, "status": {"phase": "Pending"}}


def name_of(obj: Obj | None) -> str | None:
    return None if obj is None else obj["metadata"]["name"]


@pytest.mark.parametrize("claim, volumes, expected", [
    # the smallest volume that is big enough
    (pvc(size="1Gi"), [pv("big", "10Gi"), pv("small", "500Mi"), pv("fit", "2Gi")], "fit"),
    (pvc(size="1Gi"), [pv("exact", "1Gi"), pv("bigger", "2Gi")], "exact"),
    (pvc(size="5Gi"), [pv("a", "1Gi"), pv("b", "2Gi")], None),
    # only Available volumes (not Pending, Bound, Released)
    (pvc(), [pv("pending", phase="Pending"), pv("released", phase="Released")], None),
    # the claim's access modes must all be offered; fewer extra modes first
    (pvc(modes=("ReadWriteMany",)), [pv("rwo", "1Gi"), pv("rwx", "5Gi", ("ReadWriteMany",))],
     "rwx"),
    (pvc(), [pv("many", "1Gi", ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")),
             pv("one", "5Gi", ("ReadWriteOnce",))], "one"),
    (pvc(modes=("ReadWriteOnce", "ReadOnlyMany")), [pv("one", "1Gi")], None),
    # storage class: "" only matches "", and the beta annotation counts
    (pvc(cls="fast"), [pv("plain", "1Gi"), pv("fast", "5Gi", cls="fast")], "fast"),
    (pvc(), [pv("fast", "1Gi", cls="fast")], None),
    (pvc(annotations={"volume.beta.kubernetes.io/storage-class": "gold"}),
     [pv("gold", "1Gi", annotations={"volume.beta.kubernetes.io/storage-class": "gold"}),
      pv("plain", "1Gi")], "gold"),
    # selector: matchLabels and matchExpressions
    (pvc(selector={"matchLabels": {"tier": "db"}}),
     [pv("web", "1Gi", labels={"tier": "web"}), pv("db", "5Gi", labels={"tier": "db"})], "db"),
    (pvc(selector={"matchExpressions": [{"key": "zone", "operator": "In",
                                         "values": ["a", "b"]}]}),
     [pv("z-c", "1Gi", labels={"zone": "c"}), pv("z-b", "3Gi", labels={"zone": "b"})], "z-b"),
    # volumeMode must agree (absent = Filesystem)
    (pvc(volumeMode="Block"), [pv("fs", "1Gi"), pv("block", "2Gi", volumeMode="Block")],
     "block"),
    # a volume pre-bound to the claim wins even if another fits better or it is not Available
    (pvc(), [pv("small", "1Gi"),
             pv("mine", "5Gi", phase="Pending", claim_ref={"name": "data",
                                                           "namespace": "default"})], "mine"),
    # a volume claimed by someone else is skipped
    (pvc(), [pv("theirs", "1Gi", claim_ref={"name": "other", "namespace": "default"})], None),
    # terminating volumes are skipped
    (pvc(), [{**pv("gone", "1Gi"), "metadata": {"name": "gone",
                                                 "deletionTimestamp": "2024-01-01T00:00:00Z"}}],
     None),
])
def test_find_best_match(claim: Obj, volumes: list[Obj], expected: str | None) -> None:
    assert name_of(find_best_match(claim, volumes)) == expected


def test_volume_bound_to_claim_checks_uid_only_when_set() -> None:
    claim = pvc()
    assert is_volume_bound_to_claim(pv("a", claim_ref={"name": "data", "namespace": "default"}),
                                    claim)
    assert not is_volume_bound_to_claim(
        pv("a", claim_ref={"name": "data", "namespace": "default", "uid": "other"}), claim)
    assert not is_volume_bound_to_claim(pv("a", claim_ref={"name": "data", "namespace": "x"}),
                                        claim)
    assert not is_volume_bound_to_claim(pv("a"), claim)


@pytest.mark.parametrize("volume, claim, problem", [
    (pv("a", "500Mi"), pvc(), "requested PV is too small"),
    (pv("a", cls="fast"), pvc(), "storageClassName does not match"),
    (pv("a", volumeMode="Block"), pvc(), "incompatible volumeMode"),
    (pv("a"), pvc(modes=("ReadWriteMany",)), "incompatible accessMode"),
    (pv("a"), pvc(), None),
])
def test_check_volume_satisfy_claim(volume: Obj, claim: Obj, problem: str | None) -> None:
    assert check_volume_satisfy_claim(volume, claim) == problem


def test_bind_volume_to_claim_sets_claim_ref_and_annotation() -> None:
    volume, claim = pv("a"), pvc()
    bound = bind_volume_to_claim(volume, claim)
    assert bound is not None and "claimRef" not in volume["spec"]  # argument untouched
    assert bound["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
        "uid": "uid-data", "apiVersion": "v1", "resourceVersion": "7"}
    assert bound["metadata"]["annotations"][ANN_BOUND_BY_CONTROLLER] == "yes"
    assert bind_volume_to_claim(bound, claim) is None  # nothing left to do


def test_bind_user_prebound_volume_adds_uid_but_not_bound_by_controller() -> None:
    volume = pv("a", claim_ref={"name": "data", "namespace": "default"})
    bound = bind_volume_to_claim(volume, pvc())
    assert bound is not None and bound["spec"]["claimRef"]["uid"] == "uid-data"
    assert ANN_BOUND_BY_CONTROLLER not in bound["metadata"]["annotations"]


def test_bind_claim_to_volume() -> None:
    claim = bind_claim_to_volume(pvc(), pv("a"))
    assert claim is not None and claim["spec"]["volumeName"] == "a"
    assert claim["metadata"]["annotations"] == {ANN_BOUND_BY_CONTROLLER: "yes",
                                                ANN_BIND_COMPLETED: "yes"}
    assert bind_claim_to_volume(claim, pv("a")) is None
    # the user named the volume: bind-completed only
    named = bind_claim_to_volume(pvc(volumeName="a"), pv("a"))
    assert named is not None and named["metadata"]["annotations"] == {ANN_BIND_COMPLETED: "yes"}


def test_claim_status_copies_the_volume() -> None:
    volume = pv("a", "2Gi", ("ReadWriteOnce", "ReadOnlyMany"))
    bound = claim_with_status(pvc(), "Bound", volume)
    assert bound is not None and bound["status"] == {
        "phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        "capacity": {"storage": "2Gi"}}
    assert claim_with_status(bound, "Bound", volume) is None
    lost = claim_with_status(bound, "Lost", None)
    assert lost is not None and lost["status"] == {"phase": "Lost"}
    assert claim_with_status(pvc(), "Pending", None) is None


def test_volume_phase() -> None:
    assert volume_with_phase(pv("a"), "Available") is None
    failed = volume_with_phase(pv("a"), "Failed", "boom")
    assert failed is not None and failed["status"] == {"phase": "Failed", "message": "boom"}


def test_unbind_volume() -> None:
    ours = pv("a", claim_ref={"name": "data", "namespace": "default", "uid": "u"},
              annotations={ANN_BOUND_BY_CONTROLLER: "yes"})
    unbound = unbind_volume(ours)
    assert "claimRef" not in unbound["spec"] and "annotations" not in unbound["metadata"]
    users = pv("a", claim_ref={"name": "data", "namespace": "default", "uid": "u"})
    assert unbind_volume(users)["spec"]["claimRef"] == {"name": "data", "namespace": "default"}


def test_is_volume_released() -> None:
    claim = pvc()
    bound = pv("a", claim_ref={"name": "data", "namespace": "default", "uid": "uid-data"})
    assert not is_volume_released(bound, {**claim, "spec": {**claim["spec"], "volumeName": "a"}})
    assert is_volume_released(bound, None)
    recreated = {**claim, "metadata": {**claim["metadata"], "uid": "new"}}
    assert is_volume_released(bound, recreated)
    elsewhere = {**claim, "spec": {**claim["spec"], "volumeName": "b"}}
    assert is_volume_released(bound, elsewhere)
    assert not is_volume_released(pv("a", claim_ref={"name": "data", "namespace": "default"}),
                                  None)  # pre-bound, never bound
