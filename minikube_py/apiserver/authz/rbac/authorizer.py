"""--authorization-mode=RBAC: allow what the user's bindings' roles allow; never deny.

Kubernetes piece: plugin/pkg/auth/authorizer/rbac/rbac.go (RBACAuthorizer.Authorize): the
rules of every binding that names the user (cluster bindings, then the request namespace's
bindings) are checked with RuleAllows; the first match allows. Without a match RBAC has no
opinion — in a union the next authorizer decides; alone, the request is forbidden. The reason
lists the resolution errors (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`), as
upstream's. Roles and bindings come from four in-process informers over the API server's
store (admission/informer.py), so a check does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...admission.informer import StoreInformer
from ...authn import UserInfo
from .. import Attributes
from ..rules import Rules
from .index import PolicyIndex, not_found_message
from .rules import rule_allows

#: the RBAC resources the authorizer watches
RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")


class RBACAuthorizer:
    """`sources` maps each of RESOURCES to (store, key prefix); `start` syncs the informers.
    Until then (and without sources) the index is empty: nothing is allowed."""

    def __init__(self, sources: Mapping[str, tuple[Any, str]] | None = None) -> None:
        self.informers = {name: StoreInformer(store, prefix, f"rbac:{name}")
                          for name, (store, prefix) in (sources or {}).items()}
        for informer in self.informers.values():
            informer.listeners.append(self._invalidate)
        self._index = PolicyIndex()
        self._dirty = False

    @classmethod
    def from_index(cls, index: PolicyIndex) -> RBACAuthorizer:
        """An authorizer over fixed contents (tests, benchmarks)."""
        authorizer = cls()
        authorizer._index = index
        return authorizer

    async def start(self) -> None:
        for informer in self.informers.values():
            await informer.start()

    async def stop(self) -> None:
        for informer in self.informers.values():
            await informer.stop()

    def _invalidate(self) -> None:
        self._dirty = True

    @property
    def index(self) -> PolicyIndex:
        """The current index, brought up to date after any informer changed."""
        index = self._index
        if self._dirty:
            self._dirty = False
            for name, informer in self.informers.items():
                index.sync(name, informer.items)
        return index

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """RBACAuthorizer.RulesFor (SelfSubjectRulesReview, authz/rules.py): every rule the
        user's bindings grant in `namespace`, split into resource and non-resource rules
        (lists sorted); missing roles are evaluation errors, never `incomplete`."""
        found, errs = self.index.rules_for(user, namespace)
        rules = Rules(errors=list(errs))
        for rule in found:
            if rule.resources:
                rules.resource_rules.append(
                    {k: v for k, v in (("verbs", sorted(rule.verbs)),
                                       ("apiGroups", sorted(rule.api_groups)),
                                       ("resources", sorted(rule.resources)),
                                       ("resourceNames", sorted(rule.resource_names))) if v
                     or k == "verbs"})
            if rule.urls:
                rules.non_resource_rules.append({"verbs": sorted(rule.verbs),
                                                 "nonResourceURLs": sorted(rule.urls)})
        return rules

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        errs: list[str] = []
        for binding, slot in self.index.grants_for(attrs.user, attrs.namespace):
            rules = slot.rules
            if rules is None:
                errs.append(not_found_message(binding))
                continue
            for rule in rules:
                if rule_allows(attrs, rule):
                    return True, ""
        return False, f"RBAC: [{', '.join(errs)}]" if len(errs) > 1 else (
            f"RBAC: {errs[0]}" if errs else "")
