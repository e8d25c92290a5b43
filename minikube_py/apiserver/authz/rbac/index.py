"""The RBAC objects, indexed by subject, rebuilt from informer contents when they change.

Kubernetes piece: plugin/pkg/auth/authorizer/rbac (the authorizer's role and binding listers)
and pkg/registry/rbac/validation/rule.go's DefaultRuleResolver.VisitRulesFor. Upstream walks
every ClusterRoleBinding and every RoleBinding of the namespace per request; here bindings are
indexed by the user name and the group names they name, so a check costs O(bindings of the
user's subjects), not O(bindings). The index is brought up to date lazily (on the first check
after an informer changed) and incrementally — pure work over the cached objects, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


#: what one binding contributes to the index: its Binding and the (scope, name) keys of its
#: user (and service account) subjects and of its group subjects
Entry = tuple[Binding, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


def binding_entry(obj: Obj, cluster: bool) -> Entry:
    namespace, name = _meta(obj)
    if cluster:
        namespace = ""
    ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
    binding = Binding(namespace, name, str(ref.get("kind") or ""), str(ref.get("name") or ""))
    users, groups = [], []
    subjects = obj.get("subjects")
    for subject in subjects if isinstance(subjects, list) else ():
        if not isinstance(subject, dict):
            continue
        user = subject_username(subject, namespace)
        if user is not None:
            users.append((namespace, user))
        group = subject_group(subject)
        if group is not None:
            groups.append((namespace, group))
    return binding, tuple(users), tuple(groups)


class RoleSlot:
    """Where a role's compiled rules live; bindings hold the slot, so a role created, changed
    or deleted after its bindings is seen by them without re-filing anything. `rules` is None
    while the role does not exist."""

    __slots__ = ("rules",)

    def __init__(self) -> None:
        self.rules: tuple[Rule, ...] | None = None


#: a binding and the slot of the role it refers to
Grant = tuple[Binding, RoleSlot]
_CLUSTER_KINDS = {"clusterroles": True, "clusterrolebindings": True, "roles": False,
                  "rolebindings": False}


class PolicyIndex:
    """Compiled roles plus bindings keyed by (namespace, user) and (namespace, group); the
    namespace of cluster bindings is "". Kept up to date by `sync`, which diffs a resource's
    current objects against what it saw by identity (an informer replaces an object's dict on
    every change): one change costs one compile or one re-filing plus an identity walk."""

    def __init__(self, roles: Iterable[Obj] = (), cluster_roles: Iterable[Obj] = (),
                 bindings: Iterable[Obj] = (), cluster_bindings: Iterable[Obj] = ()) -> None:
        self._slots: dict[tuple[str, str, str], RoleSlot] = {}
        #: resource -> key -> (object, what _add returned for it)
        self._known: dict[str, dict[Any, tuple[Obj, Any]]] = {r: {} for r in _CLUSTER_KINDS}
        self.by_user: dict[tuple[str, str], list[Grant]] = {}
        self.by_group: dict[tuple[str, str], list[Grant]] = {}
        for resource, objs in (("roles", roles), ("clusterroles", cluster_roles),
                               ("rolebindings", bindings),
                               ("clusterrolebindings", cluster_bindings)):
            self.sync(resource, {_meta(o): o for o in objs})

    def sync(self, resource: str, items: Mapping[Any, Obj]) -> None:
        """Make the index reflect `items` (key -> object) for one of the four resources."""
        known = self._known[resource]
        for key in [k for k in known if k not in items]:
            self._remove(resource, known.pop(key)[1])
        for key, obj in items.items():
            previous = known.get(key)
            if previous is not None:
                if previous[0] is obj:
                    continue
                self._remove(resource, previous[1])
            known[key] = (obj, self._add(resource, obj))

    def _slot(self, kind: str, namespace: str, name: str) -> RoleSlot:
        key = (kind, namespace if kind == "Role" else "", name)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = RoleSlot()
        return slot

    def _add(self, resource: str, obj: Obj) -> Any:
        cluster = _CLUSTER_KINDS[resource]
        if resource in ("roles", "clusterroles"):
            namespace, name = _meta(obj)
            slot = self._slot("ClusterRole" if cluster else "Role", namespace, name)
            slot.rules = _rules(obj)
            return slot
        binding, users, groups = binding_entry(obj, cluster)
        valid = binding.role_kind == "ClusterRole" or (binding.role_kind == "Role"
                                                       and binding.namespace)
        grant = (binding, self._slot(binding.role_kind, binding.namespace, binding.role_name)
                 if valid else RoleSlot())
        for key in users:
            self.by_user.setdefault(key, []).append(grant)
        for key in groups:
            self.by_group.setdefault(key, []).append(grant)
        return grant, users, groups

    def _remove(self, resource: str, added: Any) -> None:
        if resource in ("roles", "clusterroles"):
            added.rules = None
            return
        grant, users, groups = added
        for table, keys in ((self.by_user, users), (self.by_group, groups)):
            for key in keys:
                grants = table.get(key, [])
                for i, other in enumerate(grants):
                    if other is grant:
                        del grants[i]
                        break
                if not grants:
                    table.pop(key, None)

    def grants_for(self, user: UserInfo, namespace: str) -> list[Grant]:
        """Cluster bindings first, then the namespace's (VisitRulesFor's order); a binding
        naming the user twice is visited once per naming (harmless: first allow wins)."""
        found: list[Grant] = []
        by_user, by_group = self.by_user, self.by_group
        for scope in ("", namespace) if namespace else ("",):
            found += by_user.get((scope, user.name), ())
            for group in user.groups:
                found += by_group.get((scope, group), ())
        return found

    def rules_of(self, binding: Binding) -> tuple[Rule, ...] | None:
        """The referenced role's rules; None when the role does not exist."""
        if binding.role_kind == "ClusterRole" or (binding.role_kind == "Role"
                                                  and binding.namespace):
            slot = self._slots.get((binding.role_kind, binding.namespace
                                    if binding.role_kind == "Role" else "", binding.role_name))
            return slot.rules if slot is not None else None
        return None

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule the user holds in `namespace` ("" = cluster-wide only), and the errors
        met (roles that do not exist), as RulesFor."""
        rules: list[Rule] = []
        errs: list[str] = []
        for binding, slot in self.grants_for(user, namespace):
            if slot.rules is None:
                errs.append(not_found_message(binding))
            else:
                rules.extend(slot.rules)
        return rules, errs


def not_found_message(binding: Binding) -> str:
    kind = "clusterrole" if binding.role_kind == "ClusterRole" else "role"
    return f'{kind}.rbac.authorization.k8s.io "{binding.role_name}" not found'
