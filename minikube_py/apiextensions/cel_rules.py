"""`x-kubernetes-validations`: CEL rules in a CRD's structural schema, checked on every write.

Kubernetes pieces: apiextensions-apiserver pkg/apiserver/schema/cel (compilation.go: a rule
is compiled once per schema node with `self` and `oldSelf` declared; validation.go: the walk
over an object that evaluates each node's rules, transition rules that need the old value,
messageExpression, fieldPath, reason, the runtime cost budget, ratcheting of unchanged
values) and pkg/apis/apiextensions/validation (the checks on the CRD itself: a rule that does
not compile, an unsupported reason, a fieldPath that names no field, a rule whose estimated
cost is over budget).

Values reach CEL typed by the schema, as upstream's UnstructuredToVal does: `number` is a
double even when the JSON has `1`, `date-time`/`date` strings are timestamps, `byte` strings
bytes. Rules run only on non-null values. The order of a write is upstream's: schema errors
that make the object's shape wrong (type, required, enum, size) skip the rules with one
"some validation rules were not checked" error.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import cel as _rust

from .. import cel
from ..api import errors
from ..api.errors import FieldError, FieldErrorType, GoValue

if TYPE_CHECKING:
    from .schema import Node

#: upstream StaticEstimatedCostLimit / StaticEstimatedCRDCostLimit
STATIC_COST_LIMIT = 10_000_000
STATIC_CRD_COST_LIMIT = 100_000_000
#: the size assumed for a list, map or string with no maxItems/maxProperties/maxLength
#: (upstream derives it from the 3 MiB request limit)
UNBOUNDED = 3 * 1024 * 1024
#: upstream MaxEvaluatedMessageExpressionSizeBytes
MAX_MESSAGE_BYTES = 5 * 1024
_VARIABLES = frozenset({"self", "oldSelf"})
_REASONS = (FieldErrorType.REQUIRED, FieldErrorType.FORBIDDEN, FieldErrorType.INVALID,
            FieldErrorType.DUPLICATE)
_BLOCKING = {FieldErrorType.NOT_SUPPORTED, FieldErrorType.REQUIRED, FieldErrorType.TOO_LONG,
             FieldErrorType.TOO_MANY, FieldErrorType.TYPE_INVALID}
_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; "
                "correct the existing errors to complete validation")
_OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further "
                  "validation rules will be run")


@dataclass(frozen=True)
class Rule:
    """One compiled entry of x-kubernetes-validations (upstream CompilationResult)."""

    rule: str
    program: cel.Program | None = None
    error: str = ""
    message: str = ""
    message_program: cel.Program | None = None
    reason: str = ""
    field_path: str = ""  # normalized, relative to the node ("" = the node itself)
    optional_old_self: bool = False

    @property
    def transition(self) -> bool:
        """Uses oldSelf: runs only on an update that has an old value (or optionalOldSelf)."""
        return self.program is not None and "oldSelf" in self.program.uses

    def text(self) -> str:
        """upstream ruleErrorString: the message when there is one, else the rule."""
        return self.message.strip() if self.message else self.rule.strip()

    def default_message(self) -> str:
        """upstream ruleMessageOrDefault."""
        return self.message.strip() if self.message else f"failed rule: {self.rule.strip()}"


@dataclass
class Rules:
    """A schema node's compiled rules and what the walk needs to correlate old values."""

    rules: tuple[Rule, ...] = ()
    list_map_keys: tuple[str, ...] = ()
    uncorrelated_items: bool = True  # only listType=map lists correlate their items
    errors: list[str] = field(default_factory=list)


# -- compile (schema.compile_schema calls this for every node) --------------------------------
def compile_rules(raw: dict[str, Any], node: Node) -> tuple[Rule, ...]:
    """The node's x-kubernetes-validations, compiled; a broken rule becomes a Rule with its
    error (the CRD check refuses it; a CRD stored before still answers upstream's
    `rule compile error`)."""
    entries = raw.get("x-kubernetes-validations")
    if not isinstance(entries, list):
        return ()
    return tuple(_compile_one(entry, node) for entry in entries if isinstance(entry, dict))


