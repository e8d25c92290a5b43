"""The service-account token authenticator of the secure port.

Kubernetes piece: pkg/serviceaccount/jwt.go's jwtTokenAuthenticator.AuthenticateToken with
claims.go's validator (Validate): after the JWT checks (jwt_tokens.py), the account the token
names must still exist with the uid in the token, and so must the pod or secret it is bound to
(deleting the pod or recreating the account revokes the token). The user is
`system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and
`system:serviceaccounts:<ns>`. A legacy Secret token (issuer `kubernetes/serviceaccount`, the
tokens controller's, legacy.go) instead needs its Secret to hold exactly that token. The lookups are reads of the store (upstream reads informer
caches); only the signature check is cached, so a revocation is seen on the next request.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from ..authn import UserInfo
from ..authn.identities import service_account_groups, service_account_username
from . import claims as sa_claims
from .jwt_tokens import InvalidToken, TokenVerifier

log = structlog.get_logger("serviceaccount-authenticator")

#: (resource, namespace, name) -> the object, or None when there is none
Getter = Callable[[str, str, str], Awaitable[dict[str, Any] | None]]


def _uid(obj: dict[str, Any] | None) -> str | None:
    return None if obj is None else str((obj.get("metadata") or {}).get("uid", ""))


class ServiceAccountAuthenticator:
    def __init__(self, verifier: TokenVerifier, get: Getter) -> None:
        self.verifier = verifier
        self.get = get

    def handles(self, token: str) -> bool:
        return self.verifier.ours(token)

    async def authenticate(self, token: str) -> UserInfo | None:
        """The account's user, or None (a 401) with the reason logged."""
        user, _ = await self.review(token)
        return user

    async def review(self, token: str, audiences: list[str] | None = None
                     ) -> tuple[UserInfo | None, list[str]]:
        """(user or None, the token's audiences among `audiences` — default the API
        server's): what a TokenReview answers (pkg/registry/authentication/tokenreview)."""
        wanted = audiences or None  # None: the API server's (no per-call set built)
        try:
            claims = self.verifier.verify(token, wanted)
            bound = sa_claims.bound_claims(claims)
            if bound.legacy:
                await self._validate_secret(bound, token)
            await self._validate(bound)
        except (InvalidToken, ValueError) as exc:
            log.debug("service account token refused", reason=str(exc))
            return None, []
        user = UserInfo(service_account_username(bound.namespace, bound.account.name),
                        bound.account.uid, service_account_groups(bound.namespace))
        return user, self.verifier.matched_audiences(
            claims, self.verifier.audiences if wanted is None else wanted)

    async def _validate_secret(self, bound: sa_claims.BoundClaims, token: str) -> None:
        """legacy.go: the Secret must exist, not be deleted, and hold this very token."""
        assert bound.secret is not None
        secret = await self.get("secrets", bound.namespace, bound.secret.name)
        if secret is None or (secret.get("metadata") or {}).get("deletionTimestamp"):
            raise InvalidToken("token has been invalidated")
        stored = (secret.get("data") or {}).get("token")
        try:
            matches = isinstance(stored, str) and base64.b64decode(stored).decode() == token
        except (ValueError, UnicodeDecodeError):
            matches = False
        if not matches:
            raise InvalidToken("token does not match server's copy")

    async def _validate(self, bound: sa_claims.BoundClaims) -> None:
        ns = bound.namespace
        account = await self.get("serviceaccounts", ns, bound.account.name)
        if account is None:
            raise InvalidToken("service account token has been invalidated")
        if _uid(account) != bound.account.uid:
            raise InvalidToken(f"service account UID ({_uid(account)}) does not match claim "
                               f"({bound.account.uid})")
        for resource, ref in (("secrets", bound.secret), ("pods", bound.pod)):
            if ref is None or (bound.legacy and resource == "secrets"):
                continue
            obj = await self.get(resource, ns, ref.name)
            if obj is None:
                raise InvalidToken(f"{resource[:-1]} {ns}/{ref.name} has been deleted")
            if _uid(obj) != ref.uid:
                raise InvalidToken(f"{resource[:-1]} UID ({_uid(obj)}) does not match claim "
                                   f"({ref.uid})")
            if obj.get("metadata", {}).get("deletionTimestamp") and resource == "secrets":
                raise InvalidToken(f"secret {ns}/{ref.name} is being deleted")
