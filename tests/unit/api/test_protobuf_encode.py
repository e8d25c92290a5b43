"""Protobuf encoding: every served kind round-trips, and Google's protobuf agrees on the bytes.

decode(encode(obj)) == obj on realistic objects of every kind we serve proves the two directions
agree with each other; the golden cases prove they agree with upstream: Google's protobuf
runtime, given upstream's own descriptors (tests/protobuf_descriptors.py), parses our bytes to
the values we meant and re-serialises them to the very same bytes, and its bytes decode here to
the JSON a Go server would print.
"""

from __future__ import annotations

import struct

import pytest

from minikube_py.api.errors import StatusError, not_found
from minikube_py.api.protobuf import decode_object
from minikube_py.api.protobuf_encode import (
    NoMessage, encode_object, envelope, list_body, object_message, watch_frame,
)
from tests.protobuf_descriptors import message_class

TS = "2024-05-01T10:20:30Z"
META = {"name": "web-0", "namespace": "default", "uid": "6f1c9a1e-0000-4000-8000-000000000001",
        "resourceVersion": "42", "generation": 3, "creationTimestamp": TS,
        "labels": {"app": "web", "tier": ""}, "annotations": {"note": "x"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs",
                             "uid": "6f1c9a1e-0000-4000-8000-000000000002", "controller": True,
                             "blockOwnerDeletion": True}],
        "finalizers": ["example.com/f"],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                           "time": TS, "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]}

POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": META,
    "spec": {
        "volumes": [{"name": "data", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}},
                    {"name": "tok", "projected": {"sources": [{"serviceAccountToken": {
                        "expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}],
        "containers": [{
            "name": "nginx", "image": "nginx:1.25", "command": ["nginx", "-g", "daemon off;"],
            "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"},
                          "requests": {"cpu": "250m"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "livenessProbe": {"httpGet": {"path": "/", "port": "http", "scheme": "HTTP"},
                              "initialDelaySeconds": 5, "timeoutSeconds": 1, "periodSeconds": 10,
                              "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"tcpSocket": {"port": 80}, "timeoutSeconds": 1,
                               "periodSeconds": 10, "successThreshold": 1,
                               "failureThreshold": 3},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
            "securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": False}}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "nodeName": "node-1",
        "securityContext": {}, "schedulerName": "default-scheduler",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
        "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"},
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": TS}],
        "hostIP": "10.0.0.1", "podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}],
        "startTime": TS,
        "containerStatuses": [{"name": "nginx", "state": {"running": {"startedAt": TS}},
                               "lastState": {}, "ready": True, "restartCount": 0,
                               "image": "nginx:1.25", "imageID": "", "containerID": "sim://1",
                               "started": True}],
        "qosClass": "Burstable"}}

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "creationTimestamp": TS},
    "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx",
                                                   "resources": {}}]}},
             "strategy": {"type": "RollingUpdate",
                          "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
             "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
    "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
               "conditions": [{"type": "Available", "status": "True", "lastUpdateTime": TS,
                               "lastTransitionTime": TS, "reason": "MinimumReplicasAvailable",
                               "message": "ok"}]}}

NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "creationTimestamp": TS, "labels": {"kubernetes.io/os": "linux"}},
    "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"],
             "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": TS,
                               "lastTransitionTime": TS, "reason": "KubeletReady",
                               "message": "kubelet is posting ready status"}],
               "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
               "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
               "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "",
                            "kernelVersion": "6.1", "osImage": "sim", "containerRuntimeVersion": "sim://1",
                            "kubeletVersion": "v1.31.0", "kubeProxyVersion": "",
                            "operatingSystem": "linux", "architecture": "amd64"}}}

SERVICE = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "creationTimestamp": TS},
    "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080,
                        "nodePort": 30080}],
             "selector": {"app": "web"}, "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
             "type": "NodePort", "sessionAffinity": "None", "externalTrafficPolicy": "Cluster",
             "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
             "internalTrafficPolicy": "Cluster"},
    "status": {"loadBalancer": {}}}

CORE_EVENT = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "web-0.17a", "namespace": "default", "creationTimestamp": TS},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0",
                       "uid": "6f1c9a1e-0000-4000-8000-000000000001", "apiVersion": "v1",
                       "resourceVersion": "42"},
    "reason": "Scheduled", "message": "Successfully assigned default/web-0 to node-1",
    "source": {"component": "default-scheduler"}, "firstTimestamp": None,
    "lastTimestamp": None, "count": 1, "type": "Normal",
    "eventTime": "2024-05-01T10:20:30.123456Z", "action": "Binding",
    "reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler-host"}

