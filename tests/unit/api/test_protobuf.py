"""Protobuf request bodies: real kubectl 1.32/1.33 bytes decode to the JSON kubectl 1.31 sent.

The fixtures were recorded from a throwaway HTTP server: kubectl 1.33 and 1.32 POSTed
byte-identical `application/vnd.kubernetes.protobuf` bodies for every command below, and
kubectl 1.31 sent the same objects as `application/json`; that JSON is the expected dict, so
each case checks names, nesting, omitted zeros and `creationTimestamp: None` at once. The
hand-built cases cover what kubectl did not happen to send (non-zero Time, packed and negative
numbers, unknown fields) and every malformed-body error.
"""

from __future__ import annotations

import base64

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api import protobuf_tables
from minikube_py.api.kinds import proto
from minikube_py.api.errors import StatusError
from minikube_py.api.protobuf import PROTOBUF_CONTENT_TYPE, decode_object

KUBECTL_BODIES = [
    # kubectl create deployment dep --image=nginx:1.25 --replicas=2 --port=80
    (
        (
            "azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50Er0BCh8KA2RlcBIAGgAiACoAMgA4AEIAWgoKA2FwcBIDZGVw"
            "EosBCAISDAoKCgNhcHASA2RlcBpxChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDZGVwElESMwoFbmdpbngS"
            "Cm5naW54OjEuMjUqADIKCgAQABhQIgAqAEIAagByAIABAIgBAJABAKIBABoAMgBCAEoAUgBYAGAAaACCAQCK"
            "AQCaAQDCAQAiAgoAKAA4ABoMCAAQABgAIAAoADgAGgAiAA=="
        ),
        {"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "dep", "creationTimestamp": None, "labels": {"app": "dep"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "dep"}},
                "template": {
                    "metadata": {"creationTimestamp": None, "labels": {"app": "dep"}},
                    "spec": {
                        "containers": [
                            {"name": "nginx", "image": "nginx:1.25",
                                "ports": [{"containerPort": 80}], "resources": {}}]}},
                "strategy": {}},
            "status": {}},
    ),
    # kubectl create deployment multi --image=nginx --image=busybox
    (
        (
            "azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50Et0BCiMKBW11bHRpEgAaACIAKgAyADgAQgBaDAoDYXBwEgVt"
            "dWx0aRKnAQgBEg4KDAoDYXBwEgVtdWx0aRqKAQoeCgASABoAIgAqADIAOABCAFoMCgNhcHASBW11bHRpEmgS"
            "IgoFbmdpbngSBW5naW54KgBCAGoAcgCAAQCIAQCQAQCiAQASJgoHYnVzeWJveBIHYnVzeWJveCoAQgBqAHIA"
            "gAEAiAEAkAEAogEAGgAyAEIASgBSAFgAYABoAIIBAIoBAJoBAMIBACICCgAoADgAGgwIABAAGAAgACgAOAAa"
            "ACIA"
        ),
        {"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "multi", "creationTimestamp": None,
                "labels": {"app": "multi"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "multi"}},
                "template": {
                    "metadata": {"creationTimestamp": None, "labels": {"app": "multi"}},
                    "spec": {
                        "containers": [{"name": "nginx", "image": "nginx", "resources": {}},
                            {"name": "busybox", "image": "busybox", "resources": {}}]}},
                "strategy": {}},
            "status": {}},
    ),
    # kubectl create service clusterip svc --tcp=80:8080
    (
        (
            "azhzAAoNCgJ2MRIHU2VydmljZRJpCh8KA3N2YxIAGgAiACoAMgA4AEIAWgoKA2FwcBIDc3ZjEkIKGwoHODAt"
            "ODA4MBIDVENQGFAiBwgAEJA/GgAoABIKCgNhcHASA3N2YxoAIglDbHVzdGVySVA6AEIAUgBaAGAAaAAaAgoA"
            "GgAiAA=="
        ),
        {"kind": "Service", "apiVersion": "v1",
            "metadata": {"name": "svc", "creationTimestamp": None, "labels": {"app": "svc"}},
            "spec": {
                "ports": [
                    {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                "selector": {"app": "svc"}, "type": "ClusterIP"},
            "status": {"loadBalancer": {}}},
    ),
    # kubectl create service nodeport np --tcp=80:8080 --node-port=30080
    (
        (
            "azhzAAoNCgJ2MRIHU2VydmljZRJnCh0KAm5wEgAaACIAKgAyADgAQgBaCQoDYXBwEgJucBJCCh0KBzgwLTgw"
            "ODASA1RDUBhQIgcIABCQPxoAKIDrARIJCgNhcHASAm5wGgAiCE5vZGVQb3J0OgBCAFIAWgBgAGgAGgIKABoA"
            "IgA="
        ),
        {"kind": "Service", "apiVersion": "v1",
            "metadata": {"name": "np", "creationTimestamp": None, "labels": {"app": "np"}},
            "spec": {
                "ports": [
                    {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080,
                        "nodePort": 30080}],
                "selector": {"app": "np"}, "type": "NodePort"},
            "status": {"loadBalancer": {}}},
    ),
    # kubectl create service loadbalancer lb --tcp=443
    (
        (
            "azhzAAoNCgJ2MRIHU2VydmljZRJmCh0KAmxiEgAaACIAKgAyADgAQgBaCQoDYXBwEgJsYhJBChgKAzQ0MxID"
            "VENQGLsDIgcIABC7AxoAKAASCQoDYXBwEgJsYhoAIgxMb2FkQmFsYW5jZXI6AEIAUgBaAGAAaAAaAgoAGgAi"
            "AA=="
        ),
        {"kind": "Service", "apiVersion": "v1",
            "metadata": {"name": "lb", "creationTimestamp": None, "labels": {"app": "lb"}},
            "spec": {
                "ports": [{"name": "443", "protocol": "TCP", "port": 443, "targetPort": 443}],
                "selector": {"app": "lb"}, "type": "LoadBalancer"},
            "status": {"loadBalancer": {}}},
    ),
    # kubectl create service externalname ext --external-name=example.com
    (
        (
            "azhzAAoNCgJ2MRIHU2VydmljZRJaCh8KA2V4dBIAGgAiACoAMgA4AEIAWgoKA2FwcBIDZXh0EjMSCgoDYXBw"
            "EgNleHQaACIMRXh0ZXJuYWxOYW1lOgBCAFILZXhhbXBsZS5jb21aAGAAaAAaAgoAGgAiAA=="
        ),
        {"kind": "Service", "apiVersion": "v1",
            "metadata": {"name": "ext", "creationTimestamp": None, "labels": {"app": "ext"}},
            "spec": {"selector": {"app": "ext"}, "type": "ExternalName",
                "externalName": "example.com"},
            "status": {"loadBalancer": {}}},
    ),
    # kubectl create configmap cm --from-literal=a=b
    (
        (
            "azhzAAoPCgJ2MRIJQ29uZmlnTWFwEhwKEgoCY20SABoAIgAqADIAOABCABIGCgFhEgFiGgAiAA=="
        ),
        {"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "cm", "creationTimestamp": None}, "data": {"a": "b"}},
    ),
    # kubectl create secret generic s --from-literal=k=v
    (
        (
            "azhzAAoMCgJ2MRIGU2VjcmV0Eh0KEQoBcxIAGgAiACoAMgA4AEIAEgYKAWsSAXYaABoAIgA="
        ),
        {"kind": "Secret", "apiVersion": "v1",
            "metadata": {"name": "s", "creationTimestamp": None}, "data": {"k": "dg=="}},
    ),
    # kubectl create secret docker-registry reg --docker-username=u --docker-password=p
    #     --docker-server=r.io
    (
        (
            "azhzAAoMCgJ2MRIGU2VjcmV0EowBChMKA3JlZxIAGgAiACoAMgA4AEIAElUKES5kb2NrZXJjb25maWdqc29u"
            "EkB7ImF1dGhzIjp7InIuaW8iOnsidXNlcm5hbWUiOiJ1IiwicGFzc3dvcmQiOiJwIiwiYXV0aCI6ImRUcHci"
            "fX19Gh5rdWJlcm5ldGVzLmlvL2RvY2tlcmNvbmZpZ2pzb24aACIA"
        ),
        {"kind": "Secret", "apiVersion": "v1",
            "metadata": {"name": "reg", "creationTimestamp": None},
            "data": {
                ".dockerconfigjson": ("eyJhdXRocyI6eyJyLmlvIjp7InVzZXJuYW1lIjoidSIsInBhc3N3b3Jk"
                                      "IjoicCIsImF1dGgiOiJkVHB3In19fQ==")},
            "type": "kubernetes.io/dockerconfigjson"},
    ),
    # kubectl create namespace ns1
    (
        (
            "azhzAAoPCgJ2MRIJTmFtZXNwYWNlEhsKEwoDbnMxEgAaACIAKgAyADgAQgASABoCCgAaACIA"
        ),
        {"kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": "ns1", "creationTimestamp": None}, "spec": {}, "status": {}},
    ),
    # kubectl create serviceaccount sa1
    (
        (
            "azhzAAoUCgJ2MRIOU2VydmljZUFjY291bnQSFQoTCgNzYTESABoAIgAqADIAOABCABoAIgA="
        ),
        {"kind": "ServiceAccount", "apiVersion": "v1",
            "metadata": {"name": "sa1", "creationTimestamp": None}},
    ),
    # kubectl create quota q --hard=cpu=1,memory=1G,pods=2
    (
        (
            "azhzAAoTCgJ2MRINUmVzb3VyY2VRdW90YRJAChEKAXESABoAIgAqADIAOABCABIpCgoKA2NwdRIDCgExCg4K"
            "Bm1lbW9yeRIECgIxRwoLCgRwb2RzEgMKATIaABoAIgA="
        ),
        {"kind": "ResourceQuota", "apiVersion": "v1",
            "metadata": {"name": "q", "creationTimestamp": None},
            "spec": {"hard": {"cpu": "1", "memory": "1G", "pods": "2"}}, "status": {}},
    ),
    # kubectl create job j --image=busybox -- echo hi
    (
        (
            "azhzAAoPCghiYXRjaC92MRIDSm9iEoIBChEKAWoSABoAIgAqADIAOABCABJjMmEKEAoAEgAaACIAKgAyADgA"
            "QgASTRIqCgFqEgdidXN5Ym94GgRlY2hvGgJoaSoAQgBqAHIAgAEAiAEAkAEAogEAGgVOZXZlcjIAQgBKAFIA"
            "WABgAGgAggEAigEAmgEAwgEAGgggACgAMAA6ABoAIgA="
        ),
        {"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": "j", "creationTimestamp": None},
            "spec": {
                "template": {"metadata": {"creationTimestamp": None},
                    "spec": {
                        "containers": [
                            {"name": "j", "image": "busybox", "command": ["echo", "hi"],
                                "resources": {}}],
                        "restartPolicy": "Never"}}},
            "status": {}},
    ),
    # kubectl create cronjob cj --image=busybox --schedule=*/1 * * * * -- echo hi
    (
        (
            "azhzAAoTCghiYXRjaC92MRIHQ3JvbkpvYhKoAQoSCgJjahIAGgAiACoAMgA4AEIAEo8BCgsqLzEgKiAqICog"
            "KhoAKn4KEgoCY2oSABoAIgAqADIAOABCABJoMmYKEAoAEgAaACIAKgAyADgAQgASUhIrCgJjahIHYnVzeWJv"
            "eBoEZWNobxoCaGkqAEIAagByAIABAIgBAJABAKIBABoJT25GYWlsdXJlMgBCAEoAUgBYAGAAaACCAQCKAQCa"
            "AQDCAQAaABoAIgA="
        ),
        {"kind": "CronJob", "apiVersion": "batch/v1",
            "metadata": {"name": "cj", "creationTimestamp": None},
            "spec": {"schedule": "*/1 * * * *",
                "jobTemplate": {"metadata": {"name": "cj", "creationTimestamp": None},
                    "spec": {
                        "template": {"metadata": {"creationTimestamp": None},
                            "spec": {
                                "containers": [
                                    {"name": "cj", "image": "busybox",
                                        "command": ["echo", "hi"], "resources": {}}],
                                "restartPolicy": "OnFailure"}}}}},
            "status": {}},
    ),
]


