"""Authentication for the secure port: who is making this request?

Kubernetes v1.0 piece: pkg/auth/user (user.Info), pkg/auth/authenticator (the Request
interface) and plugin/pkg/auth/authenticator/request/union (try each configured authenticator
in turn), assembled by pkg/apiserver/authn.go's NewAuthenticator from the flags
--token-auth-file, --basic-auth-file and --client-ca-file. Authenticators here are pure: they
look at the request headers and the TLS peer certificate (as `ssl.SSLSocket.getpeercert()`
returns it) and answer a UserInfo or None, so they are unit-tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

#: the group every authenticated user is in (k8s.io/apiserver user.AllAuthenticated)
ALL_AUTHENTICATED = "system:authenticated"


@dataclass(frozen=True, slots=True)
class UserInfo:
    """user.Info: name, uid, groups and extra of an authenticated caller (extra — key to
    values — is only ever set by impersonation's Impersonate-Extra-* headers here)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def authenticated(self) -> UserInfo:
        """This user as the authenticator union hands it on: with the group
        system:authenticated (upstream's group adder), everything else kept."""
        return UserInfo(self.name, self.uid, (*self.groups, ALL_AUTHENTICATED), self.extra)

    def to_api(self) -> dict:
        """authentication/v1 UserInfo, empty fields left out (what reviews and admission
        webhooks send)."""
        out: dict = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


#: upstream's insecure-port user (apiserver's InsecureSuperuser): who a request on the
#: insecure port is, to the aggregator's proxy and to the self access reviews
INSECURE_SUPERUSER = UserInfo("system:unsecured",
                              groups=("system:masters", ALL_AUTHENTICATED))


class Authenticator(Protocol):
    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> UserInfo | None:
        """The user the request proves to be, or None when this method does not apply."""


class UnionAuthenticator:
    """The first authenticator that recognises the request wins; every user it answers also
    gets the `system:authenticated` group (as later apiserver's AuthenticatedGroupAdder)."""

    def __init__(self, authenticators: list[Authenticator]) -> None:
        self.authenticators = authenticators

    def authenticate(self, headers: Mapping[str, str],
                     peercert: dict[str, Any] | None) -> UserInfo | None:
        for authenticator in self.authenticators:
            user = authenticator.authenticate(headers, peercert)
            if user is not None:
                if ALL_AUTHENTICATED in user.groups:
                    return user
                return user.authenticated()
        return None


def build_authenticator(*, token_auth_file: str | Path | None = None,
                        basic_auth_file: str | Path | None = None,
                        client_ca_file: str | Path | None = None) -> UnionAuthenticator:
    """The authenticator the flags ask for (v1.0 apiserver.NewAuthenticator). Bad files raise
    ValueError naming the file and line. With no flags the union recognises nobody."""
    from .basicauth import BasicAuthenticator
    from .tokenfile import TokenAuthenticator
    from .x509 import ClientCertAuthenticator

    authenticators: list[Authenticator] = []
    if client_ca_file:
        authenticators.append(ClientCertAuthenticator())
    if token_auth_file:
        authenticators.append(TokenAuthenticator.from_file(token_auth_file))
    if basic_auth_file:
        authenticators.append(BasicAuthenticator.from_file(basic_auth_file))
    return UnionAuthenticator(authenticators)
