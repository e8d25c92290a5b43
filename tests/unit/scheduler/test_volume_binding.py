"""The volume binding step for WaitForFirstConsumer claims, as pure functions: which nodes fit
a pod whose claim waits for its first consumer (existing volumes by their nodeAffinity, the
class's allowedTopologies for provisioning, a node already selected), and what the scheduler
writes before binding (a volume pre-bound to the claim, or the claim's selected node)."""

from __future__ import annotations

from typing import Any

from minikube_py.scheduler.algorithm.predicates_volume_binding import (
    ERR_BIND_CONFLICT,
    bind_plan,
)
from minikube_py.scheduler.algorithm.predicates_volume_zone import (
    check_volume_binding,
    no_volume_zone_conflict,
)
from minikube_py.scheduler.algorithm.volume_listers import (
    ERR_UNBOUND_CLAIMS,
    resolve_claim,
)
from tests.unit.scheduler.test_volume_predicates import (
    Lister,
    claim,
    node,
    pod,
    verdicts,
)

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SELECTED = "volume.kubernetes.io/selected-node"


def sc(name: str, mode: str, zones: list[str] | None = None,
       provisioner: str = "p.example.com") -> Obj:
    body: Obj = {"metadata": {"name": name}, "provisioner": provisioner,
                 "volumeBindingMode": mode}
    if zones:
        body["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return body


def pvc(name: str, cls: str, selected: str = "", size: str = "1Gi") -> Obj:
    md: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if selected:
        md["annotations"] = {SELECTED: selected}
    return {"metadata": md, "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                                     "resources": {"requests": {"storage": size}}}}


def local_pv(name: str, host: str, size: str = "5Gi", **spec: Any) -> Obj:
    return {"metadata": {"name": name},
            "spec": {"storageClassName": "local", "capacity": {"storage": size},
                     "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/disk"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": HOST, "operator": "In", "values": [host]}]}]}}, **spec},
            "status": {"phase": "Available"}}


LISTER = Lister(
    pvs=[local_pv("disk-b", "n-b"), local_pv("small-a", "n-a", "100Mi"),
         local_pv("taken-a", "n-a", claimRef={"namespace": "x", "name": "y"})],
    pvcs=[pvc("later", "wffc"), pvc("zoned", "wffc-a"), pvc("now", "immediate"),
          pvc("picked", "wffc", selected="n-b"), pvc("nameless", "missing-class"),
          pvc("disk", "local"), pvc("huge", "local", size="1Ti")],
    classes=[sc("wffc", "WaitForFirstConsumer"), sc("immediate", "Immediate"),
             sc("wffc-a", "WaitForFirstConsumer", ["a"]),
             sc("local", "WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner")])
NODES = [node("n-a", **{ZONE: "a", HOST: "n-a"}), node("n-b", **{ZONE: "b", HOST: "n-b"}),
         node("n-none", **{HOST: "n-none"})]


def test_a_delayed_claim_is_not_a_problem_but_an_immediate_one_is() -> None:
    assert resolve_claim(LISTER, "default", "later") == (None, "")
    assert resolve_claim(LISTER, "default", "now") == (None, ERR_UNBOUND_CLAIMS)
    assert resolve_claim(LISTER, "default", "nameless") == (None, ERR_UNBOUND_CLAIMS)


def test_delayed_claim_fits_the_nodes_its_class_may_provision_on() -> None:
    for predicate in (check_volume_binding(LISTER), no_volume_zone_conflict(LISTER)):
        assert verdicts(predicate, pod("p", claim("later")), NODES) == {
            "n-a": [], "n-b": [], "n-none": []}
        assert verdicts(predicate, pod("p", claim("zoned")), NODES) == {
            "n-a": [], "n-b": [ERR_BIND_CONFLICT], "n-none": [ERR_BIND_CONFLICT]}
        # a node already chosen for the claim is the only one
        assert verdicts(predicate, pod("p", claim("picked")), NODES) == {
            "n-a": [ERR_BIND_CONFLICT], "n-b": [], "n-none": [ERR_BIND_CONFLICT]}
    assert verdicts(check_volume_binding(LISTER), pod("p", claim("now")), NODES) == {
        name: [ERR_UNBOUND_CLAIMS] for name in ("n-a", "n-b", "n-none")}


def test_local_volumes_place_the_pod_where_a_volume_fits() -> None:
    predicate = check_volume_binding(LISTER)
    # small-a is too small and taken-a belongs to another claim: only disk-b's node
    assert verdicts(predicate, pod("p", claim("disk")), NODES) == {
        "n-a": [ERR_BIND_CONFLICT], "n-b": [], "n-none": [ERR_BIND_CONFLICT]}
    # no volume is big enough and no-provisioner provisions nothing: no node
    assert verdicts(predicate, pod("p", claim("huge")), NODES) == {
        name: [ERR_BIND_CONFLICT] for name in ("n-a", "n-b", "n-none")}


def test_bind_plan_pre_binds_a_matching_volume_or_selects_the_node() -> None:
    plan = bind_plan(LISTER, "default", ["later", "now", "picked", "zoned", "disk"], NODES[1])
    assert [(w.kind, w.name) for w in plan] == [
        ("claim", "later"), ("claim", "zoned"), ("volume", "disk-b")]
    assert plan[0].body == {"metadata": {"annotations": {SELECTED: "n-b"}}}
    volume = plan[2].body
    assert volume["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                          "namespace": "default", "name": "disk",
                                          "uid": "uid-disk"}
    assert volume["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert "claimRef" not in LISTER.pvs["disk-b"]["spec"]  # the lister's copy is untouched
