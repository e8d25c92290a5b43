"""Fit predicates: each one fits and fails with upstream's reason, table-driven.

Cases follow upstream plugin/pkg/scheduler/algorithm/predicates/predicates_test.go where it has
them (resource fit tables, node affinity operators, disk conflicts by volume type, taints and
tolerations); nodes and pods are API-shaped dicts and NodeInfo is built as the cache builds it.
"""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.api.labels import LabelSelector
from minikube_py.scheduler.algorithm.predicates import (
    GENERAL_PREDICATES,
    PREDICATE_FACTORIES,
    PREDICATES,
    PodMeta,
    Predicate,
    check_node_label_presence,
    check_service_affinity,
    fit_one,
)
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build

Obj = dict[str, Any]


def node(name: str = "n1", *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
         labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         conditions: dict[str, str] | None = None, unschedulable: bool = False) -> Obj:
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    conds = {"Ready": "True"} if conditions is None else conditions
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"capacity": dict(alloc), "allocatable": alloc,
                   "conditions": [{"type": t, "status": s} for t, s in conds.items()]},
    }


def pod(name: str = "p", *, cpu: str | None = None, memory: str | None = None,
        ports: tuple[int, ...] = (), node_selector: dict[str, str] | None = None,
        affinity: Obj | None = None, tolerations: list[Obj] | None = None,
        volumes: list[Obj] | None = None, node_name: str = "", namespace: str = "default",
        labels: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container: Obj = {"name": "c", "image": "nginx", "resources": resources}
    if ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in ports]
    spec: Obj = {"containers": [container]}
    for key, value in (("nodeSelector", node_selector), ("affinity", affinity),
                       ("tolerations", tolerations), ("volumes", volumes),
                       ("nodeName", node_name)):
        if value:
            spec[key] = value
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": spec}


def info(n: Obj | None, *existing: Obj) -> NodeInfo:
    ni = NodeInfo(n)
    for i, p in enumerate(existing):
        p = dict(p, metadata=dict(p["metadata"], name=f"existing-{i}"))
        ni.add_pod(p)
    return ni


def run(name: str, p: Obj, ni: NodeInfo) -> tuple[bool, list[str]]:
    return fit_one(PREDICATES[name], PodMeta.of(p), ni)


def run_table(predicate: Predicate, meta: PodMeta, infos: list[NodeInfo]
              ) -> dict[str, tuple[bool, list[str]]]:
    """The predicate over a table of several nodes at once: per node (fits, reasons)."""
    table = build(infos)
    failures = predicate(meta, table)
    out = {}
    for row, name in enumerate(table.names):
        reasons = [reason for reason, rows in failures if rows[row]]
        out[name] = (not reasons, reasons)
    return out


# ---------------------------------------------------------------------------------------------
# PodFitsResources

