"""ObjectMeta validation on create and update: exact field paths, reasons and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api.errors import FieldError
from minikube_py.api.validation import validate_create, validate_update

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def messages(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


def secret(**meta: Any) -> dict[str, Any]:
    """A kind with no spec, so only ObjectMeta problems can show up."""
    metadata = {"name": "s", "namespace": "default"}
    metadata.update(meta)
    return {"metadata": {k: v for k, v in metadata.items() if v is not None}, "type": "Opaque"}


def test_valid_metadata_has_no_errors() -> None:
    assert validate_create("Secret", secret(labels={"app": "web", "example.com/tier": ""},
                                            annotations={"Example.com/Note": "x"})) == []


def test_name_required_unless_generate_name() -> None:
    errs = validate_create("Secret", secret(name=None))
    assert messages(errs) == ["metadata.name: Required value: name or generateName is required"]
    assert errs[0].cause() == {"reason": "FieldValueRequired", "field": "metadata.name",
                               "message": "Required value: name or generateName is required"}


def test_generate_name_may_end_with_dash() -> None:
    assert validate_create("Secret", secret(name="web-abcde", generateName="web-")) == []
    errs = validate_create("Secret", secret(name="web-abcde", generateName="Web-"))
    assert [(e.field, e.value) for e in errs] == [("metadata.generateName", "Web-")]


@pytest.mark.parametrize(("kind", "name", "detail_start"), [
    ("Secret", "Bad_Name", "a lowercase RFC 1123 subdomain"),
    ("Pod", "-x", "a lowercase RFC 1123 subdomain"),
    ("Namespace", "a.b", "a lowercase RFC 1123 label"),
    ("Service", "1abc", "a DNS-1035 label"),
    ("Node", "UPPER", "a lowercase RFC 1123 subdomain"),
])
def test_name_syntax_per_kind(kind: str, name: str, detail_start: str) -> None:
    obj = {"metadata": {"name": name}}
    if kind not in ("Namespace", "Node"):
        obj["metadata"]["namespace"] = "default"
    errs = [e for e in validate_create(kind, obj) if e.field == "metadata.name"]
    assert len(errs) == 1
    assert errs[0].type == "FieldValueInvalid"
    assert errs[0].value == name
    assert errs[0].detail.startswith(detail_start)


@pytest.mark.parametrize(("kind", "name"), [("Secret", "a.b"), ("Pod", "web-1.x"),
                                            ("Namespace", "kube-system"), ("Service", "web-2")])
def test_good_names_per_kind(kind: str, name: str) -> None:
    obj = {"metadata": {"name": name}}
    if kind != "Namespace":
        obj["metadata"]["namespace"] = "default"
    assert [e for e in validate_create(kind, obj) if e.field.startswith("metadata")] == []


def test_subdomain_message_is_upstreams() -> None:
    errs = validate_create("Secret", secret(name="Bad"))
    assert messages(errs) == [f'metadata.name: Invalid value: "Bad": {SUBDOMAIN_MSG}']


def test_namespace_required_for_namespaced_and_forbidden_for_cluster_scoped() -> None:
    assert messages(validate_create("Secret", secret(namespace=None))) == [
        "metadata.namespace: Required value"]
    assert messages(validate_create("Namespace", {"metadata": {"name": "a", "namespace": "b"}})) \
        == ["metadata.namespace: Forbidden: not allowed on this type"]


@pytest.mark.parametrize(("labels", "value", "detail_start"), [
    ({"bad key": "v"}, "bad key", "name part must consist of alphanumeric"),
    ({"a/b/c": "v"}, "a/b/c", "a qualified name must consist"),
    ({"ok": "bad value!"}, "bad value!", "a valid label must be an empty string"),
    ({"ok": "x" * 64}, "x" * 64, "must be no more than 63 characters"),
])
def test_labels(labels: dict[str, str], value: str, detail_start: str) -> None:
    errs = validate_create("Secret", secret(labels=labels))
    assert [(e.type, e.field, e.value) for e in errs] == [
        ("FieldValueInvalid", "metadata.labels", value)]
    assert errs[0].detail.startswith(detail_start)


def test_label_value_of_wrong_type() -> None:
    errs = validate_create("Secret", secret(labels={"a": 1}))
    assert messages(errs) == ['metadata.labels[a]: Invalid value: "number": must be a string']


def test_annotation_keys_and_total_size() -> None:
    errs = validate_create("Secret", secret(annotations={"bad key": "v"}))
    assert [(e.field, e.value) for e in errs] == [("metadata.annotations", "bad key")]
    big = validate_create("Secret", secret(annotations={"a": "x" * (256 * 1024)}))
    assert messages(big) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert big[0].type == "FieldValueTooLong"
    assert validate_create("Secret", secret(annotations={"a": "x" * (256 * 1024 - 1)})) == []


def test_owner_references() -> None:
    errs = validate_create("Secret", secret(ownerReferences=[{}]))
    assert messages(errs) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]
    ok = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1",
          "controller": True}
    assert validate_create("Secret", secret(ownerReferences=[ok])) == []
    two = validate_create("Secret", secret(ownerReferences=[ok, dict(ok, name="rs2")]))
    assert [e.detail for e in two] == [
        'Only one reference can have Controller set to true. Found "true" in references for '
        "ReplicaSet/rs and ReplicaSet/rs2"]
    event_owner = validate_create("Secret", secret(ownerReferences=[
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}]))
    assert [e.detail for e in event_owner] == ["/v1, Kind=Event is disallowed from being an owner"]


def test_finalizers() -> None:
    assert validate_create("Secret", secret(finalizers=["kubernetes", "example.com/x"])) == []
    errs = validate_create("Secret", secret(finalizers=["custom"]))
    assert messages(errs) == [
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer '
        "name nor is it fully qualified"]
    both = validate_create("Secret", secret(finalizers=["orphan", "foregroundDeletion"]))
    assert [e.detail for e in both] == [
        "finalizer orphan and foregroundDeletion cannot be both set"]


def test_generation_nonnegative_and_metadata_type() -> None:
    assert messages(validate_create("Secret", secret(generation=-1))) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"]
    assert messages(validate_create("Secret", {"metadata": "x"})) == [
        'metadata: Invalid value: "string": must be an object',
        "metadata.name: Required value: name or generateName is required",
        "metadata.namespace: Required value",
    ]


def test_generic_kind_uses_path_segment_names() -> None:
    ok = {"metadata": {"name": "Any_Thing.1", "namespace": "default"}}
    assert validate_create("Widget", ok) == []
    errs = validate_create("Widget", {"metadata": {"name": "a/b", "namespace": "default"}})
    assert messages(errs) == ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]


# ---------------------------------------------------------------------------------------------
# Updates

OLD = {"metadata": {"name": "s", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                    "creationTimestamp": "2024-01-01T00:00:00Z", "generation": 2},
       "type": "Opaque"}


def updated(**meta: Any) -> dict[str, Any]:
    new = copy.deepcopy(OLD)
    new["metadata"].update(meta)
    return new


def test_unchanged_update_is_valid() -> None:
    assert validate_update("Secret", updated(labels={"a": "b"}), OLD) == []


@pytest.mark.parametrize(("field", "value"), [
    ("name", "other"),
    ("namespace", "kube-system"),
    ("uid", "u2"),
    ("creationTimestamp", "2025-01-01T00:00:00Z"),
    ("deletionTimestamp", "2025-01-01T00:00:00Z"),
])
def test_identity_fields_are_immutable(field: str, value: str) -> None:
    errs = [e for e in validate_update("Secret", updated(**{field: value}), OLD)
            if e.field == f"metadata.{field}"]
    assert [e.message() for e in errs] == [f'metadata.{field}: Invalid value: "{value}": '
                                           "field is immutable"]


def test_resource_version_required_and_generation_monotonic() -> None:
    errs = validate_update("Secret", updated(resourceVersion="", generation=1), OLD)
    assert messages(errs) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "metadata.generation: Invalid value: 1: must not be decremented",
    ]


def test_no_new_finalizers_while_deleting() -> None:
    old = updated(deletionTimestamp="2025-01-01T00:00:00Z", finalizers=["kubernetes"])
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["kubernetes", "example.com/x"]
    assert messages(validate_update("Secret", new, old)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"example.com/x"}']
    new["metadata"]["finalizers"] = []
    assert validate_update("Secret", new, old) == []


def test_update_validates_new_labels() -> None:
    errs = validate_update("Secret", updated(labels={"bad key": "x"}), OLD)
    assert [(e.field, e.value) for e in errs] == [("metadata.labels", "bad key")]


def _entry(**fields: Any) -> dict[str, Any]:
    entry = {"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {}}
    entry.update(fields)
    return {k: v for k, v in entry.items() if v is not None}


def test_valid_managed_fields() -> None:
    assert validate_create("Secret", secret(managedFields=[
        _entry(), _entry(operation="Apply", subresource="status", time="2024-01-01T00:00:00Z"),
        _entry(fieldsType=None, manager=None)])) == []


@pytest.mark.parametrize(("entry", "expected"), [
    (_entry(operation="Bogus"),
     ['metadata.managedFields[0].operation: Invalid value: "Bogus": must be `Apply` or `Update`']),
    (_entry(operation=None),
     ['metadata.managedFields[0].operation: Invalid value: "": must be `Apply` or `Update`']),
    (_entry(fieldsType="FieldsV2"),
     ['metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`']),
    (_entry(manager="m" * 129),
     ["metadata.managedFields[0].manager: Too long: may not be more than 128 bytes"]),
    (_entry(manager="é" * 65),
     ["metadata.managedFields[0].manager: Too long: may not be more than 128 bytes"]),
    (_entry(manager="a\tb\x00"),
     ['metadata.managedFields[0].manager: Invalid value: "a\\tb\\u0000": invalid character '
      "U+0009 (at position 1)",
      'metadata.managedFields[0].manager: Invalid value: "a\\tb\\u0000": invalid character '
      "U+0000 (at position 3)"]),
    (_entry(subresource="s" * 257),
     ["metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes"]),
    (_entry(operation=3, manager=["x"], apiVersion={}, time=5, fieldsV1="f:a"),
     ['metadata.managedFields[0].operation: Invalid value: "number": must be a string',
      'metadata.managedFields[0].manager: Invalid value: "array": must be a string',
      'metadata.managedFields[0].apiVersion: Invalid value: "object": must be a string',
      'metadata.managedFields[0].time: Invalid value: "number": must be a string',
      'metadata.managedFields[0].fieldsV1: Invalid value: "string": must be an object']),
])
def test_managed_fields_entries_are_upstreams_validate_managed_fields(
        entry: dict[str, Any], expected: list[str]) -> None:
    assert messages(validate_create("Secret", secret(managedFields=[entry]))) == expected
    old = secret(resourceVersion="1")
    new = secret(resourceVersion="1", managedFields=[_entry(), entry])
    assert messages(validate_update("Secret", new, old)) == [
        m.replace("managedFields[0]", "managedFields[1]") for m in expected]


def test_managed_fields_of_the_wrong_shape() -> None:
    assert messages(validate_create("Secret", secret(managedFields=["x"]))) == [
        'metadata.managedFields[0]: Invalid value: "string": must be an object']
    assert messages(validate_create("Secret", secret(managedFields={}))) == [
        'metadata.managedFields: Invalid value: "object": must be an array']
