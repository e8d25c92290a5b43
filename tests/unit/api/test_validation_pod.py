"""Pod validation: create (table-driven, one defect per case), update and status update."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.errors import FieldError
from minikube_py.api.quantity import FORMAT_ERROR
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)
from minikube_py.api.validation.pod import POD_UPDATE_FORBIDDEN


def make_pod() -> dict[str, Any]:
    pod = {
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "1", "uid": "u"},
        "spec": {
            "containers": [{
                "name": "c", "image": "nginx:1.25",
                "ports": [{"containerPort": 80, "name": "http"}],
                "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "env": [{"name": "MODE", "value": "prod"}],
            }],
            "volumes": [{"name": "data", "emptyDir": {}}],
        },
    }
    apply_defaults("Pod", pod)
    return pod


POD = make_pod()

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_at(obj: dict[str, Any], path: str, value: Any) -> None:
    """set_at(pod, "spec.containers[0].image", "x"); a value of DELETE removes the key."""
    parts = [int(i) if i else k for k, i in _SEGMENT.findall(path)]
    for part in parts[:-1]:
        obj = obj[part]
    if value is DELETE:
        del obj[parts[-1]]
    else:
        obj[parts[-1]] = value


DELETE = object()


def triples(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.type, e.field, e.detail) for e in errs]


def test_defaulted_pod_is_valid() -> None:
    assert validate_create("Pod", POD) == []


PORT_RANGE = "must be between 1 and 65535, inclusive"
Case = tuple[str, Callable[[dict[str, Any]], None], list[tuple[str, str, str]]]


def edit(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda pod: set_at(pod, path, value)


def second_container(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"].append(copy.deepcopy(pod["spec"]["containers"][0]))
    pod["spec"]["containers"][1]["ports"] = []


def host_port_clash(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"][0]["ports"] = [
        {"containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
        {"containerPort": 81, "hostPort": 8080, "protocol": "TCP"},
    ]


CREATE_CASES: list[Case] = [
    ("no containers", edit("spec.containers", []),
     [("FieldValueRequired", "spec.containers", "")]),
    ("containers not a list", edit("spec.containers", "nginx"),
     [("FieldValueInvalid", "spec.containers", "must be an array")]),
    ("missing image", edit("spec.containers[0].image", DELETE),
     [("FieldValueRequired", "spec.containers[0].image", "")]),
    ("bad container name", edit("spec.containers[0].name", "Web_1"),
     [("FieldValueInvalid", "spec.containers[0].name",
       "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
       "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
       "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]),
    ("duplicate container name", second_container,
     [("FieldValueDuplicate", "spec.containers[1].name", "")]),
    ("container port zero", edit("spec.containers[0].ports[0].containerPort", 0),
     [("FieldValueRequired", "spec.containers[0].ports[0].containerPort", "")]),
    ("container port too big", edit("spec.containers[0].ports[0].containerPort", 70000),
     [("FieldValueInvalid", "spec.containers[0].ports[0].containerPort", PORT_RANGE)]),
    ("container port a string", edit("spec.containers[0].ports[0].containerPort", "80"),
     [("FieldValueInvalid", "spec.containers[0].ports[0].containerPort", "must be an integer")]),
    ("host port too big", edit("spec.containers[0].ports[0].hostPort", 65536),
     [("FieldValueInvalid", "spec.containers[0].ports[0].hostPort", PORT_RANGE)]),
    ("bad protocol", edit("spec.containers[0].ports[0].protocol", "HTTP"),
     [("FieldValueNotSupported", "spec.containers[0].ports[0].protocol",
       'supported values: "SCTP", "TCP", "UDP"')]),
    ("host port clash", host_port_clash,
     [("FieldValueDuplicate", "spec.containers[0].ports[1].hostPort", "")]),
    ("bad port name", edit("spec.containers[0].ports[0].name", "http-"),
     [("FieldValueInvalid", "spec.containers[0].ports[0].name",
       "must not begin or end with a hyphen")]),
    ("restart policy", edit("spec.restartPolicy", "Sometimes"),
     [("FieldValueNotSupported", "spec.restartPolicy",
       'supported values: "Always", "OnFailure", "Never"')]),
    ("dns policy", edit("spec.dnsPolicy", "Google"),
     [("FieldValueNotSupported", "spec.dnsPolicy",
       'supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"')]),
    ("pull policy", edit("spec.containers[0].imagePullPolicy", "Sometimes"),
     [("FieldValueNotSupported", "spec.containers[0].imagePullPolicy",
       'supported values: "Always", "IfNotPresent", "Never"')]),
    ("request above limit", edit("spec.containers[0].resources.requests.cpu", "2"),
     [("FieldValueInvalid", "spec.containers[0].resources.requests",
       "must be less than or equal to cpu limit of 1")]),
    ("unparseable quantity", edit("spec.containers[0].resources.limits.cpu", "lots"),
     [("FieldValueInvalid", "spec.containers[0].resources.limits[cpu]", FORMAT_ERROR)]),
    ("negative quantity", edit("spec.containers[0].resources.requests.cpu", "-1"),
     [("FieldValueInvalid", "spec.containers[0].resources.requests[cpu]",
       "must be greater than or equal to 0")]),
    ("unknown resource", edit("spec.containers[0].resources.limits", {"gpu": "1"}),
     [("FieldValueInvalid", "spec.containers[0].resources.limits[gpu]",
       "must be a standard resource type or fully qualified"),
      ("FieldValueInvalid", "spec.containers[0].resources.limits[gpu]",
       "must be a standard resource for containers")]),
    ("extended resource without limit",
     edit("spec.containers[0].resources.requests", {"example.com/gpu": "1"}),
     [("FieldValueRequired", "spec.containers[0].resources.limits",
       "Limit must be set for non overcommitable resources")]),
    ("duplicate volume", edit("spec.volumes", [{"name": "data", "emptyDir": {}},
                                               {"name": "data", "emptyDir": {}}]),
     [("FieldValueDuplicate", "spec.volumes[1].name", "")]),
    ("two volume sources", edit("spec.volumes[0].hostPath", {"path": "/tmp"}),
     [("FieldValueForbidden", "spec.volumes[0].hostPath",
       "may not specify more than 1 volume type"),
      # the volume is invalid, so the mount refers to nothing
      ("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name", "")]),
    ("no volume source", edit("spec.volumes", [{"name": "data"}]),
     [("FieldValueRequired", "spec.volumes[0]", "must specify a volume type"),
      ("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name", "")]),
    ("secret volume without name", edit("spec.volumes[0]", {"name": "data", "secret": {}}),
     [("FieldValueRequired", "spec.volumes[0].secret.secretName", ""),
      ("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name", "")]),
    ("mount of unknown volume", edit("spec.containers[0].volumeMounts[0].name", "nope"),
     [("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name", "")]),
    ("mount path missing", edit("spec.containers[0].volumeMounts[0].mountPath", ""),
     [("FieldValueRequired", "spec.containers[0].volumeMounts[0].mountPath", "")]),
    ("bad env name", edit("spec.containers[0].env[0].name", "1BAD=x"),
     [("FieldValueInvalid", "spec.containers[0].env[0].name",
       "a valid environment variable name must consist of alphabetic characters, digits, '_', "
       "'-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  "
       "or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")]),
    ("env with two sources", edit("spec.containers[0].env[0].valueFrom",
                                  {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}),
     [("FieldValueInvalid", "spec.containers[0].env[0].valueFrom",
       "may not be specified when `value` is not empty")]),
    ("bad node selector", edit("spec.nodeSelector", {"disk": "fast ssd"}),
     [("FieldValueInvalid", "spec.nodeSelector",
       "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
       "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
       "'my_value',  or '12345', regex used for validation is "
       "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
    ("negative grace period", edit("spec.terminationGracePeriodSeconds", -1),
     [("FieldValueInvalid", "spec.terminationGracePeriodSeconds",
       "must be greater than or equal to 0")]),
    ("missing grace period", edit("spec.terminationGracePeriodSeconds", DELETE),
     [("FieldValueRequired", "spec.terminationGracePeriodSeconds", "")]),
    ("zero deadline", edit("spec.activeDeadlineSeconds", 0),
     [("FieldValueInvalid", "spec.activeDeadlineSeconds",
       "must be between 1 and 2147483647, inclusive")]),
    ("toleration operator", edit("spec.tolerations", [{"key": "k", "operator": "Maybe"}]),
     [("FieldValueNotSupported", "spec.tolerations[0].operator",
       'supported values: "Equal", "Exists"')]),
    ("toleration seconds need NoExecute",
     edit("spec.tolerations", [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]),
     [("FieldValueInvalid", "spec.tolerations[0].effect",
       "effect must be 'NoExecute' when `tolerationSeconds` is set")]),
    ("affinity weight", edit("spec.affinity", {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [
                {"key": "a", "operator": "Exists"}]}}]}}),
     [("FieldValueInvalid",
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
       "must be in the range 1-100")]),
    ("probe with two handlers", edit("spec.containers[0].livenessProbe", {
        "exec": {"command": ["true"]}, "tcpSocket": {"port": 80}, "timeoutSeconds": 1,
        "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}),
     [("FieldValueForbidden", "spec.containers[0].livenessProbe.tcpSocket",
       "may not specify more than 1 handler type")]),
    ("liveness success threshold", edit("spec.containers[0].livenessProbe", {
        "tcpSocket": {"port": 80}, "successThreshold": 2}),
     [("FieldValueInvalid", "spec.containers[0].livenessProbe.successThreshold", "must be 1")]),
    ("host network port mismatch", lambda pod: (
        set_at(pod, "spec.hostNetwork", True),
        set_at(pod, "spec.containers[0].ports[0].hostPort", 81)),
     [("FieldValueInvalid", "spec.containers[0].ports[0].hostPort",
       "must match `containerPort` when `hostNetwork` is true")]),
    ("ephemeral containers on create", edit("spec.ephemeralContainers", [{"name": "debug"}]),
     [("FieldValueForbidden", "spec.ephemeralContainers", "cannot be set on create")]),
    ("image whitespace", edit("spec.containers[0].image", " nginx"),
     [("FieldValueInvalid", "spec.containers[0].image",
       "must not have leading or trailing whitespace")]),
    ("init container restart policy", edit("spec.initContainers", [
        {"name": "init", "image": "busybox", "imagePullPolicy": "Always",
         "terminationMessagePolicy": "File", "restartPolicy": "Never"}]),
     [("FieldValueNotSupported", "spec.initContainers[0].restartPolicy",
       'supported values: "Always"')]),
    ("init container name clash", edit("spec.initContainers", [
        {"name": "c", "image": "busybox", "imagePullPolicy": "Always",
         "terminationMessagePolicy": "File"}]),
     [("FieldValueDuplicate", "spec.initContainers[0].name", "")]),
]


@pytest.mark.parametrize(("mutate", "expected"), [(m, e) for _, m, e in CREATE_CASES],
                         ids=[name for name, _, _ in CREATE_CASES])
def test_create_rejects(mutate: Callable[[dict[str, Any]], None],
                        expected: list[tuple[str, str, str]]) -> None:
    pod = copy.deepcopy(POD)
    mutate(pod)
    assert triples(validate_create("Pod", pod)) == expected


def test_messages_render_like_upstream() -> None:
    pod = copy.deepcopy(POD)
    del pod["spec"]["containers"][0]["image"]
    pod["spec"]["containers"][0]["ports"][0]["protocol"] = "HTTP"
    assert [e.message() for e in validate_create("Pod", pod)] == [
        "spec.containers[0].image: Required value",
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: '
        '"SCTP", "TCP", "UDP"',
    ]


# ---------------------------------------------------------------------------------------------
# Update


def update(change: Callable[[dict[str, Any]], None]) -> list[FieldError]:
    new = copy.deepcopy(POD)
    change(new)
    return validate_update("Pod", new, POD)


@pytest.mark.parametrize("change", [
    edit("spec.containers[0].image", "nginx:1.26"),
    edit("metadata.labels", {"app": "web"}),
    edit("spec.activeDeadlineSeconds", 30),
    edit("spec.tolerations", [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]),
    edit("metadata.annotations", {"note": "x"}),
])
def test_allowed_updates(change: Callable[[dict[str, Any]], None]) -> None:
    assert update(change) == []


def test_other_spec_changes_are_forbidden() -> None:
    errs = update(edit("spec.containers[0].ports[0].containerPort", 8080))
    assert [(e.type, e.field) for e in errs] == [("FieldValueForbidden", "spec")]
    assert errs[0].detail.startswith(
        "pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
        "set to 1 if it was previously negative)\n")
    assert errs[0].detail == (POD_UPDATE_FORBIDDEN
                              + "\n  spec.containers[0].ports[0].containerPort: 80 -> 8080")


@pytest.mark.parametrize("change", [
    edit("spec.restartPolicy", "Never"),
    edit("spec.terminationGracePeriodSeconds", 10),
    edit("spec.nodeName", "node-1"),
    edit("spec.containers[0].env", []),
])
def test_forbidden_updates(change: Callable[[dict[str, Any]], None]) -> None:
    assert [(e.type, e.field) for e in update(change)] == [("FieldValueForbidden", "spec")]


def test_adding_a_container_is_forbidden() -> None:
    errs = update(lambda pod: pod["spec"]["containers"].append(
        dict(pod["spec"]["containers"][0], name="other", ports=[])))
    assert [e.message() for e in errs] == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"]


def test_active_deadline_rules() -> None:
    old = copy.deepcopy(POD)
    old["spec"]["activeDeadlineSeconds"] = 30
    longer = copy.deepcopy(old)
    longer["spec"]["activeDeadlineSeconds"] = 60
    assert [e.message() for e in validate_update("Pod", longer, old)] == [
        "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous "
        "value"]
    removed = copy.deepcopy(old)
    del removed["spec"]["activeDeadlineSeconds"]
    assert [e.message() for e in validate_update("Pod", removed, old)] == [
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive "
        "integer to nil value"]
    shorter = copy.deepcopy(old)
    shorter["spec"]["activeDeadlineSeconds"] = 10
    assert validate_update("Pod", shorter, old) == []


def test_existing_tolerations_may_not_change() -> None:
    old = copy.deepcopy(POD)
    old["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                   "tolerationSeconds": 30}]
    new = copy.deepcopy(old)
    new["spec"]["tolerations"][0]["tolerationSeconds"] = 60  # allowed
    assert validate_update("Pod", new, old) == []
    new["spec"]["tolerations"][0]["key"] = "other"
    assert [e.message() for e in validate_update("Pod", new, old)] == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"]


def test_update_requires_resource_version_and_keeps_name() -> None:
    new = copy.deepcopy(POD)
    new["metadata"]["resourceVersion"] = ""
    new["metadata"]["uid"] = "other"
    assert [e.field for e in validate_update("Pod", new, POD)] == [
        "metadata.resourceVersion", "metadata.uid"]


# ---------------------------------------------------------------------------------------------
# Status


def status_update(status: dict[str, Any], old_status: dict[str, Any] | None = None,
                  restart: str = "Always") -> list[FieldError]:
    old = copy.deepcopy(POD)
    old["spec"]["restartPolicy"] = restart
    old["status"] = old_status or {"phase": "Pending", "qosClass": "Burstable"}
    new = copy.deepcopy(old)
    new["status"] = status
    return validate_status_update("Pod", new, old)


def test_valid_status_update() -> None:
    assert status_update({"phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.2",
                          "hostIPs": [{"ip": "10.0.0.2"}], "podIP": "10.1.0.5",
                          "podIPs": [{"ip": "10.1.0.5"}],
                          "conditions": [{"type": "Ready", "status": "True"}]}) == []


def test_status_update_rules() -> None:
    errs = status_update({"phase": "Running", "qosClass": "Guaranteed",
                          "podIPs": [{"ip": "10.1.0.999"}],
                          "hostIP": "10.0.0.2", "hostIPs": [{"ip": "10.0.0.3"}]})
    assert [e.message() for e in errs] == [
        'status.qosClass: Invalid value: "Guaranteed": field is immutable',
        'status.podIPs[0]: Invalid value: "10.1.0.999": must be a valid IP address, (e.g. '
        "10.9.8.7 or 2001:db8::ffff)",
        'status.hostIPs[0].ip: Invalid value: "10.0.0.3": must be equal to `hostIP`',
    ]


def test_node_name_changes_only_through_binding() -> None:
    old = copy.deepcopy(POD)
    new = copy.deepcopy(POD)
    new["spec"]["nodeName"] = "node-1"
    assert [e.message() for e in validate_status_update("Pod", new, old)] == [
        "status.nodeName: Forbidden: may not be changed directly"]


def test_terminated_containers_stay_terminated_unless_restarting() -> None:
    done = {"containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 0}}}]}
    running = {"containerStatuses": [{"name": "c", "state": {"running": {}}}]}
    assert [e.message() for e in status_update(running, done, restart="Never")] == [
        "status.containerStatuses[0].state: Forbidden: may not be transitioned to "
        "non-terminated state"]
    assert status_update(running, done, restart="Always") == []
