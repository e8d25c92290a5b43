"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as the API server applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api.errors import StatusError
from minikube_py.api.patch import (
    PATCH_TYPES,
    REJECTED,
    create_merge_patch,
    json_merge_patch,
    json_patch,
)

# RFC 7386 appendix A (the cases whose target is an object), plus evanphx's null pruning.
MERGE_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ({"a": 1}, {}, {"a": 1}),
    ({"a": "x"}, {"a": {"b": None, "c": [{"d": None, "e": 1}]}}, {"a": {"c": [{"e": 1}]}}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), MERGE_CASES)
def test_json_merge_patch_rfc7386(original: dict, patch: Any, expected: dict) -> None:
    assert json_merge_patch(original, patch) == expected


def test_json_merge_patch_never_mutates_and_never_aliases() -> None:
    original = {"metadata": {"labels": {"a": "1"}}, "spec": {"x": [1]}}
    patch = {"metadata": {"labels": {"b": "2"}}, "data": {"k": ["v"]}}
    before_original, before_patch = copy.deepcopy(original), copy.deepcopy(patch)
    result = json_merge_patch(original, patch)
    assert (original, patch) == (before_original, before_patch)
    result["spec"]["x"].append(2)
    result["data"]["k"].append("w")
    assert (original, patch) == (before_original, before_patch)


@pytest.mark.parametrize("patch", [["c"], "x", 1, None, True])
def test_json_merge_patch_refuses_a_non_object(patch: Any) -> None:
    with pytest.raises(StatusError) as err:
        json_merge_patch({"a": 1}, patch)
    assert (err.value.code, err.value.reason, err.value.message) == (
        400, "BadRequest", "Invalid JSON Patch")


JSON_PATCH_CASES = [
    ([{"op": "add", "path": "/metadata/labels/app", "value": "web"}],
     {"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 1, "list": [1, 2]}}),
    ([{"op": "replace", "path": "/spec/replicas", "value": 3}],
     {"metadata": {"labels": {}}, "spec": {"replicas": 3, "list": [1, 2]}}),
    ([{"op": "remove", "path": "/spec/list/0"}],
     {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [2]}}),
    ([{"op": "add", "path": "/spec/list/-", "value": 3}],
     {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [1, 2, 3]}}),
    ([{"op": "test", "path": "/spec/replicas", "value": 1},
      {"op": "move", "from": "/spec/replicas", "path": "/spec/count"}],
     {"metadata": {"labels": {}}, "spec": {"count": 1, "list": [1, 2]}}),
    ([{"op": "copy", "from": "/spec/list", "path": "/spec/copy"}],
     {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [1, 2], "copy": [1, 2]}}),
    ([], {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [1, 2]}}),
]


def _doc() -> dict:
    return {"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [1, 2]}}


@pytest.mark.parametrize(("ops", "expected"), JSON_PATCH_CASES)
def test_json_patch_operations(ops: list, expected: dict) -> None:
    original = _doc()
    assert json_patch(original, ops) == expected
    assert original == _doc()


def test_json_patch_result_does_not_alias_the_operations() -> None:
    ops = [{"op": "add", "path": "/spec/new", "value": {"k": ["v"]}}]
    result = json_patch(_doc(), ops)
    result["spec"]["new"]["k"].append("w")
    assert ops[0]["value"] == {"k": ["v"]}


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/spec/replicas", "value": 2}],
    [{"op": "remove", "path": "/spec/missing"}],
    [{"op": "replace", "path": "/nope/deeper", "value": 1}],
    [{"op": "add", "path": "/spec/list/9", "value": 1}],
    [{"op": "frobnicate", "path": "/spec"}],
    [{"path": "/spec"}],
    [{"op": "replace", "path": "", "value": [1]}],
])
def test_json_patch_that_cannot_apply_is_upstreams_generic_422(ops: list) -> None:
    with pytest.raises(StatusError) as err:
        json_patch(_doc(), ops)
    assert (err.value.code, err.value.reason, err.value.message) == (422, "Invalid", REJECTED)


@pytest.mark.parametrize(("ops", "message"), [
    ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
    ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
    ([["op"]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
])
def test_json_patch_malformed_document_is_400(ops: Any, message: str) -> None:
    with pytest.raises(StatusError) as err:
        json_patch(_doc(), ops)
    assert (err.value.code, err.value.message) == (400, message)


def test_json_patch_operation_limit_is_413() -> None:
    ops = [{"op": "test", "path": "/spec/replicas", "value": 1}] * 10001
    with pytest.raises(StatusError) as err:
        json_patch(_doc(), ops)
    assert err.value.code == 413
    assert err.value.message == (
        "The allowed maximum operations in a JSON patch is 10000, got 10001")


def test_patch_types_map_content_types_to_short_names() -> None:
    assert PATCH_TYPES == {
        "application/merge-patch+json": "merge",
        "application/json-patch+json": "json",
        "application/strategic-merge-patch+json": "strategic",
        "application/apply-patch+yaml": "apply",
    }


_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_json_docs = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=2), _json_docs, max_size=4)


@settings(max_examples=60, deadline=None)
@given(_objects, _objects)
def test_create_merge_patch_round_trips(a: dict, b: dict) -> None:
    assert json_merge_patch(a, create_merge_patch(a, b)) == b


@settings(max_examples=50, deadline=None)
@given(_objects)
def test_empty_merge_patch_is_identity(a: dict) -> None:
    assert json_merge_patch(a, {}) == a
    assert create_merge_patch(a, a) == {}
