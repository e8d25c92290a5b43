"""Who is making the request, for the strategy hooks that record it.

Kubernetes piece: k8s.io/apiserver's request context (genericapirequest.WithUser / UserFrom).
Upstream every strategy method receives the request's context; here the hooks keep their small
signatures and the one piece of that context a hook needs travels in a ContextVar the API
server's create handler sets for the duration of the registry call
(CertificateSigningRequest's PrepareForCreate records the requestor's username, uid, groups
and extra). On a port that authenticates nobody the handler passes upstream's insecure
superuser (`system:unsecured`); None only outside a request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_user: ContextVar[Any | None] = ContextVar("minikube_py_request_user", default=None)


def current_user() -> Any | None:
    """The authenticated user (authn.UserInfo) of the request being served, or None."""
    return _user.get()


@contextmanager
def requested_by(user: Any | None) -> Iterator[None]:
    token = _user.set(user)
    try:
        yield
    finally:
        _user.reset(token)
