"""--basic-auth-file: HTTP basic authentication (`Authorization: Basic base64(user:password)`).

Kubernetes v1.0 piece: plugin/pkg/auth/authenticator/password/passwordfile (rows
`password,user,uid[,groups]`) behind plugin/pkg/auth/authenticator/request/basicauth. The
user name in the header must match the row's user, and the password is compared in constant
time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import UserInfo
from .csvfile import load_user_csv


def basic_credentials(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """(user, password) of an `Authorization: Basic ...` header, or None."""
    value = headers.get("Authorization")
    if not value:
        return None
    scheme, _, encoded = value.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


class BasicAuthenticator:
    def __init__(self, passwords: dict[str, UserInfo]) -> None:
        self.users: dict[str, tuple[str, UserInfo]] = {
            info.name: (password, info) for password, info in passwords.items()}

    @classmethod
    def from_file(cls, path: str | Path) -> BasicAuthenticator:
        return cls(load_user_csv(path))

    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> UserInfo | None:
        credentials = basic_credentials(headers)
        if credentials is None:
            return None
        entry = self.users.get(credentials[0])
        if entry is None or not hmac.compare_digest(entry[0].encode(), credentials[1].encode()):
            return None
        return entry[1]
