"""Authentication and authorization of the kubelet API (the pool's port, 10250 by default).

Kubernetes piece: pkg/kubelet/server/auth.go (KubeletAuth: an authenticator, the
nodeAuthorizerAttributesGetter, an authorizer) and server.go's InstallAuthFilter, configured by
the kubelet's --anonymous-auth, --client-ca-file, --authentication-token-webhook and
--authorization-mode (AlwaysAllow | Webhook). The rules kept from upstream:

- a request nobody recognises is 401 with the plain-text body `Unauthorized`; with
  --anonymous-auth it is `system:anonymous` in `system:unauthenticated` instead;
- a request maps to the attributes of the API request that would allow it: resource `nodes`,
  verb from the HTTP method (POST create, GET get, PUT update, PATCH patch, DELETE delete),
  subresource `proxy`, except `/stats/*` (stats), `/metrics/*` (metrics), `/logs/*` (log);
- a denied request is 403 `Forbidden (user=..., verb=..., resource=nodes, subresource=...)`.

What differs: upstream's Webhook mode asks the API server (SubjectAccessReview), which this
project does not serve yet. Here `Webhook` decides from the caller's groups the way the API
server's default policy would for these attributes: members of `system:masters` (the admin,
and the API server's own kubelet-client certificate) are allowed, everyone else is not. Tokens
are checked by whatever `Authenticator` the pool is given (inside `minikube-py start`, the API
server's own token file — an in-process TokenReview); client certificates by the TLS layer.

The decisions are pure functions (`request_attributes`, `decide`); `middleware` is the only
part that touches aiohttp.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

import structlog
from aiohttp import web

log = structlog.get_logger(component="kubelet")

#: the group whose members may use the kubelet API under Webhook mode (the API server's
#: superuser group; kubeadm gives its apiserver-kubelet-client certificate this O)
MASTERS_GROUP = "system:masters"
ANONYMOUS_USER, UNAUTHENTICATED_GROUP = "system:anonymous", "system:unauthenticated"
AUTHORIZATION_MODES = ("AlwaysAllow", "Webhook")
_VERBS = {"POST": "create", "GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_SUBPATHS = (("/stats", "stats"), ("/metrics", "metrics"), ("/logs", "log"))


class User(Protocol):
    """user.Info as the API server's authenticators answer it (apiserver.authn.UserInfo)."""

    name: str
    groups: tuple[str, ...]


class Authenticator(Protocol):
    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> User | None:
        """The user the request proves to be (bearer token, verified client certificate)."""


@dataclass(frozen=True, slots=True)
class Anonymous:
    """What --anonymous-auth makes of a request no authenticator recognises."""

    name: str = ANONYMOUS_USER
    groups: tuple[str, ...] = (UNAUTHENTICATED_GROUP,)


@dataclass(frozen=True, slots=True)
class Attributes:
    """The authorizer.Attributes of a kubelet API request (resource is always `nodes`)."""

    user: str
    groups: tuple[str, ...]
    verb: str
    subresource: str
    path: str

    def forbidden(self) -> str:
        return (f"Forbidden (user={self.user}, verb={self.verb}, resource=nodes, "
                f"subresource={self.subresource})")


@dataclass(frozen=True)
class KubeletAuth:
    """The kubelet's authentication and authorization settings.

    `authenticator`: bearer tokens and client certificates (None: nobody is recognised);
    `anonymous`: --anonymous-auth; `authorization_mode`: AlwaysAllow or Webhook."""

    authenticator: Authenticator | None
    anonymous: bool = False
    authorization_mode: str = "Webhook"

    def __post_init__(self) -> None:
        if self.authorization_mode not in AUTHORIZATION_MODES:
            raise ValueError(f"unknown authorization mode {self.authorization_mode!r} "
                             f"(known: {', '.join(AUTHORIZATION_MODES)})")

    @property
    def open(self) -> bool:
        """Everyone may do everything (anonymous + AlwaysAllow): the filter is not needed."""
        return self.anonymous and self.authorization_mode == "AlwaysAllow"


def _is_subpath(subpath: str, path: str) -> bool:
    return subpath == path or subpath.startswith(path + "/")


def request_attributes(user: User, method: str, path: str) -> Attributes:
    """upstream nodeAuthorizerAttributesGetter.GetRequestAttributes."""
    subresource = "proxy"
    for prefix, name in _SUBPATHS:
        if _is_subpath(path, prefix):
            subresource = name
            break
    return Attributes(user.name, tuple(user.groups), _VERBS.get(method, ""), subresource, path)


def authenticate(auth: KubeletAuth, headers: Mapping[str, str],
                 peercert: dict[str, Any] | None) -> User | None:
    user = auth.authenticator.authenticate(headers, peercert) if auth.authenticator else None
    if user is None and auth.anonymous:
        return Anonymous()
    return user


def decide(auth: KubeletAuth, attrs: Attributes) -> bool:
    """The authorizer: AlwaysAllow, or (Webhook, without a SubjectAccessReview API) the
    decision the API server's superuser rule gives: allowed for `system:masters`."""
    if auth.authorization_mode == "AlwaysAllow":
        return True
    return MASTERS_GROUP in attrs.groups


def _peer_certificate(request: web.Request) -> dict[str, Any] | None:
    transport = request.transport
    return transport.get_extra_info("peercert") if transport is not None else None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def middleware(auth: KubeletAuth) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """InstallAuthFilter: 401 `Unauthorized`, 403 `Forbidden (...)`, both text/plain."""

    @web.middleware
    async def filter_auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        user = authenticate(auth, request.headers, _peer_certificate(request))
        if user is None:
            return web.Response(status=401, text="Unauthorized")
        attrs = request_attributes(user, request.method, request.path)
        if not decide(auth, attrs):
            log.info("kubelet API request forbidden", user=attrs.user, verb=attrs.verb,
                     subresource=attrs.subresource, path=attrs.path)
            return web.Response(status=403, text=attrs.forbidden())
        return await handler(request)

    return filter_auth