EVENTS_V1 = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "e1", "namespace": "default", "creationTimestamp": None},
    "eventTime": "2024-05-01T10:20:30.000001Z",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:21:30.500000Z"},
    "reportingController": "kopf", "reportingInstance": "kopf-1", "action": "Logging",
    "reason": "Hello", "regarding": {"kind": "Pod", "name": "web-0"}, "note": "hi",
    "type": "Normal", "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None}

OTHERS = [
    {"apiVersion": "v1", "kind": "Binding",
     "metadata": {"name": "web-0", "namespace": "default", "creationTimestamp": None},
     "target": {"kind": "Node", "name": "node-1"}},
    {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
     "preconditions": {"uid": "6f1c9a1e-0000-4000-8000-000000000001"},
     "propagationPolicy": "Background"},
    {"apiVersion": "apps/v1", "kind": "CreateOptions", "dryRun": ["All"],
     "fieldManager": "kube-controller-manager"},
    {"apiVersion": "v1", "kind": "PatchOptions", "force": True, "fieldManager": "m"},
    {"apiVersion": "v1", "kind": "UpdateOptions", "fieldValidation": "Strict"},
    {"apiVersion": "policy/v1", "kind": "Eviction",
     "metadata": {"name": "web-0", "namespace": "default", "creationTimestamp": None},
     "deleteOptions": {"gracePeriodSeconds": 5}},
    {"apiVersion": "autoscaling/v1", "kind": "Scale",
     "metadata": {"name": "web", "namespace": "default", "creationTimestamp": TS},
     "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web"}},
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
     "metadata": {"name": "h", "creationTimestamp": None},
     "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
              "minReplicas": 1, "maxReplicas": 5,
              "metrics": [{"type": "Resource", "resource": {
                  "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
     "status": {"desiredReplicas": 0, "currentMetrics": None}},
    {"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
     "message": 'pods "x" not found', "reason": "NotFound",
     "details": {"name": "x", "kind": "pods"}, "code": 404},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "creationTimestamp": TS},
     "data": {"k": "dmFsdWU=", "empty": ""}, "type": "Opaque", "immutable": False},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": TS},
     "data": {"a": "", "b": "x"}, "binaryData": {"bin": "AAEC"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "creationTimestamp": TS,
                                                        "deletionTimestamp": TS},
     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating"}},
    {"apiVersion": "v1", "kind": "ReplicationController",
     "metadata": {"name": "rc", "creationTimestamp": TS},
     "spec": {"replicas": 0, "selector": {"a": "b"}, "template": {
         "metadata": {"creationTimestamp": None, "labels": {"a": "b"}},
         "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}},
     "status": {"replicas": 0}},
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "creationTimestamp": TS},
     "subsets": [{"addresses": [{"ip": "10.244.0.5", "nodeName": "node-1", "targetRef": {
         "kind": "Pod", "name": "web-0", "namespace": "default"}}],
                  "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]},
    {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "creationTimestamp": TS},
     "spec": {"hard": {"pods": "10", "count/resourcequotas": "1"}},
     "status": {"hard": {"pods": "10"}, "used": {"pods": "0"}}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
     "metadata": {"name": "pvc", "creationTimestamp": TS},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
              "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default",
                                                             "creationTimestamp": TS},
     "secrets": [{"name": "default-token"}], "automountServiceAccountToken": False},
    {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "creationTimestamp": TS},
     "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}},
    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
     "metadata": {"name": "kube-scheduler", "creationTimestamp": TS},
     "spec": {"holderIdentity": "h", "leaseDurationSeconds": 15,
              "acquireTime": "2024-05-01T10:20:30.000000Z",
              "renewTime": "2024-05-01T10:20:31.250000Z", "leaseTransitions": 0}},
]

EVERY = [POD, DEPLOYMENT, NODE, SERVICE, CORE_EVENT, EVENTS_V1, *OTHERS]


@pytest.mark.parametrize("obj", EVERY, ids=lambda o: f"{o['apiVersion']}/{o['kind']}")
def test_decode_of_encode_is_the_object(obj: dict) -> None:
    assert decode_object(encode_object(obj)) == obj


def test_list_round_trips_from_item_messages() -> None:
    items = [object_message(POD)[2], object_message(POD)[2]]
    body = list_body("v1", "PodList", {"resourceVersion": "7", "continue": "abc",
                                       "remainingItemCount": 3}, items)
    expected_item = {k: v for k, v in POD.items() if k not in ("apiVersion", "kind")}
    assert decode_object(body) == {"apiVersion": "v1", "kind": "PodList",
                                   "metadata": {"resourceVersion": "7", "continue": "abc",
                                                "remainingItemCount": 3},
                                   "items": [expected_item, expected_item]}


def test_status_of_a_status_error_round_trips() -> None:
    error: StatusError = not_found("pods", "nope")
    assert decode_object(encode_object(error.status())) == error.status()


