"""Authorization for the secure port: may this user do this?

Kubernetes v1.0 piece: pkg/auth/authorizer (Attributes, Authorizer, the AlwaysAllow and
AlwaysDeny authorizers) and pkg/apiserver/authz.go's NewAuthorizerFromAuthorizationConfig:
--authorization-mode is a comma list and the request is allowed when ANY listed authorizer
allows it (later union.New). Deny messages follow later apiserver's responsewriters.Forbidden
(`pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the
namespace "default": No policy matched.`) with the reasons the authorizers give.

A request is authorized as its RequestInfo resolves it, and a WebSocket upgrade into
`pods/exec`, `pods/attach` or `pods/portforward` — a GET, so verb `get` — must then ALSO be
allowed `create` on that subresource (upstream's compound check of KEP-4006, feature gate
AuthorizePodWebsocketUpgradeCreatePermission, on by default since 1.35): otherwise read access
to pods would be a shell in them, and through the shell every Secret they mount. SPDY clients
POST, which is `create` already. The proxies (`pods/proxy`, `services/proxy`, `nodes/proxy`)
are not in that list: their verb is the proxied request's method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ...api import errors
from ..authn import UserInfo

MODES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "RBAC", "Node")
_READONLY_VERBS = frozenset({"get", "list", "watch"})
#: (group, resource, subresource) a connection into which also needs `create` (KEP-4006)
CREATE_TO_CONNECT = frozenset({("", "pods", "exec"), ("", "pods", "attach"),
                               ("", "pods", "portforward")})


@dataclass(frozen=True, slots=True)
class Attributes:
    """authorizer.Attributes of one request."""

    user: UserInfo
    verb: str
    is_resource: bool
    path: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    api_group: str = ""
    api_version: str = ""

    @property
    def readonly(self) -> bool:
        """get/list/watch (v1.0's IsReadOnly: a GET)."""
        return self.verb in _READONLY_VERBS


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason); the reason explains a denial."""


class AlwaysAllow:
    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        return True, ""


class AlwaysDeny:
    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        return False, "Everything is forbidden."


class UnionAuthorizer:
    """Allowed when any member allows; otherwise the members' reasons, one per line."""

    def __init__(self, authorizers: list[Authorizer]) -> None:
        self.authorizers = authorizers

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        reasons = []
        for authorizer in self.authorizers:
            allowed, reason = authorizer.authorize(attrs)
            if allowed:
                return True, ""
            if reason:
                reasons.append(reason)
        return False, "\n".join(reasons)


def required_checks(attrs: Attributes) -> tuple[Attributes, ...]:
    """What a request must be allowed, in order: itself, and for a connection into a pod that
    was not resolved to `create` (the WebSocket upgrade's GET) the synthetic `create` on the
    same subresource (upstream's compound authorization for connectible resources)."""
    if (attrs.is_resource and attrs.verb != "create"
            and (attrs.api_group, attrs.resource, attrs.subresource) in CREATE_TO_CONNECT):
        return attrs, replace(attrs, verb="create")
    return (attrs,)


def first_denied(authorizer: Authorizer, attrs: Attributes) -> tuple[Attributes, str] | None:
    """The first of `required_checks` the authorizer denies, with its reason; None when every
    one is allowed. The denied attributes are what the 403 names (`cannot create resource
    "pods/exec"` for a read-only user's exec)."""
    for check in required_checks(attrs):
        allowed, reason = authorizer.authorize(check)
        if not allowed:
            return check, reason
    return None


def build_authorizer(modes: str, policy_file: str | Path | None = None,
                     sources: Mapping[str, tuple[Any, str]] | None = None) -> Authorizer:
    """The authorizer --authorization-mode and --authorization-policy-file ask for. RBAC and
    Node read objects through informers over `sources` (resource -> (store, key prefix)):
    RBAC its four kinds (authz.rbac.RESOURCES), Node pods and persistentvolumes
    (authz.node.RESOURCES); the caller starts them (`rbac_authorizer`, `node_authorizer` find
    the members). Unknown modes, ABAC without a policy file, or a policy file without ABAC
    raise ValueError (as upstream's startup checks); a bad policy line raises ValueError
    naming file and line."""
    from .abac import ABACAuthorizer

    names = [m.strip() for m in modes.split(",") if m.strip()]
    if not names:
        raise ValueError("at least one authorization mode must be passed")
    authorizers: list[Authorizer] = []
    for name in dict.fromkeys(names):
        if name == "AlwaysAllow":
            authorizers.append(AlwaysAllow())
        elif name == "AlwaysDeny":
            authorizers.append(AlwaysDeny())
        elif name == "ABAC":
            if not policy_file:
                raise ValueError("ABAC's authorization policy file not passed "
                                 "(--authorization-policy-file)")
            authorizers.append(ABACAuthorizer.from_file(policy_file))
        elif name == "RBAC":
            from .rbac import RESOURCES, RBACAuthorizer

            authorizers.append(RBACAuthorizer({r: s for r, s in (sources or {}).items()
                                               if r in RESOURCES}))
        elif name == "Node":
            from .node import NodeAuthorizer

            authorizers.append(NodeAuthorizer(sources))
        else:
            raise ValueError(f"unknown authorization mode {name!r} "
                             f"(one of {', '.join(MODES)})")
    if policy_file and "ABAC" not in names:
        raise ValueError("cannot specify --authorization-policy-file without mode ABAC")
    return authorizers[0] if len(authorizers) == 1 else UnionAuthorizer(authorizers)


def rbac_authorizer(authorizer: Authorizer) -> Any:
    """The RBACAuthorizer inside `authorizer` (itself or a union member), or None."""
    from .rbac import RBACAuthorizer

    members = authorizer.authorizers if isinstance(authorizer, UnionAuthorizer) else [authorizer]
    return next((a for a in members if isinstance(a, RBACAuthorizer)), None)


def node_authorizer(authorizer: Authorizer) -> Any:
    """The NodeAuthorizer inside `authorizer` (itself or a union member), or None."""
    from .node import NodeAuthorizer

    members = authorizer.authorizers if isinstance(authorizer, UnionAuthorizer) else [authorizer]
    return next((a for a in members if isinstance(a, NodeAuthorizer)), None)


def forbidden_message(attrs: Attributes) -> str:
    """responsewriters.forbiddenMessage."""
    user = attrs.user.name
    if not attrs.is_resource:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group '
                f'"{attrs.api_group}" in the namespace "{attrs.namespace}"')
    return (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group '
            f'"{attrs.api_group}" at the cluster scope')


def forbidden_error(attrs: Attributes, reason: str) -> errors.StatusError:
    """The 403 Status upstream's responsewriters.Forbidden writes (apierrors.NewForbidden
    over the group-qualified resource and the object name)."""
    message = forbidden_message(attrs)
    if reason:
        message = f"{message}: {reason}"
    if not attrs.is_resource or not attrs.resource:
        return errors.forbidden_request(f"forbidden: {message}")
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    if attrs.name:
        text = f'{qualified} "{attrs.name}" is forbidden: {message}'
    else:
        text = f"{qualified} is forbidden: {message}"
    return errors.forbidden_request(text, attrs.resource, attrs.name, attrs.api_group)
