"""Server-side Table cells: upstream printers.go behaviour, table-driven, plus a fuzz that no
stored JSON can make a row raise."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minikube_py.api.tables import column_definitions, row_cells

T0 = "2024-05-01T12:00:00Z"
T0_EPOCH = 1714564800.0
NOW = T0_EPOCH + 302  # every object below is 5m2s old
META = {"name": "x", "namespace": "default", "creationTimestamp": T0}


def _cells(kind: str, obj: dict) -> dict[str, Any]:
    """Row as {column name: cell}, so tests read like `kubectl get -o wide` output."""
    names = [c["name"] for c in column_definitions(kind)]
    cells = row_cells(kind, obj, NOW)
    assert len(cells) == len(names)
    return dict(zip(names, cells))


# ---------------------------------------------------------------------------------------------
# Pods


def _pod(phase: str = "Running", statuses: list | None = None, init: list | None = None,
         init_specs: int = 0, containers: int = 1, **extra: Any) -> dict:
    pod: dict = {
        "metadata": dict(META),
        "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)],
                 "initContainers": [{"name": f"i{i}"} for i in range(init_specs)]},
        "status": {"phase": phase},
    }
    if statuses is not None:
        pod["status"]["containerStatuses"] = statuses
    if init is not None:
        pod["status"]["initContainerStatuses"] = init
    for key, value in extra.items():
        section, _, field = key.partition("__")
        pod[section][field] = value
    return pod


def _running(ready: bool = True, restarts: int = 0) -> dict:
    return {"name": "c", "ready": ready, "restartCount": restarts,
            "state": {"running": {"startedAt": T0}}}


def _waiting(reason: str) -> dict:
    return {"name": "c", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": reason}}}


def _terminated(reason: str = "", exit_code: int = 0, signal: int = 0) -> dict:
    return {"name": "c", "ready": False, "restartCount": 0, "state": {
        "terminated": {"reason": reason, "exitCode": exit_code, "signal": signal}}}


READY = {"type": "Ready", "status": "True"}


@pytest.mark.parametrize(("pod", "status"), [
    (_pod("Pending"), "Pending"),
    (_pod("Pending", [_waiting("ContainerCreating")]), "ContainerCreating"),
    (_pod("Running", [_running()]), "Running"),
    (_pod("Succeeded", [_terminated("Completed")]), "Completed"),
    (_pod("Running", [_waiting("CrashLoopBackOff")]), "CrashLoopBackOff"),
    (_pod("Failed", [_terminated("Error", 1)]), "Error"),
    (_pod("Failed", [_terminated(exit_code=2)]), "ExitCode:2"),
    (_pod("Failed", [_terminated(exit_code=137, signal=9)]), "Signal:9"),
    (_pod("Running", [_running()], metadata__deletionTimestamp=T0), "Terminating"),
    (_pod("Unknown", [_running()], metadata__deletionTimestamp=T0, status__reason="NodeLost"),
     "Unknown"),
    (_pod("Failed", status__reason="Evicted"), "Evicted"),
    # init containers: the first one not exited 0 decides
    (_pod("Pending", [_waiting("PodInitializing")], [_waiting("PodInitializing")], 1), "Init:0/1"),
    (_pod("Pending", [], [_terminated("Completed"), _running(False)], 2), "Init:1/2"),
    (_pod("Pending", [], [_waiting("CrashLoopBackOff")], 1), "Init:CrashLoopBackOff"),
    (_pod("Pending", [], [_terminated("Error", 1)], 1), "Init:Error"),
    (_pod("Pending", [], [_terminated(exit_code=3)], 1), "Init:ExitCode:3"),
    (_pod("Pending", [], [_terminated(exit_code=1, signal=15)], 1), "Init:Signal:15"),
    (_pod("Running", [_running()], [_terminated("Completed")], 1), "Running"),
    # walked last to first: the first container's reason wins
    (_pod("Running", [_waiting("ImagePullBackOff"), _waiting("ErrImagePull")], containers=2),
     "ImagePullBackOff"),
    # a Completed container next to a running one
    (_pod("Running", [_terminated("Completed"), _running()], containers=2,
          status__conditions=[READY]), "Running"),
    (_pod("Running", [_terminated("Completed"), _running()], containers=2), "NotReady"),
    (_pod("Pending", status__conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
     "SchedulingGated"),
])
def test_pod_status(pod: dict, status: str) -> None:
    assert _cells("Pod", pod)["Status"] == status


@pytest.mark.parametrize(("pod", "ready"), [
    (_pod("Running", [_running(), _running(False)], containers=2), "1/2"),
    (_pod("Running", [_running(), _running()], containers=2), "2/2"),
    (_pod("Pending", containers=3), "0/3"),
    # ready but not running (terminated) does not count
    (_pod("Running", [{"ready": True, "state": {"terminated": {"reason": "Completed"}}}]), "0/1"),
])
def test_pod_ready(pod: dict, ready: str) -> None:
    assert _cells("Pod", pod)["Ready"] == ready


def test_pod_restarts_with_last_restart_time() -> None:
    crashed = _running(restarts=3)
    crashed["lastState"] = {"terminated": {"finishedAt": "2024-05-01T12:04:00Z"}}
    other = _running(restarts=1)
    other["lastState"] = {"terminated": {"finishedAt": "2024-05-01T12:01:00Z"}}
    pod = _pod("Running", [crashed, other], containers=2)
    assert _cells("Pod", pod)["Restarts"] == "4 (62s ago)"
    assert _cells("Pod", _pod("Running", [_running(restarts=2)]))["Restarts"] == "2"


def test_pod_wide_columns_and_age() -> None:
    pod = _pod("Running", [_running()], spec__nodeName="node-1",
               spec__readinessGates=[{"conditionType": "a"}, {"conditionType": "b"}],
               status__podIPs=[{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
               status__conditions=[{"type": "a", "status": "True"},
                                   {"type": "b", "status": "False"}])
    row = _cells("Pod", pod)
    assert row == {"Name": "x", "Ready": "1/1", "Status": "Running", "Restarts": "0",
                   "Age": "5m2s", "IP": "10.0.0.5", "Node": "node-1", "Nominated Node": "<none>",
                   "Readiness Gates": "1/2"}
    v1_0_pod = _pod("Running", status__podIP="10.0.0.6")
    assert _cells("Pod", v1_0_pod)["IP"] == "10.0.0.6"
    assert _cells("Pod", _pod("Pending"))["IP"] == "<none>"


def test_pod_columns_match_upstream() -> None:
    columns = column_definitions("Pod")
    assert [(c["name"], c["priority"]) for c in columns] == [
        ("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1),
        ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)]
    assert columns[0]["format"] == "name"
    assert all(set(c) == {"name", "type", "format", "description", "priority"} for c in columns)
    assert column_definitions("Pod") is columns  # cached


# ---------------------------------------------------------------------------------------------
# Nodes


def _node(conditions: list, unschedulable: bool = False, labels: dict | None = None) -> dict:
    return {
        "metadata": dict(META, labels=labels or {}),
        "spec": {"unschedulable": unschedulable},
        "status": {"conditions": conditions, "nodeInfo": {"kubeletVersion": "v1.0.0"}},
    }


@pytest.mark.parametrize(("node", "status"), [
    (_node([{"type": "Ready", "status": "True"}]), "Ready"),
    (_node([{"type": "Ready", "status": "False"}]), "NotReady"),
    (_node([{"type": "Ready", "status": "Unknown"}]), "NotReady"),
    (_node([]), "Unknown"),
    (_node([{"type": "MemoryPressure", "status": "True"}]), "Unknown"),
    (_node([{"type": "Ready", "status": "True"}], unschedulable=True), "Ready,SchedulingDisabled"),
    (_node([], unschedulable=True), "Unknown,SchedulingDisabled"),
])
def test_node_status(node: dict, status: str) -> None:
    assert _cells("Node", node)["Status"] == status


@pytest.mark.parametrize(("labels", "roles"), [
    ({}, "<none>"),
    ({"node-role.kubernetes.io/control-plane": ""}, "control-plane"),
    ({"node-role.kubernetes.io/worker": "", "kubernetes.io/role": "master",
      "node-role.kubernetes.io/": "x"}, "master,worker"),
    ({"kubernetes.io/role": ""}, "<none>"),
])
def test_node_roles(labels: dict, roles: str) -> None:
    assert _cells("Node", _node([], labels=labels))["Roles"] == roles


def test_node_wide() -> None:
    node = _node([{"type": "Ready", "status": "True"}])
    node["status"]["addresses"] = [{"type": "Hostname", "address": "n1"},
                                   {"type": "InternalIP", "address": "10.0.0.1"}]
    node["status"]["nodeInfo"].update(osImage="Debian", containerRuntimeVersion="fake://1")
    assert list(_cells("Node", node).values()) == [
        "x", "Ready", "<none>", "5m2s", "v1.0.0", "10.0.0.1", "<none>", "Debian", "<unknown>",
        "fake://1"]


# ---------------------------------------------------------------------------------------------
# Services and endpoints


def _service(type_: str = "ClusterIP", ports: list | None = None, **spec: Any) -> dict:
    return {"metadata": dict(META),
            "spec": {"type": type_, "clusterIP": "10.0.0.10", "ports": ports or [], **spec}}


@pytest.mark.parametrize(("ports", "text"), [
    ([], "<none>"),
    ([{"port": 80, "protocol": "TCP"}], "80/TCP"),
    ([{"port": 80, "protocol": "TCP", "nodePort": 30080}], "80:30080/TCP"),
    ([{"port": 53, "protocol": "UDP"}, {"port": 53}], "53/UDP,53/TCP"),
])
def test_service_ports(ports: list, text: str) -> None:
    assert _cells("Service", _service(ports=ports))["Port(s)"] == text


@pytest.mark.parametrize(("service", "external"), [
    (_service("ClusterIP"), "<none>"),
    (_service("NodePort", externalIPs=["1.2.3.4", "5.6.7.8"]), "1.2.3.4,5.6.7.8"),
    (_service("LoadBalancer"), "<pending>"),
    (dict(_service("LoadBalancer", externalIPs=["9.9.9.9"]), status={"loadBalancer": {
        "ingress": [{"ip": "2.2.2.2"}, {"hostname": "lb.example"}, {"ip": "1.1.1.1"}]}}),
     "1.1.1.1,2.2.2.2,lb.example,9.9.9.9"),
    (_service("ExternalName", externalName="db.example"), "db.example"),
    (_service(""), "<unknown>"),
])
def test_service_external_ip(service: dict, external: str) -> None:
    assert _cells("Service", service)["External-IP"] == external


def test_service_row() -> None:
    row = _cells("Service", _service(ports=[{"port": 80, "protocol": "TCP"}],
                                     selector={"b": "2", "a": "1"}))
    assert row == {"Name": "x", "Type": "ClusterIP", "Cluster-IP": "10.0.0.10",
                   "External-IP": "<none>", "Port(s)": "80/TCP", "Age": "5m2s",
                   "Selector": "a=1,b=2"}
    headless = _service(clusterIP="None", clusterIPs=["None"])
    assert _cells("Service", headless)["Cluster-IP"] == "None"


def _addresses(*ips: str) -> list[dict]:
    return [{"ip": ip} for ip in ips]


@pytest.mark.parametrize(("subsets", "text"), [
    ([], "<none>"),
    ([{"addresses": _addresses("10.0.0.1", "10.0.0.2"), "ports": [{"port": 80}]}],
     "10.0.0.1:80,10.0.0.2:80"),
    ([{"addresses": _addresses("1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4", "1.1.1.5"),
       "ports": [{"port": 80}]}], "1.1.1.1:80,1.1.1.2:80,1.1.1.3:80 + 2 more..."),
    ([{"addresses": _addresses("1.1.1.1", "1.1.1.2"), "ports": [{"port": 80}, {"port": 443}]}],
     "1.1.1.1:80,1.1.1.2:80,1.1.1.1:443 + 1 more..."),
    ([{"addresses": _addresses("10.0.0.1")}], "10.0.0.1"),  # headless, no ports
    ([{"addresses": _addresses("fd00::1"), "ports": [{"port": 80}]}], "[fd00::1]:80"),
    ([{"notReadyAddresses": _addresses("10.0.0.1"), "ports": [{"port": 80}]}], ""),
])
def test_endpoints(subsets: list, text: str) -> None:
    row = _cells("Endpoints", {"metadata": dict(META), "subsets": subsets})
    assert row["Endpoints"] == text


# ---------------------------------------------------------------------------------------------
# Events, component statuses, controllers and the simple kinds


def test_event_row() -> None:
    event = {
        "metadata": dict(META, name="web.17a"),
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{web}"},
        "reason": "Pulled", "message": "  pulled image\n", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-05-01T11:00:00Z", "lastTimestamp": T0, "count": 4,
    }
    assert _cells("Event", event) == {
        "Last Seen": "5m2s", "Type": "Normal", "Reason": "Pulled", "Object": "pod/web",
        "Subobject": "spec.containers{web}", "Source": "kubelet, node-1",
        "Message": "pulled image", "First Seen": "65m", "Count": 4, "Name": "web.17a"}


def test_event_fallbacks() -> None:
    """No lastTimestamp: first seen; no count: 1; series wins; reporting* fill the source."""
    event = {"metadata": dict(META), "involvedObject": {"kind": "Node"},
             "eventTime": "2024-05-01T12:04:00.000000Z", "reportingComponent": "scheduler"}
    row = _cells("Event", event)
    assert (row["Last Seen"], row["First Seen"], row["Count"], row["Object"], row["Source"]) == \
        ("62s", "62s", 1, "node", "scheduler")
    event["series"] = {"count": 7, "lastObservedTime": "2024-05-01T12:05:00.000000Z"}
    row = _cells("Event", event)
    assert (row["Last Seen"], row["Count"]) == ("2s", 7)
    assert _cells("Event", {})["Last Seen"] == "<unknown>"


@pytest.mark.parametrize(("conditions", "cells"), [
    ([{"type": "Healthy", "status": "True", "message": "ok"}], ["Healthy", "ok", ""]),
    ([{"type": "Healthy", "status": "False", "error": "refused"}], ["Unhealthy", "", "refused"]),
    ([], ["Unknown", "", ""]),
])
def test_component_status(conditions: list, cells: list) -> None:
    obj = {"metadata": {"name": "etcd-0", "creationTimestamp": None}, "conditions": conditions}
    assert row_cells("ComponentStatus", obj, NOW) == ["etcd-0", *cells]


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "a", "image": "nginx"},
                                    {"name": "b", "image": "busybox"}]}}


def test_replication_controller_row() -> None:
    rc = {"metadata": dict(META), "spec": {"replicas": 3, "selector": {"app": "web"},
                                           "template": TEMPLATE},
          "status": {"replicas": 2, "readyReplicas": 1}}
    assert row_cells("ReplicationController", rc, NOW) == [
        "x", 3, 2, 1, "5m2s", "a,b", "nginx,busybox", "app=web"]


@pytest.mark.parametrize(("selector", "rs_text", "deploy_text"), [
    ({"matchLabels": {"app": "web", "tier": "fe"}}, "app=web,tier=fe", "app=web,tier=fe"),
    ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["b", "a"]},
                           {"key": "gpu", "operator": "Exists"}]},
     "env notin (a,b),gpu", "env notin (a,b),gpu"),
    ({}, "<none>", ""),
    ({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, "<error>", "<invalid>"),
])
def test_label_selector_columns(selector: dict, rs_text: str, deploy_text: str) -> None:
    obj = {"metadata": dict(META), "spec": {"replicas": 2, "selector": selector,
                                            "template": TEMPLATE},
           "status": {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2,
                      "availableReplicas": 1}}
    assert row_cells("ReplicaSet", obj, NOW) == [
        "x", 2, 2, 1, "5m2s", "a,b", "nginx,busybox", rs_text]
    assert row_cells("Deployment", obj, NOW) == [
        "x", "1/2", 2, 1, "5m2s", "a,b", "nginx,busybox", deploy_text]


def test_resource_quota_row() -> None:
    quota = {"metadata": dict(META), "status": {
        "hard": {"pods": "10", "requests.cpu": "2", "limits.memory": "1Gi", "limits": "3"},
        "used": {"pods": "1", "limits.memory": "256Mi"}}}
    assert row_cells("ResourceQuota", quota, NOW) == [
        "x", "5m2s", "limits: 0/3, pods: 1/10, requests.cpu: 0/2", "limits.memory: 256Mi/1Gi"]


@pytest.mark.parametrize(("kind", "obj", "cells"), [
    ("Namespace", {"metadata": dict(META), "status": {"phase": "Active"}},
     ["x", "Active", "5m2s"]),
    ("Secret", {"metadata": dict(META), "type": "Opaque", "data": {"a": "", "b": ""}},
     ["x", "Opaque", 2, "5m2s"]),
    ("ConfigMap", {"metadata": dict(META), "data": {"a": ""}, "binaryData": {"b": ""}},
     ["x", 2, "5m2s"]),
    ("ServiceAccount", {"metadata": dict(META), "secrets": [{"name": "t"}]}, ["x", 1, "5m2s"]),
    ("PodTemplate", {"metadata": dict(META), "template": TEMPLATE},
     ["x", "a,b", "nginx,busybox", "app=web"]),
    ("Scale", {"metadata": dict(META), "spec": {"replicas": 3}, "status": {"replicas": 2}},
     ["x", 3, 2, "5m2s"]),
    ("LimitRange", {"metadata": dict(META)}, ["x", "2024-05-01T12:00:00Z"]),
    ("LimitRange", {"metadata": {"name": "y"}}, ["y", "0001-01-01T00:00:00Z"]),
    ("Frobnicator", {"metadata": dict(META)}, ["x", "5m2s"]),
    ("Frobnicator", {"metadata": {"name": "y"}}, ["y", "<unknown>"]),
])
def test_simple_kinds(kind: str, obj: dict, cells: list) -> None:
    assert row_cells(kind, obj, NOW) == cells


@pytest.mark.parametrize(("kind", "names"), [
    ("Node", ["Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP",
              "OS-Image", "Kernel-Version", "Container-Runtime"]),
    ("Event", ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message",
               "First Seen", "Count", "Name"]),
    ("ComponentStatus", ["Name", "Status", "Message", "Error"]),
    ("Deployment", ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images",
                    "Selector"]),
    ("LimitRange", ["Name", "Created At"]),
    ("Frobnicator", ["Name", "Age"]),
])
def test_column_names(kind: str, names: list[str]) -> None:
    assert [c["name"] for c in column_definitions(kind)] == names


# ---------------------------------------------------------------------------------------------
# Robustness: no stored JSON may make a row raise.

KINDS = ["Pod", "Node", "Namespace", "Service", "Endpoints", "Event", "ReplicationController",
         "ReplicaSet", "Deployment", "PodTemplate", "Secret", "ConfigMap", "ServiceAccount",
         "ResourceQuota", "ComponentStatus", "Scale", "LimitRange", "Binding", "Frobnicator"]

SAMPLES = [
    _pod("Running", [_running(restarts=1)], [_terminated("Completed")], 1,
         metadata__deletionTimestamp=T0, spec__readinessGates=[{"conditionType": "a"}]),
    _node([{"type": "Ready", "status": "True"}], labels={"kubernetes.io/role": "x"}),
    _service("LoadBalancer", [{"port": 80, "nodePort": 1}], externalIPs=["1.1.1.1"]),
    {"metadata": dict(META), "subsets": [{"addresses": _addresses("1.1.1.1"),
                                          "ports": [{"port": 1}]}]},
    {"metadata": dict(META), "involvedObject": {"kind": "Pod", "name": "p"},
     "series": {"count": 1}, "source": {"host": "h"}},
    {"metadata": dict(META), "spec": {"selector": {"matchLabels": {"a": "b"}},
                                      "template": TEMPLATE}, "status": {"hard": {"pods": "1"}},
     "conditions": [{"type": "Healthy"}], "template": TEMPLATE, "data": {"a": "b"}},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(_paths(value, prefix + (key,)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_paths(value, prefix + (index,)))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.data(), json_values, st.sampled_from(KINDS))
def test_rows_never_raise_on_mutated_objects(sample: dict, data: st.DataObject, value: Any,
                                             kind: str) -> None:
    """Replace any subtree of a realistic object with arbitrary JSON; every kind's row must
    still come back with one cell per column."""
    obj = copy.deepcopy(sample)
    path = data.draw(st.sampled_from(_paths(obj)[1:]))
    target = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    assert len(row_cells(kind, obj, NOW)) == len(column_definitions(kind))


@given(json_values)
def test_rows_never_raise_on_arbitrary_json(value: Any) -> None:
    for kind in KINDS:
        obj = value if isinstance(value, dict) else {"metadata": value, "spec": value,
                                                     "status": value}
        assert len(row_cells(kind, obj, NOW)) == len(column_definitions(kind))
