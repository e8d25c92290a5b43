"""The service-account signing key, verification keys, and signing itself.

Kubernetes pieces: kube-apiserver's --service-account-signing-key-file (the private key tokens
are signed with), --service-account-key-file (public keys — or private keys, whose public half
is used — that verify them; default: the signing key), pkg/serviceaccount/jwt.go's keyIDFromPublicKey
(the `kid` header: base64url of the SHA-256 of the key's DER SubjectPublicKeyInfo) and
openidmetadata.go's JWKS document. Loading is file I/O done once at startup; everything else
here is pure. It sits at the package's top level because two layers sign: the API server
(TokenRequest, apiserver/serviceaccount/) and the controller-manager's tokens controller
(legacy Secret tokens, controllers/tokens.py), which may not import the API server.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

#: upstream's issuer of legacy Secret tokens (pkg/serviceaccount/legacy.go LegacyIssuer) and
#: their private claims (no `exp`, no `aud`: valid while the Secret and account exist)
LEGACY_ISSUER = "kubernetes/serviceaccount"
LEGACY_NAMESPACE_CLAIM = "kubernetes.io/serviceaccount/namespace"
LEGACY_SECRET_CLAIM = "kubernetes.io/serviceaccount/secret.name"
LEGACY_ACCOUNT_CLAIM = "kubernetes.io/serviceaccount/service-account.name"
LEGACY_UID_CLAIM = "kubernetes.io/serviceaccount/service-account.uid"

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

#: upstream's JWS algorithm per ECDSA curve (jwt.go's signerFromECDSAPrivateKey)
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def algorithm_of(key: PublicKey | PrivateKey) -> str:
    if isinstance(key, (rsa.RSAPublicKey, rsa.RSAPrivateKey)):
        return "RS256"
    if isinstance(key, (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey)):
        alg = _EC_ALGORITHMS.get(key.curve.name)
        if alg is not None:
            return alg
    raise ValueError("service account keys must be RSA or ECDSA (P-256, P-384, P-521)")


def key_id(public: PublicKey) -> str:
    """jwt.go keyIDFromPublicKey: unpadded base64url(SHA-256(DER SubjectPublicKeyInfo))."""
    der = public.public_bytes(serialization.Encoding.DER,
                              serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class VerifyKey:
    kid: str
    alg: str
    key: PublicKey


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str
    alg: str
    key: PrivateKey


def _load_pem(data: bytes, source: str) -> list[PublicKey | PrivateKey]:
    """Every key of a PEM file: private keys (PKCS#1, PKCS#8, SEC1), public keys and
    certificates' public keys, as upstream keyutil.ParsePublicKeysPEM / ParsePrivateKeyPEM."""
    from cryptography import x509

    found: list[PublicKey | PrivateKey] = []
    marker = b"-----BEGIN "
    for chunk in data.split(marker)[1:]:
        block = marker + chunk
        label = chunk.split(b"-----", 1)[0]
        try:
            if label.endswith(b"PRIVATE KEY"):
                # the operator's own key files: skip the RSA consistency proof, ~50 ms a
                # key, paid at every start (Go's x509 does not check either)
                found.append(serialization.load_pem_private_key(  # type: ignore[arg-type]
                    block, None, unsafe_skip_rsa_key_validation=True))
            elif label.endswith(b"PUBLIC KEY"):
                found.append(serialization.load_pem_public_key(block))  # type: ignore[arg-type]
            elif label == b"CERTIFICATE":
                found.append(x509.load_pem_x509_certificate(block).public_key())  # type: ignore[arg-type]
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{source}: {exc}") from None
    if not found:
        raise ValueError(f"{source}: no PEM-encoded key found")
    for key in found:
        algorithm_of(key)  # ValueError for an unsupported key type
    return found


def load_signing_key(path: str | Path) -> SigningKey:
    """--service-account-signing-key-file: the first private key of the file."""
    for key in _load_pem(Path(path).read_bytes(), str(path)):
        if isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
            return SigningKey(key_id(key.public_key()), algorithm_of(key), key)
    raise ValueError(f"{path}: no private key found")


def load_verify_keys(paths: Iterable[str | Path]) -> list[VerifyKey]:
    """--service-account-key-file (repeatable; here also a comma list): every public key."""
    keys: list[VerifyKey] = []
    for path in paths:
        for key in _load_pem(Path(path).read_bytes(), str(path)):
            public = key.public_key() if isinstance(
                key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)) else key
            keys.append(VerifyKey(key_id(public), algorithm_of(public), public))
    return keys


def new_private_key_pem() -> bytes:
    """What `start` writes to <cert-dir>/sa.key when none is given: RSA 2048, PKCS#1, as
    kubeadm's `certs sa` phase."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _b64uint(value: int) -> str:
    raw = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _b64coord(value: int, size: int) -> str:
    return base64.urlsafe_b64encode(value.to_bytes(size, "big")).rstrip(b"=").decode()


def jwk(key: VerifyKey) -> dict[str, Any]:
    """One JSON Web Key as upstream's /openid/v1/jwks lists it (use, kty, kid, alg, ...)."""
    public = key.key
    if isinstance(public, rsa.RSAPublicKey):
        numbers = public.public_numbers()
        return {"use": "sig", "kty": "RSA", "kid": key.kid, "alg": key.alg,
                "n": _b64uint(numbers.n), "e": _b64uint(numbers.e)}
    numbers_ec = public.public_numbers()
    size = (public.curve.key_size + 7) // 8
    crv = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}[key.alg]
    return {"use": "sig", "kty": "EC", "kid": key.kid, "crv": crv, "alg": key.alg,
            "x": _b64coord(numbers_ec.x, size), "y": _b64coord(numbers_ec.y, size)}


def jwks(keys: Iterable[VerifyKey]) -> dict[str, Any]:
    """The key set document: each distinct key once."""
    seen: dict[str, dict[str, Any]] = {}
    for key in keys:
        seen.setdefault(key.kid, jwk(key))
    return {"keys": list(seen.values())}


class TokenSigner:
    """pkg/serviceaccount/jwt.go JWTTokenGenerator: claims in, a compact JWS with `kid` out."""

    def __init__(self, key: SigningKey) -> None:
        self.key = key

    def sign(self, claims: dict[str, Any]) -> str:
        import jwt  # PyJWT: on the first token signed, not at every start

        return jwt.encode(claims, self.key.key, algorithm=self.key.alg,
                          headers={"kid": self.key.kid})


def legacy_claims(namespace: str, account: str, account_uid: str, secret: str) -> dict[str, Any]:
    """legacy.go LegacyClaims: what a `kubernetes.io/service-account-token` Secret's token
    says."""
    return {"iss": LEGACY_ISSUER, LEGACY_NAMESPACE_CLAIM: namespace,
            LEGACY_SECRET_CLAIM: secret, LEGACY_ACCOUNT_CLAIM: account,
            LEGACY_UID_CLAIM: account_uid, "sub": f"system:serviceaccount:{namespace}:{account}"}
