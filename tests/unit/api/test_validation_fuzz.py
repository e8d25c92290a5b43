"""Validation and defaulting never raise, whatever JSON arrives (property tests).

Two generators: arbitrary JSON-ish objects built from Kubernetes field names, and realistic
valid objects of every kind with a few leaves replaced by values of the wrong type or shape.
The realistic objects must also validate cleanly, so the fuzz corpus doubles as a check that
validation accepts what kubectl sends.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minikube_py.api.defaults import apply_defaults
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)

CONTAINER = {
    "name": "c", "image": "nginx:1.25",
    "ports": [{"containerPort": 80, "name": "http"},
              {"containerPort": 53, "protocol": "UDP", "hostPort": 53}],
    "env": [{"name": "A", "value": "1"},
            {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "C", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
    "envFrom": [{"configMapRef": {"name": "cm"}}],
    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                  "limits": {"cpu": "1", "memory": "128Mi"}},
    "volumeMounts": [{"name": "data", "mountPath": "/data"},
                     {"name": "cfg", "mountPath": "/cfg", "subPath": "x"}],
    "livenessProbe": {"httpGet": {"port": 80}},
    "readinessProbe": {"tcpSocket": {"port": "http"}},
    "lifecycle": {"preStop": {"exec": {"command": ["sh"]}}},
    "securityContext": {"runAsUser": 1000, "allowPrivilegeEscalation": False},
}
POD_SPEC = {
    "containers": [CONTAINER],
    "initContainers": [{"name": "init", "image": "busybox"}],
    "volumes": [
        {"name": "data", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "cm", "items": [{"key": "a", "path": "a"}]}},
        {"name": "sec", "secret": {"secretName": "s"}},
        {"name": "proj", "projected": {"sources": [{"downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}},
    ],
    "nodeSelector": {"disk": "ssd"},
    "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                    {"operator": "Exists"}],
    "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}},
             "topologyKey": "kubernetes.io/hostname"}]},
    },
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                   "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "web"}}}],
    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["foo"]}],
    "dnsConfig": {"nameservers": ["1.1.1.1"]},
}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}


def meta(name: str = "x", namespaced: bool = True) -> dict[str, Any]:
    out = {"name": name, "resourceVersion": "1", "uid": "u1", "labels": {"app": "web"},
           "annotations": {"a": "b"}}
    if namespaced:
        out["namespace"] = "default"
    return out


VALID: dict[str, dict[str, Any]] = {
    "Namespace": {"metadata": meta("dev", namespaced=False)},
    "Pod": {"metadata": meta(), "spec": dict(POD_SPEC, activeDeadlineSeconds=100),
            "status": {"phase": "Running", "podIPs": [{"ip": "10.1.0.4"}], "hostIP": "10.0.0.2",
                       "hostIPs": [{"ip": "10.0.0.2"}],
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "c", "state": {"running": {}}}]}},
    "Node": {"metadata": meta("node-1", namespaced=False),
             "spec": {"podCIDRs": ["10.1.0.0/24"],
                      "taints": [{"key": "k", "effect": "NoSchedule"}]},
             "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                        "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}},
    "Service": {"metadata": meta("web"),
                "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.10",
                         "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                   {"name": "dns", "port": 53, "protocol": "UDP"}]}},
    "Endpoints": {"metadata": meta("web"), "subsets": [
        {"addresses": [{"ip": "10.1.0.4", "nodeName": "node-1"}],
         "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]}]},
    "Event": {"metadata": meta("web.123"), "reason": "Scheduled", "message": "ok",
              "type": "Normal",
              "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"}},
    "ReplicationController": {"metadata": meta("web"), "spec": {
        "replicas": 2, "selector": {"app": "web"}, "template": TEMPLATE}},
    "PodTemplate": {"metadata": meta("tpl"), "template": TEMPLATE},
    "Secret": {"metadata": meta("s"), "data": {"k": "dmFsdWU="}, "type": "Opaque"},
    "ConfigMap": {"metadata": meta("cm"), "data": {"a": "b"}, "binaryData": {"bin": "AAEC"}},
    "ServiceAccount": {"metadata": meta("default")},
    "LimitRange": {"metadata": meta("lr"), "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "100m"},
         "default": {"cpu": "1"}, "defaultRequest": {"cpu": "500m"},
         "maxLimitRequestRatio": {"cpu": "4"}}]}},
    "ResourceQuota": {"metadata": meta("rq"),
                      "spec": {"hard": {"pods": "10", "requests.cpu": "4", "memory": "8Gi"}}},
    "Binding": {"metadata": meta("web"), "target": {"kind": "Node", "name": "node-1"}},
    "Deployment": {"metadata": meta("web"), "spec": {
        "replicas": 3, "template": TEMPLATE, "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}}},
    "ReplicaSet": {"metadata": meta("web"), "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}},
    "Scale": {"metadata": meta("web"), "spec": {"replicas": 3}},
}
KINDS = sorted(VALID) + ["Widget"]


def run_everything(kind: str, obj: Any, other: Any) -> None:
    """Defaults, then every entry point both ways; rendering every message must work too."""
    defaulted = copy.deepcopy(obj)
    if isinstance(defaulted, dict):
        apply_defaults(kind, defaulted)
    for candidate in (obj, defaulted):
        for errs in (validate_create(kind, candidate),
                     validate_update(kind, candidate, other),
                     validate_update(kind, other, candidate),
                     validate_status_update(kind, candidate, other),
                     validate_status_update(kind, other, candidate)):
            for err in errs:
                err.message()
                err.cause()


@pytest.mark.parametrize("kind", sorted(VALID))
def test_fuzz_corpus_is_valid(kind: str) -> None:
    obj = copy.deepcopy(VALID[kind])
    apply_defaults(kind, obj)
    assert validate_create(kind, obj) == []
    assert validate_update(kind, obj, obj) == []
    assert validate_status_update(kind, obj, obj) == []


FIELD_NAMES = sorted({
    "metadata", "spec", "status", "name", "namespace", "labels", "annotations", "containers",
    "initContainers", "image", "ports", "containerPort", "hostPort", "protocol", "volumes",
    "volumeMounts", "emptyDir", "secret", "configMap", "projected", "sources", "items",
    "fieldRef", "resources", "limits", "requests", "cpu", "env", "valueFrom", "selector",
    "matchLabels", "matchExpressions", "operator", "values", "key", "template", "replicas",
    "strategy", "rollingUpdate", "maxSurge", "type", "clusterIP", "clusterIPs", "port",
    "targetPort", "nodePort", "data", "binaryData", "stringData", "subsets", "addresses", "ip",
    "target", "involvedObject", "eventTime", "hard", "scopes", "max", "min", "default",
    "tolerations", "affinity", "livenessProbe", "httpGet", "exec", "securityContext", "taints",
    "capacity", "podCIDRs", "finalizers", "ownerReferences", "generateName", "resourceVersion",
    "deletionTimestamp", "hostNetwork", "restartPolicy", "terminationGracePeriodSeconds",
    "schedulingGates", "conditions", "containerStatuses", "podIPs", "loadBalancer", "ingress",
    "sessionAffinity", "immutable", "envFrom",
})
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 70000), st.floats(allow_nan=True),
    st.sampled_from(["", "x", "None", "Always", "TCP", "1Gi", "-1", "10.0.0.1", "::1", "In",
                     "Exists", "ClusterIP", "LoadBalancer", "RollingUpdate", "v1", "a/b", "..",
                     "25%", "ExternalName", "kubernetes.io/tls", "1e999"]),
    st.text(max_size=6),
)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELD_NAMES), inner, max_size=4),
), max_leaves=30)
OBJECTS = st.dictionaries(st.sampled_from(FIELD_NAMES), JSON, max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(KINDS), obj=OBJECTS, other=OBJECTS)
def test_random_objects_never_raise(kind: str, obj: dict[str, Any], other: dict[str, Any]) -> None:
    run_everything(kind, obj, other)


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(KINDS), value=JSON)
def test_non_object_input_never_raises(kind: str, value: Any) -> None:
    run_everything(kind, value, value)


def _leaf_paths(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_leaf_paths(v, path + (k,)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_leaf_paths(v, path + (i,)))
    return out


def _replace(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        obj = obj[part]
    obj[path[-1]] = value


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(sorted(VALID)), default_first=st.booleans())
def test_mutated_valid_objects_never_raise(data: st.DataObject, kind: str,
                                           default_first: bool) -> None:
    base = copy.deepcopy(VALID[kind])
    if default_first:
        apply_defaults(kind, base)
    mutated = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _leaf_paths(mutated)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        _replace(mutated, path, data.draw(JSON))
    run_everything(kind, mutated, base)