def _compile_one(entry: dict[str, Any], node: Node) -> Rule:
    text = entry.get("rule") if isinstance(entry.get("rule"), str) else ""
    message = entry.get("message") if isinstance(entry.get("message"), str) else ""
    reason = entry.get("reason") if isinstance(entry.get("reason"), str) else ""
    optional = entry.get("optionalOldSelf") is True
    path, _ = _field_path(entry.get("fieldPath"), node)
    program = message_program = None
    error = ""
    try:
        program = cel.compile(text, _VARIABLES)
    except cel.CompileError as err:
        error = str(err)
    expr = entry.get("messageExpression")
    if isinstance(expr, str) and expr.strip():
        try:
            message_program = cel.compile(expr, _VARIABLES)
        except cel.CompileError:
            message_program = None
    return Rule(text, program, error, message, message_program, reason, path or "", optional)


def _field_path(raw: Any, node: Node) -> tuple[str | None, str]:
    """upstream ValidFieldPath: `.a.b`, `.map['key']`, `['odd.name']` over the schema; the
    normalized path (`a.b`, `map[key]`) or None with the reason."""
    if not isinstance(raw, str) or not raw:
        return "", ""
    out: list[str] = []
    current: Node | None = node
    i = 0
    while i < len(raw):
        if current is None:
            return None, "does not refer to a valid field"
        if raw[i] == ".":
            j = i + 1
            while j < len(raw) and raw[j] not in ".[":
                j += 1
            name = raw[i + 1:j]
            if not name:
                return None, "unexpected end of JSON path"
            i = j
        elif raw[i] == "[":
            end = raw.find("']", i)
            if not raw.startswith("['", i) or end < 0:
                return None, f"expected single quoted string but got {raw[i + 1:]}"
            name = raw[i + 2:end].replace("\\'", "'").replace("\\\\", "\\")
            i = end + 2
        else:
            return None, f"expected [ or . but got: {raw[i:]}"
        if current.properties:
            if name not in current.properties:
                return None, "does not refer to a valid field"
            out.append(("." if out else "") + name)
            current = current.properties[name]
        elif current.additional is not None:
            out.append(f"[{name}]")
            current = current.additional
        else:
            return None, "does not refer to a valid field"
    return "".join(out), ""


# -- the CRD's own checks (ValidateCustomResourceDefinitionOpenAPISchema) ---------------------
def _go_rule(entry: dict[str, Any]) -> GoValue:
    """The rule as Go's %#v prints apiextensions.ValidationRule (upstream's Invalid value)."""
    def q(key: str) -> str:
        value = entry.get(key)
        return _go_quote(value if isinstance(value, str) else "")
    reason = entry.get("reason")
    reason_text = ("(*apiextensions.FieldValueErrorReason)(nil)" if not isinstance(reason, str)
                   else f"(*apiextensions.FieldValueErrorReason)({_go_quote(reason)})")
    optional = entry.get("optionalOldSelf")
    optional_text = "(*bool)(nil)" if not isinstance(optional, bool) else f"(*bool)({str(optional).lower()})"
    return GoValue(f"apiextensions.ValidationRule{{Rule:{q('rule')}, Message:{q('message')}, "
                   f"MessageExpression:{q('messageExpression')}, Reason:{reason_text}, "
                   f"FieldPath:{q('fieldPath')}, OptionalOldSelf:{optional_text}}}")


def _go_quote(text: str) -> str:
    from ..api.params import go_quote
    return go_quote(text)


def version_errors(versions: Any) -> list[FieldError]:
    """The rule problems of every version's openAPIV3Schema of a CRD's spec.versions."""
    errs: list[FieldError] = []
    for i, version in enumerate(versions if isinstance(versions, list) else ()):
        raw = ((version.get("schema") or {}) if isinstance(version, dict) else {})
        if isinstance(raw, dict):
            errs += crd_errors(raw.get("openAPIV3Schema"),
                               f"spec.versions[{i}].schema.openAPIV3Schema")
    return errs


def crd_errors(raw: Any, path: str) -> list[FieldError]:
    """Every problem of the x-kubernetes-validations in the schema `raw` (at `path`, e.g.
    `spec.versions[0].schema.openAPIV3Schema`), with upstream's paths and messages."""
    from .schema import compile_schema
    errs: list[FieldError] = []
    if not isinstance(raw, dict):
        return errs
    total = [0]
    _check_node(raw, compile_schema(raw), path, 1, errs, total)
    if total[0] > STATIC_CRD_COST_LIMIT:
        errs.append(errors.forbidden(path, _cost_message("total CRD cost", total[0],
                                                         STATIC_CRD_COST_LIMIT)))
    return errs


