"""The pure half of CRD conversion and version rules (apiextensions/conversion.py,
versions.py): the nop converter, checking a ConversionReview answer, restoring metadata,
storedVersions, and the kube-aware order of versions."""

from __future__ import annotations

import asyncio

import pytest

from minikube_py.api import errors
from minikube_py.apiextensions.conversion import (
    ConversionFailed,
    Converter,
    InvalidConverted,
    InvalidMetadata,
    check_converted,
    converted_objects,
    deprecation_warning,
    review_request,
)
from minikube_py.apiextensions.versions import (
    add_storage_version,
    needs_conversion,
    validate_stored_versions,
)

OBJ = {"apiVersion": "example.com/v1", "kind": "Widget",
       "metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                    "labels": {"a": "1"}, "finalizers": ["f"]},
       "spec": {"size": 1}}


def test_nop_conversion_changes_only_api_version_and_never_its_input():
    converter = Converter("example.com", "Widget", "v1")
    other = {**OBJ, "apiVersion": "example.com/v2"}
    out = asyncio.run(converter.convert([OBJ, other], "example.com/v2"))
    assert out[0] == {**OBJ, "apiVersion": "example.com/v2"} and out[1] is other
    assert OBJ["apiVersion"] == "example.com/v1"


def test_webhook_converter_sends_only_objects_in_another_version():
    sent = []

    async def post(review, timeout):
        sent.append((review, timeout))
        request = review["request"]
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], "result": {"status": "Success"},
                             "convertedObjects": [{**o, "apiVersion": request["desiredAPIVersion"]}
                                                  for o in request["objects"]]}}

    converter = Converter("example.com", "Widget", "v1", post=post)
    already = {**OBJ, "apiVersion": "example.com/v2"}
    out = asyncio.run(converter.convert([OBJ, already, OBJ], "example.com/v2"))
    assert len(sent) == 1 and len(sent[0][0]["request"]["objects"]) == 2
    assert sent[0][1] == 30.0  # upstream's conversion webhook timeout
    assert out[1] is already and {o["apiVersion"] for o in out} == {"example.com/v2"}
    assert asyncio.run(converter.convert([already], "example.com/v2")) == [already]
    assert len(sent) == 1  # nothing to convert: no call


def test_a_failed_call_is_upstreams_500():
    async def post(review, timeout):
        raise ConversionFailed('Post "https://x/convert?timeout=30s": connection refused')

    converter = Converter("example.com", "Widget", "v1", post=post)
    with pytest.raises(errors.StatusError) as caught:
        asyncio.run(converter.convert([OBJ], "example.com/v2"))
    assert caught.value.code == 500 and caught.value.reason == ""
    assert caught.value.message == ('conversion webhook for example.com/v1, Kind=Widget failed: '
                                    'Post "https://x/convert?timeout=30s": connection refused')
    assert "reason" not in caught.value.status()


@pytest.mark.parametrize(("answer", "message"), [
    ({"apiVersion": "v1", "kind": "Status"},
     ("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, "
     "Kind=Status")),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"},
     "no response provided"),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
      "response": {"uid": "other"}}, 'expected response.uid="u", got "other"'),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
      "response": {"uid": "u", "result": {"status": "Failure"}}},
     "response.result.status was 'Failure', not 'Success'"),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
      "response": {"uid": "u", "result": {"status": "Failure", "message": "no way"}}}, "no way"),
])
def test_review_answers_are_checked_as_upstream(answer, message):
    with pytest.raises(ConversionFailed, match="^" + message.replace("(", r"\(")
                       .replace(")", r"\)") + "$"):
        converted_objects(answer, "u", "v1")


def test_v1beta1_answers_skip_kind_and_uid_checks():
    answer = {"response": {"uid": "x", "result": {"status": "Success"}, "convertedObjects": [1]}}
    assert converted_objects(answer, "u", "v1beta1") == [1]
    review = review_request([OBJ], "example.com/v2", "u", "v1beta1")
    assert review["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert review["request"] == {"uid": "u", "desiredAPIVersion": "example.com/v2",
                                 "objects": [OBJ]}


