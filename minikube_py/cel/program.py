"""Compile a CEL expression once, evaluate it many times, within a cost budget.

Kubernetes piece: k8s.io/apiserver/pkg/cel (environment.go's base environment, the
`compilation failed: ...` errors of its compilers, celconfig's PerCallLimit and the runtime
budget) over cel-go. Here the evaluator is cel-rust through the `common-expression-language`
binding (`cel`), chosen by measurement against cel-python (`celpy`, pure Python):

    expression (self = object with a 20-item list)     cel (Rust)   celpy
    compile                                             0.3-1.2 ms   0.9-6.7 ms
    self.spec.replicas <= self.spec.maxReplicas          80 µs       360 µs (+105 µs convert)
    self.spec.names.all(x, size(x) < 10)                 92 µs       7.7 ms
    small object, precompiled, `self.a == 1`              7 µs       ~300 µs

cel-rust is 4-80x faster, but holds the GIL for a whole evaluation and cannot be stopped
(27M comprehension steps: 17.8 s with no other Python thread running). So a budget is
enforced *before* the evaluator starts: analysis.py bounds the expression's cost as a
polynomial in the size of its largest input, and `Program.evaluate` refuses to run it when
the bound for the actual activation exceeds the budget (upstream stops a running program at
PerCallLimit instead; the outcome for the client is the same 422). Measured: one cost unit
is ~0.1 µs of evaluation, so PER_CALL_LIMIT (1e6, upstream's value) holds the loop ~0.1 s at
worst; a real rule is far below its bound.

Names: a variable or function the expression uses that is not declared is a compile error,
as cel-go's checker reports it (`undeclared reference to 'x' (in container '')`), because
cel-rust would only find out while running.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cel as _rust

from . import library
from .analysis import Analysis, SyntaxProblem, analyze

#: upstream celconfig.PerCallLimit: the most one evaluation may cost
PER_CALL_LIMIT = 1_000_000
#: upstream celconfig.RuntimeCELCostBudget: all rules of one object together
RUNTIME_BUDGET = 10_000_000
#: expressions longer than this are refused before parsing (upstream MaxRequestSizeBytes
#: bounds them; a rule is a line of text)
MAX_EXPRESSION_LENGTH = 100_000


class CompileError(ValueError):
    """The expression cannot become a program; `str()` is upstream's issues text."""


class EvaluationError(RuntimeError):
    """Evaluation failed (no such key, division by zero, no such overload, ...); `str()`
    reads like cel-go's runtime error."""


class CostLimitExceeded(EvaluationError):
    """The expression's cost bound for this input is above the budget: it was not run."""

    def __init__(self, cost: int, limit: int) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")
        self.cost, self.limit = cost, limit


def _snippet(expression: str, line: int, column: int) -> str:
    lines = expression.splitlines() or [""]
    text = lines[min(line, len(lines)) - 1]
    return f"\n | {text}\n | {'.' * (column - 1)}^"


def _issue(expression: str, line: int, column: int, message: str) -> str:
    return f"ERROR: <input>:{line}:{column}: {message}{_snippet(expression, line, column)}"


@dataclass(frozen=True)
class Program:
    """A compiled expression: evaluate it with `evaluate(activation)`."""

    source: str
    variables: frozenset[str]
    analysis: Analysis
    _program: Any

    @property
    def uses(self) -> frozenset[str]:
        """The declared variables the expression actually refers to (`oldSelf`: a transition
        rule)."""
        return frozenset(v.name for v in self.analysis.variables)

    def cost_bound(self, activation: Mapping[str, Any]) -> int:
        """The most this expression can cost on `activation` (the size walk is skipped when
        the bound does not depend on sizes)."""
        if self.analysis.degree == 0:
            return self.analysis.cost(1)
        return self.analysis.cost(max((largest(v) for v in activation.values()), default=1))

    def evaluate(self, activation: Mapping[str, Any], budget: int = PER_CALL_LIMIT) -> Any:
        """The expression's value; CostLimitExceeded (not run) when its bound is over
        `budget`, EvaluationError when evaluation fails."""
        cost = self.cost_bound(activation)
        if cost > min(budget, PER_CALL_LIMIT):
            raise CostLimitExceeded(cost, min(budget, PER_CALL_LIMIT))
        return self.run(activation)

    def run(self, activation: Mapping[str, Any]) -> Any:
        """Evaluate without the cost check (the caller has already charged the bound)."""
        context = _rust.Context(dict(activation), library.FUNCTIONS)
        try:
            return self._program.execute(context)
        except KeyError as err:
            raise EvaluationError(f"no such key: {err.args[0] if err.args else ''}") from None
        except IndexError as err:
            raise EvaluationError(str(err)) from None
        except ZeroDivisionError:
            raise EvaluationError("division by zero") from None
        except OverflowError:
            raise EvaluationError("integer overflow") from None
        except TypeError as err:
            raise EvaluationError(_runtime_text(str(err))) from None
        except (RuntimeError, ValueError) as err:
            raise EvaluationError(_runtime_text(str(err))) from None