RESOURCE_CASES = [
    ("zero-request pod on a full-cpu node fits",
     pod(), node(cpu="2"), [pod(cpu="2", memory="1Gi")], True, []),
    ("zero-request pod fits even on an overcommitted node",
     pod(), node(cpu="1", memory="1Gi"), [pod(cpu="2", memory="2Gi")], True, []),
    ("2 cpu on a node with 1.5 free",
     pod(cpu="2"), node(cpu="4"), [pod(cpu="2500m")], False, ["Insufficient cpu"]),
    ("fits exactly", pod(cpu="1500m", memory="1Gi"), node(cpu="4", memory="2Gi"),
     [pod(cpu="2500m", memory="1Gi")], True, []),
    ("memory short", pod(cpu="100m", memory="2Gi"), node(memory="2Gi"),
     [pod(memory="1Gi")], False, ["Insufficient memory"]),
    ("cpu and memory both short", pod(cpu="5", memory="9Gi"), node(), [], False,
     ["Insufficient cpu", "Insufficient memory"]),
    ("pod slots full, zero request", pod(), node(pods="1"), [pod()], False, ["Too many pods"]),
    ("every reason at once", pod(cpu="5", memory="9Gi"), node(pods="1"), [pod()], False,
     ["Too many pods", "Insufficient cpu", "Insufficient memory"]),
    ("init container counts as max", {**pod(cpu="1"), "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}]}},
     node(cpu="4"), [pod(cpu="2")], False, ["Insufficient cpu"]),
    # a RuntimeClass's spec.overhead counts on top of the containers (upstream PodRequests)
    ("pod overhead makes it not fit", {**pod(cpu="1"), "spec": {
        **pod(cpu="1")["spec"], "overhead": {"cpu": "250m"}}},
     node(cpu="2"), [pod(cpu="1")], False, ["Insufficient cpu"]),
    ("existing pods' overhead is counted", pod(memory="1Gi"), node(memory="2Gi"),
     [{**pod(memory="512Mi"), "spec": {**pod(memory="512Mi")["spec"],
                                       "overhead": {"memory": "768Mi"}}}],
     False, ["Insufficient memory"]),
]


@pytest.mark.parametrize("label, p, n, existing, fits, reasons", RESOURCE_CASES,
                         ids=[c[0] for c in RESOURCE_CASES])
def test_pod_fits_resources(label: str, p: Obj, n: Obj, existing: list[Obj], fits: bool,
                            reasons: list[str]) -> None:
    assert run("PodFitsResources", p, info(n, *existing)) == (fits, reasons)


def test_allocatable_falls_back_to_capacity() -> None:
    n = node(cpu="1")
    del n["status"]["allocatable"]
    assert run("PodFitsResources", pod(cpu="1"), info(n)) == (True, [])
    assert run("PodFitsResources", pod(cpu="1001m"), info(n)) == (False, ["Insufficient cpu"])


def test_missing_node_object_does_not_fit() -> None:
    for name in PREDICATES:
        fits, reasons = run(name, pod(node_name="x", ports=(80,)), info(None))
        if name not in ("PodFitsHostPorts", "PodFitsPorts", "NoDiskConflict"):
            assert (fits, reasons) == (False, ["node not found"]), name


# ---------------------------------------------------------------------------------------------
# PodFitsHostPorts / HostName / GeneralPredicates


@pytest.mark.parametrize("name", ["PodFitsHostPorts", "PodFitsPorts"])
@pytest.mark.parametrize("wanted, used, fits", [
    ((), (80,), True),
    ((8080,), (), True),
    ((8080,), (80,), True),
    ((80, 8080), (8080,), False),
    ((80,), (80,), False),
])
def test_host_ports(name: str, wanted: tuple[int, ...], used: tuple[int, ...],
                    fits: bool) -> None:
    ni = info(node(), pod(ports=used))
    expected = [] if fits else ["node(s) didn't have free ports for the requested pod ports"]
    assert run(name, pod(ports=wanted), ni) == (fits, expected)


def test_port_freed_when_pod_leaves() -> None:
    holder = pod("holder", ports=(80,))
    ni = NodeInfo(node())
    ni.add_pod(holder)
    assert run("PodFitsHostPorts", pod(ports=(80,)), ni)[0] is False
    ni.remove_pod(holder)
    assert run("PodFitsHostPorts", pod(ports=(80,)), ni) == (True, [])


@pytest.mark.parametrize("node_name, fits", [("", True), ("n1", True), ("n2", False)])
def test_host_name(node_name: str, fits: bool) -> None:
    expected = [] if fits else ["node(s) didn't match the requested hostname"]
    assert run("HostName", pod(node_name=node_name), info(node("n1"))) == (fits, expected)


def test_general_predicates_collects_every_reason() -> None:
    ni = info(node("n1", cpu="1"), pod(ports=(80,)))
    p = pod(cpu="2", ports=(80,), node_name="n2", node_selector={"disk": "ssd"})
    assert fit_one(GENERAL_PREDICATES, PodMeta.of(p), ni) == (False, [
        "Insufficient cpu", "node(s) didn't match the requested hostname",
        "node(s) didn't have free ports for the requested pod ports",
        "node(s) didn't match node selector",
    ])
    assert run("GeneralPredicates", pod(cpu="1"), ni) == (True, [])


# ---------------------------------------------------------------------------------------------
# MatchNodeSelector

def required(*terms: Obj) -> Obj:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}}


