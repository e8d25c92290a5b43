"""The claims of a service-account token, as upstream mints and reads them.

Kubernetes piece: pkg/serviceaccount/claims.go (Claims builds them; privateClaims is the
`kubernetes.io` claim with namespace, serviceaccount, pod, secret and node references) and
k8s.io/apiserver's serviceaccount.MakeUsername / MakeGroupNames. Pure functions: no keys, no
I/O, so the shapes are unit-tested on their own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from ...serviceaccount_keys import (
    LEGACY_ACCOUNT_CLAIM,
    LEGACY_ISSUER,
    LEGACY_NAMESPACE_CLAIM,
    LEGACY_SECRET_CLAIM,
    LEGACY_UID_CLAIM,
)
from ..authn.identities import service_account_username as username

PRIVATE_CLAIM = "kubernetes.io"


@dataclass(frozen=True, slots=True)
class Ref:
    """A bound object (name, uid), claims.go's `ref`."""

    name: str
    uid: str

    def claim(self) -> dict[str, str]:
        return {"name": self.name, "uid": self.uid}


def _ref(obj: dict[str, Any] | None) -> Ref | None:
    if not obj:
        return None
    md = obj.get("metadata") or {}
    return Ref(str(md.get("name", "")), str(md.get("uid", "")))


def new_claims(issuer: str, account: dict[str, Any], audiences: list[str], now: int,
               expiration_seconds: int, *, pod: dict[str, Any] | None = None,
               secret: dict[str, Any] | None = None, node: dict[str, Any] | None = None,
               jti: str | None = None) -> dict[str, Any]:
    """claims.go Claims: registered claims plus the `kubernetes.io` private claim."""
    md = account["metadata"]
    namespace = md["namespace"]
    private: dict[str, Any] = {"namespace": namespace,
                               "serviceaccount": Ref(md["name"], md.get("uid", "")).claim()}
    for key, obj in (("pod", pod), ("secret", secret), ("node", node)):
        ref = _ref(obj)
        if ref is not None:
            private[key] = ref.claim()
    return {"aud": list(audiences), "exp": now + expiration_seconds, "iat": now,
            "iss": issuer, "jti": jti or str(uuid.uuid4()), PRIVATE_CLAIM: private,
            "nbf": now, "sub": username(namespace, md["name"])}


@dataclass(frozen=True, slots=True)
class BoundClaims:
    """What the authenticator checks against the cluster after the signature: the account,
    and the pod/secret/node the token is bound to (None: not bound)."""

    namespace: str
    account: Ref
    pod: Ref | None
    secret: Ref | None
    node: Ref | None
    expires: int
    jti: str
    #: a legacy Secret token: valid while its Secret holds exactly this token
    legacy: bool = False


def _claim_ref(private: dict[str, Any], key: str) -> Ref | None:
    value = private.get(key)
    if not isinstance(value, dict):
        return None
    return Ref(str(value.get("name", "")), str(value.get("uid", "")))


def _legacy_bound_claims(claims: dict[str, Any]) -> BoundClaims:
    """legacy.go legacyValidator's reading of the `kubernetes.io/serviceaccount/*` claims."""
    values = [claims.get(k) for k in (LEGACY_NAMESPACE_CLAIM, LEGACY_ACCOUNT_CLAIM,
                                      LEGACY_UID_CLAIM, LEGACY_SECRET_CLAIM)]
    if not all(isinstance(v, str) and v for v in values):
        raise ValueError("legacy service account token is missing its claims")
    namespace, account, uid, secret = values
    if claims.get("sub") != username(namespace, account):
        raise ValueError("service account token subject does not match its claims")
    return BoundClaims(namespace, Ref(account, uid), None, Ref(secret, ""), None, 0, "",
                       legacy=True)


def bound_claims(claims: dict[str, Any]) -> BoundClaims:
    """The references of a verified token's claims; ValueError when they are malformed (a
    token signed by us always parses; one with a subject that disagrees is refused, as
    claims.go Validate does)."""
    if claims.get("iss") == LEGACY_ISSUER:
        return _legacy_bound_claims(claims)
    private = claims.get(PRIVATE_CLAIM)
    if not isinstance(private, dict):
        raise ValueError("service account token claims are missing kubernetes.io")  # noqa: TRY004
    namespace = private.get("namespace")
    account = _claim_ref(private, "serviceaccount")
    if not isinstance(namespace, str) or not namespace or account is None or not account.name:
        raise ValueError("service account token claims are missing the service account")
    if claims.get("sub") != username(namespace, account.name):
        raise ValueError("service account token subject does not match its claims")
    return BoundClaims(namespace, account, _claim_ref(private, "pod"),
                       _claim_ref(private, "secret"), _claim_ref(private, "node"),
                       int(claims.get("exp", 0)), str(claims.get("jti", "")))
