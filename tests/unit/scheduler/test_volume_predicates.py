"""Volume predicates as pure functions: claim binding, NoVolumeZoneConflict,
Max{EBS,GCEPD,AzureDisk}VolumeCount and NoDiskConflict over PV-backed volumes.

Cases follow upstream predicates_test.go (v1.5) TestEBSVolumeCountConflicts (limits, unique
IDs, volumes already attached not counted twice, PV-backed volumes) and
TestVolumeZonePredicate (zone/region labels on the PV against the node's), with listers
given as plain dicts.
"""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.algorithm.predicates_volume_count import (
    AZURE_DISK,
    EBS,
    ERR_MAX_VOLUME_COUNT_EXCEEDED,
    GCE_PD,
    MAX_PD_VOLS_ENV,
    max_pd_volume_count,
    max_volumes_default,
    no_disk_conflict_with_claims,
)
from minikube_py.scheduler.algorithm.predicates_volume_zone import (
    ERR_VOLUME_ZONE_CONFLICT,
    check_volume_binding,
    no_volume_zone_conflict,
)
from minikube_py.scheduler.algorithm.volume_listers import (
    ERR_UNBOUND_CLAIMS,
    VolumeListers,
    resolve_claim,
)
from minikube_py.scheduler.factory import AlgorithmArgs, from_provider
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

Obj = dict[str, Any]
ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "failure-domain.beta.kubernetes.io/region"
ERR_DISK_CONFLICT = "node(s) had no available disk"


class Lister:
    """The VolumeLister protocol over dicts."""

    def __init__(self, pvs: list[Obj] = (), pvcs: list[Obj] = (),
                 classes: list[Obj] = ()) -> None:
        self.pvs = {p["metadata"]["name"]: p for p in pvs}
        self.pvcs = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in pvcs}
        self.classes = {c["metadata"]["name"]: c for c in classes}

    def claim(self, namespace: str, name: str) -> Obj | None:
        return self.pvcs.get((namespace, name))

    def volume(self, name: str) -> Obj | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> Obj | None:
        return self.classes.get(name)

    def volumes(self) -> list[Obj]:
        return list(self.pvs.values())


def pv(name: str, source: Obj | None = None, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"capacity": {"storage": "1Gi"}, **(source or {"hostPath": {"path": "/x"}})}}


def pvc(name: str, volume: str = "", namespace: str = "default", deleting: bool = False) -> Obj:
    md: Obj = {"name": name, "namespace": namespace}
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": md, "spec": {"volumeName": volume} if volume else {}}


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, *volumes: Obj, namespace: str = "default") -> Obj:
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c"}], "volumes": list(volumes)}}


def claim(name: str, read_only: bool = False) -> Obj:
    ref: Obj = {"claimName": name}
    if read_only:
        ref["readOnly"] = True
    return {"name": f"v-{name}", "persistentVolumeClaim": ref}


