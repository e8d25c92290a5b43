"""One policy evaluated for one request, binding and param: decisions, warnings-to-be, audit.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go
(Validate: matchConditions first, then every validation with its message/messageExpression and
reason, then auditAnnotations; failurePolicy turning an evaluation error into a denial or an
admit) and webhook/matchconditions/matcher.go (a false condition skips the policy, errors
follow failurePolicy). Pure: the activation is built by the plugin; programs come from
compile.py. Upstream's texts are kept: `failed expression: <expr>` when a denial has no
message, `expression '<expr>' resulted in error: <err>` for a runtime error.

Composited `variables` are evaluated once each, in order, before anything that may use them
(upstream evaluates them lazily; the CEL evaluator we use cannot call back into Python). A
variable that fails is left out of `variables`, and an expression that uses it reports
upstream's `composited variable "<name>" fails to evaluate: <err>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .compile import CompiledPolicy, EvaluationFailed, Runner

#: upstream celconfig.MaxEvaluatedMessageExpressionSizeBytes
MAX_MESSAGE_BYTES = 5 * 1024
#: upstream maxAuditAnnotationValueLength
MAX_AUDIT_VALUE_BYTES = 10 * 1024


@dataclass(frozen=True)
class Decision:
    """A denial (or an evaluation error under failurePolicy Fail) of one validation."""

    message: str
    #: the Status reason of the response (upstream: the validation's reason, else Invalid)
    reason: str = ""
    #: which validation (upstream's expressionIndex, for the Audit annotation)
    index: int = 0
    #: an evaluation error rather than an expression that returned false
    error: bool = False


@dataclass
class Outcome:
    """What one (policy, binding, param) evaluation decided."""

    #: matchConditions held (False: the policy does not apply to this request)
    matched: bool = True
    denials: list[Decision] = field(default_factory=list)
    #: auditAnnotations published: key -> value
    annotations: dict[str, str] = field(default_factory=dict)


def _error_text(expression: str, exc: EvaluationFailed, failed: dict[str, str]) -> str:
    for name, err in failed.items():
        if re.search(rf"\bvariables\.{re.escape(name)}\b", expression):
            return f'composited variable "{name}" fails to evaluate: {err}'
    return f"expression '{expression}' resulted in error: {exc}"


def _variables(policy: CompiledPolicy, runner: Runner) -> dict[str, str]:
    """Evaluate `variables` into the activation's `variables`; returns the failed ones'
    errors."""
    values: dict[str, Any] = {}
    failed: dict[str, str] = {}
    for var in policy.variables:
        try:
            values[var.name] = runner.run(var.program)
        except EvaluationFailed as exc:
            failed[var.name] = _error_text(var.expression, exc, failed)
            continue
        runner.set("variables", dict(values))  # later expressions see it
    return failed


def _match_conditions(policy: CompiledPolicy, runner: Runner,
                      failed: dict[str, str]) -> tuple[bool, list[str]]:
    """(all true, errors): a false condition decides at once, errors are collected."""
    errors: list[str] = []
    for cond in policy.match_conditions:
        try:
            value = runner.run(cond.program)
        except EvaluationFailed as exc:
            errors.append(_error_text(cond.expression, exc, failed))
            continue
        if value is False:
            return False, []
    return True, errors


def _message(validation: Any, runner: Runner) -> str:
    """messageExpression's string if usable, else message, else `failed expression: ...`."""
    if validation.message_program is not None:
        try:
            value = runner.run(validation.message_program)
        except EvaluationFailed:
            value = None
        if isinstance(value, str):
            value = value.strip()
            if value and len(value.encode()) <= MAX_MESSAGE_BYTES and "\n" not in value:
                return value
    if validation.message.strip():
        return validation.message.strip()
    return f"failed expression: {validation.expression.strip()}"


def evaluate(policy: CompiledPolicy, values: dict[str, Any]) -> Outcome:
    """Run `policy` on `values` (object, oldObject, request, params, namespaceObject), all
    of its expressions over one converted activation."""
    fail = policy.failure_policy != "Ignore"
    runner = Runner({**values, "variables": {}}, policy.programs)
    failed = _variables(policy, runner)
    outcome = Outcome()
    matched, errors = _match_conditions(policy, runner, failed)
    if not matched:
        outcome.matched = False
        return outcome
    if errors:
        if not fail:
            outcome.matched = False
            return outcome
        text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        outcome.denials.append(Decision(text, error=True))
        return outcome
    for i, validation in enumerate(policy.validations):
        try:
            value = runner.run(validation.program)
        except EvaluationFailed as exc:
            if fail:
                outcome.denials.append(Decision(
                    _error_text(validation.expression, exc, failed), index=i, error=True))
            continue
        if value is not True:
            outcome.denials.append(Decision(_message(validation, runner),
                                            validation.reason or "Invalid", index=i))
    for annotation in policy.audit_annotations:
        try:
            value = runner.run(annotation.program)
        except EvaluationFailed as exc:
            if fail:
                outcome.denials.append(Decision(
                    _error_text(annotation.expression, exc, failed), error=True))
            continue
        if value is None:
            continue
        if not isinstance(value, str):
            if fail:
                outcome.denials.append(Decision(
                    f"valueExpression '{annotation.expression}' resulted in unsupported return "
                    f"type: {_cel_type_name(value)}. Return type must be either string or null.",
                    error=True))
            continue
        value = value.strip()
        if value:
            outcome.annotations[annotation.key] = value[:MAX_AUDIT_VALUE_BYTES]
    return outcome


def _cel_type_name(value: Any) -> str:
    from ....cel.library import (
        type_name,  # the CEL library loads on first use (cel/__init__)
    )

    return type_name(value)
