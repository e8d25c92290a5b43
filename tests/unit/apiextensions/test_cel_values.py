"""apiextensions.cel_values: the values CEL rules see (upstream UnstructuredToVal, escaping)."""

from __future__ import annotations

import datetime

import pytest

from minikube_py.apiextensions import cel_values
from minikube_py.apiextensions.schema import compile_schema


@pytest.mark.parametrize("name, escaped", [
    ("replicas", "replicas"), ("foo-bar", "foo__dash__bar"), ("a.b", "a__dot__b"),
    ("a/b", "a__slash__b"), ("a__b", "a__underscores__b"), ("namespace", "__namespace__"),
    ("if", "__if__"), ("1st", None), ("a b", None), ("", None),
])
def test_escape_as_upstream(name, escaped):
    assert cel_values.escape(name) == escaped


def test_typed_values_and_escaped_names():
    node = compile_schema({"type": "object", "properties": {
        "ratio": {"type": "number"}, "count": {"type": "integer"},
        "when": {"type": "string", "format": "date-time"},
        "foo-bar": {"type": "string"}, "plain": {"type": "string"},
        "m": {"type": "object", "additionalProperties": {"type": "number"}}}})
    value = {"ratio": 1, "count": 1, "when": "2024-01-02T03:04:05Z", "foo-bar": "x",
             "plain": "y", "m": {"a-b": 2}}
    out = cel_values.to_cel(value, node)
    assert out == {"ratio": 1.0, "count": 1, "foo__dash__bar": "x", "plain": "y",
                   "when": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
                   "m": {"a-b": 2.0}}  # map keys are data, not property names
    assert isinstance(out["ratio"], float) and isinstance(out["m"]["a-b"], float)
    assert value["ratio"] == 1 and isinstance(value["ratio"], int)  # the object is untouched


def test_unchanged_subtrees_are_not_copied():
    node = compile_schema({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"a": {"type": "integer"}}}}})
    value = {"spec": {"a": 1}}
    assert cel_values.to_cel(value, node) is value


def test_root_metadata_shows_name_and_generate_name_only():
    obj = {"apiVersion": "v1", "metadata": {"name": "n", "generateName": "g", "labels": {}}}
    assert cel_values.root_view(obj)["metadata"] == {"name": "n", "generateName": "g"}