def ebs(volume_id: str) -> Obj:
    return {"name": f"ebs-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


def gce(pd: str, read_only: bool = False) -> Obj:
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def verdicts(predicate, p: Obj, nodes: list[Obj], placed: dict[str, list[Obj]] | None = None
             ) -> dict[str, list[str]]:
    infos = []
    for n in nodes:
        info = NodeInfo(n)
        for i, q in enumerate((placed or {}).get(n["metadata"]["name"], ())):
            q = dict(q, metadata=dict(q["metadata"], name=f"existing-{i}"))
            info.add_pod(q)
        infos.append(info)
    table = build(infos)
    failures = predicate(PodMeta.of(p), table)
    return {name: [reason for reason, rows in failures if rows[row]]
            for row, name in enumerate(table.names)}


# ------------------------------------------------------------------------ claim resolution

LISTER = Lister(
    pvs=[pv("pv-a", **{ZONE: "a", REGION: "r"}), pv("pv-b", **{ZONE: "b"}),
         pv("pv-ab", **{ZONE: "a__b"}), pv("pv-plain")],
    pvcs=[pvc("in-a", "pv-a"), pvc("in-b", "pv-b"), pvc("in-ab", "pv-ab"),
          pvc("plain", "pv-plain"), pvc("unbound"), pvc("lost", "pv-gone"),
          pvc("dying", "pv-a", deleting=True)])


@pytest.mark.parametrize("name, reason", [
    ("in-a", ""), ("unbound", ERR_UNBOUND_CLAIMS),
    ("missing", 'persistentvolumeclaim "missing" not found'),
    ("dying", 'persistentvolumeclaim "dying" is being deleted'),
    ("lost", 'persistentvolume "pv-gone" not found'),
])
def test_resolve_claim(name: str, reason: str) -> None:
    found, why = resolve_claim(LISTER, "default", name)
    assert why == reason and (found is not None) == (not reason)


NODES = [node("za", **{ZONE: "a", REGION: "r"}), node("zb", **{ZONE: "b"}), node("plain")]


def test_unbound_or_missing_claims_fit_nowhere() -> None:
    for predicate in (check_volume_binding(LISTER), no_volume_zone_conflict(LISTER)):
        got = verdicts(predicate, pod("p", claim("unbound"), claim("missing")), NODES)
        assert got == {n["metadata"]["name"]: [ERR_UNBOUND_CLAIMS,
                                               'persistentvolumeclaim "missing" not found']
                       for n in NODES}
    assert verdicts(check_volume_binding(LISTER), pod("p", claim("in-b")), NODES) == {
        "za": [], "zb": [], "plain": []}
    assert check_volume_binding(LISTER)(PodMeta.of(pod("p", ebs("x"))), build([])) == []


@pytest.mark.parametrize("claims, fits", [
    (["in-a"], ["za", "plain"]),          # zone a + region r: only za (and the unzoned node)
    (["in-b"], ["zb", "plain"]),
    (["in-ab"], ["za", "zb", "plain"]),   # a PV in zones a and b
    (["plain"], ["za", "zb", "plain"]),   # a PV without zone labels goes anywhere
    (["in-a", "in-b"], ["plain"]),
])
def test_no_volume_zone_conflict(claims: list[str], fits: list[str]) -> None:
    got = verdicts(no_volume_zone_conflict(LISTER), pod("p", *map(claim, claims)), NODES)
    assert [n for n, r in got.items() if not r] == fits
    assert all(r in ([], [ERR_VOLUME_ZONE_CONFLICT]) for r in got.values())


def test_node_with_only_a_region_label_is_zoned() -> None:
    """v1.5: the node's constraints are its zone and region labels; a PV zone the node
    does not carry is a conflict."""
    got = verdicts(no_volume_zone_conflict(LISTER), pod("p", claim("in-a")),
                   [node("only-region", **{REGION: "r"})])
    assert got == {"only-region": [ERR_VOLUME_ZONE_CONFLICT]}


# ------------------------------------------------------------------------ max volume count

EBS_LISTER = Lister(pvs=[pv("pv-ebs-1", {"awsElasticBlockStore": {"volumeID": "vol-pv1"}}),
                         pv("pv-gce", {"gcePersistentDisk": {"pdName": "pd-pv"}})],
                    pvcs=[pvc("ebs-claim", "pv-ebs-1"), pvc("gce-claim", "pv-gce"),
                          pvc("unbound")])


@pytest.mark.parametrize("new, existing, limit, fits", [
    ([ebs("a"), ebs("b")], [pod("e", ebs("c"), ebs("d"))], 4, True),
    ([ebs("a"), ebs("b")], [pod("e", ebs("c"), ebs("d"))], 3, False),
    # volumes already attached to the node are not counted twice
    ([ebs("a"), ebs("b")], [pod("e", ebs("a"), ebs("c"))], 3, True),
    # the same ID twice in one pod is one volume
    ([ebs("a"), ebs("a")], [pod("e", ebs("b"))], 2, True),
    # PV-backed EBS volumes count on both sides
    ([claim("ebs-claim")], [pod("e", ebs("b"))], 1, False),
    ([ebs("a")], [pod("e", claim("ebs-claim"))], 1, False),
    ([ebs("vol-pv1")], [pod("e", claim("ebs-claim"))], 1, True),
    # other kinds and unbound claims are not EBS volumes
    ([ebs("a")], [pod("e", gce("x"), claim("gce-claim"), claim("unbound"))], 1, True),
    # the pod's own volumes alone can be too many
    ([ebs("a"), ebs("b"), ebs("c")], [], 2, False),
    # existing pods in another namespace resolve their claims in their own namespace
    ([ebs("a")], [pod("e", claim("ebs-claim"), namespace="other")], 1, True),
])
def test_max_ebs_volume_count(new: list[Obj], existing: list[Obj], limit: int,
                              fits: bool) -> None:
    predicate = max_pd_volume_count(EBS, limit, EBS_LISTER)
    got = verdicts(predicate, pod("p", *new), [node("n")], {"n": existing})
    assert got == {"n": [] if fits else [ERR_MAX_VOLUME_COUNT_EXCEEDED]}


def test_gce_and_azure_filters_count_only_their_kind() -> None:
    azure = {"name": "az", "azureDisk": {"diskName": "d1", "diskURI": "u"}}
    existing = {"n": [pod("e", gce("x"), ebs("y"), azure)]}
    assert verdicts(max_pd_volume_count(GCE_PD, 1, EBS_LISTER), pod("p", gce("z")),
                    [node("n")], existing) == {"n": [ERR_MAX_VOLUME_COUNT_EXCEEDED]}
    assert verdicts(max_pd_volume_count(GCE_PD, 1, EBS_LISTER), pod("p", gce("x")),
                    [node("n")], existing) == {"n": []}
    azure2 = {"name": "az2", "azureDisk": {"diskName": "d2", "diskURI": "u2"}}
    assert verdicts(max_pd_volume_count(AZURE_DISK, 1, EBS_LISTER), pod("p", azure2),
                    [node("n")], existing) == {"n": [ERR_MAX_VOLUME_COUNT_EXCEEDED]}
    # no volume of the kind: nothing to check
    assert max_pd_volume_count(EBS, 1, EBS_LISTER)(PodMeta.of(pod("p", gce("q"))),
                                                   build([])) == []


def test_limits_default_to_upstreams_and_follow_kube_max_pd_vols(monkeypatch) -> None:
    monkeypatch.delenv(MAX_PD_VOLS_ENV, raising=False)
    assert max_volumes_default(39) == 39
    monkeypatch.setenv(MAX_PD_VOLS_ENV, "2")
    assert max_volumes_default(39) == 2
    monkeypatch.setenv(MAX_PD_VOLS_ENV, "-1")
    assert max_volumes_default(16) == 16
    monkeypatch.setenv(MAX_PD_VOLS_ENV, "many")
    assert max_volumes_default(16) == 16
    # the flag wins over the variable; without a flag the variable applies
    monkeypatch.setenv(MAX_PD_VOLS_ENV, "1")
    two_ebs = pod("p", ebs("a"), ebs("b"))
    by_env = from_provider("DefaultProvider").predicates["MaxEBSVolumeCount"]
    assert verdicts(by_env, two_ebs, [node("n")]) == {"n": [ERR_MAX_VOLUME_COUNT_EXCEEDED]}
    by_flag = from_provider("DefaultProvider", AlgorithmArgs(max_ebs_volumes=2)
                            ).predicates["MaxEBSVolumeCount"]
    assert verdicts(by_flag, two_ebs, [node("n")]) == {"n": []}


# ------------------------------------------------------------------------ NoDiskConflict


DISK_LISTER = Lister(pvs=[pv("pv-pd", {"gcePersistentDisk": {"pdName": "shared"}}),
                          pv("pv-ebs", {"awsElasticBlockStore": {"volumeID": "vol-1"}})],
                     pvcs=[pvc("pd", "pv-pd"), pvc("ebs", "pv-ebs")])


@pytest.mark.parametrize("new, existing, conflict", [
    ([claim("pd")], [pod("e", gce("shared"))], True),      # PV-backed vs direct
    ([gce("shared")], [pod("e", claim("pd"))], True),      # direct vs PV-backed
    ([claim("pd")], [pod("e", claim("pd"))], True),        # both through the claim
    ([claim("pd", True)], [pod("e", gce("shared", True))], False),  # both read-only
    ([claim("ebs", True)], [pod("e", claim("ebs", True))], True),   # EBS always conflicts
    ([claim("pd")], [pod("e", gce("other"))], False),
    ([gce("x")], [pod("e", gce("y"))], False),
])
def test_no_disk_conflict_over_pv_backed_volumes(new: list[Obj], existing: list[Obj],
                                                 conflict: bool) -> None:
    got = verdicts(no_disk_conflict_with_claims(DISK_LISTER), pod("p", *new), [node("n"),
                   node("empty")], {"n": existing})
    assert got == {"n": [ERR_DISK_CONFLICT] if conflict else [], "empty": []}


def test_late_bound_listers_know_nothing_until_bound() -> None:
    listers = VolumeListers()
    assert resolve_claim(listers, "default", "pd")[1] == 'persistentvolumeclaim "pd" not found'
    listers.bind(DISK_LISTER.claim, DISK_LISTER.volume)
    assert resolve_claim(listers, "default", "pd")[0] is DISK_LISTER.pvs["pv-pd"]