def _runtime_text(text: str) -> str:
    """cel-rust's messages, trimmed to cel-go's short forms where they mean the same."""
    if text.startswith(("No such overload", "Unsupported operation")) or "no such overload" in text:
        return "no such overload"
    if text.startswith("Function '") and "error: " in text:
        text = text.split("error: ", 1)[1]
        text = text.removeprefix("Python function call failed: ")
        text = text.split(". Check function arguments", 1)[0]
        for prefix in ("ValueError: ", "TypeError: ", "NoOverload: "):
            text = text.removeprefix(prefix)
    return text.split("\n", 1)[0]


def largest(value: Any) -> int:
    """The size of the largest list, map or string in `value` (the N of the cost bound)."""
    best = 1
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            best = max(best, len(item))
        elif isinstance(item, dict):
            best = max(best, len(item))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            best = max(best, len(item))
            stack.extend(item)
    return best


def compile(expression: str, variables: Iterable[str]) -> Program:
    """Compile `expression` with `variables` declared (their values come at evaluation).
    Cached: the same text and names give the same Program. CompileError on any issue."""
    return _compile(expression, frozenset(variables))


@functools.lru_cache(maxsize=2048)
def _compile(expression: str, variables: frozenset[str]) -> Program:
    if not isinstance(expression, str) or not expression.strip():
        raise CompileError("compilation failed: ERROR: <input>:1:1: expression is empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CompileError(f"compilation failed: expression is longer than "
                           f"{MAX_EXPRESSION_LENGTH} characters")
    try:
        analysis = analyze(expression)
    except SyntaxProblem as err:
        raise CompileError("compilation failed: " + _rust_syntax_error(expression, err)) from None
    issues = [_issue(expression, v.line, v.column, f"undeclared reference to '{v.name}' "
                                                   "(in container '')")
              for v in analysis.variables if v.name not in variables]
    for fn in analysis.functions:
        if fn.name not in library.KNOWN:
            issues.append(_issue(expression, fn.line, fn.column,
                                 f"found no matching overload for '{fn.name}'"
                                 if fn.receiver else
                                 f"undeclared reference to '{fn.name}' (in container '')"))
    for pattern, line, column in analysis.regexes:
        try:
            library.regex(pattern)
        except ValueError as err:
            issues.append(_issue(expression, line, column,
                                 f"invalid matches argument: {err}"))
    if issues:
        raise CompileError("compilation failed: " + "\n".join(issues))
    try:
        program = _rust.compile(expression)
    except (ValueError, RuntimeError) as err:
        text = str(err)
        raise CompileError("compilation failed: " + text.split("': ", 1)[-1]) from None
    return Program(expression, variables, analysis, program)


def _rust_syntax_error(expression: str, err: SyntaxProblem) -> str:
    """cel-rust's parser message (ANTLR's, as cel-go prints it) when it has one."""
    try:
        _rust.compile(expression)
    except (ValueError, RuntimeError) as rust_err:
        text = str(rust_err)
        if "ERROR:" in text:
            return "ERROR:" + text.split("ERROR:", 1)[1].replace("\n| ", "\n | ")
    return _issue(expression, err.line, err.column, f"Syntax error: {err.text}")
