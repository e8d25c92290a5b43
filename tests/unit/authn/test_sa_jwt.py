"""The service-account JWT pieces without a server: keys and key ids, claims, the verifier
(signature, issuer, audience, time window, cache), the authenticator's uid checks (against a
dict standing in for the store), and the TokenRequest spec validation."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from minikube_py.apiserver.authn import identities
from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.serviceaccount import claims as sa_claims
from minikube_py.apiserver.serviceaccount.authenticator import (
    ServiceAccountAuthenticator,
)
from minikube_py.apiserver.serviceaccount.config import build_token_config
from minikube_py.apiserver.serviceaccount.discovery import openid_configuration
from minikube_py.apiserver.serviceaccount.jwt_tokens import InvalidToken, TokenVerifier
from minikube_py.apiserver.serviceaccount.tokenrequest import validate_spec
from minikube_py.serviceaccount_keys import (
    TokenSigner,
    jwks,
    key_id,
    load_signing_key,
    load_verify_keys,
    new_private_key_pem,
)

ISS = "https://issuer.example"
NOW = 1_800_000_000
ACCOUNT = {"metadata": {"name": "robot", "namespace": "ns", "uid": "sa-uid"}}
POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"}}


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "sa.key"
    path.write_bytes(new_private_key_pem())
    return path


def _verifier(key_file: Path, now: float = NOW, audiences: tuple[str, ...] = (ISS,)) -> TokenVerifier:
    return TokenVerifier(load_verify_keys([key_file]), [ISS], audiences, clock=lambda: now)


def _token(key_file: Path, **kw: Any) -> str:
    claims = sa_claims.new_claims(ISS, ACCOUNT, kw.pop("aud", [ISS]), kw.pop("now", NOW),
                                  kw.pop("exp", 3600), **kw)
    return TokenSigner(load_signing_key(key_file)).sign(claims)


def test_key_id_is_upstreams(key_file: Path) -> None:
    key = load_signing_key(key_file)
    der = key.key.public_key().public_bytes(serialization.Encoding.DER,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    assert key.kid == base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
    assert key.alg == "RS256"
    doc = jwks(load_verify_keys([key_file, key_file]))  # the same key once
    assert [k["kid"] for k in doc["keys"]] == [key.kid]
    assert doc["keys"][0]["kty"] == "RSA" and doc["keys"][0]["use"] == "sig"


def test_ecdsa_keys_and_bad_files(tmp_path: Path) -> None:
    ec_key = ec.generate_private_key(ec.SECP384R1())
    path = tmp_path / "ec.pem"
    path.write_bytes(ec_key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    signing = load_signing_key(path)
    assert signing.alg == "ES384" and signing.kid == key_id(ec_key.public_key())
    assert jwks(load_verify_keys([path]))["keys"][0]["crv"] == "P-384"
    (tmp_path / "junk").write_text("not a key")
    with pytest.raises(ValueError, match="no PEM-encoded key"):
        load_verify_keys([tmp_path / "junk"])


def test_claims_shape() -> None:
    claims = sa_claims.new_claims(ISS, ACCOUNT, ["a"], NOW, 600, pod=POD,
                                  node={"metadata": {"name": "n1", "uid": "n-uid"}}, jti="j")
    assert claims == {"aud": ["a"], "exp": NOW + 600, "iat": NOW, "iss": ISS, "jti": "j",
                      "nbf": NOW, "sub": "system:serviceaccount:ns:robot", "kubernetes.io": {
                          "namespace": "ns", "serviceaccount": {"name": "robot", "uid": "sa-uid"},
                          "pod": {"name": "p", "uid": "pod-uid"},
                          "node": {"name": "n1", "uid": "n-uid"}}}
    bound = sa_claims.bound_claims(claims)
    assert bound.pod == sa_claims.Ref("p", "pod-uid") and bound.secret is None
    with pytest.raises(ValueError):
        sa_claims.bound_claims({**claims, "sub": "system:serviceaccount:ns:other"})
    assert identities.service_account_groups("ns") == ("system:serviceaccounts",
                                                       "system:serviceaccounts:ns")


def test_verifier(key_file: Path, tmp_path: Path) -> None:
    verifier = _verifier(key_file)
    token = _token(key_file)
    assert verifier.ours(token) and not verifier.ours("hex-token-of-a-csv-file")
    assert verifier.verify(token)["sub"] == "system:serviceaccount:ns:robot"
    with pytest.raises(InvalidToken, match="audiences"):
        verifier.verify(_token(key_file, aud=["vault"]))
    with pytest.raises(InvalidToken, match="expired"):
        verifier.verify(_token(key_file, now=NOW - 3661))  # exp 61 s ago: past the leeway
    assert verifier.verify(_token(key_file, now=NOW - 3659))  # inside the one-minute leeway
    with pytest.raises(InvalidToken, match="not valid yet"):
        verifier.verify(_token(key_file, now=NOW + 120))
    other = tmp_path / "other.key"
    other.write_bytes(new_private_key_pem())
    with pytest.raises(InvalidToken, match="invalid signature"):
        verifier.verify(_token(other))
    head, _, sig = token.split(".")
    tampered = jwt.encode({"iss": ISS, "sub": "system:serviceaccount:kube-system:admin"}, "k" * 32,
                          algorithm="HS256").split(".")[1]
    with pytest.raises(InvalidToken, match="invalid signature"):
        verifier.verify(f"{head}.{tampered}.{sig}")
    with pytest.raises(InvalidToken):  # alg none is never accepted
        verifier.verify(jwt.encode({"iss": ISS}, None, algorithm="none"))


def test_cache_still_expires(key_file: Path) -> None:
    now = [float(NOW)]
    verifier = TokenVerifier(load_verify_keys([key_file]), [ISS], [ISS], clock=lambda: now[0])
    token = _token(key_file)
    verifier.verify(token)
    assert token in verifier._cache
    now[0] += 3600 + 61
    with pytest.raises(InvalidToken, match="expired"):
        verifier.verify(token)
    assert token not in verifier._cache


def test_authenticator_checks_uids(key_file: Path) -> None:
    objects: dict[tuple[str, str, str], dict] = {
        ("serviceaccounts", "ns", "robot"): ACCOUNT, ("pods", "ns", "p"): POD}

    async def get(resource: str, ns: str, name: str) -> dict | None:
        return objects.get((resource, ns, name))

    authn = ServiceAccountAuthenticator(_verifier(key_file), get)
    run = asyncio.run
    user = run(authn.authenticate(_token(key_file, pod=POD)))
    assert user is not None and user.name == "system:serviceaccount:ns:robot"
    assert user.uid == "sa-uid" and "system:serviceaccounts:ns" in user.groups
    objects["pods", "ns", "p"] = {"metadata": {"name": "p", "uid": "new"}}
    assert run(authn.authenticate(_token(key_file, pod=POD))) is None
    del objects["pods", "ns", "p"]
    assert run(authn.authenticate(_token(key_file, pod=POD))) is None
    assert run(authn.authenticate(_token(key_file))) is not None
    objects["serviceaccounts", "ns", "robot"] = {"metadata": {"name": "robot", "uid": "other"}}
    assert run(authn.authenticate(_token(key_file))) is None


def test_config_from_options(key_file: Path) -> None:
    assert build_token_config(APIServerOptions()) is None
    with pytest.raises(ValueError, match="requires --service-account-issuer"):
        build_token_config(APIServerOptions(service_account_signing_key_file=str(key_file)))
    config = build_token_config(APIServerOptions(
        service_account_issuer=f"{ISS},https://old", service_account_signing_key_file=str(key_file),
        api_audiences="api,other"))
    assert config is not None and config.signer is not None
    assert config.issuer == ISS and config.audiences == ("api", "other")
    assert config.verifier.issuers == {ISS, "https://old", "kubernetes/serviceaccount"}
    assert openid_configuration(config) == {
        "issuer": ISS, "jwks_uri": f"{ISS}/openid/v1/jwks",
        "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"]}
    verify_only = build_token_config(APIServerOptions(service_account_key_file=str(key_file)))
    assert verify_only is not None and verify_only.signer is None


@pytest.mark.parametrize(("spec", "message"), [
    ({"audiences": ["a"], "expirationSeconds": 600}, None),
    ({"audiences": ["a"], "expirationSeconds": 599}, "less than 10 minutes"),
    ({"audiences": ["a"], "expirationSeconds": 2**32 + 1}, "larger than 2^32 seconds"),
    ({"audiences": ["a"], "expirationSeconds": "600"}, "must be an integer"),
    ({"audiences": "a", "expirationSeconds": 600}, "list of strings"),
])
def test_token_request_validation(spec: dict, message: str | None) -> None:
    errs = validate_spec(spec)
    if message is None:
        assert errs == []
    else:
        assert len(errs) == 1 and message in str(errs[0])


def test_start_generates_the_signing_key(tmp_path: Path) -> None:
    import os
    import stat

    from minikube_py.cli.main import build_parser
    from minikube_py.cli.service_account_key import (
        DEFAULT_ISSUER,
        with_service_account_key,
    )
    from minikube_py.cli.start_options import StartOptions

    def parsed(*argv: str) -> StartOptions:
        return StartOptions.from_args(build_parser().parse_args(
            ["start", "--cert-dir", str(tmp_path / "certs"), *argv]))

    started = with_service_account_key(parsed())
    filled = started.apiserver
    key = tmp_path / "certs" / "sa.key"
    assert started.controllers.service_account_private_key_file == str(key)  # legacy Secrets
    assert filled.service_account_signing_key_file == str(key)
    assert filled.service_account_issuer == DEFAULT_ISSUER
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    first = key.read_bytes()
    assert with_service_account_key(parsed()).apiserver.service_account_signing_key_file == str(key)
    assert key.read_bytes() == first  # reused
    given = with_service_account_key(parsed(
        "--service-account-signing-key-file", str(key), "--service-account-issuer", "https://x",
        "--api-audiences", "a,b", "--service-account-max-token-expiration", "48h")).apiserver
    assert (given.service_account_issuer, given.api_audiences) == ("https://x", "a,b")
    assert given.service_account_max_token_expiration == 48 * 3600
    own = with_service_account_key(parsed("--service-account-private-key-file", "/cm.key"))
    assert own.controllers.service_account_private_key_file == "/cm.key"
    assert with_service_account_key(parsed("--secure-port", "0")).apiserver \
        .service_account_signing_key_file is None
    assert APIServerOptions().service_account_signing_key_file is None  # a bare APIServer: none


def test_legacy_secret_tokens(key_file: Path) -> None:
    """legacy.go: no exp/aud; valid while the Secret holds this very token and the account
    keeps its uid."""
    import base64 as b64

    from minikube_py.serviceaccount_keys import legacy_claims

    token = TokenSigner(load_signing_key(key_file)).sign(
        legacy_claims("ns", "robot", "sa-uid", "robot-token-abcde"))
    secret = {"metadata": {"name": "robot-token-abcde"},
              "data": {"token": b64.b64encode(token.encode()).decode()}}
    objects: dict[tuple[str, str, str], dict] = {
        ("serviceaccounts", "ns", "robot"): ACCOUNT, ("secrets", "ns", "robot-token-abcde"): secret}

    async def get(resource: str, ns: str, name: str) -> dict | None:
        return objects.get((resource, ns, name))

    verifier = TokenVerifier(load_verify_keys([key_file]), [ISS, "kubernetes/serviceaccount"],
                             [ISS], clock=lambda: NOW)
    authn = ServiceAccountAuthenticator(verifier, get)
    user, auds = asyncio.run(authn.review(token))
    assert user is not None and user.name == "system:serviceaccount:ns:robot" and auds == [ISS]
    assert asyncio.run(authn.review(token, ["vault"])) == (None, [])  # only the API server's
    objects["secrets", "ns", "robot-token-abcde"] = {**secret, "data": {"token": "b3RoZXI="}}
    assert asyncio.run(authn.authenticate(token)) is None  # not the server's copy
    del objects["secrets", "ns", "robot-token-abcde"]
    assert asyncio.run(authn.authenticate(token)) is None
    verifier._prune(NOW + 10**9)  # a full cache pruned: a legacy token has no exp to go by
    assert token in verifier._cache