@pytest.mark.parametrize(("body", "expected"), KUBECTL_BODIES,
                         ids=[e["kind"] + "/" + e["metadata"]["name"] for _, e in KUBECTL_BODIES])
def test_kubectl_create_bodies_decode_to_their_json(body: str, expected: dict) -> None:
    assert decode_object(base64.b64decode(body)) == expected


# `kubectl create job rich-manual --from=cronjob/rich`: kubectl re-encodes a CronJob it read
# (served as JSON, with most pod-template features set) into a protobuf Job.
RICH_JOB_PB = (
    "azhzAAoPCghiYXRjaC92MRIDSm9iEqQJCqMBCgtyaWNoLW1hbnVhbBIAGgAiACoAMgA4AEIAWgsKA2pvYhIEcmljaGIr"
    "CiFjcm9uam9iLmt1YmVybmV0ZXMuaW8vaW5zdGFudGlhdGUSBm1hbnVhbGIJCgRub3RlEgF4akEKB0Nyb25Kb2IaBHJp"
    "Y2giJDBiNWMzZjVlLTExMTEtMjIyMi0zMzMzLTQ0NDQ1NTU1NjY2NioIYmF0Y2gvdjEwARLxBwgCEAQY2AQy1QcKHQoA"
    "EgAaACIAKgAyADgAQgBaCwoDam9iEgRyaWNoErMHChYKB3NjcmF0Y2gSCxIJCgASBQoDMUdpChEKA21lbRIKEggKBk1l"
    "bW9yeQofCgRob3N0EhcKFQoIL3Zhci9sb2cSCURpcmVjdG9yeQokCgNjZmcSHZoBGgoECgJjbRINCgFhEgVhLnR4dBik"
    "AxiAAiABCg4KA3NlYxIHMgUKAXMYAAoSCgVjbGFpbRIJUgcKA3B2YxABCioKBGluZm8SIoIBHwodCgZsYWJlbHMSEwoA"
    "Eg9tZXRhZGF0YS5sYWJlbHMKGwoEcHJvahIT0gEQCg4iDAoAEJAcGgV0b2tlbhKNBAoEbWFpbhIKbmdpbng6MS4yNSIG"
    "LS1mbGFnIgAqADISCgRodHRwEAAYkD8iA1RDUCoAMgoKABAAGAAiACoAOgoKBVBMQUlOEgF2OgkKBUVNUFRZEgA6GAoH"
    "RlJPTV9DTRIAGgsaCQoECgJjbRIBYTodCgtGUk9NX1NFQ1JFVBIAGgwiCgoDCgFzEgFrGAA6HAoDUE9EEgAaEwoRCgAS"
    "DW1ldGFkYXRhLm5hbWU6HwoDQ1BVEgAaFhIUCgASCmxpbWl0cy5jcHUaBAoCMW1CMQoNCgNjcHUSBgoENTAwbQoRCgZt"
    "ZW1vcnkSBwoFMTI4TWkSDQoDY3B1EgYKBDI1MG1KGQoHc2NyYXRjaBAAGggvc2NyYXRjaCIAMgBKGgoDY2ZnEAEaCC9l"
    "dGMvY2ZnIgVhLnR4dDIAUi8KIxIhCggvaGVhbHRoehIKCAEQABoEaHR0cBoAIgAqBQoBWBIAEAMYACAKKAAwAFoZCg0a"
    "CwoHCAAQkD8aABIAEAAYACAAKAAwAWIGEgQiAggFagByDElmTm90UHJlc2VudHohChAKCU5FVF9BRE1JThIDQUxMEAAg"
    "////////////ATABgAEBiAEAkAEBmgEMCgJQXxIGCgQKAmNtogEVRmFsbGJhY2tUb0xvZ3NPbkVycm9ysgEcChAKDgoD"
    "Y2F0CgcvdG1wL29rEAAYACAAKAAwABoJT25GYWlsdXJlIAAyADoLCgRkaXNrEgNzc2RCAEoAUgBYAGAAaAByDRAAGAAg"
    "ASACIAMo0A+CAQCKAQCSARgKFgoUChIKEAoEem9uZRICSW4aAWEaAWKaAQCiATEKBGluaXQSB2J1c3lib3gaAnNoGgIt"
    "YxoEdHJ1ZSoAQgBqAHIAgAEAiAEAkAEAogEAqAEAsgEbCgFrEgVFcXVhbBoBdiIKTm9TY2hlZHVsZSgesgEOCgASBkV4"
    "aXN0cxoAIgDCAQA4AEAASgpOb25JbmRleGVkUAAaCCAAKAAwADoAGgAiAA=="
)
RICH_JOB_JSON = (
    '{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"rich-manual","creationTimestamp":nu'
    'll,"labels":{"job":"rich"},"annotations":{"cronjob.kubernetes.io/instantiate":"manual","note"'
    ':"x"},"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"rich","uid":"0b5c3'
    'f5e-1111-2222-3333-444455556666","controller":true}]},"spec":{"parallelism":2,"completions":4'
    ',"activeDeadlineSeconds":600,"backoffLimit":0,"template":{"metadata":{"creationTimestamp":nul'
    'l,"labels":{"job":"rich"}},"spec":{"volumes":[{"name":"scratch","emptyDir":{"sizeLimit":"1Gi"'
    '}},{"name":"mem","emptyDir":{"medium":"Memory"}},{"name":"host","hostPath":{"path":"/var/log"'
    ',"type":"Directory"}},{"name":"cfg","configMap":{"name":"cm","items":[{"key":"a","path":"a.tx'
    't","mode":420}],"defaultMode":256,"optional":true}},{"name":"sec","secret":{"secretName":"s",'
    '"defaultMode":0}},{"name":"claim","persistentVolumeClaim":{"claimName":"pvc","readOnly":true}'
    '},{"name":"info","downwardAPI":{"items":[{"path":"labels","fieldRef":{"fieldPath":"metadata.l'
    'abels"}}]}},{"name":"proj","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds'
    '":3600,"path":"token"}}]}}],"initContainers":[{"name":"init","image":"busybox","command":["sh'
    '","-c","true"],"resources":{}}],"containers":[{"name":"main","image":"nginx:1.25","args":["--'
    'flag",""],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"containerPort":0}]'
    ',"envFrom":[{"prefix":"P_","configMapRef":{"name":"cm"}}],"env":[{"name":"PLAIN","value":"v"}'
    ',{"name":"EMPTY"},{"name":"FROM_CM","valueFrom":{"configMapKeyRef":{"name":"cm","key":"a"}}},'
    '{"name":"FROM_SECRET","valueFrom":{"secretKeyRef":{"name":"s","key":"k","optional":false}}},{'
    '"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"CPU","valueFrom'
    '":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}}],"resources":{"limits":{"cpu'
    '":"500m","memory":"128Mi"},"requests":{"cpu":"250m"}},"volumeMounts":[{"name":"scratch","moun'
    'tPath":"/scratch"},{"name":"cfg","readOnly":true,"mountPath":"/etc/cfg","subPath":"a.txt"}],"'
    'livenessProbe":{"httpGet":{"path":"/healthz","port":"http","httpHeaders":[{"name":"X","value"'
    ':""}]},"initialDelaySeconds":3,"periodSeconds":10},"readinessProbe":{"tcpSocket":{"port":8080'
    '},"failureThreshold":1},"startupProbe":{"exec":{"command":["cat","/tmp/ok"]}},"lifecycle":{"p'
    'reStop":{"sleep":{"seconds":5}}},"terminationMessagePolicy":"FallbackToLogsOnError","imagePul'
    'lPolicy":"IfNotPresent","securityContext":{"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]'
    '},"privileged":false,"runAsUser":-1,"readOnlyRootFilesystem":true},"stdin":true,"tty":true}],'
    '"restartPolicy":"OnFailure","terminationGracePeriodSeconds":0,"nodeSelector":{"disk":"ssd"},"'
    'automountServiceAccountToken":false,"securityContext":{"runAsUser":0,"runAsNonRoot":false,"su'
    'pplementalGroups":[1,2,3],"fsGroup":2000},"affinity":{"nodeAffinity":{"requiredDuringScheduli'
    'ngIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator"'
    ':"In","values":["a","b"]}]}]}}},"tolerations":[{"key":"k","operator":"Equal","value":"v","eff'
    'ect":"NoSchedule","tolerationSeconds":30},{"operator":"Exists"}]}},"ttlSecondsAfterFinished":'
    '0,"completionMode":"NonIndexed","suspend":false},"status":{}}\n'
)
LEGACY_JOB_PB = (
    "azhzAAoPCghiYXRjaC92MRIDSm9iEu8BCm0KDWxlZ2FjeS1tYW51YWwSABoAIgAqADIAOABCAGIrCiFjcm9uam9iLmt1"
    "YmVybmV0ZXMuaW8vaW5zdGFudGlhdGUSBm1hbnVhbGohCgdDcm9uSm9iGgZsZWdhY3kiAnUyKghiYXRjaC92MTABEnQy"
    "cgoQCgASABoAIgAqADIAOABCABJeChkKBGRpc2sSERoPCgNwZDESBGV4dDQYACAAEiAKAWMSB2J1c3lib3gqAEIAagBy"
    "AIABAIgBAJABAKIBABoFTmV2ZXIyAEIASgBSAFgAYABoAIIBAIoBAJoBAMIBABoIIAAoADAAOgAaACIA"
)