def test_kinds_without_a_message_are_refused_for_the_json_fallback() -> None:
    with pytest.raises(NoMessage):
        encode_object({"apiVersion": "meta.k8s.io/v1", "kind": "Table", "rows": []})


def test_fields_the_message_lacks_and_wrong_types_are_left_out() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "creationTimestamp": None, "generation": "three"},
           "data": {"a": "b"}, "notAField": 1}
    assert decode_object(encode_object(obj)) == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "creationTimestamp": None}, "data": {"a": "b"}}


# -- golden: Google's protobuf runtime with upstream's descriptors ---------------------------

def _unwrap(body: bytes) -> tuple[str, str, bytes]:
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(body[4:])
    assert body[:4] == b"k8s\x00"
    return unknown.typeMeta.apiVersion, unknown.typeMeta.kind, unknown.raw


@pytest.mark.parametrize("obj", EVERY, ids=lambda o: f"{o['apiVersion']}/{o['kind']}")
def test_google_protobuf_reserialises_our_bytes_unchanged(obj: dict) -> None:
    """Canonical bytes: every field in number order, nothing Google's encoder would write
    differently; and the envelope is upstream's runtime.Unknown, byte for byte."""
    api_version, kind, raw = object_message(obj)
    from minikube_py.api.kinds import proto
    cls = message_class(proto.kind_message(api_version, kind))
    assert cls.FromString(raw).SerializeToString(deterministic=True) == raw  # maps by key
    body = encode_object(obj)
    unknown_cls = message_class("k8s.io.apimachinery.pkg.runtime.Unknown")
    unknown = unknown_cls(raw=raw, contentEncoding="", contentType="")
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    assert body == b"k8s\x00" + unknown.SerializeToString()


def test_google_protobuf_reads_our_pod_as_meant() -> None:
    _, _, raw = _unwrap(encode_object(POD))
    pod = message_class("k8s.io.api.core.v1.Pod").FromString(raw)
    assert pod.metadata.creationTimestamp.seconds == 1714558830
    assert pod.metadata.labels["tier"] == ""
    assert pod.metadata.ownerReferences[0].controller is True
    assert pod.metadata.managedFields[0].fieldsV1.Raw == \
        b'{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}'
    c = pod.spec.containers[0]
    assert c.ports[0].containerPort == 80
    assert c.resources.limits["cpu"].string == "500m"
    assert c.livenessProbe.handler.httpGet.port.type == 1  # IntOrString, string form
    assert c.livenessProbe.handler.httpGet.port.strVal == "http"
    assert c.readinessProbe.handler.tcpSocket.port.intVal == 80
    assert c.securityContext.HasField("runAsUser") and c.securityContext.runAsUser == 0
    assert pod.spec.volumes[1].volumeSource.configMap.localObjectReference.name == "cm"
    assert pod.spec.HasField("priority") and pod.spec.priority == 0  # *int32 zero: written
    assert not pod.spec.HasField("hostNetwork")
    assert pod.status.containerStatuses[0].ready is True


def test_google_protobuf_bytes_decode_to_the_json_go_prints() -> None:
    """An object built field by field with Google's runtime (as a Go client would send it),
    including what only a binary encoder can say: negative numbers, microsecond times."""
    event_cls = message_class("k8s.io.api.events.v1.Event")
    event = event_cls()
    event.metadata.name = "e"
    event.metadata.creationTimestamp.SetInParent()
    event.eventTime.seconds, event.eventTime.nanos = 1714558830, 123456000
    event.series.count = -1
    event.series.lastObservedTime.seconds = 1714558831
    event.reportingController = "c"
    event.regarding.kind = "Pod"
    event.deprecatedCount = 0
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown")(
        raw=event.SerializeToString())
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "events.k8s.io/v1", "Event"
    assert decode_object(b"k8s\x00" + unknown.SerializeToString()) == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "creationTimestamp": None},
        "eventTime": "2024-05-01T10:20:30.123456Z",
        "series": {"count": -1, "lastObservedTime": "2024-05-01T10:20:31.000000Z"},
        "reportingController": "c", "regarding": {"kind": "Pod"}}


def test_watch_frame_is_a_length_prefixed_watch_event() -> None:
    frame = watch_frame("ADDED", encode_object(POD))
    (length,) = struct.unpack(">I", frame[:4])
    assert length == len(frame) - 4
    event = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent").FromString(frame[4:])
    assert event.type == "ADDED"
    assert decode_object(event.object.raw) == POD


def test_envelope_matches_upstreams_unknown_for_empty_raw() -> None:
    assert envelope("v1", "Status", b"") == b"k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12\x00\x1a\x00\"\x00"
