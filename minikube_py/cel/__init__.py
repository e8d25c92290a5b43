"""CEL as Kubernetes offers it: compile once, evaluate with variables, within a cost budget.

Kubernetes piece: k8s.io/apiserver/pkg/cel (the environment, its extension libraries and the
cost limits). One public face for every user: CRD `x-kubernetes-validations`
(apiextensions/cel_rules.py), ValidatingAdmissionPolicy and webhook matchConditions.

    program = cel.compile("self.a > 1", {"self"})
    program.evaluate({"self": {"a": 2}})   # True
"""

from .program import (
    PER_CALL_LIMIT,
    RUNTIME_BUDGET,
    UPSTREAM_RUNTIME_BUDGET,
    Bindings,
    CompileError,
    CostLimitExceeded,
    EvaluationError,
    Program,
    activation_sizes,
    compile,
    largest,
    sizes,
)

__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "UPSTREAM_RUNTIME_BUDGET",
    "Bindings",
    "CompileError",
    "CostLimitExceeded",
    "EvaluationError",
    "Program",
    "activation_sizes",
    "compile",
    "largest",
    "sizes",
]
