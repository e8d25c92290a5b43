"""Token/basic CSV parsing, header parsing, client-cert subjects, the union."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from minikube_py.apiserver.authn import ALL_AUTHENTICATED, UserInfo, build_authenticator
from minikube_py.apiserver.authn.csvfile import parse_user_csv
from minikube_py.apiserver.authn.x509 import user_from_peercert


def test_token_csv_rows_with_and_without_groups() -> None:
    users = parse_user_csv('# comment\nt1,alice,1\n\nt2, bob ,2,"dev,ops"\nt3,carol,3,admins\n',
                           "tokens.csv")
    assert users == {"t1": UserInfo("alice", "1"), "t2": UserInfo("bob", "2", ("dev", "ops")),
                     "t3": UserInfo("carol", "3", ("admins",))}


@pytest.mark.parametrize("text,line,fragment", [
    ("t1,alice,1\nt2,bob\n", 2, "expected at least 3 columns"),
    ("t1,alice,1\n\nt3\n", 3, "expected at least 3 columns"),
    (",alice,1\n", 1, "empty secret"),
    ("t1,,1\n", 1, "empty user name"),
    ('t1,alice,1,"dev\n', 1, ""),
])
def test_bad_csv_names_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_user_csv(text, "tokens.csv")
    assert str(exc.value).startswith(f"tokens.csv line {line}: ")
    assert fragment in str(exc.value)


def test_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing.csv: cannot read"):
        build_authenticator(token_auth_file=tmp_path / "missing.csv")


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_union_token_basic_and_cert(tmp_path: Path) -> None:
    (tmp_path / "tokens.csv").write_text('abc,alice,100,"dev"\n')
    (tmp_path / "basic.csv").write_text("s3cret,bob,200\n")
    auth = build_authenticator(token_auth_file=tmp_path / "tokens.csv",
                               basic_auth_file=tmp_path / "basic.csv", client_ca_file="ca.crt")
    assert auth.authenticate({"Authorization": "Bearer abc"}, None) == UserInfo(
        "alice", "100", ("dev", ALL_AUTHENTICATED))
    assert auth.authenticate({"Authorization": "bearer abc"}, None).name == "alice"
    assert auth.authenticate({"Authorization": "Bearer wrong"}, None) is None
    assert auth.authenticate({"Authorization": "Bearer"}, None) is None
    assert auth.authenticate({}, None) is None
    assert auth.authenticate(_basic("bob", "s3cret"), None) == UserInfo(
        "bob", "200", (ALL_AUTHENTICATED,))
    assert auth.authenticate(_basic("bob", "nope"), None) is None
    assert auth.authenticate(_basic("alice", "s3cret"), None) is None  # password is bob's
    assert auth.authenticate({"Authorization": "Basic !!!"}, None) is None
    cert = {"subject": ((("organizationName", "ops"),), (("organizationName", "dev"),),
                        (("commonName", "carol"),))}
    assert auth.authenticate({}, cert) == UserInfo("carol", "", ("ops", "dev", ALL_AUTHENTICATED))


def test_peercert_without_cn_or_unverified() -> None:
    assert user_from_peercert(None) is None
    assert user_from_peercert({}) is None  # getpeercert() of an unverified cert
    assert user_from_peercert({"subject": ((("organizationName", "x"),),)}) is None


def test_no_flags_recognises_nobody() -> None:
    auth = build_authenticator()
    assert auth.authenticators == []
    assert auth.authenticate({"Authorization": "Bearer x"}, None) is None