def expr(key: str, operator: str, *values: str) -> Obj:
    e: Obj = {"key": key, "operator": operator}
    if values:
        e["values"] = list(values)
    return e


NODE_LABELS = {"disk": "ssd", "zone": "us-1", "cores": "8", "gpu": ""}
SELECTOR_CASES = [
    ("no constraints", None, None, True),
    ("nodeSelector subset", {"disk": "ssd"}, None, True),
    ("nodeSelector wrong value", {"disk": "hdd"}, None, False),
    ("nodeSelector missing key", {"rack": "a"}, None, False),
    ("nodeSelector empty value needs the key", {"gpu": ""}, None, True),
    ("In", None, required({"matchExpressions": [expr("zone", "In", "us-2", "us-1")]}), True),
    ("In misses", None, required({"matchExpressions": [expr("zone", "In", "us-2")]}), False),
    ("NotIn", None, required({"matchExpressions": [expr("zone", "NotIn", "us-2")]}), True),
    ("NotIn absent key", None, required({"matchExpressions": [expr("x", "NotIn", "a")]}), True),
    ("Exists", None, required({"matchExpressions": [expr("disk", "Exists")]}), True),
    ("DoesNotExist", None, required({"matchExpressions": [expr("disk", "DoesNotExist")]}),
     False),
    ("Gt true", None, required({"matchExpressions": [expr("cores", "Gt", "4")]}), True),
    ("Gt false", None, required({"matchExpressions": [expr("cores", "Gt", "8")]}), False),
    ("Lt true", None, required({"matchExpressions": [expr("cores", "Lt", "16")]}), True),
    ("Lt false", None, required({"matchExpressions": [expr("cores", "Lt", "8")]}), False),
    ("Gt on non-integer label", None, required({"matchExpressions": [expr("zone", "Gt", "1")]}),
     False),
    ("Gt with non-integer value is invalid", None,
     required({"matchExpressions": [expr("cores", "Gt", "x")]}), False),
    ("expressions ANDed", None, required({"matchExpressions": [
        expr("disk", "In", "ssd"), expr("zone", "In", "eu-1")]}), False),
    ("terms ORed", None, required({"matchExpressions": [expr("zone", "In", "eu-1")]},
                                  {"matchExpressions": [expr("disk", "In", "ssd")]}), True),
    ("invalid term skipped, next matches", None,
     required({"matchExpressions": [expr("zone", "Bogus", "x")]},
              {"matchExpressions": [expr("disk", "Exists")]}), True),
    ("empty term list matches nothing", None, required(), False),
    ("empty term matches nothing", None, required({}), False),
    ("matchFields name In", None,
     required({"matchFields": [expr("metadata.name", "In", "n1")]}), True),
    ("matchFields name In other", None,
     required({"matchFields": [expr("metadata.name", "In", "n2")]}), False),
    ("matchFields name NotIn", None,
     required({"matchFields": [expr("metadata.name", "NotIn", "n2")]}), True),
    ("matchFields and expressions ANDed", None, required({
        "matchFields": [expr("metadata.name", "In", "n1")],
        "matchExpressions": [expr("disk", "In", "hdd")]}), False),
    ("nodeSelector AND affinity", {"disk": "hdd"},
     required({"matchExpressions": [expr("disk", "Exists")]}), False),
    ("affinity without required part", None,
     {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}, True),
]


@pytest.mark.parametrize("label, selector, affinity, fits", SELECTOR_CASES,
                         ids=[c[0] for c in SELECTOR_CASES])
def test_match_node_selector(label: str, selector: dict[str, str] | None,
                             affinity: Obj | None, fits: bool) -> None:
    p = pod(node_selector=selector, affinity=affinity)
    expected = [] if fits else ["node(s) didn't match node selector"]
    assert run("MatchNodeSelector", p, info(node("n1", labels=NODE_LABELS))) == (fits, expected)


