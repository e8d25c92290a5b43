"""CEL as Kubernetes offers it: compile once, evaluate with variables, within a cost budget.

Kubernetes piece: k8s.io/apiserver/pkg/cel (the environment, its extension libraries and the
cost limits). One public face for every user: CRD `x-kubernetes-validations`
(apiextensions/cel_rules.py), ValidatingAdmissionPolicy and webhook matchConditions.

    program = cel.compile("self.a > 1", {"self"})
    program.evaluate({"self": {"a": 2}})   # True
"""

from typing import TYPE_CHECKING, Any

from .limits import PER_CALL_LIMIT, RUNTIME_BUDGET, UPSTREAM_RUNTIME_BUDGET

if TYPE_CHECKING:
    from .program import (
        Bindings,
        CompileError,
        CostLimitExceeded,
        EvaluationError,
        Program,
        activation_sizes,
        compile,
        largest,
        optional,
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
    "optional",
    "sizes",
]


def __getattr__(name: str) -> Any:
    """The evaluator is imported on first use, not with the package: cel-rust's package
    imports its command-line interface (typer, rich) and celpy builds a lark parser, ~0.3 s
    of start-up a cluster without CEL rules, policies or matchConditions never needs."""
    if name not in __all__ or name in globals():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import program

    value = getattr(program, name)
    globals()[name] = value
    return value
