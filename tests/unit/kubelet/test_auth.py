"""The kubelet API's authorization attributes and decisions (kubelet/auth.py, upstream
pkg/kubelet/server/auth.go), the kubelet command's TLS/auth flags, and the start options that
secure the all-in-one kubelets."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from minikube_py.cli import kubelet, kubelet_tls
from minikube_py.cli.main import build_parser
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import ConfigError
from minikube_py.kubelet.auth import (
    Anonymous,
    KubeletAuth,
    authenticate,
    decide,
    request_attributes,
)


class User:
    def __init__(self, name: str, *groups: str) -> None:
        self.name, self.groups = name, groups


class Fixed:
    """An authenticator that recognises one bearer token."""

    def __init__(self, token: str, user: User) -> None:
        self.token, self.user = token, user

    def authenticate(self, headers, peercert):
        return self.user if headers.get("Authorization") == f"Bearer {self.token}" else None


@pytest.mark.parametrize(("method", "path", "verb", "subresource"), [
    ("GET", "/pods", "get", "proxy"),
    ("POST", "/nodes/node-1/stop", "create", "proxy"),
    ("GET", "/exec/default/web/web", "get", "proxy"),
    ("GET", "/containerLogs/default/web/web", "get", "proxy"),
    ("PUT", "/podProxy/default/web/80/", "update", "proxy"),
    ("PATCH", "/x", "patch", "proxy"),
    ("DELETE", "/x", "delete", "proxy"),
    ("HEAD", "/healthz", "", "proxy"),          # upstream maps only the five methods
    ("GET", "/stats", "get", "stats"),
    ("GET", "/stats/summary", "get", "stats"),
    ("GET", "/metrics/cadvisor", "get", "metrics"),
    ("GET", "/logs/", "get", "log"),
    ("GET", "/logsfoo", "get", "proxy"),        # isSubpath: a path boundary, not a prefix
])
def test_request_attributes_follow_upstream(method: str, path: str, verb: str,
                                            subresource: str) -> None:
    attrs = request_attributes(User("alice", "dev"), method, path)
    assert (attrs.verb, attrs.subresource, attrs.path) == (verb, subresource, path)
    assert attrs.forbidden() == (f"Forbidden (user=alice, verb={verb}, resource=nodes, "
                                 f"subresource={subresource})")


def test_webhook_allows_system_masters_only_and_always_allow_everyone() -> None:
    webhook, allow = KubeletAuth(None), KubeletAuth(None, authorization_mode="AlwaysAllow")
    admin = request_attributes(User("admin", "system:masters"), "POST", "/nodes/n/stop")
    alice = request_attributes(User("alice", "dev", "system:authenticated"), "GET", "/pods")
    assert decide(webhook, admin) and not decide(webhook, alice)
    assert decide(allow, alice)
    with pytest.raises(ValueError, match="unknown authorization mode 'ABAC'"):
        KubeletAuth(None, authorization_mode="ABAC")


def test_anonymous_only_when_enabled_and_nobody_else_recognised() -> None:
    admin = User("admin", "system:masters")
    strict = KubeletAuth(Fixed("t", admin))
    lenient = KubeletAuth(Fixed("t", admin), anonymous=True)
    assert authenticate(strict, {}, None) is None
    assert authenticate(lenient, {}, None) == Anonymous()
    assert authenticate(lenient, {"Authorization": "Bearer t"}, None) is admin
    assert Anonymous().groups == ("system:unauthenticated",)
    assert KubeletAuth(None, anonymous=True, authorization_mode="AlwaysAllow").open
    assert not KubeletAuth(None, anonymous=True).open


# -- `minikube-py kubelet` flags ---------------------------------------------------------------
def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    kubelet.register(parser.add_subparsers(), [])
    return parser.parse_args(["kubelet", *argv])


def test_kubelet_without_tls_is_open_and_refuses_auth_flags_it_cannot_honour() -> None:
    assert kubelet.serving_of(parse()) is None
    for flags in (["--client-ca-file", "ca.crt"], ["--anonymous-auth", "false"],
                  ["--authorization-mode", "Webhook"], ["--tls-private-key-file", "k"]):
        with pytest.raises(ConfigError, match="need --tls-cert-file"):
            kubelet.serving_of(parse(*flags))


def test_kubelet_with_tls_defaults_to_no_anonymous_and_webhook(tmp_path: Path) -> None:
    cert, key, ca = kubelet_tls.ensure_kubelet_serving_cert(tmp_path, ["127.0.0.1"])
    tls = ["--tls-cert-file", str(cert), "--tls-private-key-file", str(key)]
    with pytest.raises(ConfigError, match="without --client-ca-file"):
        kubelet.serving_of(parse(*tls))
    with pytest.raises(ConfigError, match="go together"):
        kubelet.serving_of(parse("--tls-cert-file", str(cert)))
    serving = kubelet.serving_of(parse(*tls, "--client-ca-file", str(ca)))
    assert serving is not None and serving.scheme == "https" and serving.secured
    assert (serving.auth.anonymous, serving.auth.authorization_mode) == (False, "Webhook")
    opened = kubelet.serving_of(parse(*tls, "--anonymous-auth", "true",
                                      "--authorization-mode", "AlwaysAllow"))
    assert opened is not None and opened.auth.open and not opened.secured


# -- `minikube-py start` ----------------------------------------------------------------------
def start(tmp_path: Path, *argv: str) -> StartOptions:
    return StartOptions.from_args(build_parser().parse_args(
        ["start", "--data-dir", str(tmp_path / "data"), "--cert-dir", str(tmp_path / "certs"),
         *argv]))


def test_start_secures_kubelets_only_with_the_secure_port_and_a_listener(tmp_path: Path) -> None:
    assert kubelet_tls.secured(start(tmp_path))
    assert not kubelet_tls.secured(start(tmp_path, "--secure-port", "0"))
    assert not kubelet_tls.secured(start(tmp_path, "--kubelet-port", "0"))
    assert not kubelet_tls.secured(start(tmp_path, "--disable", "kubelet"))
    plain = start(tmp_path, "--secure-port", "0")
    assert kubelet_tls.with_kubelet_client(plain) is plain
    assert kubelet_tls.pool_serving(plain) is None


def test_start_fills_the_apiserver_kubelet_client_and_keeps_given_flags(tmp_path: Path) -> None:
    options = kubelet_tls.with_kubelet_client(start(tmp_path))
    api = options.apiserver
    assert api.kubelet_client_certificate.endswith("apiserver-kubelet-client.crt")
    assert api.kubelet_certificate_authority == str(tmp_path / "certs" / "ca.crt")
    cert = x509.load_pem_x509_certificate(Path(api.kubelet_client_certificate).read_bytes())
    assert cert.subject.rfc4514_string() == "CN=kube-apiserver-kubelet-client,O=system:masters"
    again = kubelet_tls.with_kubelet_client(start(tmp_path))  # reused, not re-issued
    assert Path(again.apiserver.kubelet_client_certificate).read_bytes() == cert.public_bytes(
        serialization.Encoding.PEM)
    given = start(tmp_path, "--kubelet-certificate-authority", "/x/ca.crt")
    assert kubelet_tls.with_kubelet_client(given) is given


def test_start_open_mode_flags(tmp_path: Path) -> None:
    options = start(tmp_path, "--kubelet-anonymous-auth", "true",
                    "--kubelet-authorization-mode", "AlwaysAllow")
    assert (options.kubelet_anonymous_auth, options.kubelet_authorization_mode) == (
        True, "AlwaysAllow")
    assert start(tmp_path).kubelet_authorization_mode == "Webhook"


def test_the_cli_names_the_same_authorization_modes_as_the_kubelet() -> None:
    from minikube_py.cli import kubelet as cli
    from minikube_py.kubelet import auth

    assert set(cli.AUTHORIZATION_MODES) == set(auth.AUTHORIZATION_MODES)