# ---------------------------------------------------------------------------------------------
# NoDiskConflict

def gce(pd: str, ro: bool = False) -> Obj:
    return {"name": "v", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def ebs(vid: str, ro: bool = False) -> Obj:
    return {"name": "v", "awsElasticBlockStore": {"volumeID": vid, "readOnly": ro}}


def rbd(monitors: list[str], image: str, pool: str | None = None, ro: bool = False) -> Obj:
    spec: Obj = {"monitors": monitors, "image": image, "readOnly": ro}
    if pool:
        spec["pool"] = pool
    return {"name": "v", "rbd": spec}


def iscsi(portal: str, iqn: str, lun: int, ro: bool = False) -> Obj:
    return {"name": "v", "iscsi": {"targetPortal": portal, "iqn": iqn, "lun": lun,
                                   "readOnly": ro}}


IQN = "iqn.2015-02.example.com:test"
DISK_CASES = [
    ("gce rw/rw", gce("foo"), gce("foo"), False),
    ("gce ro/rw", gce("foo", True), gce("foo"), False),
    ("gce rw/ro", gce("foo"), gce("foo", True), False),
    ("gce ro/ro", gce("foo", True), gce("foo", True), True),
    ("gce other disk", gce("foo"), gce("bar"), True),
    ("ebs same id", ebs("vol-1"), ebs("vol-1"), False),
    ("ebs same id even ro/ro", ebs("vol-1", True), ebs("vol-1", True), False),
    ("ebs other id", ebs("vol-1"), ebs("vol-2"), True),
    ("rbd shared monitor", rbd(["a", "b"], "img"), rbd(["b", "c"], "img"), False),
    ("rbd default pool equals rbd", rbd(["a"], "img"), rbd(["a"], "img", "rbd"), False),
    ("rbd ro/ro", rbd(["a"], "img", ro=True), rbd(["a"], "img", ro=True), True),
    ("rbd no shared monitor", rbd(["a"], "img"), rbd(["b"], "img"), True),
    ("rbd other pool", rbd(["a"], "img", "p1"), rbd(["a"], "img", "p2"), True),
    ("rbd other image", rbd(["a"], "img"), rbd(["a"], "img2"), True),
    ("iscsi same", iscsi("1.2.3.4", IQN, 0), iscsi("1.2.3.4:3260", IQN, 0), False),
    ("iscsi ro/rw", iscsi("1.2.3.4", IQN, 0, True), iscsi("1.2.3.4", IQN, 0), False),
    ("iscsi ro/ro", iscsi("1.2.3.4", IQN, 0, True), iscsi("1.2.3.4", IQN, 0, True), True),
    ("iscsi other lun", iscsi("1.2.3.4", IQN, 0), iscsi("1.2.3.4", IQN, 1), True),
    ("iscsi other port", iscsi("1.2.3.4", IQN, 0), iscsi("1.2.3.4:3261", IQN, 0), True),
    ("different types", gce("foo"), ebs("foo"), True),
    ("non-network volume", {"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}, True),
]


@pytest.mark.parametrize("label, wanted, existing, fits", DISK_CASES,
                         ids=[c[0] for c in DISK_CASES])
def test_no_disk_conflict(label: str, wanted: Obj, existing: Obj, fits: bool) -> None:
    ni = info(node(), pod(volumes=[{"name": "x", "emptyDir": {}}, existing]))
    expected = [] if fits else ["node(s) had no available disk"]
    assert run("NoDiskConflict", pod(volumes=[wanted]), ni) == (fits, expected)


def test_no_disk_conflict_on_empty_node() -> None:
    assert run("NoDiskConflict", pod(volumes=[gce("foo")]), info(node())) == (True, [])


# ---------------------------------------------------------------------------------------------
# PodToleratesNodeTaints / CheckNodeUnschedulable

def taint(key: str, effect: str, value: str = "") -> Obj:
    t: Obj = {"key": key, "effect": effect}
    if value:
        t["value"] = value
    return t


def tol(key: str = "", operator: str = "Equal", value: str = "", effect: str = "") -> Obj:
    t: Obj = {"operator": operator}
    for k, v in (("key", key), ("value", value), ("effect", effect)):
        if v:
            t[k] = v
    return t


TAINT_CASES = [
    ("no taints", [], [], True),
    ("NoSchedule untolerated", [taint("dedicated", "NoSchedule", "db")], [], False),
    ("NoExecute untolerated", [taint("dedicated", "NoExecute", "db")], [], False),
    ("PreferNoSchedule ignored", [taint("dedicated", "PreferNoSchedule", "db")], [], True),
    ("Equal tolerates", [taint("dedicated", "NoSchedule", "db")],
     [tol("dedicated", "Equal", "db", "NoSchedule")], True),
    ("Equal wrong value", [taint("dedicated", "NoSchedule", "db")],
     [tol("dedicated", "Equal", "web", "NoSchedule")], False),
    ("operator defaults to Equal", [taint("dedicated", "NoSchedule", "db")],
     [{"key": "dedicated", "value": "db"}], True),
    ("Exists ignores value", [taint("dedicated", "NoSchedule", "db")],
     [tol("dedicated", "Exists", effect="NoSchedule")], True),
    ("empty effect tolerates all effects", [taint("k", "NoSchedule"), taint("k", "NoExecute")],
     [tol("k", "Exists")], True),
    ("wrong effect", [taint("k", "NoExecute")], [tol("k", "Exists", effect="NoSchedule")], False),
    ("empty key Exists tolerates everything",
     [taint("a", "NoSchedule", "1"), taint("b", "NoExecute", "2")], [tol(operator="Exists")],
     True),
    ("every taint must be tolerated", [taint("a", "NoSchedule"), taint("b", "NoSchedule")],
     [tol("a", "Exists")], False),
]


@pytest.mark.parametrize("label, taints, tolerations, fits", TAINT_CASES,
                         ids=[c[0] for c in TAINT_CASES])
def test_pod_tolerates_node_taints(label: str, taints: list[Obj], tolerations: list[Obj],
                                   fits: bool) -> None:
    expected = [] if fits else ["node(s) had taints that the pod didn't tolerate"]
    result = run("PodToleratesNodeTaints", pod(tolerations=tolerations), info(node(taints=taints)))
    assert result == (fits, expected)


@pytest.mark.parametrize("unschedulable, tolerations, fits", [
    (False, [], True),
    (True, [], False),
    (True, [tol("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")], True),
    (True, [tol("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")], False),
])
def test_check_node_unschedulable(unschedulable: bool, tolerations: list[Obj],
                                  fits: bool) -> None:
    expected = [] if fits else ["node(s) were unschedulable"]
    result = run("CheckNodeUnschedulable", pod(tolerations=tolerations),
                 info(node(unschedulable=unschedulable)))
    assert result == (fits, expected)


# ---------------------------------------------------------------------------------------------
# Node conditions and pressure

@pytest.mark.parametrize("conditions, reasons", [
    ({"Ready": "True"}, []),
    ({}, []),  # a condition the node does not report is not held against it
    ({"Ready": "False"}, ["node(s) were not ready"]),
    ({"Ready": "Unknown"}, ["node(s) were not ready"]),
    ({"Ready": "True", "OutOfDisk": "True"}, ["node(s) were out of disk space"]),
    ({"Ready": "True", "OutOfDisk": "False", "NetworkUnavailable": "False"}, []),
    ({"Ready": "False", "NetworkUnavailable": "True"},
     ["node(s) were not ready", "node(s) had unavailable network"]),
])
def test_check_node_condition(conditions: dict[str, str], reasons: list[str]) -> None:
    assert run("CheckNodeCondition", pod(), info(node(conditions=conditions))) == (
        not reasons, reasons)


BEST_EFFORT = pod()
BURSTABLE = pod(memory="100Mi")
LIMITED = pod(limits={"cpu": "1"})


@pytest.mark.parametrize("p, pressure, fits", [
    (BEST_EFFORT, "False", True),
    (BEST_EFFORT, "True", False),
    (BURSTABLE, "True", True),
    (LIMITED, "True", True),
    (pod(cpu="0"), "True", False),  # a zero request is still BestEffort
])
def test_check_node_memory_pressure(p: Obj, pressure: str, fits: bool) -> None:
    n = node(conditions={"Ready": "True", "MemoryPressure": pressure})
    expected = [] if fits else ["node(s) had memory pressure"]
    assert run("CheckNodeMemoryPressure", p, info(n)) == (fits, expected)


@pytest.mark.parametrize("p, pressure, fits", [
    (BEST_EFFORT, "False", True), (BEST_EFFORT, "True", False), (BURSTABLE, "True", False),
])
def test_check_node_disk_pressure(p: Obj, pressure: str, fits: bool) -> None:
    n = node(conditions={"Ready": "True", "DiskPressure": pressure})
    expected = [] if fits else ["node(s) had disk pressure"]
    assert run("CheckNodeDiskPressure", p, info(n)) == (fits, expected)


def test_updated_node_object_is_reread() -> None:
    """A table row is re-read from its node object when the row is refilled."""
    ni = info(node(conditions={"Ready": "False"}))
    table = build([ni])
    meta = PodMeta.of(pod())
    assert [r for r, rows in PREDICATES["CheckNodeCondition"](meta, table) if rows[0]] == [
        "node(s) were not ready"]
    ni.node = node(conditions={"Ready": "True"})
    table.fill(0)
    assert not any(rows[0] for _, rows in PREDICATES["CheckNodeCondition"](meta, table))


def test_one_table_answers_every_node_the_same_as_one_by_one() -> None:
    """The vectorised predicates over many rows agree with evaluating each node alone."""
    nodes = [info(node(f"n{i}", cpu=str(1 + i % 3), labels={"disk": ["ssd", "hdd"][i % 2]},
                       taints=[{"key": "gpu", "effect": "NoSchedule"}] if i % 4 == 3 else None,
                       conditions={"Ready": "False"} if i == 5 else None),
                  *([pod(cpu="1", ports=(80,))] if i % 3 == 0 else []))
             for i in range(12)]
    for p in (pod(cpu="2", node_selector={"disk": "ssd"}), pod(ports=(80,)),
              pod(cpu="1500m", tolerations=[tol("gpu", "Exists")])):
        meta = PodMeta.of(p)
        for name in ("GeneralPredicates", "PodToleratesNodeTaints", "CheckNodeCondition"):
            together = run_table(PREDICATES[name], meta, nodes)
            assert together == {ni.name: fit_one(PREDICATES[name], meta, ni) for ni in nodes}


# ---------------------------------------------------------------------------------------------
# CheckNodeLabelPresence / CheckServiceAffinity

@pytest.mark.parametrize("wanted, presence, fits", [
    (["zone"], True, True),
    (["zone", "rack"], True, False),
    (["retiring"], False, True),
    (["retiring", "zone"], False, False),
    ([], True, True),
])
def test_check_node_label_presence(wanted: list[str], presence: bool, fits: bool) -> None:
    predicate = check_node_label_presence(wanted, presence)
    expected = [] if fits else ["node(s) didn't have the requested labels"]
    result = fit_one(predicate, PodMeta.of(pod()), info(node(labels={"zone": "us-1"})))
    assert result == (fits, expected)
    assert PREDICATE_FACTORIES["CheckNodeLabelPresence"] is check_node_label_presence


class FakeCluster:
    """Services, scheduled pods and nodes, answering the three lister protocols."""

    def __init__(self, services: list[Obj], pods: list[Obj], nodes: list[Obj]) -> None:
        self.services, self.scheduled, self.nodes = services, pods, nodes
        self.service_calls = 0

    def services_for_pod(self, p: Obj) -> list[Obj]:
        self.service_calls += 1
        pod_labels = p["metadata"].get("labels") or {}
        return [s for s in self.services
                if s["spec"]["selector"].items() <= pod_labels.items()]

    def pods(self, namespace: str, selector: LabelSelector) -> list[Obj]:
        return [p for p in self.scheduled if p["metadata"]["namespace"] == namespace
                and selector.matches(p["metadata"].get("labels"))]

    def get(self, name: str) -> Obj | None:
        return next((n for n in self.nodes if n["metadata"]["name"] == name), None)


EAST = node("east", labels={"region": "east", "zone": "e1"})
WEST = node("west", labels={"region": "west", "zone": "w1"})
BARE = node("bare")
WEB_SVC = {"metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}}}


@pytest.mark.parametrize("label, selector, scheduled, fits_on", [
    ("first pod of the service goes anywhere", None, [], {"east", "west", "bare"}),
    ("follows the running pod's region", None,
     [pod("w0", labels={"app": "web"}, node_name="west")], {"west"}),
    ("pods of other namespaces do not count", None,
     [pod("w0", labels={"app": "web"}, node_name="west", namespace="other")],
     {"east", "west", "bare"}),
    ("unscheduled pods do not count", None, [pod("w0", labels={"app": "web"})],
     {"east", "west", "bare"}),
    ("own nodeSelector wins", {"region": "east"},
     [pod("w0", labels={"app": "web"}, node_name="west")], {"east"}),
    ("pod on a deleted node is skipped", None,
     [pod("w0", labels={"app": "web"}, node_name="gone"),
      pod("w1", labels={"app": "web"}, node_name="east")], {"east"}),
])
def test_check_service_affinity(label: str, selector: dict[str, str] | None,
                                scheduled: list[Obj], fits_on: set[str]) -> None:
    cluster = FakeCluster([WEB_SVC], scheduled, [EAST, WEST])
    predicate = check_service_affinity(["region"], cluster, cluster, cluster)
    meta = PodMeta.of(pod("new", labels={"app": "web"}, node_selector=selector))
    results = run_table(predicate, meta, [info(n) for n in (EAST, WEST, BARE)])
    assert {name for name, (fits, _) in results.items() if fits} == fits_on
    for name, result in results.items():
        if name not in fits_on:
            assert result == (False, ["node(s) didn't match service affinity"])
    assert cluster.service_calls <= 1  # looked up once per pod, not per node


def test_service_affinity_recomputes_for_a_new_pod() -> None:
    cluster = FakeCluster([WEB_SVC], [], [EAST, WEST])
    predicate = check_service_affinity(["region"], cluster, cluster, cluster)
    new = pod("new", labels={"app": "web"})
    assert fit_one(predicate, PodMeta.of(new), info(WEST))[0] is True
    cluster.scheduled.append(pod("w0", labels={"app": "web"}, node_name="east"))
    assert fit_one(predicate, PodMeta.of(new), info(WEST))[0] is False
    assert cluster.service_calls == 2


# ---------------------------------------------------------------------------------------------
# PodMeta

def test_pod_meta_precomputes_pod_side_values() -> None:
    p = pod("web", cpu="250m", memory="64Mi", ports=(80, 443), node_selector={"disk": "ssd"},
            tolerations=[tol("k", "Exists")], volumes=[gce("pd"), {"name": "e", "emptyDir": {}}])
    meta = PodMeta.of(p)
    assert (meta.name, meta.namespace, meta.milli_cpu, meta.memory) == (
        "web", "default", 250, 64 * 1024 * 1024)
    assert meta.host_ports == (80, 443)
    assert meta.node_selector == (("disk", "ssd"),)
    assert meta.tolerations == (("k", "Exists", "", ""),)
    assert [d.kind for d in meta.disks] == ["gce"]
    assert not meta.zero_request and not meta.best_effort and meta.node_affinity is None
    assert meta.pod is p
