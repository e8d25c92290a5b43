"""The checks on a CRD's x-kubernetes-validations when the CRD is created or updated.

Kubernetes piece: apiextensions-apiserver pkg/apis/apiextensions/validation
(ValidateCustomResourceDefinitionOpenAPISchema's CEL part): a rule that does not compile is
`Invalid` with the rule printed as Go prints the ValidationRule struct, a rule whose estimated
cost (times how often it can run: the maxItems/maxProperties above it) is over
StaticEstimatedCostLimit is `Forbidden`, as is a CRD whose rules together are over
StaticEstimatedCRDCostLimit; an unknown reason, a fieldPath that names no field, a multi-line
rule without a message and an optionalOldSelf on a rule that does not use oldSelf are refused.
Sizes without maxItems/maxProperties/maxLength are assumed as large as a request can make them,
as upstream does, so `self.l.all(x, self.l.all(y, ...))` over an unbounded list is refused.
"""

from __future__ import annotations

from typing import Any

from .. import cel
from ..api import errors
from ..api.errors import FieldError, FieldErrorType, GoValue
from ..api.params import go_quote
from .cel_rules import VARIABLES, field_path
from .schema import Node, compile_schema

#: upstream StaticEstimatedCostLimit / StaticEstimatedCRDCostLimit
STATIC_COST_LIMIT = 10_000_000
STATIC_CRD_COST_LIMIT = 100_000_000
#: the size assumed for a list, map or string with no maxItems/maxProperties/maxLength
#: (upstream derives it from the 3 MiB request limit)
UNBOUNDED = 3 * 1024 * 1024
_REASONS = (FieldErrorType.REQUIRED, FieldErrorType.FORBIDDEN, FieldErrorType.INVALID,
            FieldErrorType.DUPLICATE)


def _go_rule(entry: dict[str, Any]) -> GoValue:
    """The rule as Go's %#v prints apiextensions.ValidationRule (upstream's Invalid value)."""
    def q(key: str) -> str:
        value = entry.get(key)
        return go_quote(value if isinstance(value, str) else "")
    reason = entry.get("reason")
    reason_text = ("(*apiextensions.FieldValueErrorReason)(nil)" if not isinstance(reason, str)
                   else f"(*apiextensions.FieldValueErrorReason)({go_quote(reason)})")
    optional = entry.get("optionalOldSelf")
    optional_text = "(*bool)(nil)" if not isinstance(optional, bool) else f"(*bool)({str(optional).lower()})"
    return GoValue(f"apiextensions.ValidationRule{{Rule:{q('rule')}, Message:{q('message')}, "
                   f"MessageExpression:{q('messageExpression')}, Reason:{reason_text}, "
                   f"FieldPath:{q('fieldPath')}, OptionalOldSelf:{optional_text}}}")


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
        path, why = field_path(entry.get("fieldPath"), node)
        if path is None:
            errs.append(errors.invalid(f"{at}.fieldPath", entry.get("fieldPath"),
                                       f"fieldPath must be a valid path: {why}"))
    cost = 0
    try:
        program = cel.compile(text, VARIABLES)
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
                cel.compile(expr, VARIABLES)
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

