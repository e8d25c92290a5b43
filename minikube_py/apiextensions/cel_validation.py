"""Evaluate a custom resource's x-kubernetes-validations on create, update and patch.

Kubernetes piece: apiextensions-apiserver pkg/apiserver/schema/cel/validation.go — a walk
over the object beside its compiled schema that evaluates each node's rules with `self` (and,
for a transition rule on an update, `oldSelf`: the old value at the same place; list items
correlate only in listType=map lists, by their keys), charges each evaluation to the object's
RuntimeCELCostBudget, and turns a false rule into a field error: `message`, else the value of
`messageExpression`, else `failed rule: <rule>`, at `fieldPath` when given, of the `reason`'s
type. The value shown is the schema type (`spec: Invalid value: "object": ...`), as in 1.31.
Ratcheting (CRDValidationRatcheting, on by default since 1.30): on an update, a rule without
oldSelf that fails on a value equal to the stored one is not an error.

A rule runs only once its cost bound (cel.Program) fits both the per-call limit and what is
left of the object's budget; past either, the walk stops with upstream's message. The
schema-errors-first order is strategy.go's hasBlockingErr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import cel
from ..api import errors
from ..api.errors import FieldError, FieldErrorType
from .cel_rules import Rule
from .cel_values import root_view, to_cel

if TYPE_CHECKING:
    from .schema import Node

#: upstream MaxEvaluatedMessageExpressionSizeBytes
MAX_MESSAGE_BYTES = 5 * 1024
_BLOCKING = {FieldErrorType.NOT_SUPPORTED, FieldErrorType.REQUIRED, FieldErrorType.TOO_LONG,
             FieldErrorType.TOO_MANY, FieldErrorType.TYPE_INVALID}
_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; "
                "correct the existing errors to complete validation")
_OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further "
                  "validation rules will be run")


class _Budget:
    def __init__(self, total: int) -> None:
        self.remaining = total


def validate(obj: Any, old: Any, node: Node, schema_errors: list[FieldError]) -> list[FieldError]:
    """The rule failures of `obj` (`old`: the stored object on an update, else None), after
    `schema_errors` (a blocking one skips the rules, as upstream's hasBlockingErr)."""
    if not node.has_rules:
        return []
    if any(e.type in _BLOCKING for e in schema_errors):
        return [FieldError(FieldErrorType.INVALID, "<nil>", _NOT_CHECKED, "null")]
    errs: list[FieldError] = []
    _walk(obj, old, old is not None and obj == old, node, "", errs, _Budget(cel.RUNTIME_BUDGET))
    return errs


def _walk(value: Any, old: Any, unchanged: bool, node: Node, path: str,
          errs: list[FieldError], budget: _Budget) -> None:
    if value is None or budget.remaining < 0 or not node.has_rules:
        return
    if node.rules and not path:  # the resource root
        _run_rules(root_view(value), root_view(old), unchanged, node, path, errs, budget)
    elif node.rules:
        _run_rules(value, old, unchanged, node, path, errs, budget)
    if isinstance(value, dict):
        olds = old if isinstance(old, dict) else {}
        for key, item in value.items():
            sub = node.properties.get(key) if node.properties else None
            if sub is None:
                sub = node.additional
            if sub is None or (not path and key in ("apiVersion", "kind", "metadata")
                               and key not in node.properties):
                continue
            old_item = olds.get(key)
            if key in node.properties:
                child = f"{path}.{key}" if path else key
            else:
                child = f"{path}[{key}]"
            _walk(item, old_item, old_item is not None and old_item == item, sub, child,
                  errs, budget)
            if budget.remaining < 0:
                return
    elif isinstance(value, list) and node.items is not None:
        by_key = _old_items(old, node.list_map_keys)
        for i, item in enumerate(value):
            if by_key is None:
                old_item, same = None, unchanged
            else:
                old_item = by_key.get(_item_key(item, node.list_map_keys))
                same = old_item is not None and old_item == item
            _walk(item, old_item, same, node.items, f"{path}[{i}]", errs, budget)
            if budget.remaining < 0:
                return


def _item_key(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(k)) for k in keys)


def _old_items(old: Any, keys: tuple[str, ...]) -> dict[Any, Any] | None:
    """Old items by their map keys for a listType=map list; None when items don't correlate."""
    if not keys:
        return None
    if not isinstance(old, list):
        return {}
    return {_item_key(item, keys): item for item in old}