def test_job_from_rich_cronjob_decodes_to_the_json_kubectl_sent() -> None:
    assert decode_object(base64.b64decode(RICH_JOB_PB)) == orjson.loads(RICH_JOB_JSON)


def test_rich_job_keeps_set_zeros_and_drops_omitempty_zeros() -> None:
    job = decode_object(base64.b64decode(RICH_JOB_PB))
    pod = job["spec"]["template"]["spec"]
    main = pod["containers"][0]
    assert job["spec"]["backoffLimit"] == 0  # *int32 set to 0: present on the wire, kept
    assert pod["terminationGracePeriodSeconds"] == 0
    assert pod["automountServiceAccountToken"] is False
    assert pod["volumes"][4] == {"name": "sec", "secret": {"secretName": "s", "defaultMode": 0}}
    assert main["ports"][1] == {"containerPort": 0}  # no omitempty on containerPort
    assert main["env"][1] == {"name": "EMPTY"}  # value "" is omitempty
    assert main["args"] == ["--flag", ""]  # list items are never dropped
    assert main["securityContext"]["runAsUser"] == -1
    assert main["livenessProbe"]["httpGet"]["port"] == "http"  # IntOrString, string form
    assert main["readinessProbe"]["tcpSocket"]["port"] == 8080
    assert pod["volumes"][3]["configMap"]["name"] == "cm"  # inline LocalObjectReference
    assert main["resources"]["limits"] == {"cpu": "500m", "memory": "128Mi"}
    assert pod["securityContext"]["supplementalGroups"] == [1, 2, 3]
    assert job["metadata"]["ownerReferences"][0]["controller"] is True


