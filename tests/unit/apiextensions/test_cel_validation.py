"""apiextensions.cel_validation and cel_crd_checks without a server: budgets, paths, lists."""

from __future__ import annotations

from minikube_py import cel
from minikube_py.apiextensions import cel_crd_checks, cel_validation
from minikube_py.apiextensions.schema import compile_schema

HEAVY = {"type": "object", "properties": {"items": {
    "type": "array", "maxItems": 100, "items": {
        "type": "object",
        "properties": {"vals": {"type": "array", "maxItems": 100, "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.vals.all(x, self.vals.all(y, x + y >= 0))"}],
    }}}}


def test_static_estimate_accepts_what_the_runtime_budget_may_cut():
    assert cel_crd_checks.crd_errors(HEAVY, "s") == []


def test_object_budget_runs_out_with_upstreams_message():
    node = compile_schema(HEAVY)
    obj = {"items": [{"vals": list(range(100))} for _ in range(100)]}
    errs = cel_validation.validate(obj, None, node, [])
    assert len(errs) == 1
    assert errs[0].message().endswith(
        'Invalid value: "object": validation failed due to running out of cost budget, no '
        'further validation rules will be run')
    assert errs[0].field.startswith("items[")
    # the same rule on small lists fits easily
    assert cel_validation.validate({"items": [{"vals": [1, 2]}] * 100}, None, node, []) == []
    assert cel.RUNTIME_BUDGET < cel.UPSTREAM_RUNTIME_BUDGET


def test_transition_rules_on_map_list_items_correlate_by_key():
    node = compile_schema({"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                   "port": {"type": "integer"}},
                  "x-kubernetes-validations": [{"rule": "self.port >= oldSelf.port",
                                                "message": "port may not go down"}]}}}})
    old = {"ports": [{"name": "a", "port": 10}, {"name": "b", "port": 20}]}
    new = {"ports": [{"name": "b", "port": 15}, {"name": "a", "port": 11},
                     {"name": "c", "port": 1}]}
    errs = cel_validation.validate(new, old, node, [])
    assert [e.message() for e in errs] == [
        'ports[0]: Invalid value: "object": port may not go down']


def test_runtime_errors_read_like_upstream():
    node = compile_schema({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.b == 1"}, {"rule": "1 / (self.a - 1) == 1"}],
    }}})
    errs = cel_validation.validate({"spec": {"a": 1}}, None, node, [])
    assert [e.message() for e in errs] == [
        'spec: Invalid value: "object": no such key: b evaluating rule: self.b == 1',
        'spec: Invalid value: "object": division by zero evaluating rule: 1 / (self.a - 1) == 1',
    ]


def test_message_expression_falls_back_to_message_when_it_fails():
    node = compile_schema({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.a > 1", "message": "static", "messageExpression": "self.nope"},
            {"rule": "self.a > 2", "messageExpression": "'a is ' + string(self.a)"}],
    }}})
    errs = cel_validation.validate({"spec": {"a": 0}}, None, node, [])
    assert [e.message() for e in errs] == ['spec: Invalid value: "object": static',
                                           'spec: Invalid value: "object": a is 0']


def test_field_path_and_multiline_checks_on_the_crd():
    schema = {"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [
            {"rule": "true", "fieldPath": ".m['some.key']"},
            {"rule": "true\n&& true"},
            {"rule": "self.m.size() > 0", "optionalOldSelf": True}],
    }}}
    errs = {e.field: e.message() for e in cel_crd_checks.crd_errors(schema, "s")}
    at = "s.properties[spec].x-kubernetes-validations"
    assert errs == {
        f"{at}[1].message": f"{at}[1].message: Required value: message must be specified if "
                            "rule contains line breaks",
        f"{at}[2].optionalOldSelf": f"{at}[2].optionalOldSelf: Forbidden: may not be set if "
                                    "oldSelf is not used in rule",
    }
