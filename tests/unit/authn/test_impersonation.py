"""Impersonation headers, pure: what each header asks to be authorized (upstream's
buildImpersonationRequests) and the user a request continues as (WithImpersonation's group
rules), without a server."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from minikube_py.api.errors import StatusError
from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authn.impersonation import (
    Request,
    impersonated_user,
    is_requested,
    parse,
    split_service_account,
    strip,
)


def checks(*headers: tuple[str, str]) -> list[tuple[str, str, str, str, str, str]]:
    return [(r.resource, r.subresource, r.namespace, r.name, r.api_group, r.api_version)
            for r in parse(headers)]


def test_no_headers_no_impersonation() -> None:
    assert parse([("Authorization", "Bearer x"), ("Accept", "*/*")]) == []
    assert not is_requested(CIMultiDict(Authorization="Bearer x"))
    # a header that merely starts like one is not one
    assert not is_requested(CIMultiDict({"Impersonate-Nothing": "x"}))
    assert parse([("Impersonate-Nothing", "x")]) == []


@pytest.mark.parametrize("name", ["Impersonate-User", "impersonate-group", "IMPERSONATE-UID",
                                  "Impersonate-Extra-Scopes"])
def test_is_requested_any_case(name: str) -> None:
    assert is_requested(CIMultiDict({name: "v", "Accept": "*/*"}))


def test_user_groups_extras_uid_in_order() -> None:
    assert checks(("Impersonate-Uid", "1234"), ("impersonate-group", "dev"),
                  ("Impersonate-User", "bob"), ("Impersonate-Group", "ops"),
                  ("Impersonate-Extra-Scopes", "view"), ("impersonate-extra-scopes", "edit"),
                  ("Impersonate-Extra-acme.com%2Fproject", "p1")) == [
        ("users", "", "", "bob", "", ""),
        ("groups", "", "", "dev", "", ""),
        ("groups", "", "", "ops", "", ""),
        ("userextras", "scopes", "", "view", "authentication.k8s.io", "v1"),
        ("userextras", "scopes", "", "edit", "authentication.k8s.io", "v1"),
        ("userextras", "acme.com/project", "", "p1", "authentication.k8s.io", "v1"),
        ("uids", "", "", "1234", "authentication.k8s.io", "v1"),
    ]


def test_first_user_header_wins_and_empty_is_none() -> None:
    assert checks(("Impersonate-User", "bob"), ("Impersonate-User", "eve")) == [
        ("users", "", "", "bob", "", "")]
    assert parse([("Impersonate-User", "")]) == []


def test_malformed_extra_key_kept_as_sent() -> None:
    (extra,) = parse([("Impersonate-User", "bob"), ("Impersonate-Extra-100%-Sure", "yes")])[1:]
    assert extra.field == "100%-sure"


def test_service_account_user_is_checked_as_serviceaccounts() -> None:
    assert checks(("Impersonate-User", "system:serviceaccount:kube-system:default")) == [
        ("serviceaccounts", "", "kube-system", "default", "", "")]
    assert split_service_account("system:serviceaccount:ns:name") == ("ns", "name")
    for bad in ("system:serviceaccount:ns", "system:serviceaccount:ns:a:b",
                "system:serviceaccount:Bad_NS:x", "system:serviceaccount:ns:", "serviceaccount:a:b"):
        assert split_service_account(bad) is None, bad
    # not a valid service account name: impersonated as a plain user of that name
    assert checks(("Impersonate-User", "system:serviceaccount::x")) == [
        ("users", "", "", "system:serviceaccount::x", "", "")]


@pytest.mark.parametrize("headers", [
    [("Impersonate-Group", "dev")],
    [("Impersonate-Extra-Scopes", "view")],
    [("Impersonate-Uid", "1")],
])
def test_attributes_without_a_user_are_a_400(headers: list[tuple[str, str]]) -> None:
    with pytest.raises(StatusError) as caught:
        parse(headers)
    assert caught.value.code == 400
    assert caught.value.reason == "BadRequest"
    assert caught.value.message.endswith("] without impersonating a user")


def test_400_message_is_upstreams_text() -> None:
    with pytest.raises(StatusError) as caught:
        parse([("Impersonate-Group", "dev"), ("Impersonate-Uid", "7")])
    assert caught.value.message == (
        "requested [{Group  dev    } {UID  7  authentication.k8s.io/v1  }] "
        "without impersonating a user")


def user(*headers: tuple[str, str]) -> UserInfo:
    return impersonated_user(parse(headers))


def test_user_gets_system_authenticated() -> None:
    assert user(("Impersonate-User", "bob")) == UserInfo("bob", "", ("system:authenticated",))
    got = user(("Impersonate-User", "bob"), ("Impersonate-Group", "dev"),
               ("Impersonate-Uid", "u-1"), ("Impersonate-Extra-Scopes", "a"),
               ("Impersonate-Extra-Scopes", "b"))
    assert (got.name, got.uid, got.groups) == ("bob", "u-1", ("dev", "system:authenticated"))
    assert dict(got.extra) == {"scopes": ("a", "b")}


def test_explicit_authenticated_or_unauthenticated_group_not_doubled() -> None:
    assert user(("Impersonate-User", "bob"),
                ("Impersonate-Group", "system:authenticated")).groups == ("system:authenticated",)
    assert user(("Impersonate-User", "bob"), ("Impersonate-Group", "system:unauthenticated"),
                ).groups == ("system:unauthenticated",)


def test_anonymous_gets_system_unauthenticated() -> None:
    assert user(("Impersonate-User", "system:anonymous")).groups == ("system:unauthenticated",)
    assert user(("Impersonate-User", "system:anonymous"), ("Impersonate-Group", "x")).groups == (
        "x", "system:unauthenticated")


def test_service_account_groups_unless_groups_given() -> None:
    sa = "system:serviceaccount:team-a:builder"
    assert user(("Impersonate-User", sa)) == UserInfo(sa, "", (
        "system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"))
    assert user(("Impersonate-User", sa), ("Impersonate-Group", "dev")).groups == (
        "dev", "system:authenticated")


def test_strip_removes_only_impersonation_headers() -> None:
    headers = [("Authorization", "Bearer x"), ("Impersonate-User", "bob"),
               ("impersonate-group", "g"), ("Impersonate-Uid", "1"),
               ("Impersonate-Extra-K", "v"), ("Impersonate-Nothing", "kept"), ("Accept", "*/*")]
    assert strip(headers) == [("Authorization", "Bearer x"), ("Impersonate-Nothing", "kept"),
                              ("Accept", "*/*")]


def test_request_properties() -> None:
    assert Request("User", "bob").api_group == ""
    assert Request("UID", "1").resource == "uids"