def test_deprecated_volume_plugin_decodes_from_the_descriptor_data() -> None:
    """The hand tables refused in-tree volume plugins; the data describes every field."""
    job = decode_object(base64.b64decode(LEGACY_JOB_PB))
    assert job["spec"]["template"]["spec"]["volumes"] == [
        {"name": "disk", "gcePersistentDisk": {"pdName": "pd1", "fsType": "ext4"}}]


# -- hand-built bodies -----------------------------------------------------------------------

def _uvarint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative ints go on the wire as 10-byte two's complement
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint(num: int, value: int) -> bytes:
    return _uvarint(num << 3) + _uvarint(value)


def _bytes(num: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _uvarint(num << 3 | 2) + _uvarint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _bytes(1, api_version) + _bytes(2, kind)
    return b"k8s\x00" + _bytes(1, type_meta) + _bytes(2, raw) + _bytes(3, "") + _bytes(4, "")


def _meta(*fields: bytes) -> bytes:
    return _bytes(1, b"".join(fields))


def _decode(api_version: str, kind: str, *fields: bytes) -> dict:
    return decode_object(_envelope(api_version, kind, b"".join(fields)))


def test_content_type_constant() -> None:
    assert PROTOBUF_CONTENT_TYPE == "application/vnd.kubernetes.protobuf"


@pytest.mark.parametrize(("seconds", "nanos", "expected"), [
    (0, 0, None),  # the zero Time is JSON null
    (1714979289, 0, "2024-05-06T07:08:09Z"),
    (1714979289, 999_999_999, "2024-05-06T07:08:09Z"),  # JSON Time has whole seconds
    (-1, 0, "1969-12-31T23:59:59Z"),
    (5, -1, "1970-01-01T00:00:04Z"),  # nanos carry into the seconds, as in Go's time.Unix
    (-62135596800, 0, "0001-01-01T00:00:00Z"),
])
def test_time_is_rfc3339_in_utc(seconds: int, nanos: int, expected: str | None) -> None:
    time = _bytes(8, _varint(1, seconds) + _varint(2, nanos))
    assert _decode("v1", "ConfigMap", _meta(time))["metadata"]["creationTimestamp"] == expected


def test_deletion_timestamp_absent_on_the_wire_is_absent() -> None:
    assert _decode("v1", "ConfigMap", _meta(_bytes(1, "x"))) == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}