def _check_node(raw: dict[str, Any], node: Node, path: str, cardinality: int,
                errs: list[FieldError], total: list[int]) -> None:
    entries = raw.get("x-kubernetes-validations")
    if isinstance(entries, list):
        collections, strings = static_sizes(node)
        for i, entry in enumerate(entries):
            at = f"{path}.x-kubernetes-validations[{i}]"
            if isinstance(entry, dict):
                total[0] += _check_rule(entry, node, at, cardinality, collections, strings, errs)
    props = raw.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            if isinstance(sub, dict) and key in node.properties:
                _check_node(sub, node.properties[key], f"{path}.properties[{key}]",
                            cardinality, errs, total)
    items = raw.get("items")
    if isinstance(items, dict) and node.items is not None:
        _check_node(items, node.items, f"{path}.items",
                    _times(cardinality, node.max_items), errs, total)
    extra = raw.get("additionalProperties")
    if isinstance(extra, dict) and node.additional is not None:
        _check_node(extra, node.additional, f"{path}.additionalProperties",
                    _times(cardinality, node.max_properties), errs, total)


def _times(cardinality: int, limit: int | None) -> int:
    return cardinality * (UNBOUNDED if limit is None else max(limit, 1))


def _check_rule(entry: dict[str, Any], node: Node, at: str, cardinality: int,
                collections: int, strings: int, errs: list[FieldError]) -> int:
    """The checks on one rule; its estimated cost (times how often it can run)."""
    text = entry.get("rule")
    if not isinstance(text, str) or not text.strip():
        errs.append(errors.required(f"{at}.rule", ""))
        return 0
    message = entry.get("message")
    if isinstance(message, str):
        if "\n" in message.strip():
            errs.append(errors.invalid(f"{at}.message", message,
                                       "message must not contain line breaks"))
        elif not message.strip() and message:
            errs.append(errors.invalid(f"{at}.message", message,
                                       "message must be non-empty if specified"))
    elif "\n" in text.strip():
        errs.append(errors.required(f"{at}.message",
                                    "message must be specified if rule contains line breaks"))
    reason = entry.get("reason")
    if reason is not None and reason not in _REASONS:
        errs.append(errors.not_supported(f"{at}.reason", reason, _REASONS))
    if entry.get("fieldPath") not in (None, ""):
        path, why = _field_path(entry.get("fieldPath"), node)
        if path is None:
            errs.append(errors.invalid(f"{at}.fieldPath", entry.get("fieldPath"),
                                       f"fieldPath must be a valid path: {why}"))
    cost = 0
    try:
        program = cel.compile(text, _VARIABLES)
    except cel.CompileError as err:
        errs.append(errors.invalid(f"{at}.rule", _go_rule(entry), str(err)))
        program = None
    if program is not None:
        cost = program.analysis.cost(collections, strings) * cardinality
        if cost > STATIC_COST_LIMIT:
            errs.append(errors.forbidden(f"{at}.rule", _cost_message(
                "estimated rule cost", cost, STATIC_COST_LIMIT)))
        if entry.get("optionalOldSelf") is True and "oldSelf" not in program.uses:
            errs.append(errors.forbidden(f"{at}.optionalOldSelf",
                                         "may not be set if oldSelf is not used in rule"))
    expr = entry.get("messageExpression")
    if isinstance(expr, str):
        if not expr.strip():
            errs.append(errors.required(f"{at}.messageExpression",
                                        "messageExpression must be non-empty if specified"))
        else:
            try:
                cel.compile(expr, _VARIABLES)
            except cel.CompileError as err:
                errs.append(errors.invalid(f"{at}.messageExpression", _go_rule(entry),
                                           "messageExpression " + str(err)))
    return cost


def _cost_message(what: str, cost: int, limit: int) -> str:
    """upstream getCostErrorMessage."""
    factor = cost / limit
    if factor > 100:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{what} exceeds budget by factor of {text} (try simplifying the rule, or adding "
            "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")


