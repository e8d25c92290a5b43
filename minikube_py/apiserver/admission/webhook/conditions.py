"""matchConditions: CEL expressions that must all be true for a webhook to be called. Pure.

Kubernetes piece: k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go
(Matcher.Match): any condition evaluating to false skips the webhook, even when others fail;
otherwise an evaluation error skips it under failurePolicy Ignore and rejects the request
under Fail (generic/webhook.go answers that with a 403 Forbidden naming the error).
Variables are `object`, `oldObject` and `request` (upstream also has `authorizer`, which we do
not offer: an expression using it does not compile, so it is a 422 when the configuration is
written).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .... import cel
from .source import Condition


def evaluate(conditions: Iterable[Condition], activation: Mapping[str, Any]) -> tuple[bool, str]:
    """(matches, error): error is "" unless no condition was false and one failed; the text
    is upstream's (`expression '<expr>' resulted in error: ...`, several aggregated as
    `[a, b]`)."""
    problems: list[str] = []
    for cond in conditions:
        if cond.program is None:
            problems.append(f"expression '{cond.expression}' resulted in error: {cond.error}")
            continue
        try:
            value = cond.program.evaluate(activation)
        except cel.EvaluationError as exc:
            problems.append(f"expression '{cond.expression}' resulted in error: {exc}")
            continue
        if value is False:
            return False, ""
        if value is not True:  # upstream's compiler insists on bool; ours does not check types
            problems.append(f"expression '{cond.expression}' resulted in error: expected a "
                            f"bool, got {type(value).__name__}")
    if not problems:
        return True, ""
    return False, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
