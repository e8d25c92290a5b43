"""The secure port's authentication + authorization step of the filter chain.

Kubernetes v1.0 piece: pkg/apiserver/handlers.go's authorization handler and
pkg/auth/handlers (NewRequestAuthenticator, which answers 401 when no authenticator
recognises the request), run by cmd/kube-apiserver only on the secure (TLS) port; the
insecure port skipped both. Anonymous requests may reach /healthz, /livez, /readyz and /version
(and nothing else); an authenticated user's request is authorized from the resolved
RequestInfo — plus, for a WebSocket exec/attach/port-forward, `create` on the subresource
(authz.required_checks).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ...api import errors
from ..authn import ALL_AUTHENTICATED, UnionAuthenticator, UserInfo, build_authenticator
from ..options import APIServerOptions
from ..requestinfo import RequestInfo
from . import (
    AlwaysAllow,
    Attributes,
    Authorizer,
    build_authorizer,
    first_denied,
    forbidden_error,
)

if TYPE_CHECKING:
    from ..serviceaccount.authenticator import ServiceAccountAuthenticator

#: where the authenticated user travels with the request (for admission, audit)
USER: web.RequestKey[UserInfo] | str = (
    web.RequestKey("user", UserInfo) if hasattr(web, "RequestKey") else "user")
#: paths an anonymous caller may read
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/",
                          # service-account issuer discovery (upstream grants it to
                          # system:serviceaccounts; here anyone may read the public keys)
                          "/.well-known/openid-configuration", "/openid/v1/jwks"})


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
    """Called by the filter chain for TLS requests only; raises a 401/403 StatusError.

    The header/certificate authenticators are synchronous; a bearer token only the
    service-account authenticator can judge (a JWT with our issuer) needs store reads, so
    check() then returns an awaitable the chain awaits — every other request pays nothing."""

    def __init__(self, authenticator: UnionAuthenticator, authorizer: Authorizer,
                 service_accounts: ServiceAccountAuthenticator | None = None) -> None:
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.service_accounts = service_accounts

    def check(self, request: web.Request, info: RequestInfo) -> Awaitable[None] | None:
        user = self.authenticator.authenticate(request.headers, peer_certificate(request))
        if user is None and self.service_accounts is not None:
            token = bearer_token(request)
            if token is not None and self.service_accounts.handles(token):
                return self._check_service_account(request, info, token)
        self._decide(request, info, user)
        return None

    async def _check_service_account(self, request: web.Request, info: RequestInfo,
                                     token: str) -> None:
        assert self.service_accounts is not None
        user = await self.service_accounts.authenticate(token)
        if user is not None:
            user = UserInfo(user.name, user.uid, (*user.groups, ALL_AUTHENTICATED))
        self._decide(request, info, user)

    def _decide(self, request: web.Request, info: RequestInfo, user: UserInfo | None) -> None:
        if user is None:
            if info.is_resource or request.path not in PUBLIC_PATHS:
                raise errors.unauthorized()
            return
        request[USER] = user
        denied = first_denied(self.authorizer, attributes(user, info))
        if denied is not None:
            raise forbidden_error(*denied)


def build_guard(options: APIServerOptions,
                service_accounts: ServiceAccountAuthenticator | None = None) -> Guard | None:
    """The guard the options ask for; bad files or modes raise ValueError at startup. None
    when no authenticator is configured and the mode is AlwaysAllow: as in v1.0, the secure
    port then serves everyone (and the filter chain pays nothing)."""
    authenticator = build_authenticator(token_auth_file=options.token_auth_file,
                                        basic_auth_file=options.basic_auth_file,
                                        client_ca_file=options.client_ca_file)
    authorizer = build_authorizer(options.authorization_mode, options.authorization_policy_file)
    if not authenticator.authenticators and service_accounts is None and isinstance(
            authorizer, AlwaysAllow):
        return None
    return Guard(authenticator, authorizer, service_accounts)
