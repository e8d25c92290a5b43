"""The compiled yes/no check never calls an invalid object valid.

schema.validate trusts fast_check's "yes" and skips its full walk, so for any schema and any
value, "yes" must mean the walk finds no error. Hypothesis draws JSON values against schemas
that use every keyword the check compiles; the walk (the reference) is run on each.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.apiextensions.fast_check import compile_checker
from minikube_py.apiextensions.schema import _validate, compile_schema

SCHEMA = {"type": "object", "required": ["spec"], "properties": {
    "spec": {"type": "object", "minProperties": 1, "maxProperties": 8, "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5, "minLength": 1},
        "count": {"type": "integer", "minimum": 0, "maximum": 10, "exclusiveMaximum": True},
        "ratio": {"type": "number", "minimum": 0.5},
        "on": {"type": "boolean", "nullable": True},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "port": {"x-kubernetes-int-or-string": True},
        "when": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "maxItems": 3, "minItems": 1, "items": {"type": "string"}},
        "env": {"type": "array", "items": {"type": "object", "required": ["k"], "properties": {
            "k": {"type": "string"}, "v": {"type": "integer", "format": "int32"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"x-kubernetes-preserve-unknown-fields": True},
        "any": {},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True},
    }}}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2 ** 33) | st.floats(allow_nan=True)
    | st.sampled_from(["a", "b", "abc", "ABC", "", "toolongname", "2024-01-01T00:00:00Z", "x"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["k", "v", "name", "x"]), children, max_size=4),
    max_leaves=12)
spec_values = st.dictionaries(
    st.sampled_from(["name", "count", "ratio", "on", "mode", "port", "when", "tags", "env",
                     "labels", "free", "any", "embedded", "unknown"]),
    json_values, max_size=7)


@settings(max_examples=600, deadline=None)
@given(spec=spec_values | json_values, with_meta=st.booleans())
def test_yes_means_the_walk_finds_nothing(spec, with_meta):
    node = compile_schema(SCHEMA)
    obj = {"apiVersion": "x/v1", "kind": "X", "spec": spec}
    if with_meta:
        obj["metadata"] = {"name": "n"}
    errs: list = []
    _validate(obj, node, "", errs)
    if compile_checker(node, root=True)(obj):
        assert errs == []


def test_a_valid_object_passes_and_an_invalid_one_does_not():
    node = compile_schema(SCHEMA)
    check = compile_checker(node, root=True)
    good = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"},
            "spec": {"name": "abc", "count": 9, "tags": ["t"], "env": [{"k": "a", "v": 1}],
                     "port": "http", "when": "2024-01-01T00:00:00Z", "labels": {"a": "b"}}}
    assert check(good)
    for key, bad in (("name", "ABC"), ("count", 10), ("tags", []), ("env", [{"v": 1}]),
                     ("port", 1.5), ("when", "yesterday"), ("labels", {"a": 1}),
                     ("mode", "c"), ("ratio", 0.1)):
        assert not check({**good, "spec": {**good["spec"], key: bad}}), key
