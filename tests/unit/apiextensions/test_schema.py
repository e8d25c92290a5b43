"""The structural-schema walker (apiextensions/schema.py): one row per rule, with upstream's
field path and message (apiextensions-apiserver + kube-openapi validation)."""

from __future__ import annotations

import pytest

from minikube_py.apiextensions.cache import schema_for
from minikube_py.apiextensions.schema import compile_schema, prune_and_default, validate


def spec_schema(**props) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


CASES = [
    ({"replicas": {"type": "integer"}}, {"replicas": "3"},
     ('spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
     '"string"')),
    ({"color": {"type": "string", "enum": ["red", "blue"]}}, {"color": "green"},
     'spec.color: Unsupported value: "green": supported values: "red", "blue"'),
    ({"n": {"type": "string", "pattern": "^[a-z]+$"}}, {"n": "A1"},
     'spec.n: Invalid value: "A1": spec.n in body should match \'^[a-z]+$\''),
    ({"r": {"type": "integer", "minimum": 1}}, {"r": 0},
     "spec.r: Invalid value: 0: spec.r in body should be greater than or equal to 1"),
    ({"r": {"type": "integer", "maximum": 5, "exclusiveMaximum": True}}, {"r": 5},
     "spec.r: Invalid value: 5: spec.r in body should be less than 5"),
    ({"s": {"type": "string", "maxLength": 3}}, {"s": "abcd"},
     "spec.s: Too long: may not be longer than 3"),
    ({"s": {"type": "string", "minLength": 2}}, {"s": "a"},
     'spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long'),
    ({"l": {"type": "array", "maxItems": 1, "items": {"type": "string"}}}, {"l": ["a", "b"]},
     "spec.l: Too many: 2: must have at most 1 items"),
    ({"l": {"type": "array", "items": {"type": "string"}}}, {"l": ["a", 1]},
     ('spec.l[1]: Invalid value: "integer": spec.l[1] in body must be of type string: '
     '"integer"')),
    ({"m": {"type": "object", "additionalProperties": {"type": "integer"}}}, {"m": {"a": "x"}},
     'spec.m.a: Invalid value: "string": spec.m.a in body must be of type integer: "string"'),
    ({"t": {"type": "string", "format": "date-time"}}, {"t": "yesterday"},
     ('spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: '
     '"yesterday"')),
    ({"i": {"type": "integer", "format": "int32"}}, {"i": 2 ** 40},
     ("spec.i: Invalid value: 1099511627776: spec.i in body must be of type int32: "
     "1099511627776")),
    ({"s": {"type": "string"}}, {"s": None},
     'spec.s: Invalid value: "null": spec.s in body must be of type string: "null"'),
    ({"p": {"x-kubernetes-int-or-string": True}}, {"p": [1]},
     'spec.p: Invalid value: "array": spec.p in body must be of type integer,string: "array"'),
]


@pytest.mark.parametrize(("props", "spec", "message"), CASES)
def test_validation_messages(props: dict, spec: dict, message: str) -> None:
    errs = validate({"spec": spec}, compile_schema(spec_schema(**props)))
    assert [e.message() for e in errs] == [message]


@pytest.mark.parametrize(("props", "spec"), [
    ({"p": {"x-kubernetes-int-or-string": True}}, {"p": "50%"}),
    ({"p": {"x-kubernetes-int-or-string": True}}, {"p": 3}),
    ({"s": {"type": "string", "nullable": True}}, {"s": None}),
    ({"n": {"type": "number", "minimum": 0.5}}, {"n": 1}),
    ({"t": {"type": "string", "format": "date-time"}}, {"t": "2024-01-02T03:04:05Z"}),
    ({"any": {"x-kubernetes-preserve-unknown-fields": True}}, {"any": {"x": [1, "y"]}}),
])
def test_valid_values(props: dict, spec: dict) -> None:
    assert validate({"spec": spec}, compile_schema(spec_schema(**props))) == []


def test_required_and_min_properties() -> None:
    schema = compile_schema({"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["a"], "minProperties": 2,
                 "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}})
    assert [e.message() for e in validate({}, schema)] == ["spec: Required value"]
    assert [e.message() for e in validate({"spec": {"b": "x"}}, schema)] == [
        "spec: Invalid value: 1: spec in body should have at least 2 properties",
        "spec.a: Required value"]


def test_prune_and_default() -> None:
    schema = compile_schema({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "fast"},
            "opts": {"type": "object", "default": {}, "properties": {
                "level": {"type": "integer", "default": 3}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "tpl": {"type": "object", "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object"}}}}}}})
    obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"},
           "extra": 1,
           "spec": {"mode": None, "unknown": True, "free": {"x": {"y": 1}},
                    "tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                            "junk": 1, "spec": {"gone": 1}}}}
    prune_and_default(obj, schema)
    assert obj == {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"},
                   "spec": {"size": 1, "mode": "fast", "opts": {"level": 3},
                            "free": {"x": {"y": 1}},
                            "tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                    "spec": {}}}}


def test_no_schema_keeps_everything() -> None:
    obj = {"spec": {"anything": [1]}}
    node = compile_schema(None)
    prune_and_default(obj, node)
    assert obj == {"spec": {"anything": [1]}} and validate(obj, node) == []


def test_compiled_once_per_resource_version() -> None:
    version = {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}}
    crd = {"metadata": {"uid": "u1", "resourceVersion": "5"}}
    first = schema_for(crd, version)
    assert schema_for(crd, version) is first
    assert schema_for({"metadata": {"uid": "u1", "resourceVersion": "6"}}, version) is not first


def test_a_backtracking_pattern_answers_in_linear_time() -> None:
    """`pattern` is RE2, as upstream's: `(a+)+$` against a long non-match would backtrack for
    ever under Python's re (holding the GIL); RE2 answers at once."""
    import time

    node = compile_schema({"type": "string", "pattern": "^(a+)+$"})
    started = time.perf_counter()
    assert node.pattern.search("a" * 50_000 + "b") is None
    assert time.perf_counter() - started < 0.5
