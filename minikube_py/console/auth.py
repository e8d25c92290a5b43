"""Who may use a console that listens on a non-loopback address: cluster-admins only.

Kubernetes piece: the secure port's authentication and authorization filters
(apiserver/authz/guard.py, upstream's WithAuthentication + WithAuthorization). The console
reuses the API server's own authenticator and authorizer objects — no second user database:
a bearer token the API server accepts (the admin token `start` writes to the kubeconfig, a
--token-auth-file user, a service-account token) is accepted here, and the user must be
allowed everything (`*` on `*.*`, what the bootstrap ClusterRole cluster-admin grants to
system:masters), because the console's actions act with the API server's loopback identity.

A browser cannot put a header on an EventSource, so a token may also come once as `?token=`:
the answer then sets it as an HttpOnly, SameSite=Strict cookie that later requests carry.
On loopback (the default) there are no credentials, as on the insecure port on 127.0.0.1 —
and the same defence against DNS rebinding (apiserver/hostcheck.py: a Host that is a DNS name
other than localhost or this machine's is refused with a 403). Against cross-site request
forgery, every action (any method but GET/HEAD) must be sent as `application/json`: a page
elsewhere can only send that with a CORS preflight, which the console never answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web
from multidict import CIMultiDict

from ..api import errors
from ..apiserver.authn import UserInfo
from ..apiserver.authz import Attributes, forbidden_error
from ..apiserver.hostcheck import allowed as host_allowed
from ..apiserver.hostcheck import split_host

if TYPE_CHECKING:
    from ..apiserver.authz.guard import Guard
    from .context import ConsoleContext

COOKIE = "minikube-py-console-token"
#: what the console requires: every verb on every resource of every group, cluster-wide
ADMIN_CHECK = ("*", True, "", "", "*", "", "", "*", "*")


def token_of(request: web.Request) -> tuple[str | None, bool]:
    """The bearer token of a request and whether it came in the query (to be set as the
    cookie): the Authorization header first, then `?token=`, then the cookie."""
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip(), False
    query = request.query.get("token", "").strip()
    if query:
        return query, True
    return request.cookies.get(COOKIE) or None, False


async def authenticate(guard: Guard, token: str) -> UserInfo | None:
    """The user the API server would see for this bearer token, or None."""
    headers = CIMultiDict({"Authorization": f"Bearer {token}"})
    user = guard.authenticator.authenticate(headers, None)
    if user is None and guard.service_accounts is not None \
            and guard.service_accounts.handles(token):
        found = await guard.service_accounts.authenticate(token)
        user = found.authenticated() if found is not None else None
    return user


def require_admin(guard: Guard, user: UserInfo) -> None:
    """403 (the API server's Forbidden Status) unless `user` may do everything."""
    attrs = Attributes(user, *ADMIN_CHECK)
    allowed, reason = guard.authorizer.authorize(attrs)
    if not allowed:
        raise forbidden_error(attrs, reason)


def check_host(request: web.Request, hostname: str) -> None:
    """The insecure port's DNS-rebinding rule (apiserver/hostcheck.py), for the open console."""
    value = request.headers.get("Host")
    if value is not None and not host_allowed(value, hostname):
        raise errors.forbidden_request(
            f'Host "{value}" is not allowed on the console: use a loopback address, localhost '
            f"or this host's name ({hostname})")


def check_action(request: web.Request) -> None:
    """A 415 Status unless a state-changing request says it is JSON (see the docstring)."""
    if request.method in ("GET", "HEAD"):
        return
    if request.content_type != "application/json":
        raise errors.unsupported_media_type(request.headers.get("Content-Type", ""))


def middleware(ctx: ConsoleContext) -> Callable[..., Awaitable[web.StreamResponse]]:
    import socket

    hostname = split_host(socket.gethostname())

    @web.middleware
    async def check(request: web.Request, handler: web.RequestHandler) -> web.StreamResponse:
        if not ctx.require_auth:
            check_host(request, hostname)
            check_action(request)
            return await handler(request)
        token, from_query = token_of(request)
        guard = ctx.guard
        user = await authenticate(guard, token) if token and guard is not None else None
        if user is None:
            raise errors.unauthorized()
        require_admin(guard, user)  # type: ignore[arg-type]  (user is set only with a guard)
        check_action(request)
        response = await handler(request)
        if from_query and not response.prepared:
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/",
                                secure=request.secure)
        return response
    return check