def static_sizes(node: Node) -> tuple[int, int]:
    """The largest list/map and the longest string a value of `node` can hold, from
    maxItems/maxProperties/maxLength (UNBOUNDED where they are not declared)."""
    collections = strings = 1
    stack = [node]
    seen = 0
    while stack and seen < 10_000:
        seen += 1
        n = stack.pop()
        if n.type == "array" or n.items is not None:
            collections = max(collections, UNBOUNDED if n.max_items is None else n.max_items)
        if n.type == "object" and (n.additional is not None or n.preserve_unknown):
            collections = max(collections, UNBOUNDED if n.max_properties is None
                              else n.max_properties)
        elif n.type == "object":
            collections = max(collections, len(n.properties))
        if n.type in ("string", "") or n.int_or_string:
            strings = max(strings, UNBOUNDED if n.max_length is None else n.max_length)
        stack.extend(n.properties.values())
        stack.extend(x for x in (n.items, n.additional) if x is not None)
    return collections, strings


# -- the walk over a custom resource ----------------------------------------------------------
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
    if node.rules:
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


def _run_rules(value: Any, old: Any, unchanged: bool, node: Node, path: str,
               errs: list[FieldError], budget: _Budget) -> None:
    kind = node.type or ("object" if isinstance(value, dict) else "")
    self_value = to_cel(value, node)
    old_value = to_cel(old, node) if old is not None else None
    for rule in node.rules:
        if rule.error:
            errs.append(errors.invalid(path, kind, f"rule compile error: {rule.error}"))
            continue
        if rule.program is None:
            continue
        if rule.transition and old is None and not rule.optional_old_self:
            continue
        activation: dict[str, Any] = {"self": self_value}
        if rule.optional_old_self:
            activation["oldSelf"] = (_rust.OptionalValue.none() if old is None
                                     else _rust.OptionalValue.of(old_value))
        elif rule.transition:
            activation["oldSelf"] = old_value
        try:
            cost = rule.program.cost_bound(activation)
            if cost > cel.PER_CALL_LIMIT:
                errs.append(errors.invalid(path, kind, (
                    "'operation cancelled: actual cost limit exceeded': no further validation "
                    f"rules will be run due to call cost exceeds limit for rule: {rule.text()}")))
                budget.remaining = -1
                return
            if cost > budget.remaining:
                errs.append(errors.invalid(path, kind, _OUT_OF_BUDGET))
                budget.remaining = -1
                return
            budget.remaining -= cost
            result = rule.program.run(activation)
        except cel.EvaluationError as err:
            if str(err) == "no such overload":
                errs.append(errors.invalid(path, kind, (
                    "'no such overload': call arguments did not match a supported operator, "
                    f"function or macro signature for rule: {rule.text()}")))
            else:
                errs.append(errors.invalid(path, kind, f"{err} evaluating rule: {rule.text()}"))
            continue
        if result is True:
            continue
        if unchanged and not rule.transition:
            continue  # ratcheting (CRDValidationRatcheting, on since 1.30): the value is as stored
        at = path
        if rule.field_path:
            at = (f"{path}.{rule.field_path}" if path and not rule.field_path.startswith("[")
                  else f"{path}{rule.field_path}")
        detail = _message(rule, activation, budget) or rule.default_message()
        errs.append(_error_for_reason(rule.reason, at, kind, detail))


def _message(rule: Rule, activation: dict[str, Any], budget: _Budget) -> str:
    """upstream evalMessageExpression: its string, or "" to fall back to the message."""
    if rule.message_program is None:
        return ""
    try:
        cost = rule.message_program.cost_bound(activation)
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


# -- typed values (upstream UnstructuredToVal) ------------------------------------------------
def to_cel(value: Any, node: Node) -> Any:
    """`value` as CEL sees it under `node`: doubles for `number`, timestamps for
    `date-time`/`date`, bytes for `byte`; a copy only where something changes."""
    if isinstance(value, dict):
        out = None
        for key, item in value.items():
            sub = node.properties.get(key) or node.additional
            if sub is None or not sub.converts:
                continue
            new = to_cel(item, sub)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        if node.items is None or not node.items.converts:
            return value
        return [to_cel(item, node.items) for item in value]
    if node.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if node.type == "string" and isinstance(value, str):
        return _typed_string(value, node.format)
    return value


def _typed_string(value: str, fmt: str) -> Any:
    try:
        if fmt == "date-time":
            return datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace(
                "z", "+00:00"))
        if fmt == "date":
            day = datetime.date.fromisoformat(value)
            return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return value
    return value
