"""--token-auth-file: static bearer tokens (`Authorization: Bearer <token>`).

Kubernetes v1.0 piece: plugin/pkg/auth/authenticator/token/tokenfile (the token table) behind
plugin/pkg/auth/authenticator/request/bearertoken (the header parsing). A request without a
bearer header is not this authenticator's business (None); a wrong token is None too, which
the union turns into 401.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import UserInfo
from .csvfile import load_user_csv


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive)."""
    value = headers.get("Authorization")
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


class TokenAuthenticator:
    def __init__(self, tokens: dict[str, UserInfo]) -> None:
        self.tokens = tokens

    @classmethod
    def from_file(cls, path: str | Path) -> TokenAuthenticator:
        return cls(load_user_csv(path))

    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> UserInfo | None:
        token = bearer_token(headers)
        if token is None:
            return None
        return self.tokens.get(token)
