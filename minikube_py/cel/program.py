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
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cel as _rust

from . import library
from .analysis import Analysis, SyntaxProblem, analyze

#: cel-rust logs (through pyo3-log, logger "cel") a warning for every library function that
#: raises; for us that is a rule meeting bad input, answered as an EvaluationError, not news
#: for the operator's log
logging.getLogger("cel").setLevel(logging.ERROR)

from .limits import PER_CALL_LIMIT, RUNTIME_BUDGET, UPSTREAM_RUNTIME_BUDGET  # noqa: F401

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
    #: only the library functions the expression calls: registering all ~45 on every
    #: evaluation costs ~40 µs, more than a simple rule's whole evaluation
    _functions: Mapping[str, Any]

    @property
    def uses(self) -> frozenset[str]:
        """The declared variables the expression actually refers to (`oldSelf`: a transition
        rule)."""
        return frozenset(v.name for v in self.analysis.variables)

    def cost_bound(self, activation: Mapping[str, Any] | Bindings) -> int:
        """The most this expression can cost on `activation` (the size walk is skipped when
        the bound does not depend on sizes; only what the expression reads is measured)."""
        if self.analysis.constant:
            return self.analysis.cost(1, 1)
        if not isinstance(activation, Bindings):
            activation = Bindings(activation, [self])
        return self.analysis.cost(*activation_sizes(activation.activation))

    def evaluate(self, activation: Mapping[str, Any], budget: int = PER_CALL_LIMIT) -> Any:
        """The expression's value; CostLimitExceeded (not run) when its bound is over
        `budget`, EvaluationError when evaluation fails."""
        bindings = Bindings(activation, [self])
        cost = self.cost_bound(bindings)
        limit = min(budget, PER_CALL_LIMIT)
        if cost > limit:
            raise CostLimitExceeded(cost, limit)
        return self.run(bindings)

    def run(self, activation: Mapping[str, Any] | Bindings) -> Any:
        """Evaluate without the cost check (the caller has already charged the bound)."""
        if not isinstance(activation, Bindings):
            activation = Bindings(activation, [self])
        context = activation.context
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


class Bindings:
    """An activation converted once for several programs, holding only what they read.

    The evaluator copies every value into its own representation, and that copy is the
    largest cost of a rule: ~0.1 µs per number but ~3-7 µs per string, map key included. So
    a variable is projected onto the field paths the programs select (`self.spec.replicas`
    copies one integer of a whole Deployment), and the copy is made once for all of them.
    `run` accepts a Bindings wherever it accepts a mapping."""

    def __init__(self, activation: Mapping[str, Any], programs: Iterable[Program]) -> None:
        functions: dict[str, Any] = {}
        paths: dict[str, set[tuple[str, ...]]] = {}
        for program in programs:
            functions.update(program._functions)
            for name, used in program.analysis.paths.items():
                paths.setdefault(name, set()).update(used)
        self.activation = {name: project(value, paths[name])
                           for name, value in activation.items() if name in paths}
        self._functions = functions
        self._context: Any = None

    @property
    def context(self) -> Any:
        """The evaluator's copy, made on first use (never for an expression refused by its
        cost bound)."""
        if self._context is None:
            self._context = _rust.Context(self.activation, self._functions)
        return self._context


def project(value: Any, paths: Iterable[tuple[str, ...]]) -> Any:
    """The part of `value` that selections along `paths` can see (`()`: all of it)."""
    paths = list(paths)
    if not isinstance(value, dict) or not paths or any(not p for p in paths):
        return value
    by_key: dict[str, list[tuple[str, ...]]] = {}
    for path in paths:
        by_key.setdefault(path[0], []).append(path[1:])
    return {key: project(value[key], rest) for key, rest in by_key.items() if key in value}


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


def activation_sizes(activation: Mapping[str, Any]) -> tuple[int, int]:
    """`sizes` over every variable's value."""
    collections = strings = 1
    for value in activation.values():
        c, s = sizes(value)
        collections, strings = max(collections, c), max(strings, s)
    return collections, strings


def sizes(value: Any) -> tuple[int, int]:
    """The size of the largest list or map and the length of the longest string in `value`
    (the C and S of the cost bound)."""
    collections = strings = 1
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            strings = max(strings, len(item))
        elif isinstance(item, dict):
            collections = max(collections, len(item))
            stack.extend(item.values())
            strings = max(strings, max(map(len, filter(_is_text, item)), default=1))
        elif isinstance(item, (list, tuple)):
            collections = max(collections, len(item))
            stack.extend(item)
    return collections, strings


def _is_text(key: Any) -> bool:
    return isinstance(key, str)


def largest(value: Any) -> int:
    """The larger of `sizes(value)`."""
    return max(sizes(value))


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
    functions = {f.name: library.FUNCTIONS[f.name] for f in analysis.functions
                 if f.name in library.FUNCTIONS}
    return Program(expression, variables, analysis, program, functions)


def _rust_syntax_error(expression: str, err: SyntaxProblem) -> str:
    """cel-rust's parser message (ANTLR's, as cel-go prints it) when it has one."""
    try:
        _rust.compile(expression)
    except (ValueError, RuntimeError) as rust_err:
        text = str(rust_err)
        if "ERROR:" in text:
            return "ERROR:" + text.split("ERROR:", 1)[1].replace("\n| ", "\n | ")
    return _issue(expression, err.line, err.column, f"Syntax error: {err.text}")


def optional(value: Any) -> Any:
    """CEL's `optional` of `value` (none for None): what `optionalOldSelf` rules receive."""
    return _rust.OptionalValue.none() if value is None else _rust.OptionalValue.of(value)
