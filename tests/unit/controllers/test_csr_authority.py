"""The csrsigning rules without a server: which requests each built-in signer takes, what it
refuses (the Failed condition's message) and the certificate it issues."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from minikube_py.controllers.csr_authority import (
    BACKDATE,
    Authority,
    SignerValidationError,
    check_request,
    needs_signing,
)

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _ca(days: int = 3650) -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(NOW - datetime.timedelta(days=1))
            .not_valid_after(NOW + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return Authority.from_pem(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption()),
        datetime.timedelta(days=365))


def _csr(cn: str, orgs: tuple[str, ...] = (), dns: tuple[str, ...] = (),
         signer: str = "kubernetes.io/kube-apiserver-client",
         usages: tuple[str, ...] = ("client auth",), conditions: tuple[str, ...] = ()) -> dict:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, cn),
         *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs)]))
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return {"metadata": {"name": cn},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer,
                     "usages": list(usages)},
            "status": {"conditions": [{"type": t, "status": "True"} for t in conditions]}}


def test_only_approved_unfinished_requests_are_signed() -> None:
    assert not needs_signing(_csr("a"))
    assert needs_signing(_csr("a", conditions=("Approved",)))
    assert not needs_signing(_csr("a", conditions=("Approved", "Failed")))
    assert not needs_signing(_csr("a", conditions=("Denied",)))
    issued = _csr("a", conditions=("Approved",))
    issued["status"]["certificate"] = "Zm9v"
    assert not needs_signing(issued)


def test_other_signers_are_not_ours() -> None:
    assert check_request(_csr("a", signer="example.com/other")) is None
    assert check_request(_csr("a", signer="kubernetes.io/legacy-unknown")) is None
    assert check_request(_csr("a", signer="kubernetes.io/kubelet-serving")) is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"usages": ("client auth", "server auth")}, "invalid usage for client certificate: server auth"),
    ({"usages": ("digital signature",)}, "missing required usage for client certificate: client auth"),
    ({"signer": "kubernetes.io/kube-apiserver-client-kubelet", "orgs": ("nodes",),
      "usages": ("client auth", "digital signature")}, "subject organization is not system:nodes"),
    ({"signer": "kubernetes.io/kube-apiserver-client-kubelet", "orgs": ("system:nodes",),
      "usages": ("client auth", "digital signature")},
     "subject common name does not begin with system:node:"),
    ({"signer": "kubernetes.io/kube-apiserver-client-kubelet", "orgs": ("system:nodes",),
      "dns": ("n1.example.com",), "usages": ("client auth", "digital signature")},
     "DNS subjectAltNames are not allowed"),
    ({"signer": "kubernetes.io/kube-apiserver-client-kubelet", "orgs": ("system:nodes",),
      "cn": "system:node:n1", "usages": ("client auth",)}, "usages did not match [client auth digital signature]"),
])
def test_signer_rules(kwargs: dict, message: str) -> None:
    with pytest.raises(SignerValidationError) as info:
        check_request(_csr(kwargs.pop("cn", "alice"), **kwargs))
    assert str(info.value) == message


def test_a_node_request_is_accepted() -> None:
    request = check_request(_csr("system:node:n1", ("system:nodes",),
                                 signer="kubernetes.io/kube-apiserver-client-kubelet",
                                 usages=("key encipherment", "digital signature",
                                         "client auth")))
    assert request is not None


def test_the_issued_certificate() -> None:
    ca = _ca()
    csr = _csr("alice", ("dev", "ops"), dns=("alice.example.com",))
    request = check_request(csr)
    pem = ca.sign(request, ["client auth", "digital signature"], 3600, now=NOW)
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.subject == request.subject and cert.issuer == ca.certificate.subject
    assert cert.not_valid_before_utc == NOW - BACKDATE
    assert cert.not_valid_after_utc == NOW + datetime.timedelta(hours=1)
    ext = cert.extensions
    assert list(ext.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    assert ext.get_extension_for_class(x509.KeyUsage).value.digital_signature
    assert not ext.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ext.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["alice.example.com"]
    cert.verify_directly_issued_by(ca.certificate)
    # without expirationSeconds: --cluster-signing-duration; never past the CA's own end
    long = x509.load_pem_x509_certificate(ca.sign(request, ["client auth"], None, now=NOW))
    assert long.not_valid_after_utc == NOW + datetime.timedelta(days=365)
    short_ca = _ca(days=30)
    capped = x509.load_pem_x509_certificate(short_ca.sign(request, ["client auth"], None,
                                                          now=NOW))
    assert capped.not_valid_after_utc == short_ca.certificate.not_valid_after_utc