def test_pointer_zero_is_kept_and_omitempty_zero_is_dropped() -> None:
    spec = _varint(1, 0) + _varint(5, 0) + _varint(6, 0) + _varint(7, 0)
    assert _decode("apps/v1", "Deployment", _bytes(2, spec))["spec"] == {
        "replicas": 0, "revisionHistoryLimit": 0}


def test_negative_int32_and_int64() -> None:
    sc = _varint(2, -5) + _varint(5, -(2**40))  # runAsUser int64, fsGroup int64
    port = _bytes(1, "p") + _varint(2, 2**32 + 7) + _varint(3, -1)  # int32 wraps like Go's
    pod = _decode("v1", "Pod", _bytes(2, _bytes(14, sc) + _bytes(2, _bytes(6, port))))
    assert pod["spec"]["securityContext"] == {"runAsUser": -5, "fsGroup": -(2**40)}
    assert pod["spec"]["containers"] == [{"ports": [{"name": "p", "hostPort": 7,
                                                     "containerPort": -1}]}]


@pytest.mark.parametrize("groups", [
    _varint(4, 1) + _varint(4, 300),  # one tag per element (what gogo writes)
    _bytes(4, _uvarint(1) + _uvarint(300)),  # packed
])
def test_repeated_ints_plain_or_packed(groups: bytes) -> None:
    pod = _decode("v1", "Pod", _bytes(2, _bytes(14, groups)))
    assert pod["spec"]["securityContext"]["supplementalGroups"] == [1, 300]


