"""Strategic merge patch: merge keys from the struct-tag table, directives, list order."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api.errors import StatusError
from minikube_py.api.patch import REJECTED, json_merge_patch, strategic_merge_patch
from minikube_py.api.patch_strategies import KINDS, child, is_known_kind, kind_schema


def pod(**spec: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def c(name: str, **fields: Any) -> dict:
    return {"name": name, **fields}


_DIRECTIVES = ("$patch", "$retainKeys", "$setElementOrder", "$deleteFromPrimitiveList")


def _directive_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [k for k in value if k.startswith(_DIRECTIVES)]
        return found + [k for v in value.values() for k in _directive_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _directive_keys(v)]
    return []


# (name, kind, original, patch, expected) — expected is the whole result.
CASES = [
    ("containers merge by name, keeping unpatched fields", "Pod",
     pod(containers=[c("a", image="x:1", imagePullPolicy="Always")]),
     {"spec": {"containers": [c("a", image="x:2")]}},
     pod(containers=[c("a", image="x:2", imagePullPolicy="Always")])),
    ("a new container goes first (upstream mergeSortedSlice)", "Pod",
     pod(containers=[c("a"), c("b")]),
     {"spec": {"containers": [c("n", image="redis")]}},
     pod(containers=[c("n", image="redis"), c("a"), c("b")])),
    ("$patch: delete removes a list item", "Pod",
     pod(containers=[c("a"), c("b")]),
     {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
     pod(containers=[c("b")])),
    ("$patch: replace in a list replaces the list", "Pod",
     pod(containers=[c("a", image="1"), c("b")]),
     {"spec": {"containers": [{"$patch": "replace"}, c("z", image="9")]}},
     pod(containers=[c("z", image="9")])),
    ("$patch: replace in a map replaces the map", "Pod",
     pod(securityContext={"runAsUser": 1, "fsGroup": 2}),
     {"spec": {"securityContext": {"$patch": "replace", "runAsGroup": 3}}},
     pod(securityContext={"runAsGroup": 3})),
    ("$patch: delete in a map empties it", "Pod",
     pod(securityContext={"runAsUser": 1}),
     {"spec": {"securityContext": {"$patch": "delete"}}},
     pod(securityContext={})),
    ("$patch: merge in a map is the default", "Pod",
     pod(securityContext={"runAsUser": 1}),
     {"spec": {"securityContext": {"$patch": "merge", "fsGroup": 2}}},
     pod(securityContext={"runAsUser": 1, "fsGroup": 2})),
    ("null deletes a field", "Pod",
     pod(nodeName="n1", restartPolicy="Always"),
     {"spec": {"nodeName": None, "missing": None}},
     pod(restartPolicy="Always")),
    ("$setElementOrder orders the merged list", "Pod",
     pod(containers=[c("a"), c("b"), c("c")]),
     {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
               "containers": [c("a", image="new")]}},
     pod(containers=[c("c"), c("a", image="new"), c("b")])),
    ("$setElementOrder without the list only reorders", "Pod",
     pod(containers=[c("a"), c("b")]),
     {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
     pod(containers=[c("b"), c("a")])),
    ("env, ports, volumeMounts merge by their keys", "Pod",
     pod(containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                       ports=[{"containerPort": 80, "protocol": "TCP"}],
                       volumeMounts=[{"mountPath": "/d", "name": "v"}])]),
     {"spec": {"containers": [c("a", env=[{"name": "Y", "value": "3"}],
                                ports=[{"containerPort": 80, "name": "http"}],
                                volumeMounts=[{"mountPath": "/d", "readOnly": True}])]}},
     pod(containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}],
                       ports=[{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                       volumeMounts=[{"mountPath": "/d", "name": "v", "readOnly": True}])])),
    ("initContainers, volumes, imagePullSecrets, hostAliases merge", "Pod",
     pod(initContainers=[c("i", image="1")], volumes=[{"name": "v", "emptyDir": {}}],
         imagePullSecrets=[{"name": "s"}], hostAliases=[{"ip": "1.1.1.1", "hostnames": ["a"]}]),
     {"spec": {"initContainers": [c("i", image="2")], "volumes": [{"name": "w"}],
               "imagePullSecrets": [{"name": "t"}],
               "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["b"]}]}},
     pod(initContainers=[c("i", image="2")], volumes=[{"name": "w"}, {"name": "v", "emptyDir": {}}],
         imagePullSecrets=[{"name": "t"}, {"name": "s"}],
         hostAliases=[{"ip": "1.1.1.1", "hostnames": ["b"]}])),
    ("tolerations are atomic: replaced", "Pod",
     pod(tolerations=[{"key": "a", "operator": "Exists"}]),
     {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
     pod(tolerations=[{"key": "b", "operator": "Exists"}])),
    ("container args are atomic: replaced", "Pod",
     pod(containers=[c("a", args=["1", "2"])]),
     {"spec": {"containers": [c("a", args=["3"])]}},
     pod(containers=[c("a", args=["3"])])),
    ("$retainKeys clears fields not listed", "Pod",
     pod(volumes=[{"name": "v", "emptyDir": {}}]),
     {"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"},
                            "$retainKeys": ["hostPath", "name"]}]}},
     pod(volumes=[{"name": "v", "hostPath": {"path": "/x"}}])),
    ("pod status conditions merge by type; containerStatuses replaced", "Pod",
     {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                {"type": "Initialized", "status": "True"}],
                 "containerStatuses": [{"name": "a", "ready": False}, {"name": "b"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                 "containerStatuses": [{"name": "a", "ready": True}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"},
                                {"type": "Initialized", "status": "True"}],
                 "containerStatuses": [{"name": "a", "ready": True}]}}),
    ("finalizers are a merge set; $deleteFromPrimitiveList removes", "Pod",
     {"metadata": {"finalizers": ["a", "b"]}},
     {"metadata": {"finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {"finalizers": ["c", "a"]}}),
    ("$deleteFromPrimitiveList on an absent list adds nothing", "Pod",
     {"metadata": {}},
     {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {}}),
    ("ownerReferences merge by uid", "ReplicaSet",
     {"metadata": {"ownerReferences": [{"uid": "1", "name": "d1"}]}},
     {"metadata": {"ownerReferences": [{"uid": "1", "controller": True}, {"uid": "2"}]}},
     {"metadata": {"ownerReferences": [{"uid": "1", "name": "d1", "controller": True},
                                       {"uid": "2"}]}}),
    ("deployment template containers merge by name", "Deployment",
     {"spec": {"template": {"spec": {"containers": [c("a", image="1"), c("b", image="1")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("b", image="2")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("a", image="1"), c("b", image="2")]}}}}),
    ("deployment strategy honours $retainKeys", "Deployment",
     {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
     {"spec": {"strategy": {"type": "Recreate", "$retainKeys": ["type"]}}},
     {"spec": {"strategy": {"type": "Recreate"}}}),
    ("replication controller and pod template templates", "ReplicationController",
     {"spec": {"template": {"spec": {"containers": [c("a", image="1")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("a", image="2")]}}}},
     {"spec": {"template": {"spec": {"containers": [c("a", image="2")]}}}}),
    ("PodTemplate's template", "PodTemplate",
     {"template": {"spec": {"containers": [c("a", image="1"), c("b")]}}},
     {"template": {"spec": {"containers": [c("a", image="2")]}}},
     {"template": {"spec": {"containers": [c("a", image="2"), c("b")]}}}),
    ("cron job template", "CronJob",
     {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [c("a"), c("b")]}}}}}},
     {"spec": {"jobTemplate": {"spec": {"template": {"spec": {
         "containers": [{"name": "a", "$patch": "delete"}]}}}}}},
     {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [c("b")]}}}}}}),
    ("service ports merge by port", "Service",
     {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}},
     {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}},
     {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]}}),
    ("node addresses and conditions merge by type", "Node",
     {"status": {"addresses": [{"type": "InternalIP", "address": "1"}],
                 "conditions": [{"type": "Ready", "status": "Unknown"}]}},
     {"status": {"addresses": [{"type": "Hostname", "address": "h"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}},
     {"status": {"addresses": [{"type": "Hostname", "address": "h"},
                               {"type": "InternalIP", "address": "1"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}}),
    ("endpoints subsets are atomic", "Endpoints",
     {"subsets": [{"addresses": [{"ip": "1"}]}]},
     {"subsets": [{"addresses": [{"ip": "2"}]}]},
     {"subsets": [{"addresses": [{"ip": "2"}]}]}),
    ("namespace conditions merge by type", "Namespace",
     {"status": {"phase": "Active", "conditions": [{"type": "A"}]}},
     {"status": {"conditions": [{"type": "B"}]}},
     {"status": {"phase": "Active", "conditions": [{"type": "B"}, {"type": "A"}]}}),
    ("unknown kinds: lists replaced, directives honoured and dropped", "Widget",
     {"metadata": {"finalizers": ["a"]}, "spec": {"items": [{"name": "a"}], "m": {"x": 1}}},
     {"metadata": {"finalizers": ["b"]},
      "spec": {"items": [{"name": "b"}], "m": {"$patch": "replace", "y": 2}}},
     {"metadata": {"finalizers": ["b", "a"]}, "spec": {"items": [{"name": "b"}], "m": {"y": 2}}}),
    ("a new subtree is stored without directives or nulls", "Pod",
     {"metadata": {"name": "p"}},
     {"spec": {"containers": [c("a", env=[{"name": "X", "$patch": "delete"}]),
                              {"name": "gone", "$patch": "delete"}],
               "$setElementOrder/containers": [{"name": "a"}],
               "securityContext": {"runAsUser": None, "$patch": "merge"}}},
     {"metadata": {"name": "p"}, "spec": {"containers": [c("a", env=[])],
                                          "securityContext": {}}}),
    ("a type change replaces the value", "Pod",
     pod(containers=[c("a")]),
     {"spec": {"containers": {"weird": True}}},
     pod(containers={"weird": True})),
    ("unknown $-prefixed keys are ordinary fields", "Widget",
     {"spec": {"schema": {"type": "object"}}},
     {"spec": {"schema": {"$ref": "#/x"}}},
     {"spec": {"schema": {"type": "object", "$ref": "#/x"}}}),
]


@pytest.mark.parametrize(("kind", "original", "patch", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_strategic_merge_patch(kind: str, original: dict, patch: dict, expected: dict) -> None:
    before_original, before_patch = copy.deepcopy(original), copy.deepcopy(patch)
    result = strategic_merge_patch(original, patch, kind)
    assert result == expected
    assert original == before_original and patch == before_patch
    assert _directive_keys(result) == []


def test_kubectl_client_side_apply_patch_changes_only_image_and_annotation() -> None:
    last_old = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                           "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}})
    last_new = last_old.replace("1.25", "1.26")
    annotation = "kubectl.kubernetes.io/last-applied-configuration"
    live = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                     "annotations": {annotation: last_old}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                 "imagePullPolicy": "IfNotPresent",
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File", "resources": {}}],
                 "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "nodeName": "n1"},
        "status": {"phase": "Running"},
    }
    patch = {"metadata": {"annotations": {annotation: last_new}},
             "spec": {"$setElementOrder/containers": [{"name": "c"}],
                      "containers": [{"image": "nginx:1.26", "name": "c"}]}}
    expected = copy.deepcopy(live)
    expected["metadata"]["annotations"][annotation] = last_new
    expected["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert strategic_merge_patch(live, patch, "Pod") == expected


def test_kubectl_apply_removing_a_container_uses_delete_directive_and_order() -> None:
    live = pod(containers=[c("a", image="1"), c("b", image="1")])
    patch = {"spec": {"$setElementOrder/containers": [{"name": "b"}],
                      "containers": [{"$patch": "delete", "name": "a"}]}}
    assert strategic_merge_patch(live, patch, "Pod") == pod(containers=[c("b", image="1")])


@pytest.mark.parametrize(("patch", "message"), [
    ({"metadata": {"$setElementOrderfinalizers": []}},
     "invalid patch format of setElementOrder list"),
    ({"metadata": {"$setElementOrder/finalizers": "x"}},
     "invalid patch format of setElementOrder list"),
    ({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}},
     "invalid patch format of primitive list"),
    ({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
     "invalid patch format of primitive list"),
    ({"spec": {"volumes": [{"name": "v", "$retainKeys": "name"}]}},
     "invalid patch format of retainKeys"),
    ({"spec": {"volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["name"]}]}},
     "invalid patch format of retainKeys"),
])
def test_malformed_directives_are_400(patch: dict, message: str) -> None:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(pod(volumes=[{"name": "v"}]), patch, "Pod")
    assert (err.value.code, err.value.reason, err.value.message) == (400, "BadRequest", message)


@pytest.mark.parametrize("patch", [[], "x", 3])
def test_non_object_patch_is_400(patch: Any) -> None:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(pod(), patch, "Pod")
    assert err.value.code == 400
    assert "cannot unmarshal" in err.value.message


def test_null_patch_is_a_no_op() -> None:
    assert strategic_merge_patch(pod(a=1), None, "Pod") == pod(a=1)


@pytest.mark.parametrize(("original", "patch", "message"), [
    ({"metadata": {"finalizers": [["a"]]}}, {"metadata": {"finalizers": [["b"]]}}, REJECTED),
    (pod(containers=[c("a")]), {"spec": {"containers": [{"image": "x"}]}},
     "map: map[image:x] does not contain declared merge key: name"),
    (pod(containers=[c("a")]), {"spec": {"containers": [{"$patch": "delete"}]}},
     "map: map[$patch:delete] does not contain declared merge key: name"),
    (pod(containers=[c("a")]), {"spec": {"containers": [{"name": "a", "$patch": "merge"}]}},
     "merging lists cannot yet be specified in the patch"),
    (pod(containers=[c("a")]), {"spec": {"containers": [{"name": "a", "$patch": "zap"}]}},
     "unknown patch type: zap in map: map[$patch:zap name:a]"),
    (pod(securityContext={}), {"spec": {"securityContext": {"$patch": "zap"}}},
     "unknown patch type: zap in map: map[$patch:zap]"),
    (pod(containers=[c("a"), c("b")]),
     {"spec": {"$setElementOrder/containers": [{"name": "a"}],
               "containers": [c("b", image="2")]}},
     ("The order in patch list:\n[map[image:2 name:b]]\n doesn't match $setElementOrder "
      "list:\n[map[name:a]]\n")),
    (pod(containers=[c("a")]), {"spec": {"containers": [c("b"), "oops"]}},
     "list element types are not identical: [[map[name:a]] [map[name:b] oops]]"),
])
def test_semantically_invalid_patches_are_422(original: dict, patch: dict, message: str) -> None:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(original, patch, "Pod")
    assert (err.value.code, err.value.reason, err.value.message) == (422, "Invalid", message)


def test_table_covers_the_kinds_kubectl_patches() -> None:
    for kind in ("Pod", "ReplicationController", "ReplicaSet", "Deployment", "PodTemplate",
                 "Service", "Node", "Namespace", "Endpoints", "ConfigMap", "Secret"):
        assert is_known_kind(kind)
    assert not is_known_kind("Widget")
    spec = child(kind_schema("Pod"), "spec").fields
    assert child(spec, "containers").merge_key == "name"
    assert child(spec, "tolerations").strategy == ""
    ports = child(child(spec, "containers").fields, "ports")
    assert (ports.merge_key, ports.keys) == ("containerPort", ("containerPort", "protocol"))
    assert set(KINDS) >= {"DaemonSet", "StatefulSet", "Job", "CronJob", "ServiceAccount"}


_keys = st.sampled_from(["a", "b", "labels", "spec", "x"])
_scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.text(max_size=2))
_no_lists = st.recursive(_scalars, lambda inner: st.dictionaries(_keys, inner, max_size=3),
                         max_leaves=10)
_objects = st.dictionaries(_keys, _no_lists, max_size=4)
_patches = st.dictionaries(_keys, st.one_of(st.none(), _no_lists), max_size=4)
_any_json = st.recursive(
    _scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                      st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=10)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_keys, _any_json, max_size=4), st.sampled_from(["Pod", "Widget"]))
def test_empty_strategic_patch_is_identity(obj: dict, kind: str) -> None:
    assert strategic_merge_patch(obj, {}, kind) == obj


@settings(max_examples=60, deadline=None)
@given(_objects, _patches, st.sampled_from(["Pod", "Deployment", "Widget"]))
def test_without_lists_strategic_equals_merge_patch(obj: dict, patch: dict, kind: str) -> None:
    assert strategic_merge_patch(obj, patch, kind) == json_merge_patch(obj, patch)
