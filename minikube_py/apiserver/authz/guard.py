"""The secure port's authentication + authorization step of the filter chain.

Kubernetes v1.0 piece: pkg/apiserver/handlers.go's authorization handler and
pkg/auth/handlers (NewRequestAuthenticator, which answers 401 when no authenticator
recognises the request), run by cmd/kube-apiserver only on the secure (TLS) port; the
insecure port skipped both. Anonymous requests may reach /healthz, /livez, /readyz and /version
(and nothing else); an authenticated user's request is authorized from the resolved
RequestInfo — plus, for a WebSocket exec/attach/port-forward, `create` on the subresource
(authz.required_checks).

Between the two, impersonation (later apiserver's WithImpersonation, authn/impersonation.py):
Impersonate-* headers make the authenticated user ask for `impersonate` on each attribute it
wants to act as; once all are allowed, the request is authorized — and served — as the
impersonated user, on a clone of the request without those headers.

The header/certificate authenticators are synchronous; a bearer token only the
service-account authenticator can judge (a JWT with our issuer, serviceaccount/) needs store
reads, so check() then answers an awaitable the chain awaits — every other request pays
nothing for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

from ...api import errors
from ...api.fields import parse_field_selector
from ..authn import (
    UnionAuthenticator,
    UserInfo,
    build_authenticator,
    impersonation,
)
from ..options import APIServerOptions
from ..requestinfo import RequestInfo
from . import (
    AlwaysAllow,
    Attributes,
    Authorizer,
    build_authorizer,
    first_denied,
    forbidden_error,
    rbac_authorizer,
)

if TYPE_CHECKING:
    from ..serviceaccount.authenticator import ServiceAccountAuthenticator

log = structlog.get_logger(component="apiserver")

_COLLECTION_VERBS = frozenset({"list", "watch"})
#: where the authenticated user travels with the request (for admission, audit)
USER: web.RequestKey[UserInfo] | str = (
    web.RequestKey("user", UserInfo) if hasattr(web, "RequestKey") else "user")
#: paths an anonymous caller may read (what upstream's bootstrap policy grants
#: system:unauthenticated through system:public-info-viewer). Service-account issuer
#: discovery (/.well-known/openid-configuration, /openid/v1/jwks) is not among them: as
#: upstream, it is for authenticated callers the authorizer allows (RBAC binds it to
#: system:serviceaccounts); bind system:service-account-issuer-discovery to more to widen it.
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


def authorization_view(request: web.Request, info: RequestInfo) -> RequestInfo:
    """The request as authorization sees it: a list or watch of one object through
    `fieldSelector=metadata.name=<name>` names that object (upstream's RequestInfoFactory:
    "some of the old codes are using the fieldSelector to do name filtering"), so a rule
    with resourceNames — and the Node authorizer — may allow it (`kubectl wait`, client-go's
    single-object informers). Only authorization sees the name: the handler still lists."""
    if (info.name or info.verb not in _COLLECTION_VERBS or not request.query_string
            or "metadata.name" not in request.query_string):
        return info
    try:
        selector = parse_field_selector(request.query.get("fieldSelector", ""))
    except errors.StatusError:  # the handler answers the bad selector
        return info
    name = selector.exact_value("metadata.name")
    if not name or name in (".", "..") or "/" in name or "%" in name:  # IsValidPathSegmentName
        return info
    return replace(info, name=name)


def attributes(user: UserInfo, info: RequestInfo) -> Attributes:
    return Attributes(user, info.verb, info.is_resource, info.path, info.namespace,
                      info.resource, info.subresource, info.name, info.group, info.version)


def peer_certificate(request: web.Request) -> dict[str, Any] | None:
    transport = request.transport
    return transport.get_extra_info("peercert") if transport is not None else None


def bearer_token(request: web.Request) -> str | None:
    value = request.headers.get("Authorization", "")
    scheme, _, token = value.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class Guard:
    """Called by the filter chain for TLS requests only; raises a 401/403 StatusError."""

    def __init__(self, authenticator: UnionAuthenticator, authorizer: Authorizer,
                 service_accounts: ServiceAccountAuthenticator | None = None) -> None:
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.service_accounts = service_accounts
        #: the RBAC member of the authorizer (its informers start with the server), or None
        self.rbac = rbac_authorizer(authorizer)

    def check(self, request: web.Request, info: RequestInfo
              ) -> web.Request | Awaitable[web.Request | None] | None:
        """Raises 400/401/403; answers the request to serve instead of `request` when
        impersonation replaced it (a clone without the Impersonate-* headers), else None — or,
        for a service-account token, an awaitable of that answer."""
        user = self.authenticator.authenticate(request.headers, peer_certificate(request))
        if user is None and self.service_accounts is not None:
            token = bearer_token(request)
            if token is not None and self.service_accounts.handles(token):
                return self._check_service_account(request, info, token)
        return self._decide(request, info, user)

    async def _check_service_account(self, request: web.Request, info: RequestInfo,
                                     token: str) -> web.Request | None:
        assert self.service_accounts is not None
        user = await self.service_accounts.authenticate(token)
        if user is not None:
            user = user.authenticated()
        return self._decide(request, info, user)

    def _decide(self, request: web.Request, info: RequestInfo,
                user: UserInfo | None) -> web.Request | None:
        headers = request.headers
        impersonating = impersonation.is_requested(headers)
        if user is None:
            if impersonating or info.is_resource or request.path not in PUBLIC_PATHS:
                raise errors.unauthorized()
            return None
        replaced = None
        if impersonating:
            user = self.impersonate(user, headers.items())
            replaced = request.clone(headers=impersonation.strip(headers.items()))
            request = replaced
        request[USER] = user
        self.authorize(user, authorization_view(request, info))
        return replaced

    def authorize(self, user: UserInfo, info: RequestInfo) -> None:
        """Raise the 403 when `user` may not do what `info` resolves to. Also what an
        in-process request carrying a component's identity (authn/identities.py) gets: the
        same decision, and the same 403, as that user on the secure port."""
        denied = first_denied(self.authorizer, attributes(user, info))
        if denied is not None:
            raise forbidden_error(*denied)

    def impersonate(self, user: UserInfo, headers: Iterable[tuple[str, str]]) -> UserInfo:
        """WithImpersonation's loop: `user` must be allowed `impersonate` on every requested
        attribute, in header order; the first denial is the 403."""
        requests = impersonation.parse(headers)
        for wanted in requests:
            attrs = Attributes(user, "impersonate", True, "", wanted.namespace, wanted.resource,
                               wanted.subresource, wanted.name, wanted.api_group,
                               wanted.api_version)
            allowed, reason = self.authorizer.authorize(attrs)
            if not allowed:
                raise forbidden_error(attrs, reason)
        impersonated = impersonation.impersonated_user(requests)
        log.debug("impersonating", user=user.name, acting_as=impersonated.name,
                  groups=list(impersonated.groups))
        return impersonated


def build_guard(options: APIServerOptions,
                service_accounts: ServiceAccountAuthenticator | None = None,
                rbac_sources: Mapping[str, tuple[Any, str]] | None = None) -> Guard | None:
    """The guard the options ask for; bad files or modes raise ValueError at startup. None
    when no authenticator is configured and the mode is AlwaysAllow: as in v1.0, the secure
    port then serves everyone (and the filter chain pays nothing)."""
    authenticator = build_authenticator(token_auth_file=options.token_auth_file,
                                        basic_auth_file=options.basic_auth_file,
                                        client_ca_file=options.client_ca_file)
    authorizer = build_authorizer(options.authorization_mode, options.authorization_policy_file,
                                  rbac_sources)
    if not authenticator.authenticators and service_accounts is None and isinstance(
            authorizer, AlwaysAllow):
        return None
    return Guard(authenticator, authorizer, service_accounts)