@pytest.mark.parametrize(("int_or_string", "expected"), [
    (_varint(1, 0) + _varint(2, 8080) + _bytes(3, ""), 8080),
    (_varint(1, 1) + _varint(2, 0) + _bytes(3, "http"), "http"),
    (b"", 0),  # an empty IntOrString is the int 0, as in JSON
])
def test_int_or_string(int_or_string: bytes, expected: int | str) -> None:
    port = _bytes(1, "p") + _varint(3, 80) + _bytes(4, int_or_string)
    svc = _decode("v1", "Service", _bytes(2, _bytes(1, port)))
    assert svc["spec"]["ports"] == [{"name": "p", "port": 80, "targetPort": expected}]


def test_map_entries_and_missing_map_values() -> None:
    cpu = _bytes(1, _bytes(1, "cpu") + _bytes(2, _bytes(1, "500m")))
    hard = cpu + _bytes(1, _bytes(1, "pods"))
    quota = _decode("v1", "ResourceQuota", _bytes(2, hard))
    assert quota["spec"] == {"hard": {"cpu": "500m", "pods": "0"}}  # empty Quantity is "0"
    secret = _decode("v1", "Secret", _bytes(2, _bytes(1, "k") + _bytes(2, b"\x00\xff")),
                     _bytes(2, _bytes(1, "e")))
    assert secret["data"] == {"k": "AP8=", "e": ""}


