"""The Node a kubelet registers and the heartbeats it posts."""

from __future__ import annotations

from minikube_py.kubelet.config import KubeletConfig
from minikube_py.kubelet.node_status import (
    conditions,
    heartbeat_patch,
    node_object,
    take_over,
    transitions,
)

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:10Z"
CONFIG = KubeletConfig(cpu="8", memory="16Gi", pods=50, labels={"zone": "a",
                                                                "kubernetes.io/os": "windows"},
                       taints=({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},))


def test_node_object() -> None:
    node = node_object("n1", CONFIG, node_ip="10.0.0.5", port=10250, boot_id="b",
                       pod_cidr="10.244.0.0/24", now=T0)
    labels = node["metadata"]["labels"]
    assert labels["zone"] == "a"
    assert labels["kubernetes.io/os"] == "linux"  # the well-known labels win
    assert labels["kubernetes.io/hostname"] == "n1" and labels["beta.kubernetes.io/os"] == "linux"
    assert node["spec"] == {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"],
                            "taints": [{"key": "dedicated", "value": "gpu",
                                        "effect": "NoSchedule"}]}
    status = node["status"]
    assert status["capacity"] == {"cpu": "8", "memory": "16Gi", "pods": "50",
                                  "ephemeral-storage": "100Gi", "hugepages-1Gi": "0",
                                  "hugepages-2Mi": "0"}
    assert status["allocatable"] == status["capacity"]
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    assert status["addresses"] == [{"type": "InternalIP", "address": "10.0.0.5"},
                                   {"type": "Hostname", "address": "n1"}]
    info = status["nodeInfo"]
    assert info["bootID"] == "b" and info["kubeletVersion"] == CONFIG.kubelet_version
    again = node_object("n1", CONFIG, node_ip="10.0.0.5", port=1, boot_id="c", pod_cidr=None,
                        now=T0)["status"]["nodeInfo"]
    assert again["machineID"] == info["machineID"]  # the same machine across restarts
    assert again["systemUUID"] == info["systemUUID"]


def test_conditions_keep_transition_time_while_unchanged() -> None:
    first = conditions(T0)
    assert [c["type"] for c in first] == ["MemoryPressure", "DiskPressure", "PIDPressure",
                                          "Ready"]
    later = conditions(T1, first)
    assert all(c["lastHeartbeatTime"] == T1 and c["lastTransitionTime"] == T0 for c in later)
    unknown = [dict(c, status="Unknown") if c["type"] == "Ready" else c for c in first]
    back = {c["type"]: c for c in conditions(T1, unknown)}
    assert back["Ready"]["lastTransitionTime"] == T1
    assert back["MemoryPressure"]["lastTransitionTime"] == T0
    assert transitions(unknown) == ["NodeReady"]
    assert transitions([]) == ["NodeHasSufficientMemory", "NodeHasNoDiskPressure",
                               "NodeHasSufficientPID", "NodeReady"]
    assert heartbeat_patch(T1, first) == {"status": {"conditions": later}}


def test_take_over_sets_default_labels_and_missing_cidr_only() -> None:
    wanted = node_object("n1", KubeletConfig(), node_ip="x", port=1, boot_id="b",
                         pod_cidr="10.244.0.0/24", now=T0)
    existing = {"metadata": {"name": "n1", "labels": {"team": "x"}}, "spec": {}}
    updated = take_over(existing, wanted)
    assert updated["metadata"]["labels"]["team"] == "x"
    assert updated["metadata"]["labels"]["kubernetes.io/hostname"] == "n1"
    assert updated["spec"]["podCIDR"] == "10.244.0.0/24"
    assert take_over(updated, wanted) is None
    other = dict(updated, spec={"podCIDR": "10.9.0.0/24"})
    assert take_over(other, wanted) is None  # the API server's CIDR is kept
