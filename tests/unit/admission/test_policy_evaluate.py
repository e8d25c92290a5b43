"""One policy evaluated on one activation (upstream validator.go's decisions and messages)."""

from __future__ import annotations

from minikube_py.apiserver.admission.policy.compile import _build, compile_errors
from minikube_py.apiserver.admission.policy.evaluate import evaluate


def _policy(**spec) -> dict:
    spec.setdefault("failurePolicy", "Fail")
    return {"metadata": {"name": "p", "uid": "u", "resourceVersion": "1"}, "spec": spec}


def _run(values: dict | None = None, **spec):
    values = values or {"object": {"spec": {"replicas": 3}}, "oldObject": None,
                        "request": {"operation": "CREATE"}, "params": None,
                        "namespaceObject": None}
    return evaluate(_build(_policy(**spec)), dict(values))


def test_message_fallbacks_in_upstream_order() -> None:
    rule = "object.spec.replicas < 2"
    assert _run(validations=[{"expression": rule}]).denials[0].message == \
        "failed expression: object.spec.replicas < 2"
    assert _run(validations=[{"expression": rule, "message": " too many "}]).denials[0].message \
        == "too many"
    assert _run(validations=[{"expression": rule, "message": "m",
                              "messageExpression": "'n=' + string(object.spec.replicas)"}]
                ).denials[0].message == "n=3"
    # a messageExpression with a line break, or an error, falls back to message
    for bad in ("'a\\nb'", "object.nope"):
        assert _run(validations=[{"expression": rule, "message": "m",
                                  "messageExpression": bad}]).denials[0].message == "m"


def test_reason_defaults_to_invalid() -> None:
    assert _run(validations=[{"expression": "false"}]).denials[0].reason == "Invalid"
    assert _run(validations=[{"expression": "false", "reason": "Unauthorized"}]
                ).denials[0].reason == "Unauthorized"


def test_runtime_errors_follow_failure_policy() -> None:
    denial = _run(validations=[{"expression": "object.nope > 1"}]).denials[0]
    assert denial.error and denial.message == \
        "expression 'object.nope > 1' resulted in error: no such key: nope"
    assert _run(failurePolicy="Ignore", validations=[{"expression": "object.nope > 1"}]
                ).denials == []


def test_variables_and_their_failures() -> None:
    out = _run(variables=[{"name": "r", "expression": "object.spec.replicas"},
                          {"name": "twice", "expression": "variables.r * 2"}],
               validations=[{"expression": "variables.twice == 6"}])
    assert out.denials == []
    out = _run(variables=[{"name": "bad", "expression": "object.nope"}],
               validations=[{"expression": "variables.bad == 1"}])
    assert out.denials[0].message == ('composited variable "bad" fails to evaluate: expression '
                                      "'object.nope' resulted in error: no such key: nope")


def test_match_conditions() -> None:
    validations = [{"expression": "false"}]
    assert not _run(matchConditions=[{"name": "a", "expression": "false"}],
                    validations=validations).matched
    out = _run(matchConditions=[{"name": "a", "expression": "object.x"},
                                {"name": "b", "expression": "object.y"}],
               validations=validations)
    assert out.denials[0].message == ("[expression 'object.x' resulted in error: no such key: x, "
                                      "expression 'object.y' resulted in error: no such key: y]")
    assert not _run(failurePolicy="Ignore", validations=validations,
                    matchConditions=[{"name": "a", "expression": "object.x"}]).matched


def test_audit_annotations() -> None:
    out = _run(auditAnnotations=[{"key": "k", "valueExpression": "' v '"},
                                 {"key": "none", "valueExpression": "null"}])
    assert out.annotations == {"k": "v"} and out.denials == []
    out = _run(auditAnnotations=[{"key": "k", "valueExpression": "1"}])
    assert out.denials[0].message == ("valueExpression '1' resulted in unsupported return type: "
                                      "int. Return type must be either string or null.")


def test_compile_errors_name_the_field() -> None:
    errs = compile_errors(_policy(validations=[{"expression": "ok"}, {"expression": "1 +"}],
                                  matchConditions=[{"name": "a", "expression": "authorizer"}]))
    assert [e.field for e in errs] == ["spec.matchConditions[0].expression",
                                       "spec.validations[0].expression",
                                       "spec.validations[1].expression"]
    assert all("compilation failed" in e.detail for e in errs)


def test_runtime_budget_is_shared_by_the_policys_expressions() -> None:
    from minikube_py import cel
    from minikube_py.apiserver.admission.policy.compile import (
        OUT_OF_BUDGET,
        EvaluationFailed,
        Runner,
    )

    program = cel.compile("object.l.all(x, x >= 0)", {"object"})
    values = {"object": {"l": list(range(100))}}
    one = program.cost_bound(cel.Bindings(values, [program]))
    runner = Runner(dict(values), (program,), budget=one + 1)
    assert runner.run(program) is True
    try:
        runner.run(program)
    except EvaluationFailed as exc:
        assert str(exc) == OUT_OF_BUDGET
    else:
        raise AssertionError("the second evaluation should be over the budget")
    # past the per-call limit an expression never runs
    huge = cel.compile("object.l.all(x, object.l.all(y, object.l.all(z, x + y + z >= 0)))",
                       {"object"})
    out = _run({"object": {"l": list(range(1000))}}, validations=[{"expression": huge.source}])
    assert out.denials[0].error
    assert "cost limit exceeded" in out.denials[0].message