def test_unknown_fields_of_every_wire_type_are_skipped() -> None:
    unknown = (_varint(99, 7) + _uvarint(98 << 3 | 1) + b"\x00" * 8 + _bytes(97, "x")
               + _uvarint(96 << 3 | 5) + b"\x00" * 4)
    cm = _decode("v1", "ConfigMap", unknown, _meta(unknown, _bytes(1, "cm")), unknown,
                 _bytes(2, _bytes(1, "a") + _bytes(2, "b") + unknown))
    assert cm == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                  "data": {"a": "b"}}


def test_repeated_occurrences_last_scalar_wins_and_messages_merge() -> None:
    meta = _meta(_bytes(1, "a"), _bytes(11, _bytes(1, "x") + _bytes(2, "1")))
    meta2 = _meta(_bytes(1, "b"), _bytes(3, ""), _bytes(11, _bytes(1, "y") + _bytes(2, "2")))
    assert _decode("v1", "ConfigMap", meta, meta2)["metadata"] == {
        "name": "b", "labels": {"x": "1", "y": "2"}}


def test_managed_fields_raw_json() -> None:
    entry = _bytes(1, "kubectl") + _bytes(7, _bytes(1, b'{"f:data":{}}'))
    cm = _decode("v1", "ConfigMap", _meta(_bytes(17, entry)))
    assert cm["metadata"]["managedFields"] == [{"manager": "kubectl",
                                                "fieldsV1": {"f:data": {}}}]


# -- malformed bodies --------------------------------------------------------------------------

DEPLOYMENT = base64.b64decode(KUBECTL_BODIES[0][0])


