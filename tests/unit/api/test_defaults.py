"""Defaulting: upstream's SetDefaults_* for every served kind, in place, never raising."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.defaults import apply_defaults, pod_initial_status, qos_class


def defaulted(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    apply_defaults(kind, obj)
    return obj


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def test_pod_spec_defaults() -> None:
    spec = defaulted("Pod", pod({"name": "c", "image": "nginx:1.25"}))["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    assert spec["enableServiceLinks"] is True
    for not_defaulting in ("tolerations", "priority", "serviceAccountName"):
        assert not_defaulting not in spec  # admission plugins, not defaulting


def test_container_defaults() -> None:
    c = defaulted("Pod", pod({"name": "c", "image": "nginx:1.25",
                              "ports": [{"containerPort": 80}]}))["spec"]["containers"][0]
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert c["resources"] == {}


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"),
    ("nginx:latest", "Always"),
    ("nginx:1.25", "IfNotPresent"),
    ("registry.local:5000/team/app", "Always"),
    ("registry.local:5000/team/app:v2", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
    ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ("", "IfNotPresent"),
])
def test_image_pull_policy(image: str, policy: str) -> None:
    c = defaulted("Pod", pod({"name": "c", "image": image}))["spec"]["containers"][0]
    assert c["imagePullPolicy"] == policy


def test_existing_values_are_kept() -> None:
    spec = defaulted("Pod", pod({"name": "c", "image": "nginx", "imagePullPolicy": "Never"},
                                restartPolicy="Never", terminationGracePeriodSeconds=0,
                                enableServiceLinks=False))["spec"]
    assert spec["restartPolicy"] == "Never"
    assert spec["terminationGracePeriodSeconds"] == 0
    assert spec["enableServiceLinks"] is False
    assert spec["containers"][0]["imagePullPolicy"] == "Never"


def test_requests_default_to_limits_and_quantities_are_canonical() -> None:
    c = defaulted("Pod", pod({"name": "c", "image": "x", "resources": {
        "limits": {"cpu": "0.5", "memory": "1024Mi"}, "requests": {"memory": "0.5Gi"}}}))
    resources = c["spec"]["containers"][0]["resources"]
    assert resources["limits"] == {"cpu": "500m", "memory": "1Gi"}
    assert resources["requests"] == {"memory": "512Mi", "cpu": "500m"}


def test_invalid_quantities_are_left_for_validation() -> None:
    c = defaulted("Pod", pod({"name": "c", "image": "x", "resources": {"limits": {"cpu": "lots"}}}))
    assert c["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "lots"}


def test_host_network_defaults_host_ports() -> None:
    spec = defaulted("Pod", pod({"name": "c", "image": "x", "ports": [{"containerPort": 8080}]},
                                hostNetwork=True))["spec"]
    assert spec["containers"][0]["ports"][0]["hostPort"] == 8080


def test_probe_and_handler_defaults() -> None:
    c = defaulted("Pod", pod({"name": "c", "image": "x",
                              "livenessProbe": {"httpGet": {"port": 80}},
                              "lifecycle": {"preStop": {"httpGet": {"port": 80}}}}))
    container = c["spec"]["containers"][0]
    assert container["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
        "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3,
    }
    assert container["lifecycle"]["preStop"]["httpGet"]["path"] == "/"


def test_volume_defaults() -> None:
    spec = defaulted("Pod", pod({"name": "c", "image": "x"}, volumes=[
        {"name": "a"},
        {"name": "b", "secret": {"secretName": "s"}},
        {"name": "c", "configMap": {"name": "cm"}},
        {"name": "d", "hostPath": {"path": "/tmp"}},
        {"name": "e", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
    ]))["spec"]
    a, b, c, d, e = spec["volumes"]
    assert a["emptyDir"] == {}
    assert b["secret"]["defaultMode"] == 420
    assert c["configMap"]["defaultMode"] == 420
    assert d["hostPath"]["type"] == ""
    assert e["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3600


def test_env_field_ref_api_version() -> None:
    c = defaulted("Pod", pod({"name": "c", "image": "x", "env": [
        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}))
    assert c["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_replication_controller_defaults() -> None:
    rc = defaulted("ReplicationController", {"metadata": {"name": "rc"},
                                             "spec": {"template": copy.deepcopy(TEMPLATE)}})
    assert rc["spec"]["replicas"] == 1
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["metadata"]["labels"] == {"app": "web"}
    template_spec = rc["spec"]["template"]["spec"]
    assert template_spec["restartPolicy"] == "Always"
    assert "enableServiceLinks" not in template_spec  # SetDefaults_Pod only applies to pods


def test_replication_controller_keeps_explicit_selector() -> None:
    rc = defaulted("ReplicationController", {"metadata": {"name": "rc", "labels": {"x": "y"}},
                                             "spec": {"replicas": 0, "selector": {"app": "other"},
                                                      "template": copy.deepcopy(TEMPLATE)}})
    assert rc["spec"]["selector"] == {"app": "other"}
    assert rc["metadata"]["labels"] == {"x": "y"}
    assert rc["spec"]["replicas"] == 0


def test_deployment_defaults() -> None:
    d = defaulted("Deployment", {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}}, "template": copy.deepcopy(TEMPLATE)}})
    spec = d["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_recreate_deployment_gets_no_rolling_update() -> None:
    d = defaulted("Deployment", {"spec": {"strategy": {"type": "Recreate"}}})
    assert d["spec"]["strategy"] == {"type": "Recreate"}


def test_replica_set_defaults() -> None:
    rs = defaulted("ReplicaSet", {"spec": {"template": copy.deepcopy(TEMPLATE)}})
    assert rs["spec"]["replicas"] == 1
    assert "strategy" not in rs["spec"]
    assert rs["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_pod_template_defaults() -> None:
    pt = defaulted("PodTemplate", {"template": copy.deepcopy(TEMPLATE)})
    assert pt["template"]["spec"]["schedulerName"] == "default-scheduler"


def test_service_defaults() -> None:
    svc = defaulted("Service", {"spec": {"ports": [{"port": 80}, {"port": 53, "targetPort": 5353,
                                                                    "protocol": "UDP"}]}})
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["sessionAffinity"] == "None"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert spec["ports"][0] == {"port": 80, "protocol": "TCP", "targetPort": 80}
    assert spec["ports"][1]["targetPort"] == 5353
    assert "externalTrafficPolicy" not in spec
    assert "allocateLoadBalancerNodePorts" not in spec


@pytest.mark.parametrize(("kind", "external", "allocate"), [
    ("NodePort", "Cluster", None),
    ("LoadBalancer", "Cluster", True),
    ("ExternalName", None, None),
])
def test_service_type_dependent_defaults(kind: str, external: str | None,
                                         allocate: bool | None) -> None:
    spec = defaulted("Service", {"spec": {"type": kind}})["spec"]
    assert spec.get("externalTrafficPolicy") == external
    assert spec.get("allocateLoadBalancerNodePorts") == allocate
    assert ("internalTrafficPolicy" in spec) == (kind != "ExternalName")


def test_service_client_ip_affinity_and_cluster_ips() -> None:
    spec = defaulted("Service", {"spec": {"sessionAffinity": "ClientIP",
                                          "clusterIP": "10.96.0.10"}})["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert spec["clusterIPs"] == ["10.96.0.10"]
    assert spec["ipFamilies"] == ["IPv4"]
    assert spec["ipFamilyPolicy"] == "SingleStack"


def test_namespace_defaults() -> None:
    ns = defaulted("Namespace", {"metadata": {"name": "dev"}})
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "dev"}


def test_secret_defaults_and_string_data() -> None:
    secret = defaulted("Secret", {"data": {"a": "eA=="}, "stringData": {"b": "hi"}})
    assert secret["type"] == "Opaque"
    assert secret["data"] == {"a": "eA==", "b": "aGk="}
    assert "stringData" not in secret


def test_endpoints_port_protocol() -> None:
    ep = defaulted("Endpoints", {"subsets": [{"ports": [{"port": 80}]}]})
    assert ep["subsets"][0]["ports"][0]["protocol"] == "TCP"


def test_node_allocatable_defaults_to_capacity() -> None:
    node = defaulted("Node", {"status": {"capacity": {"cpu": "4", "memory": "8192Mi"}}})
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi"}
    assert node["spec"] == {}


def test_limit_range_container_defaults() -> None:
    lr = defaulted("LimitRange", {"spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
        {"type": "Pod", "max": {"cpu": "4"}},
    ]}})
    container, pod_item = lr["spec"]["limits"]
    assert container["default"] == {"cpu": "2"}
    assert container["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}
    assert "default" not in pod_item


def test_unknown_kind_is_left_alone() -> None:
    obj = {"spec": {"x": 1}}
    assert defaulted("Widget", obj) == obj


@pytest.mark.parametrize("kind", ["Pod", "Service", "Deployment", "ReplicationController",
                                  "Namespace", "Secret", "Node", "LimitRange"])
@pytest.mark.parametrize("bad", [{"spec": "x"}, {"spec": {"containers": 3}},
                                 {"spec": {"template": []}}, {"metadata": 1, "spec": None},
                                 {"spec": {"ports": [1, None]}}])
def test_wrong_types_never_raise(kind: str, bad: dict[str, Any]) -> None:
    apply_defaults(kind, copy.deepcopy(bad))
    apply_defaults(kind, "not an object")  # type: ignore[arg-type]


@pytest.mark.parametrize(("resources", "expected"), [
    ([{}], "BestEffort"),
    ([{"requests": {"cpu": "100m"}}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}],
     "Guaranteed"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}}],
     "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}}, {}], "Burstable"),
])
def test_pod_initial_status(resources: list[dict[str, Any]], expected: str) -> None:
    p = pod(*({"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(resources)))
    assert qos_class(p) == expected
    assert pod_initial_status(p) == {"phase": "Pending", "qosClass": expected}
