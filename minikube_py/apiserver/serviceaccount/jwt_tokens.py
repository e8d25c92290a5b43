"""Signing and verifying service-account JWTs.

Kubernetes piece: pkg/serviceaccount/jwt.go — JWTTokenGenerator (signs with the
--service-account-signing-key-file key, `kid` header) and jwtTokenAuthenticator's first half:
a token whose `iss` is not one of ours is not ours to judge (another authenticator may know
it); one that is must carry a valid signature by one of the --service-account-key-file keys,
be inside its validity window (go-jose's one-minute leeway) and name one of the API server's
audiences. PyJWT does the JOSE work. A verified token's claims are cached until it expires, so
a client repeating its token pays a dict lookup instead of an RSA verification (~50 µs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from ...serviceaccount_keys import LEGACY_ISSUER, VerifyKey

#: go-jose jwt.DefaultLeeway, which upstream's Validate uses for exp and nbf
LEEWAY_SECONDS = 60
#: verified tokens kept at most (the cache is cleared of expired entries, then of all, past it)
CACHE_SIZE = 4096


class InvalidToken(Exception):
    """A token of ours that does not authenticate; the message is upstream's."""


def unverified_issuer(token: str) -> str | None:
    """The `iss` of a compact JWS without checking anything (jwt.go hasCorrectIssuer); None
    when the text is not a JWT at all."""
    if token.count(".") != 2:
        return None
    import jwt  # PyJWT: on the first bearer token that may be one, not at every start

    try:
        payload = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    issuer = payload.get("iss")
    return issuer if isinstance(issuer, str) else None


class TokenVerifier:
    """Checks signature, issuer, time window and audience; caches what passed."""

    def __init__(self, keys: Iterable[VerifyKey], issuers: Iterable[str],
                 audiences: Iterable[str], clock: Callable[[], float] = time.time) -> None:
        self.keys = list(keys)
        self._by_kid = {k.kid: k for k in self.keys}
        self.issuers = frozenset(issuers)
        self.audiences = frozenset(audiences)
        self.clock = clock
        self._cache: dict[str, dict[str, Any]] = {}

    def ours(self, token: str) -> bool:
        """Whether this authenticator judges the token (its issuer is ours)."""
        if token in self._cache:
            return True
        return unverified_issuer(token) in self.issuers

    def verify(self, token: str, audiences: Iterable[str] | None = None) -> dict[str, Any]:
        """The verified claims of a token of ours; InvalidToken otherwise. `audiences`: the
        ones the caller accepts (a TokenReview's), default the API server's."""
        now = self.clock()
        claims = self._cache.get(token)
        if claims is None:
            claims = self._verify_signature(token)
            if len(self._cache) >= CACHE_SIZE:
                self._prune(now)
            self._cache[token] = claims
        if claims["iss"] == LEGACY_ISSUER:  # no exp, no aud: the API server's audiences
            wanted = self.audiences if audiences is None else frozenset(audiences)
            if wanted.isdisjoint(self.audiences):
                raise InvalidToken("legacy service account token is only for the API server")
            return claims
        if now > claims["exp"] + LEEWAY_SECONDS:
            self._cache.pop(token, None)
            raise InvalidToken("service account token has expired")
        if now < claims["nbf"] - LEEWAY_SECONDS:
            raise InvalidToken("service account token is not valid yet")
        wanted = self.audiences if audiences is None else frozenset(audiences)
        if wanted.isdisjoint(claims["aud"]):
            raise InvalidToken(f"token audiences {claims['aud']!r} is invalid for the target "
                               f"audiences {sorted(wanted)!r}")
        return claims

    def matched_audiences(self, claims: dict[str, Any], audiences: Iterable[str]) -> list[str]:
        """The token's audiences that are among `audiences` (upstream's intersection); a
        legacy token's are implicitly the API server's."""
        wanted = set(audiences)
        own = sorted(self.audiences) if claims["iss"] == LEGACY_ISSUER else claims["aud"]
        return [a for a in own if a in wanted]

    def _prune(self, now: float) -> None:
        # legacy tokens have no exp: they stay until the cache is full of live tokens
        for key in [k for k, c in self._cache.items()
                    if now > c.get("exp", float("inf")) + LEEWAY_SECONDS]:
            del self._cache[key]
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()

    def _candidates(self, token: str) -> list[VerifyKey]:
        import jwt

        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            raise InvalidToken("invalid signature") from None
        key = self._by_kid.get(kid) if isinstance(kid, str) else None
        return [key] if key is not None else self.keys  # upstream tries every key

    def _verify_signature(self, token: str) -> dict[str, Any]:
        """Signature, issuer and claim types: what does not change with time or the
        audiences asked for, so it is what the cache keeps."""
        import jwt

        claims: dict[str, Any] | None = None
        for key in self._candidates(token):
            try:
                claims = jwt.decode(token, key.key, algorithms=[key.alg], options={
                    "verify_exp": False, "verify_nbf": False, "verify_iat": False,
                    "verify_aud": False, "verify_iss": False})
                break
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError:
                break
        if claims is None:
            raise InvalidToken("invalid signature")
        if claims.get("iss") not in self.issuers:
            raise InvalidToken("token issuer is not trusted")
        if claims["iss"] == LEGACY_ISSUER:
            return claims  # validated against its Secret (claims.legacy_bound_claims)
        exp, nbf = claims.get("exp"), claims.get("nbf", 0)
        if not isinstance(exp, (int, float)) or not isinstance(nbf, (int, float)):
            raise InvalidToken("service account token could not be validated")
        aud = claims.get("aud")
        token_auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        claims["aud"] = [a for a in token_auds if isinstance(a, str)]
        claims["nbf"] = nbf
        return claims
