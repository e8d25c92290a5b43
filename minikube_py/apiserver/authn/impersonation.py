"""User impersonation: `Impersonate-User`, `-Group`, `-Uid` and `-Extra-<key>` headers.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/filters/impersonation.go (WithImpersonation
and buildImpersonationRequests) with serviceaccount.SplitUsername/MakeGroupNames. After
authentication, every attribute the caller asks to act as is one `impersonate` check, in
header order: the user (or, for `system:serviceaccount:<ns>:<name>`, the service account in
its namespace), each group, each extra value, the uid. Only when the authorizer allows all of
them does the request continue — authorized, admitted and audited as the impersonated user —
and without the headers.

This module is pure: it parses headers into `Request`s (what to authorize) and builds the
resulting UserInfo. The authorizer is applied by authz/guard.py, since authz sits above authn
(authz imports UserInfo from here, never the other way round).

Where we differ: upstream answers an Impersonate-Group/-Extra/-Uid without an Impersonate-User
with a 500 (responsewriters.InternalError over the same message); that is bad input, so here
it is a 400 BadRequest Status with upstream's message text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from ...api import errors, naming
from . import ALL_AUTHENTICATED, UserInfo
from .identities import (
    SERVICE_ACCOUNT_PREFIX,
    service_account_groups,
    service_account_username,
)

#: the header names (authenticationv1.Impersonate*Header), lower-cased as they are matched
USER_HEADER = "impersonate-user"
GROUP_HEADER = "impersonate-group"
UID_HEADER = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
#: user.Anonymous and user.AllUnauthenticated
ANONYMOUS = "system:anonymous"
ALL_UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATION_GROUP = "authentication.k8s.io"
_AUTHENTICATION_V1 = f"{AUTHENTICATION_GROUP}/v1"
_HEADERS = frozenset({USER_HEADER, GROUP_HEADER, UID_HEADER})
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


@dataclass(frozen=True, slots=True)
class Request:
    """One thing to impersonate (upstream's v1.ObjectReference per attribute): `kind` is
    ServiceAccount, User, Group, UserExtra or UID; `field` is an extra's key."""

    kind: str
    name: str
    namespace: str = ""
    field: str = ""

    @property
    def api_group(self) -> str:
        return AUTHENTICATION_GROUP if self.kind in ("UserExtra", "UID") else ""

    @property
    def api_version(self) -> str:
        return "v1" if self.api_group else ""

    @property
    def resource(self) -> str:
        """What the `impersonate` verb is checked on."""
        return {"ServiceAccount": "serviceaccounts", "User": "users", "Group": "groups",
                "UserExtra": "userextras", "UID": "uids"}[self.kind]

    @property
    def subresource(self) -> str:
        return self.field if self.kind == "UserExtra" else ""

    def go_string(self) -> str:
        """Go's %v of the ObjectReference, the form upstream's error message prints."""
        version = _AUTHENTICATION_V1 if self.api_group else ""
        return f"{{{self.kind} {self.namespace} {self.name}  {version}  {self.field}}}"


def split_service_account(username: str) -> tuple[str, str] | None:
    """serviceaccount.SplitUsername: (namespace, name) of `system:serviceaccount:ns:name`
    when both parts are valid names, else None (the user is then an ordinary user)."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_PREFIX):].split(":")
    if len(parts) != 2:
        return None
    namespace, name = parts
    if naming.is_dns1123_label(namespace) or naming.is_dns1123_subdomain(name):
        return None
    return namespace, name


def _unescape_extra_key(key: str) -> str:
    """url.PathUnescape of the lower-cased key, keeping it as sent when its %-encoding is
    malformed (upstream records an extra whatever its key)."""
    if "%" not in key:
        return key
    if _BAD_ESCAPE.search(key):
        return key
    return unquote(key, errors="replace")


def _is_impersonation(lower: str) -> bool:
    return lower in _HEADERS or lower.startswith(EXTRA_PREFIX)


def is_requested(headers: Mapping[str, str]) -> bool:
    """Does the request carry any impersonation header? Every secure request asks, so the
    common answer (no) comes from one C-level join of the header names (~1.5 us for a kubectl
    request's headers, a third of a per-name loop)."""
    if "impersonate-" not in "\0".join(headers).lower():
        return False
    return any(_is_impersonation(name.lower()) for name in headers)


def parse(headers: Iterable[tuple[str, str]]) -> list[Request]:
    """buildImpersonationRequests: the checks the headers ask for, user first, then groups,
    extras (one per value) and the uid. Raises a 400 StatusError for groups, extras or a uid
    without a user. An empty list means no impersonation."""
    user = uid = ""
    groups: list[str] = []
    extras: list[tuple[str, str]] = []
    for name, value in headers:
        lower = name.lower()
        if lower == USER_HEADER:
            user = user or value  # Header.Get: the first value
        elif lower == GROUP_HEADER:
            groups.append(value)
        elif lower == UID_HEADER:
            uid = uid or value
        elif lower.startswith(EXTRA_PREFIX):
            extras.append((_unescape_extra_key(lower[len(EXTRA_PREFIX):]), value))
    requests: list[Request] = []
    if user:
        account = split_service_account(user)
        requests.append(Request("ServiceAccount", account[1], account[0]) if account
                        else Request("User", user))
    requests += [Request("Group", group) for group in groups]
    requests += [Request("UserExtra", value, field=key) for key, value in extras]
    if uid:
        requests.append(Request("UID", uid))
    if requests and not user:
        listed = " ".join(r.go_string() for r in requests)
        raise errors.bad_request(f"requested [{listed}] without impersonating a user")
    return requests


def impersonated_user(requests: list[Request]) -> UserInfo:
    """The user.Info the request continues as, once every request is authorized. Groups are
    the given ones (for a service account without Impersonate-Group: its fixed groups), plus
    system:authenticated unless system:authenticated or system:unauthenticated is among them —
    for system:anonymous, system:unauthenticated instead."""
    username = uid = ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    groups_given = any(r.kind == "Group" for r in requests)
    for request in requests:
        if request.kind == "ServiceAccount":
            username = service_account_username(request.namespace, request.name)
            if not groups_given:
                groups = list(service_account_groups(request.namespace))
        elif request.kind == "User":
            username = request.name
        elif request.kind == "Group":
            groups.append(request.name)
        elif request.kind == "UserExtra":
            extra.setdefault(request.field, []).append(request.name)
        elif request.kind == "UID":
            uid = request.name
    if username != ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(username, uid, tuple(groups),
                    {key: tuple(values) for key, values in extra.items()})


def strip(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers without the impersonation ones (upstream deletes them before serving)."""
    return [(name, value) for name, value in headers
            if not _is_impersonation(name.lower())]
