"""The cluster CA as a signer of CertificateSigningRequests: which requests it signs, and how.

Kubernetes pieces: pkg/controller/certificates/signer (the `isRequestForSignerFn` of each
built-in signer, `validAPIServerClientUsages`), pkg/apis/certificates/helpers.go
(ValidateKubeletClientCSR, IsCertificateRequestApproved) and
pkg/controller/certificates/authority (CertificateAuthority.Sign + PermissiveSigningPolicy: the
subject and SANs come from the request, key usages from `spec.usages`, not-before backdated
5 minutes, not-after = now + min(--cluster-signing-duration, spec.expirationSeconds), never past
the CA's own not-after). Pure: no I/O, so the controller (csrsigning.py) stays a thin loop and
these rules are unit-tested alone. `kubernetes.io/legacy-unknown` and unknown signers are not
recognised (upstream leaves them to other signers); kubelet-serving is not served here.
"""

from __future__ import annotations

import base64
import datetime
import secrets
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..api.validation.certificates import (
    APPROVED,
    DENIED,
    FAILED,
    decode_bytes,
    parse_csr,
)

KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
SIGNERS = (KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET)
#: authority.PermissiveSigningPolicy's Backdate
BACKDATE = datetime.timedelta(minutes=5)

Obj = dict[str, Any]

_KEY_USAGES = {
    "digital signature": "digital_signature", "signing": "digital_signature",
    "content commitment": "content_commitment", "key encipherment": "key_encipherment",
    "key agreement": "key_agreement", "data encipherment": "data_encipherment",
    "cert sign": "key_cert_sign", "crl sign": "crl_sign", "encipher only": "encipher_only",
    "decipher only": "decipher_only",
}
_EXT_USAGES = {
    "server auth": ExtendedKeyUsageOID.SERVER_AUTH, "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
    "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
}
_KUBELET_CLIENT_USAGES = ({"client auth", "digital signature"},
                          {"key encipherment", "digital signature", "client auth"})


class SignerValidationError(ValueError):
    """The request names our signer but breaks its rules: the CSR gets a Failed condition."""


def has_condition(csr: Obj, type_: str) -> bool:
    status = csr.get("status") if isinstance(csr.get("status"), dict) else {}
    return any(isinstance(c, dict) and c.get("type") == type_ and c.get("status") == "True"
               for c in status.get("conditions") or [])


def needs_signing(csr: Obj) -> bool:
    """The signer's early returns: no certificate yet, approved, not denied, not failed."""
    status = csr.get("status") if isinstance(csr.get("status"), dict) else {}
    return (not status.get("certificate") and has_condition(csr, APPROVED)
            and not has_condition(csr, DENIED) and not has_condition(csr, FAILED))


def _client_usages(usages: list[str]) -> None:
    """validAPIServerClientUsages."""
    for usage in usages:
        if usage not in ("digital signature", "key encipherment", "client auth"):
            raise SignerValidationError(f"invalid usage for client certificate: {usage}")
    if "client auth" not in usages:
        raise SignerValidationError("missing required usage for client certificate: client auth")


def _kubelet_client(request: x509.CertificateSigningRequest, usages: list[str]) -> None:
    """ValidateKubeletClientCSR."""
    subject = request.subject
    orgs = [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if orgs != ["system:nodes"]:
        raise SignerValidationError("subject organization is not system:nodes")
    try:
        san = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        san = None
    if san is not None:
        for kind, what in ((x509.DNSName, "DNS"), (x509.RFC822Name, "Email"),
                           (x509.IPAddress, "IP"), (x509.UniformResourceIdentifier, "URI")):
            if san.get_values_for_type(kind):
                raise SignerValidationError(f"{what} subjectAltNames are not allowed")
    names = [a.value for a in subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if not names or not str(names[0]).startswith("system:node:"):
        raise SignerValidationError("subject common name does not begin with system:node:")
    if set(usages) not in _KUBELET_CLIENT_USAGES:
        raise SignerValidationError(
            "usages did not match [client auth digital signature]")


def is_kubelet_client_csr(request: x509.CertificateSigningRequest, usages: list[str]) -> bool:
    """IsKubeletClientCSR: the request passes ValidateKubeletClientCSR (the csrapproving
    controller's recognizers ask this before any SubjectAccessReview)."""
    try:
        _kubelet_client(request, usages)
    except SignerValidationError:
        return False
    return True


def check_request(csr: Obj) -> x509.CertificateSigningRequest | None:
    """The parsed request when one of our signers should sign it; None when it is not ours.
    Raises SignerValidationError when it is ours but invalid for the signer."""
    spec = csr.get("spec") if isinstance(csr.get("spec"), dict) else {}
    signer = spec.get("signerName")
    if signer not in SIGNERS:
        return None
    try:
        request = parse_csr(decode_bytes(spec.get("request")) or b"")
    except ValueError as exc:
        raise SignerValidationError(f"unable to parse csr: {exc}") from None
    usages = [u for u in spec.get("usages") or [] if isinstance(u, str)]
    if signer == KUBE_APISERVER_CLIENT:
        _client_usages(usages)
    else:
        _kubelet_client(request, usages)
    return request


@dataclass(frozen=True)
class Authority:
    """authority.CertificateAuthority: the CA certificate and key, and the longest duration."""

    certificate: x509.Certificate
    key: Any
    duration: datetime.timedelta

    @classmethod
    def from_pem(cls, cert_pem: bytes, key_pem: bytes,
                 duration: datetime.timedelta) -> Authority:
        return cls(x509.load_pem_x509_certificate(cert_pem),
                   serialization.load_pem_private_key(key_pem, None), duration)

    def sign(self, request: x509.CertificateSigningRequest, usages: list[str],
             expiration_seconds: int | None,
             now: datetime.datetime | None = None) -> bytes:
        """The PEM certificate for `request` (its subject, SANs and public key)."""
        now = now or datetime.datetime.now(datetime.UTC)
        ttl = self.duration
        if expiration_seconds:
            ttl = min(ttl, datetime.timedelta(seconds=expiration_seconds))
        not_after = min(now + ttl, self.certificate.not_valid_after_utc)
        builder = (x509.CertificateBuilder()
                   .subject_name(request.subject)
                   .issuer_name(self.certificate.subject)
                   .public_key(request.public_key())
                   .serial_number(int.from_bytes(secrets.token_bytes(16), "big") >> 1)
                   .not_valid_before(now - BACKDATE)
                   .not_valid_after(not_after)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True))
        flags = {name: False for name in set(_KEY_USAGES.values())}
        for usage in usages:
            if usage in _KEY_USAGES:
                flags[_KEY_USAGES[usage]] = True
        if not flags["key_agreement"]:  # x509 allows encipher/decipher only with it
            flags["encipher_only"] = flags["decipher_only"] = False
        if any(flags.values()):
            builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
        ext = [_EXT_USAGES[u] for u in dict.fromkeys(usages) if u in _EXT_USAGES]
        if ext:
            builder = builder.add_extension(x509.ExtendedKeyUsage(ext), critical=False)
        try:
            san = request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
            builder = builder.add_extension(san.value, critical=False)
        except x509.ExtensionNotFound:
            pass
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
            critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM)


def encode_certificate(pem: bytes) -> str:
    """status.certificate's JSON form ([]byte: base64)."""
    return base64.b64encode(pem).decode()
