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
On loopback (the default) there is no check, as the insecure port on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web
from multidict import CIMultiDict

from ..api import errors
from ..apiserver.authn import UserInfo
from ..apiserver.authz import Attributes, forbidden_error

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


def middleware(ctx: ConsoleContext) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def check(request: web.Request, handler: web.RequestHandler) -> web.StreamResponse:
        if not ctx.require_auth:
            return await handler(request)
        token, from_query = token_of(request)
        guard = ctx.guard
        user = await authenticate(guard, token) if token and guard is not None else None
        if user is None:
            raise errors.unauthorized()
        require_admin(guard, user)  # type: ignore[arg-type]  (user is set only with a guard)
        response = await handler(request)
        if from_query and not response.prepared:
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/",
                                secure=request.secure)
        return response
    return check
