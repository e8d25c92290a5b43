"""The volume binding step for WaitForFirstConsumer claims, as pure functions: which nodes fit
a pod whose claim waits for its first consumer (the class's allowedTopologies, a node already
selected), and which claims the scheduler annotates with the chosen node."""

from __future__ import annotations

from typing import Any

from minikube_py.scheduler.algorithm.predicates_volume_binding import (
    ERR_BIND_CONFLICT,
    claims_to_annotate,
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


def sc(name: str, mode: str, zones: list[str] | None = None) -> Obj:
    body: Obj = {"metadata": {"name": name}, "provisioner": "p.example.com",
                 "volumeBindingMode": mode}
    if zones:
        body["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return body


def pvc(name: str, cls: str, selected: str = "") -> Obj:
    md: Obj = {"name": name, "namespace": "default"}
    if selected:
        md["annotations"] = {"volume.kubernetes.io/selected-node": selected}
    return {"metadata": md, "spec": {"storageClassName": cls}}


LISTER = Lister(
    pvcs=[pvc("later", "wffc"), pvc("zoned", "wffc-a"), pvc("now", "immediate"),
          pvc("picked", "wffc", selected="n-b"), pvc("nameless", "missing-class")],
    classes=[sc("wffc", "WaitForFirstConsumer"), sc("immediate", "Immediate"),
             sc("wffc-a", "WaitForFirstConsumer", ["a"])])
NODES = [node("n-a", **{ZONE: "a"}), node("n-b", **{ZONE: "b"}), node("n-none")]


def test_a_delayed_claim_is_not_a_problem_but_an_immediate_one_is() -> None:
    assert resolve_claim(LISTER, "default", "later") == (None, "")
    assert resolve_claim(LISTER, "default", "now") == (None, ERR_UNBOUND_CLAIMS)
    assert resolve_claim(LISTER, "default", "nameless") == (None, ERR_UNBOUND_CLAIMS)


def test_delayed_claim_fits_every_node_its_class_may_provision_on() -> None:
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


def test_only_delayed_claims_without_a_node_are_annotated() -> None:
    assert claims_to_annotate(LISTER, "default", ["later", "now", "picked", "zoned"], "n-a") == [
        ("later", {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n-a"}}}),
        ("zoned", {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n-a"}}})]