def test_metadata_is_restored_but_labels_and_annotations_are_the_webhooks():
    converted = {"apiVersion": "example.com/v2", "kind": "Widget", "spec": {"replicas": 1},
                 "metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "generation": 9,
                              "annotations": {"n": "x"}}}
    out = check_converted(OBJ, converted, "example.com/v2")
    assert out["metadata"] == {"name": "w", "namespace": "ns", "uid": "u-1",
                               "resourceVersion": "7", "finalizers": ["f"],
                               "annotations": {"n": "x"}}
    assert out["spec"] == {"replicas": 1}
    for change, message in [({"uid": "u-2"}, "must have the same UID: u-1 != u-2"),
                            ({"namespace": "x"}, "must have the same namespace: ns != x")]:
        bad = {**converted, "metadata": {**converted["metadata"], **change}}
        with pytest.raises(InvalidConverted, match=message):
            check_converted(OBJ, bad, "example.com/v2")
    with pytest.raises(InvalidConverted, match="invalid groupVersion"):
        check_converted(OBJ, {**converted, "apiVersion": "example.com/v1"}, "example.com/v2")
    with pytest.raises(InvalidConverted, match="invalid kind"):
        check_converted(OBJ, {**converted, "kind": "Gadget"}, "example.com/v2")


def test_deprecation_warning_text():
    assert deprecation_warning("example.com", "Widget", {"name": "v1"}) == ""
    assert deprecation_warning("example.com", "Widget", {"name": "v1", "deprecated": True}) == \
        "example.com/v1 Widget is deprecated"
    assert deprecation_warning("example.com", "Widget", {
        "name": "v1", "deprecated": True, "deprecationWarning": "go away"}) == "go away"


def test_stored_versions():
    crd = {"spec": {"versions": [{"name": "v1", "storage": False},
                                 {"name": "v2", "storage": True}]},
           "status": {"storedVersions": ["v1"]}}
    add_storage_version(crd)
    assert crd["status"]["storedVersions"] == ["v1", "v2"]
    assert validate_stored_versions(crd) == []
    crd["spec"]["versions"] = crd["spec"]["versions"][1:]
    assert [e.message() for e in validate_stored_versions(crd)] == [
        'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions']
    assert needs_conversion(crd)  # objects may still be stored in v1
    crd["status"]["storedVersions"] = ["v2"]
    assert not needs_conversion(crd)
    crd["status"]["storedVersions"] = []
    assert "must have at least one stored version" in validate_stored_versions(crd)[0].message()


def test_converted_objects_are_pruned_to_their_new_versions_schema():
    from minikube_py.apiextensions.schema import compile_schema

    v2 = compile_schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1}}}}})
    converter = Converter("example.com", "Widget", "v1", schemas={"example.com/v2": v2})
    assert not converter.api_version_only
    out = asyncio.run(converter.convert([OBJ], "example.com/v2"))
    assert out[0]["spec"] == {}  # size is not v2's; no defaults after a conversion (upstream)
    assert out[0]["metadata"] == OBJ["metadata"] and OBJ["spec"] == {"size": 1}


def test_labels_and_annotations_a_webhook_changes_are_validated():
    converted = {"apiVersion": "example.com/v2", "kind": "Widget",
                 "metadata": {"name": "w", "namespace": "ns", "uid": "u-1",
                              "labels": {"bad key!": "x"}}}
    with pytest.raises(InvalidMetadata, match=r'^metadata.labels: Invalid value: "bad key!": '):
        check_converted(OBJ, converted, "example.com/v2")
    converted["metadata"]["labels"] = {"a": 1}
    with pytest.raises(InvalidMetadata, match=r"^metadata.labels\[a\] must be a string, but is "
                                              r"int in converted object$"):
        check_converted(OBJ, converted, "example.com/v2")
    converted["metadata"] = "x"  # not an object: it names nothing, as upstream's GetName
    with pytest.raises(InvalidConverted, match="^must have the same name: w != $"):
        check_converted(OBJ, converted, "example.com/v2")


def test_a_list_names_the_index_of_the_bad_object():
    async def post(review, timeout):
        request = review["request"]
        objects = [{**o, "apiVersion": request["desiredAPIVersion"]} for o in request["objects"]]
        objects[1] = {**objects[1], "metadata": {**objects[1]["metadata"], "labels": {"-": "x"}}}
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], "result": {"status": "Success"},
                             "convertedObjects": objects}}

    converter = Converter("example.com", "Widget", "v1", post=post)
    with pytest.raises(errors.StatusError) as caught:
        asyncio.run(converter.convert([OBJ, OBJ], "example.com/v2"))
    assert caught.value.message.startswith(
        "conversion webhook for example.com/v1, Kind=Widget returned invalid metadata in object "
        'at index 1: metadata.labels: Invalid value: "-": ')
