"""A ValidatingAdmissionPolicy's CEL, compiled once per policy resourceVersion.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go's
compilePolicy (a filter compiler over the policy's variables, validations, messageExpressions,
auditAnnotations and matchConditions, with `object`, `oldObject`, `request`, `params`,
`namespaceObject`, `variables` and `authorizer` declared) and the validation that compiles every
expression of a policy on write (`compilation failed: ...` under the expression's field path).
CEL itself is minikube_py.cel's. `authorizer` is not offered: expressions that use it do not
compile here (documented limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .... import cel
from ....api import errors

Obj = dict[str, Any]

#: what every policy expression may refer to (upstream's declared variables, minus authorizer)
VARIABLES = frozenset({"object", "oldObject", "request", "params", "namespaceObject",
                       "variables"})


class EvaluationFailed(Exception):
    """A runtime error of one expression (str: cel-go's message)."""


@dataclass(frozen=True)
class Expression:
    """One compiled expression and its source text (for upstream's messages)."""

    expression: str
    program: cel.Program
    name: str = ""


@dataclass(frozen=True)
class Validation:
    expression: str
    program: cel.Program
    message: str
    message_program: cel.Program | None
    reason: str


@dataclass(frozen=True)
class AuditAnnotation:
    key: str
    expression: str
    program: cel.Program


@dataclass(frozen=True)
class CompiledPolicy:
    """Everything the plugin needs from one policy version; `error` is a configuration error
    (an expression that does not compile: stored by an older server, or a bad paramKind)."""

    name: str
    failure_policy: str
    param_kind: Obj | None
    match_constraints: Obj
    variables: tuple[Expression, ...]
    match_conditions: tuple[Expression, ...]
    validations: tuple[Validation, ...]
    audit_annotations: tuple[AuditAnnotation, ...]
    error: str = ""
    #: every program above (what the evaluator's copy of the activation must serve)
    programs: tuple[cel.Program, ...] = ()


#: upstream's message when one request's evaluations exhaust the runtime cost budget
OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further validation "
                 "rules will be run")


class Runner:
    """Runs a policy's programs over one activation: one evaluator copy for all of them
    (cel.Bindings), each checked against the per-call limit before it runs and charged to
    the evaluation's runtime budget (upstream: PerCallLimit and RuntimeCELCostBudget)."""

    def __init__(self, values: dict[str, Any], programs: tuple[cel.Program, ...],
                 budget: int = cel.RUNTIME_BUDGET) -> None:
        self._values = values
        self._programs = programs
        self.bindings = cel.Bindings(values, programs)
        self.remaining = budget

    def set(self, name: str, value: Any) -> None:
        """Replace one variable (`variables`, as they are evaluated)."""
        self._values[name] = value
        self.bindings = cel.Bindings(self._values, self._programs)

    def run(self, program: cel.Program) -> Any:
        """The program's value; EvaluationFailed on a runtime error or an exceeded cost."""
        cost = program.cost_bound(self.bindings)
        if cost > cel.PER_CALL_LIMIT:
            raise EvaluationFailed(str(cel.CostLimitExceeded(cost, cel.PER_CALL_LIMIT)))
        if cost > self.remaining:
            raise EvaluationFailed(OUT_OF_BUDGET)
        self.remaining -= cost
        try:
            return program.run(self.bindings)
        except cel.EvaluationError as exc:
            raise EvaluationFailed(str(exc)) from None


def _items(spec: Obj, field: str) -> list[Obj]:
    value = spec.get(field)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _compile_all(spec: Obj) -> tuple[dict[str, cel.Program], list[errors.FieldError]]:
    """Every expression of `spec` by field path, and the compile errors (upstream's paths)."""
    programs: dict[str, cel.Program] = {}
    errs: list[errors.FieldError] = []
    wanted = [("variables", "expression"), ("matchConditions", "expression"),
              ("validations", "expression"), ("validations", "messageExpression"),
              ("auditAnnotations", "valueExpression")]
    for field, key in wanted:
        for i, item in enumerate(_items(spec, field)):
            text = item.get(key)
            if not isinstance(text, str) or not text.strip():
                continue
            path = f"spec.{field}[{i}].{key}"
            try:
                programs[path] = cel.compile(text, VARIABLES)
            except cel.CompileError as exc:
                errs.append(errors.invalid(path, text, str(exc)))
    return programs, errs


def compile_errors(policy: Obj) -> list[errors.FieldError]:
    """The write-time check: every expression must compile (registry/admissionpolicies.py)."""
    spec = policy.get("spec")
    return _compile_all(spec)[1] if isinstance(spec, dict) else []


#: (uid, resourceVersion) -> compiled policy; cleared when it grows past _CACHE_SIZE
_CACHE: dict[tuple[str, str], CompiledPolicy] = {}
_CACHE_SIZE = 1024


def compiled(policy: Obj) -> CompiledPolicy:
    """The policy compiled, cached by (uid, resourceVersion): a policy is compiled once per
    version whatever the number of requests."""
    md = policy.get("metadata") or {}
    key = (str(md.get("uid", "")), str(md.get("resourceVersion", "")))
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        hit = _CACHE[key] = _build(policy)
    return hit


def _build(policy: Obj) -> CompiledPolicy:
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    programs, errs = _compile_all(spec)
    name = (policy.get("metadata") or {}).get("name", "")
    param_kind = spec.get("paramKind") if isinstance(spec.get("paramKind"), dict) else None

    def exprs(field: str) -> tuple[Expression, ...]:
        return tuple(Expression(item["expression"], programs[f"spec.{field}[{i}].expression"],
                                str(item.get("name", "")))
                     for i, item in enumerate(_items(spec, field))
                     if f"spec.{field}[{i}].expression" in programs)

    validations = tuple(
        Validation(item["expression"], programs[f"spec.validations[{i}].expression"],
                   item.get("message") if isinstance(item.get("message"), str) else "",
                   programs.get(f"spec.validations[{i}].messageExpression"),
                   item.get("reason") if isinstance(item.get("reason"), str) else "")
        for i, item in enumerate(_items(spec, "validations"))
        if f"spec.validations[{i}].expression" in programs)
    annotations = tuple(
        AuditAnnotation(str(item.get("key", "")), item["valueExpression"],
                        programs[f"spec.auditAnnotations[{i}].valueExpression"])
        for i, item in enumerate(_items(spec, "auditAnnotations"))
        if f"spec.auditAnnotations[{i}].valueExpression" in programs)
    return CompiledPolicy(
        programs=tuple(programs.values()),
        name=name, failure_policy=str(spec.get("failurePolicy") or "Fail"),
        param_kind=param_kind, match_constraints=spec.get("matchConstraints") or {},
        variables=exprs("variables"), match_conditions=exprs("matchConditions"),
        validations=validations, audit_annotations=annotations,
        error="; ".join(f"compilation error: {e.detail}" for e in errs))
