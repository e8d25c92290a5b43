"""The RBAC objects, indexed by subject, rebuilt from informer contents when they change.

Kubernetes piece: plugin/pkg/auth/authorizer/rbac (the authorizer's role and binding listers)
and pkg/registry/rbac/validation/rule.go's DefaultRuleResolver.VisitRulesFor. Upstream walks
every ClusterRoleBinding and every RoleBinding of the namespace per request; here bindings are
indexed by the user name and the group names they name, so a check costs O(bindings of the
user's subjects), not O(bindings). The index is rebuilt lazily (on the first check after an
informer changed) — pure work over the cached objects, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...authn import UserInfo
from .rules import Rule, subject_group, subject_username

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Binding:
    """A binding as the resolver needs it: where it applies and what it points at."""

    namespace: str  # "" for a ClusterRoleBinding
    name: str
    role_kind: str
    role_name: str


def _meta(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _rules(obj: Obj) -> tuple[Rule, ...]:
    rules = obj.get("rules")
    return tuple(Rule.compile(r) for r in rules) if isinstance(rules, list) else ()


class PolicyIndex:
    """Compiled roles plus bindings keyed by (namespace, user) and (namespace, group); the
    namespace of cluster bindings is ""."""

    def __init__(self, roles: Iterable[Obj] = (), cluster_roles: Iterable[Obj] = (),
                 bindings: Iterable[Obj] = (), cluster_bindings: Iterable[Obj] = ()) -> None:
        self.roles: dict[tuple[str, str], tuple[Rule, ...]] = {
            _meta(o): _rules(o) for o in roles}
        self.cluster_roles: dict[str, tuple[Rule, ...]] = {
            _meta(o)[1]: _rules(o) for o in cluster_roles}
        self.by_user: dict[tuple[str, str], list[Binding]] = {}
        self.by_group: dict[tuple[str, str], list[Binding]] = {}
        for obj in cluster_bindings:
            self._add(obj, cluster=True)
        for obj in bindings:
            self._add(obj, cluster=False)

    def _add(self, obj: Obj, cluster: bool) -> None:
        namespace, name = _meta(obj)
        if cluster:
            namespace = ""
        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
        binding = Binding(namespace, name, str(ref.get("kind") or ""), str(ref.get("name") or ""))
        subjects = obj.get("subjects")
        for subject in subjects if isinstance(subjects, list) else ():
            if not isinstance(subject, dict):
                continue
            user = subject_username(subject, namespace)
            if user is not None:
                self.by_user.setdefault((namespace, user), []).append(binding)
            group = subject_group(subject)
            if group is not None:
                self.by_group.setdefault((namespace, group), []).append(binding)

    def bindings_for(self, user: UserInfo, namespace: str) -> Iterator[Binding]:
        """Cluster bindings first, then the namespace's (VisitRulesFor's order); a binding
        naming the user twice is visited once per naming (harmless: first allow wins)."""
        scopes = ("", namespace) if namespace else ("",)
        for scope in scopes:
            yield from self.by_user.get((scope, user.name), ())
            for group in user.groups:
                yield from self.by_group.get((scope, group), ())

    def rules_of(self, binding: Binding) -> tuple[Rule, ...] | None:
        """The referenced role's rules; None when the role does not exist."""
        if binding.role_kind == "ClusterRole":
            return self.cluster_roles.get(binding.role_name)
        if binding.role_kind == "Role" and binding.namespace:
            return self.roles.get((binding.namespace, binding.role_name))
        return None

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule the user holds in `namespace` ("" = cluster-wide only), and the errors
        met (roles that do not exist), as RulesFor."""
        rules: list[Rule] = []
        errs: list[str] = []
        for binding in self.bindings_for(user, namespace):
            found = self.rules_of(binding)
            if found is None:
                errs.append(not_found_message(binding))
            else:
                rules.extend(found)
        return rules, errs


def not_found_message(binding: Binding) -> str:
    kind = "clusterrole" if binding.role_kind == "ClusterRole" else "role"
    return f'{kind}.rbac.authorization.k8s.io "{binding.role_name}" not found'


def index_from(sources: Mapping[str, Iterable[Obj]]) -> PolicyIndex:
    return PolicyIndex(sources.get("roles", ()), sources.get("clusterroles", ()),
                       sources.get("rolebindings", ()), sources.get("clusterrolebindings", ()))
