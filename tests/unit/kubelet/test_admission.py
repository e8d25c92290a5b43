"""Kubelet admission: GeneralPredicates again, first reason reported in upstream's words."""

from __future__ import annotations

from minikube_py.kubelet.admission import Rejection, admit
from minikube_py.scheduler.nodeinfo import NodeInfo


def node_info(cpu: str = "4", memory: str = "8Gi", pods: str = "110", **labels: str) -> NodeInfo:
    return NodeInfo(node={"metadata": {"name": "n1", "labels": labels},
                          "status": {"allocatable": {"cpu": cpu, "memory": memory,
                                                     "pods": pods}}})


def pod(name: str, cpu: str | None = None, memory: str | None = None, host_port: int = 0,
        **spec: object) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container: dict = {"name": "c", "image": "nginx", "resources": {"requests": requests}}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [container], **spec}}


def test_fits() -> None:
    assert admit(pod("a", cpu="1"), node_info()) is None


def test_out_of_cpu_reports_requested_used_capacity() -> None:
    info = node_info()
    info.add_pod(pod("a", cpu="3500m"))
    assert admit(pod("b", cpu="600m"), info) == Rejection(
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, used: 3500, "
                    "capacity: 4000")


def test_out_of_memory_and_pods() -> None:
    info = node_info(memory="1Gi", pods="1")
    assert admit(pod("a", memory="2Gi"), info) == Rejection(
        "OutOfmemory", "Node didn't have enough resource: memory, requested: 2147483648, "
                       "used: 0, capacity: 1073741824")
    info.add_pod(pod("a"))
    # pods is checked first, as upstream's noderesources.Fits
    assert admit(pod("b", memory="2Gi"), info).reason == "OutOfpods"
    assert admit(pod("b"), info).message == (
        "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1")


def test_other_predicates_by_plugin_name() -> None:
    info = node_info(disk="ssd")
    info.add_pod(pod("a", host_port=8080))
    assert admit(pod("b", host_port=8080), info) == Rejection("NodePorts",
                                                              "Predicate NodePorts failed")
    assert admit(pod("c", nodeSelector={"disk": "hdd"}), info) == Rejection(
        "NodeAffinity", "Predicate NodeAffinity failed")
    assert admit(pod("d", nodeSelector={"disk": "ssd"}), info) is None