class _Scope:
    """One node's value as its rules see it: copied into the evaluator once for all of them
    (one Bindings for the plain and transition rules, one for optionalOldSelf rules), its
    sizes measured once and only if a rule's cost depends on them."""

    def __init__(self, value: Any, old: Any, node: Node) -> None:
        self.value, self.old, self.node = value, old, node
        self.measured: tuple[int, int] | None = None
        self._self: Any = None
        self._bindings: dict[bool, cel.Bindings] = {}

    def bound(self, program: cel.Program) -> int:
        if program.analysis.constant:
            return program.analysis.cost(1, 1)
        if self.measured is None:
            plain = self.bindings(False).activation
            self.measured = cel.activation_sizes(plain)
            if self.old is not None and "oldSelf" not in plain:  # optionalOldSelf rules
                c, s = cel.sizes(self.old)
                self.measured = max(self.measured[0], c), max(self.measured[1], s)
        return program.analysis.cost(*self.measured)

    def bindings(self, optional: bool) -> cel.Bindings:
        if optional not in self._bindings:
            if self._self is None:
                self._self = to_cel(self.value, self.node)
            rules = self.node.rules
            activation: dict[str, Any] = {"self": self._self}
            old = to_cel(self.old, self.node) if self.old is not None else None
            if optional:
                activation["oldSelf"] = cel.optional(old)
            elif old is not None and any(r.transition for r in rules):
                activation["oldSelf"] = old
            programs = [p for r in rules for p in (r.program, r.message_program) if p]
            self._bindings[optional] = cel.Bindings(activation, programs)
        return self._bindings[optional]


def _run_rules(value: Any, old: Any, unchanged: bool, node: Node, path: str,
               errs: list[FieldError], budget: _Budget) -> None:
    kind = node.type or ("object" if isinstance(value, dict) else "")
    scope = _Scope(value, old, node)
    shown = path or "<nil>"  # upstream validates the root with a nil field.Path
    for rule in node.rules:
        if rule.error:
            errs.append(errors.invalid(shown, kind, f"rule compile error: {rule.error}"))
            continue
        if rule.program is None:
            continue
        if rule.transition and old is None and not rule.optional_old_self:
            continue
        try:
            cost = scope.bound(rule.program)
            if cost > cel.PER_CALL_LIMIT:
                errs.append(errors.invalid(shown, kind, (
                    "'operation cancelled: actual cost limit exceeded': no further validation "
                    f"rules will be run due to call cost exceeds limit for rule: {rule.text()}")))
                budget.remaining = -1
                return
            if cost > budget.remaining:
                errs.append(errors.invalid(shown, kind, _OUT_OF_BUDGET))
                budget.remaining = -1
                return
            budget.remaining -= cost
            activation = scope.bindings(rule.optional_old_self)
            result = rule.program.run(activation)
        except cel.EvaluationError as err:
            if str(err) == "no such overload":
                errs.append(errors.invalid(shown, kind, (
                    "'no such overload': call arguments did not match a supported operator, "
                    f"function or macro signature for rule: {rule.text()}")))
            else:
                errs.append(errors.invalid(shown, kind, f"{err} evaluating rule: {rule.text()}"))
            continue
        if result is True:
            continue
        if not isinstance(result, bool):  # upstream's checker refuses these at compile time
            errs.append(errors.invalid(shown, kind, "cel expression must evaluate to a bool "
                                                   f"evaluating rule: {rule.text()}"))
            continue
        if unchanged and not rule.transition:
            continue  # ratcheting (CRDValidationRatcheting, on since 1.30): the value is as stored
        at = shown
        if rule.field_path:
            at = (f"{path}.{rule.field_path}" if path and not rule.field_path.startswith("[")
                  else f"{path}{rule.field_path}")
        detail = _message(rule, activation, budget, scope) or rule.default_message()
        errs.append(_error_for_reason(rule.reason, at, kind, detail))


def _message(rule: Rule, activation: cel.Bindings, budget: _Budget, scope: _Scope) -> str:
    """upstream evalMessageExpression: its string, or "" to fall back to the message."""
    if rule.message_program is None:
        return ""
    try:
        cost = scope.bound(rule.message_program)
        if cost > min(budget.remaining, cel.PER_CALL_LIMIT):
            return ""
        budget.remaining -= cost
        text = rule.message_program.run(activation)
    except cel.EvaluationError:
        return ""
    if not isinstance(text, str):
        return ""
    text = text.strip()
    if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_BYTES:
        return ""
    return text


def _error_for_reason(reason: str, path: str, kind: str, detail: str) -> FieldError:
    """upstream fieldErrorForReason (the value shown is the schema type, as in 1.31)."""
    if reason == FieldErrorType.FORBIDDEN:
        return errors.forbidden(path, detail)
    if reason == FieldErrorType.REQUIRED:
        return errors.required(path, detail)
    if reason == FieldErrorType.DUPLICATE:
        return errors.duplicate(path, kind)
    return errors.invalid(path, kind, detail)

