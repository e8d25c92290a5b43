"""What may this user do in this namespace? — the rule listing behind SelfSubjectRulesReview.

Kubernetes piece: k8s.io/apiserver's authorizer.RuleResolver (RulesFor) and the
implementations of the authorizers we have: AlwaysAllow answers `*` for everything,
AlwaysDeny nothing, ABAC (pkg/auth/authorizer/abac PolicyList.RulesFor) one rule per policy
line whose subject matches and whose namespace is `*` or the asked one (read-only lines give
get/list/watch, the others `*`), a union the concatenation of its members with `incomplete`
if any member is. An authorizer that cannot list (a future one without `rules_for`) makes the
answer `incomplete` with an evaluation error, as upstream's webhook resolver does. A new
authorizer (RBAC) plugs in by having a `rules_for(user, namespace)` method returning Rules.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..authn import UserInfo
from . import AlwaysAllow, AlwaysDeny, Authorizer, UnionAuthorizer
from .abac import ABACAuthorizer, subject_matches

_READONLY = ["get", "list", "watch"]


@dataclass(slots=True)
class Rules:
    """RulesFor's answer in the SubjectRulesReviewStatus shape (JSON-ready lists)."""

    resource_rules: list[dict[str, Any]] = field(default_factory=list)
    non_resource_rules: list[dict[str, Any]] = field(default_factory=list)
    incomplete: bool = False
    errors: list[str] = field(default_factory=list)

    def extend(self, other: Rules) -> None:
        self.resource_rules += other.resource_rules
        self.non_resource_rules += other.non_resource_rules
        self.incomplete = self.incomplete or other.incomplete
        self.errors += other.errors

    def status(self) -> dict[str, Any]:
        """SubjectRulesReviewStatus; both rule lists always present (typed clients require
        them)."""
        out: dict[str, Any] = {"resourceRules": self.resource_rules,
                               "nonResourceRules": self.non_resource_rules,
                               "incomplete": self.incomplete}
        if self.errors:
            out["evaluationError"] = "; ".join(self.errors) if len(self.errors) > 1 \
                else self.errors[0]
        return out


def _abac_rules(authorizer: ABACAuthorizer, user: UserInfo, namespace: str) -> Rules:
    rules = Rules()
    for p in authorizer.policies:
        if not subject_matches(p, user) or p.namespace not in ("*", namespace):
            continue
        verbs = list(_READONLY) if p.readonly else ["*"]
        if p.resource:
            rules.resource_rules.append({"verbs": verbs, "apiGroups": [p.api_group],
                                         "resources": [p.resource]})
        if p.non_resource_path:
            rules.non_resource_rules.append({"verbs": list(verbs),
                                             "nonResourceURLs": [p.non_resource_path]})
    return rules


def rules_for(authorizer: Authorizer, user: UserInfo, namespace: str) -> Rules:
    """The rules `authorizer` grants `user` in `namespace` (RuleResolver.RulesFor)."""
    own = getattr(authorizer, "rules_for", None)
    if callable(own):
        return own(user, namespace)
    if isinstance(authorizer, AlwaysAllow):
        return Rules([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                     [{"verbs": ["*"], "nonResourceURLs": ["*"]}])
    if isinstance(authorizer, AlwaysDeny):
        return Rules()
    if isinstance(authorizer, ABACAuthorizer):
        return _abac_rules(authorizer, user, namespace)
    if isinstance(authorizer, UnionAuthorizer):
        rules = Rules()
        for member in authorizer.authorizers:
            rules.extend(rules_for(member, user, namespace))
        return rules
    return Rules(incomplete=True, errors=[
        f"{type(authorizer).__name__} authorizer does not support user rule resolution"])
