"""--client-ca-file: TLS client certificates; the subject's CN is the user, each O a group.

Kubernetes v1.0 piece: plugin/pkg/auth/authenticator/request/x509 (CommonNameUserConversion;
organisations as groups came in v1.1). The TLS layer does the verification: the server's
SSLContext loads the CA with CERT_OPTIONAL, so a presented certificate not signed by it fails
the handshake, and `getpeercert()` returns a decoded subject only for a verified one. This
module turns that subject into a user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import UserInfo


def user_from_peercert(peercert: dict[str, Any] | None) -> UserInfo | None:
    """The user of a verified peer certificate in `ssl.SSLSocket.getpeercert()` form:
    subject = ((('commonName', 'alice'),), (('organizationName', 'dev'),), ...)."""
    if not peercert:
        return None
    name = ""
    groups: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and not name:
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:
        return None
    return UserInfo(name, "", tuple(groups))


class ClientCertAuthenticator:
    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> UserInfo | None:
        return user_from_peercert(peercert)
