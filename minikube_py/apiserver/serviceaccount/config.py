"""The service-account token settings, resolved once at startup.

Kubernetes piece: kube-apiserver's ServiceAccountAuthenticationOptions (--service-account-issuer,
--service-account-key-file, --service-account-signing-key-file, --api-audiences,
--service-account-max-token-expiration) and their validation: a signing key needs an issuer,
TokenRequest is served only when both are set, verification keys default to the signing key.
Bad files raise ValueError, which the API server reports at startup.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...serviceaccount_keys import (
    LEGACY_ISSUER,
    TokenSigner,
    VerifyKey,
    load_signing_key,
    load_verify_keys,
)
from ..options import APIServerOptions
from .jwt_tokens import TokenVerifier


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


@dataclass(frozen=True)
class TokenConfig:
    issuer: str                      # the first --service-account-issuer: what tokens carry
    audiences: tuple[str, ...]       # --api-audiences, default the issuers
    keys: tuple[VerifyKey, ...]      # what verifies (and what /openid/v1/jwks lists)
    signer: TokenSigner | None       # None: no TokenRequest (no signing key or issuer)
    verifier: TokenVerifier
    max_expiration_seconds: int      # 0: no maximum


def build_token_config(options: APIServerOptions) -> TokenConfig | None:
    """None when no service-account key or issuer is configured (the default of a bare
    APIServer: no service-account tokens at all)."""
    issuers = _split(options.service_account_issuer)
    key_files = _split(options.service_account_key_file)
    signing_file = options.service_account_signing_key_file
    if not (issuers or key_files or signing_file):
        return None
    if signing_file and not issuers:
        raise ValueError("--service-account-signing-key-file requires --service-account-issuer")
    signing = load_signing_key(signing_file) if signing_file else None
    keys = load_verify_keys(key_files) if key_files else []
    if not keys and signing_file:
        keys = load_verify_keys([signing_file])
    if not keys:
        raise ValueError("--service-account-issuer requires --service-account-key-file or "
                         "--service-account-signing-key-file")
    audiences = tuple(_split(options.api_audiences)) or tuple(issuers) or (LEGACY_ISSUER,)
    # legacy Secret tokens (the tokens controller's) are accepted with any key configuration,
    # as upstream's legacy authenticator
    verifier = TokenVerifier(keys, [*issuers, LEGACY_ISSUER], audiences)
    return TokenConfig(issuers[0] if issuers else LEGACY_ISSUER, audiences, tuple(keys),
                       TokenSigner(signing) if signing is not None and issuers else None,
                       verifier, int(options.service_account_max_token_expiration))
