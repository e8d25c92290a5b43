"""Escalation prevention: nobody grants, through a role or a binding, rights they lack.

Kubernetes pieces: pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/
policybased/storage.go, pkg/registry/rbac/escalation_check.go (EscalationAllowed,
RoleEscalationAuthorized, BindingAuthorized) and pkg/registry/rbac/validation/rule.go
(ConfirmNoEscalation). A Role/ClusterRole write is allowed to a `system:masters` member, to a
user allowed `escalate` on it, or when the user already holds every rule it grants (in the
role's namespace; cluster-wide for a ClusterRole). A binding write is allowed to a
`system:masters` member, to a user allowed `bind` on the referenced role, or when the user
holds every rule of the referenced role. A ClusterRole with an aggregationRule needs
`system:masters` (upstream: "must have cluster-admin privileges"). Writes on the insecure port
(no user) are not checked, as upstream's privileged loopback.

It runs as the first step of the admission chain (it needs the caller and the new object);
upstream has it in the registry, before admission — the effect on the wire is the same 403.
"""

from __future__ import annotations

from typing import Any

from ....api import errors
from ....api.rbac import GROUP
from ...admission.chain import Attributes as AdmissionAttributes
from ...authn import UserInfo
from .. import Attributes, Authorizer
from .authorizer import RBACAuthorizer
from .index import Binding
from .rules import Rule, compact_string, uncovered

SYSTEM_MASTERS = "system:masters"
_ROLE_KINDS = {"roles": "Role", "clusterroles": "ClusterRole"}
_BINDING_KINDS = {"rolebindings", "clusterrolebindings"}


def _go_strings(values: tuple[str, ...]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def escalation_message(user: UserInfo, missing: list[Rule], resolution_errors: list[str]) -> str:
    """ConfirmNoEscalation's error text."""
    text = (f'user "{user.name}" (groups={_go_strings(user.groups)}) is attempting to grant '
            f"RBAC permissions not currently held:\n"
            + "\n".join(compact_string(rule) for rule in missing))
    if resolution_errors:
        text += f"; resolution errors: [{', '.join(resolution_errors)}]"
    return text


class EscalationCheck:
    """An admission-chain step over the four RBAC resources."""

    name = "RBACEscalation"

    def __init__(self, rbac: RBACAuthorizer, authorizer: Authorizer) -> None:
        self.rbac = rbac
        self.authorizer = authorizer  # the whole --authorization-mode union, as upstream

    def _allowed(self, user: UserInfo, verb: str, resource: str, namespace: str,
                 name: str) -> bool:
        attrs = Attributes(user, verb, True, namespace=namespace, resource=resource, name=name,
                           api_group=GROUP, api_version="v1")
        return self.authorizer.authorize(attrs)[0]

    async def admit(self, attrs: AdmissionAttributes) -> None:
        strategy = attrs.strategy
        if (strategy.group != GROUP or attrs.user is None or attrs.obj is None
                or attrs.subresource or attrs.operation not in ("CREATE", "UPDATE")
                or SYSTEM_MASTERS in attrs.user.groups):
            return
        if strategy.resource in _ROLE_KINDS:
            self._check_role(attrs, attrs.user, attrs.obj)
        elif strategy.resource in _BINDING_KINDS:
            self._check_binding(attrs, attrs.user, attrs.obj)

    def _forbidden(self, attrs: AdmissionAttributes, name: str, message: str) -> Exception:
        resource = attrs.strategy.resource
        return errors.forbidden_request(
            f'{resource}.{GROUP} "{name}" is forbidden: {message}', resource, name, GROUP)

    def _check_role(self, attrs: AdmissionAttributes, user: UserInfo, obj: dict[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name") or attrs.name)
        if attrs.strategy.resource == "clusterroles" and obj.get("aggregationRule") is not None:
            raise self._forbidden(attrs, name,
                                  "must have cluster-admin privileges to use the aggregationRule")
        if self._allowed(user, "escalate", attrs.strategy.resource, attrs.namespace, name):
            return
        rules = obj.get("rules")
        requested = [Rule.compile(r) for r in rules] if isinstance(rules, list) else []
        owner, errs = self.rbac.index.rules_for(user, attrs.namespace)
        missing = uncovered(owner, requested)
        if missing:
            raise self._forbidden(attrs, name, escalation_message(user, missing, errs))

    def _check_binding(self, attrs: AdmissionAttributes, user: UserInfo,
                       obj: dict[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name") or attrs.name)
        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
        kind, role = str(ref.get("kind") or ""), str(ref.get("name") or "")
        allowed_kinds = ("Role", "ClusterRole") if attrs.namespace else ("ClusterRole",)
        if kind not in allowed_kinds or not role:
            return  # validation answers 422 for the roleRef
        resource = "clusterroles" if kind == "ClusterRole" else "roles"
        if self._allowed(user, "bind", resource, attrs.namespace, role):
            return
        index = self.rbac.index
        binding = Binding(attrs.namespace, name, kind, role)
        requested = index.rules_of(binding)
        if requested is None:
            raise errors.not_found(resource, role, GROUP)
        owner, errs = index.rules_for(user, attrs.namespace)
        missing = uncovered(owner, list(requested))
        if missing:
            raise self._forbidden(attrs, name, escalation_message(user, missing, errs))