@pytest.mark.parametrize(("body", "message"), [
    (b"", "the object provided is unrecognized: empty data"),
    (b'{"kind":"Pod"}', ("the object provided is unrecognized: provided data does not appear "
                         "to be a protobuf message, expected prefix [107 56 115 0]")),
    (b"k8s\x00", "the object provided is unrecognized: empty body"),
    (b"k8s\x00\x0a\x05\x0a\x02v1", "the object provided is unrecognized: unexpected EOF"),
    (b"k8s\x00" + b"\xff" * 11, "the object provided is unrecognized: proto: integer overflow"),
    (b"k8s\x00\x0b", "the object provided is unrecognized: proto: illegal wireType 3"),
    (_envelope("v1", "ConfigMap", _varint(1, 5)),
     ('ConfigMap in version "v1" cannot be handled as a ConfigMap: metadata: '
      "proto: wrong wireType = 0")),
    (_envelope("v1", "Service", _bytes(2, _bytes(1, _bytes(4, _varint(1, 2))))),
     ('Service in version "v1" cannot be handled as a Service: spec.ports[0].targetPort: '
      "impossible IntOrString.Type")),
    (_envelope("v1", "ConfigMap", _meta(_bytes(8, _varint(1, 2**62)))),
     ('ConfigMap in version "v1" cannot be handled as a ConfigMap: metadata.creationTimestamp: '
      "Time.MarshalJSON: year outside of range [0,9999]")),
])
def test_malformed_bodies_are_bad_requests(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as err:
        decode_object(body)
    assert (err.value.code, err.value.reason, err.value.message) == (400, "BadRequest", message)


def test_every_truncation_of_a_real_body_is_a_bad_request() -> None:
    # Cuts at a field boundary of the envelope leave a valid (shorter) message: after typeMeta
    # (no raw: an empty object) and before the empty contentEncoding / contentType fields.
    boundaries = {27, len(DEPLOYMENT) - 4, len(DEPLOYMENT) - 2}
    for cut in range(len(DEPLOYMENT)):
        if cut in boundaries:
            assert decode_object(DEPLOYMENT[:cut])["kind"] == "Deployment"
            continue
        with pytest.raises(StatusError) as err:
            decode_object(DEPLOYMENT[:cut])
        assert err.value.code == 400


def test_truncated_object_names_the_field_being_read() -> None:
    name_cut_short = _uvarint(1 << 3 | 2) + _uvarint(10) + b"dep"  # says 10 bytes, has 3
    body = _envelope("apps/v1", "Deployment", _bytes(1, name_cut_short))
    with pytest.raises(StatusError) as err:
        decode_object(body)
    assert err.value.message == ('Deployment in version "v1" cannot be handled as a '
                                 "Deployment: metadata.name: unexpected EOF")


@pytest.mark.parametrize(("api_version", "kind", "message"), [
    ("v1", "Deployment", 'no kind "Deployment" is registered for version "v1" in scheme '
     '"pkg/runtime/scheme.go:100"'),  # right kind, wrong group
    ("example.com/v1", "Widget", 'no kind "Widget" is registered for version "example.com/v1" '
     'in scheme "pkg/runtime/scheme.go:100"'),
    ("", "", "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}'"),
])
def test_unknown_kinds_are_upstreams_scheme_errors(api_version: str, kind: str,
                                                   message: str) -> None:
    with pytest.raises(StatusError) as err:
        decode_object(_envelope(api_version, kind, b""))
    assert err.value.code == 400
    assert err.value.message == message


@pytest.mark.parametrize(("api_version", "kind"), [
    ("authentication.k8s.io/v1", "TokenRequest"),  # kubectl create token
    ("autoscaling/v2", "HorizontalPodAutoscaler"),  # kubectl autoscale
    ("apps/v1", "DeleteOptions"), ("v1", "CreateOptions"),  # meta kinds in any group version
])
def test_every_upstream_kind_has_a_table(api_version: str, kind: str) -> None:
    assert decode_object(_envelope(api_version, kind, b"")) == {"apiVersion": api_version,
                                                                "kind": kind}


SERVED_KINDS = [("v1", k) for k in ("Pod", "Service", "ConfigMap", "Secret", "Node", "Event",
                                     "Binding", "DeleteOptions", "Status", "PodList")] + [
    ("apps/v1", "Deployment"), ("autoscaling/v1", "Scale"), ("policy/v1", "Eviction"),
    ("events.k8s.io/v1", "Event"), ("batch/v1", "Job")]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(SERVED_KINDS))
def test_arbitrary_bytes_never_escape_as_another_exception(raw: bytes, kind: tuple) -> None:
    try:
        obj = decode_object(_envelope(*kind, raw))
    except StatusError as err:
        assert err.code == 400
    else:
        assert (obj["apiVersion"], obj["kind"]) == kind
        orjson.dumps(obj)  # whatever decodes is JSON-serialisable


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(DEPLOYMENT) - 1), st.integers(0, 255))
def test_corrupted_real_body_never_escapes_as_another_exception(at: int, byte: int) -> None:
    body = DEPLOYMENT[:at] + bytes([byte]) + DEPLOYMENT[at + 1:]
    try:
        decode_object(body)
    except StatusError as err:
        assert err.code == 400


# -- the tables ------------------------------------------------------------------------------

def _every_kind() -> list[str]:
    return [f"{pkg}.{kind}" for pkg, kinds in proto._data()["kinds"].items() for kind in kinds]


def test_every_kind_compiles_and_json_names_are_unique() -> None:
    """Every message the data references is described, and no two fields of a message --
    inline structs' fields included, as they share the parent's JSON object -- share a name."""
    def names(table: protobuf_tables.Table) -> list[str]:
        out = list(table.by_name)
        for f in table.inline:
            out += names(f.table)
        return out

    for message in _every_kind():
        table = protobuf_tables.table(message)
        assert table is not None, message
    for table in list(protobuf_tables._TABLES.values()):
        found = names(table)
        assert len(found) == len(set(found)), table.name


def test_served_kinds_have_no_cycles_so_recursion_is_bounded() -> None:
    def depth(table: protobuf_tables.Table, seen: tuple[str, ...]) -> int:
        assert table.name not in seen, seen + (table.name,)
        children = [f.table for f in table.by_number.values() if f.table is not None]
        return 1 + max((depth(c, seen + (table.name,)) for c in children), default=0)
    for api_version, kind in SERVED_KINDS:
        assert depth(protobuf_tables.table(proto.kind_message(api_version, kind)), ()) < 20
