"""`x-kubernetes-validations`: a CRD schema node's CEL rules, compiled once.

Kubernetes piece: apiextensions-apiserver pkg/apiserver/schema/cel/compilation.go — each rule
(and its messageExpression) is compiled with `self` and `oldSelf` declared; a rule that uses
`oldSelf` is a transition rule. `schema.compile_schema` calls `compile_rules` for every node,
so the programs live in the compiled schema, which apiextensions/cache.py keeps per CRD
resourceVersion: a custom resource's write never compiles. The walk over an object is
cel_validation.py, the checks on the CRD itself cel_crd_checks.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import cel

if TYPE_CHECKING:
    from .schema import Node

#: the variables of a CRD rule (upstream ScopedVarName, OldScopedVarName)
VARIABLES = frozenset({"self", "oldSelf"})


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
    path, _ = field_path(entry.get("fieldPath"), node)
    program = message_program = None
    error = ""
    try:
        program = cel.compile(text, VARIABLES)
    except cel.CompileError as err:
        error = str(err)
    expr = entry.get("messageExpression")
    if isinstance(expr, str) and expr.strip():
        try:
            message_program = cel.compile(expr, VARIABLES)
        except cel.CompileError:
            message_program = None
    return Rule(text, program, error, message, message_program, reason, path or "", optional)


def field_path(raw: Any, node: Node) -> tuple[str | None, str]:
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

